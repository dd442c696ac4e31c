import ArgumentParser
import Foundation
import Logging
import TesseraCore
import TesseraServer
import TesseraDomain

@main
struct Tessera: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tessera",
        abstract: "Tessera: a self-hosted OpenID Connect provider.",
        subcommands: [Serve.self, Clients.self, Users.self, Keys.self, Login.self])
}

/// Options every command shares: where the data is.
struct StorageOptions: ParsableArguments {
    @Option(help: "Database: a SQLite file path or sqlite: URL (default tessera-data/tessera.sqlite). Env: TESSERA_DATABASE.")
    var database: String?

    @Option(help: "A JSON config file. Env: TESSERA_CONFIG.")
    var config: String?

    var flags: [String: String] {
        var flags: [String: String] = [:]
        flags["database"] = database
        flags["config"] = config
        return flags
    }
}

/// Opens the provider for an admin command: same settings as `serve`, no HTTP.
func withProvider<T>(_ flags: [String: String], _ body: (Provider) async throws -> T) async throws -> T {
    let configuration = try ConfigurationLoader(flags: flags).configuration()
    var logger = Logger(label: "tessera")
    logger.logLevel = .warning
    return try await Provider.with(configuration, logger: logger, body)
}

/// Prints a configuration error the way a person wants to read it, and exits 2.
func fail(_ error: any Error) -> Never {
    FileHandle.standardError.write(Data("tessera: error: \(error)\n".utf8))
    Foundation.exit(2)
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start the server.",
        discussion: "With no settings: http://127.0.0.1:8080, SQLite in ./tessera-data/, keys generated on first start. "
            + "Every option can also be set as a TESSERA_* environment variable or in the --config file.")

    @OptionGroup var storage: StorageOptions
    @Option(help: "Address to listen on (default 127.0.0.1).") var host: String?
    @Option(help: "Port to listen on (default 8080).") var port: Int?
    @Option(help: "Issuer URL (default http://HOST:PORT).") var issuer: String?
    @Option(help: "SMTP relay URL, e.g. smtp://user:pass@mail.example.com:587.") var smtpURL: String?
    @Option(help: "Sender address of emails.") var mailFrom: String?
    @Option(help: "Signing algorithm of new keys: RS256 (default), ES256 or EdDSA.") var signingAlgorithm: String?
    @Option(help: "on (default) or off: whether native API answers may reveal if an account exists.") var enumerationProtection: String?
    @Flag(help: "Development conveniences (never on by default).") var dev = false
    @Flag(help: "Implies --dev; creates a demo client and user and prints an authorization URL.") var demo = false
    @OptionGroup(title: "Native sign-in API and email links") var native: NativeAuthOptions
    @OptionGroup(title: "Protection") var protection: ProtectionOptions

    func run() async throws {
        var flags = storage.flags
        flags["host"] = host
        flags["port"] = port.map(String.init)
        flags["issuer"] = issuer
        flags["smtp-url"] = smtpURL
        flags["mail-from"] = mailFrom
        flags["signing-algorithm"] = signingAlgorithm
        flags["enumeration-protection"] = enumerationProtection
        if dev { flags["dev"] = "true" }
        if demo { flags["demo"] = "true" }
        flags.merge(native.flags) { _, new in new }
        flags.merge(protection.flags) { _, new in new }

        let configuration: ServerConfiguration
        let provider: Provider
        do {
            configuration = try ConfigurationLoader(flags: flags).configuration()
            LoggingSystem.bootstrap(StreamLogHandler.standardError)
            var logger = Logger(label: "tessera")
            logger.logLevel = ProcessInfo.processInfo.environment["TESSERA_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
            provider = try await Provider.start(configuration, logger: logger)
        } catch let error as ConfigurationError {
            fail(error)
        }
        let demoText = configuration.demo ? try await Demo.prepare(provider) : nil
        let app = try buildApplication(provider: provider) { port in
            // Written unbuffered: scripts wait for this line.
            FileHandle.standardOutput.write(Data("Tessera is ready: issuer \(provider.issuer), listening on \(configuration.host):\(port), database \(configuration.database), signing \((try? provider.keys.signingDescription) ?? "?")\n".utf8))
            if let demoText { FileHandle.standardOutput.write(Data((demoText + "\n").utf8)) }
        }
        try await app.runService()
    }
}

/// Settings of the native sign-in API (docs/native-auth.md).
struct NativeAuthOptions: ParsableArguments {
    @Option(help: "Digits in a one-time code (default 8).") var otpLength: Int?
    @Option(help: "How long a code works (default 10m).") var otpLifetime: String?
    @Option(help: "Wrong entries allowed per code (default 5).") var otpMaxAttempts: Int?
    @Option(help: "Wait before another code may be sent in a flow (default 60s).") var otpResendInterval: String?
    @Option(help: "Codes sent per hour to one email address (default 5).") var otpPerEmailPerHour: Int?
    @Option(help: "Codes sent per hour from one client address (default 30).") var otpPerAddressPerHour: Int?
    @Option(help: "How long a continuation token works (default 10m).") var continuationTokenLifetime: String?
    @Option(help: "required or optional (default): whether sign-up needs a password.") var signupPassword: String?
    @Option(help: #"Sign-up attributes as a JSON array, e.g. '[{"name":"given_name","required":true}]'."#) var signupAttributes: String?
    @Option(help: "How long an email sign-in link works (default 1h).") var emailLinkLifetime: String?
    @Option(help: "Upstream identity providers as a JSON array (see docs/federation.md); usually in the --config file.")
    var upstreamProviders: String?

    var flags: [String: String] {
        var flags: [String: String] = [:]
        flags["otp-length"] = otpLength.map(String.init)
        flags["otp-lifetime"] = otpLifetime
        flags["otp-max-attempts"] = otpMaxAttempts.map(String.init)
        flags["otp-resend-interval"] = otpResendInterval
        flags["otp-per-email-per-hour"] = otpPerEmailPerHour.map(String.init)
        flags["otp-per-address-per-hour"] = otpPerAddressPerHour.map(String.init)
        flags["continuation-token-lifetime"] = continuationTokenLifetime
        flags["signup-password"] = signupPassword
        flags["signup-attributes"] = signupAttributes
        flags["email-link-lifetime"] = emailLinkLifetime
        flags["upstream-providers"] = upstreamProviders
        return flags
    }
}

/// Connection limits, throttles and what the server trusts (docs/security.md).
struct ProtectionOptions: ParsableArguments {
    @Option(help: "Close a connection idle this long (default 30s).") var idleTimeout: String?
    @Option(help: "A request head must arrive within this long of its first byte (default 10s).") var requestHeadTimeout: String?
    @Option(help: "Largest request head in bytes (default 16384).") var maxHeaderBytes: Int?
    @Option(help: "Most header fields in a request (default 100).") var maxHeaderCount: Int?
    @Option(help: ArgumentHelp("A reverse proxy (address or CIDR range) whose Forwarded / X-Forwarded-For headers name the client (repeatable).",
                               discussion: "Without it those headers are ignored and the proxy's address counts as the client's."))
    var trustedProxy: [String] = []

    var flags: [String: String] {
        var flags: [String: String] = [:]
        flags["idle-timeout"] = idleTimeout
        flags["request-head-timeout"] = requestHeadTimeout
        flags["max-header-bytes"] = maxHeaderBytes.map(String.init)
        flags["max-header-count"] = maxHeaderCount.map(String.init)
        if !trustedProxy.isEmpty { flags["trusted-proxy"] = trustedProxy.joined(separator: ",") }
        return flags
    }
}

/// `--demo`: a client and a user to try the flow with, and a URL to click.
enum Demo {
    static let clientID = "demo"
    static let clientSecret = "demo-secret-for-local-development-only"
    static let email = "demo@example.com"
    static let password = "tessera-demo"

    static func prepare(_ provider: Provider) async throws -> String {
        let callback = provider.issuer + "/dev/callback"
        if try await provider.store.client(id: clientID) == nil {
            var registration = Provider.ClientRegistration(name: "Tessera demo app", redirectURIs: [callback])
            registration.id = clientID
            registration.secret = clientSecret
            registration.postLogoutRedirectURIs = [provider.issuer + "/dev/callback"]
            _ = try await provider.registerClient(registration)
        }
        if try await provider.store.user(email: email) == nil {
            _ = try await provider.createUser(email: email, password: password, name: "Demo User")
        }
        let query = RequestParameters.encode([
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", callback),
            ("scope", "openid profile email offline_access"), ("state", SecureRandom.token(bytes: 8)),
            ("nonce", SecureRandom.token(bytes: 8)),
        ])
        return """

        Demo ready. Sign in as \(email) / \(password) at:

            \(provider.issuer)/authorize?\(query)

        The demo client is '\(clientID)' with secret '\(clientSecret)'; its callback page shows the code and the curl command that redeems it.

        """
    }
}

struct Clients: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage clients.", subcommands: [Add.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register a client.")

        @OptionGroup var storage: StorageOptions
        @Option(help: "Display name, shown on the login and consent pages.") var name: String
        @Option(help: "Client id (default: generated).") var id: String?
        @Option(help: "A redirect URI, matched exactly (repeatable).") var redirectURI: [String] = []
        @Option(help: "A post-logout redirect URI (repeatable).") var postLogoutRedirectURI: [String] = []
        @Flag(help: "A public client (native or browser app): no secret, PKCE required.") var `public` = false
        @Option(help: "The client secret, at least 32 characters (default: generated).") var secret: String?
        @Option(help: "An allowed scope (repeatable; default openid profile email offline_access).") var scope: [String] = []
        @Option(help: "An allowed grant type (repeatable; default authorization_code refresh_token).") var grantType: [String] = []
        @Flag(help: "A first-party client: no consent page.") var firstParty = false
        @Option(help: "A JWK or JWK Set file: the client authenticates with private_key_jwt.") var jwks: String?
        @Option(help: "An extra iss accepted in its client assertions (Sign in with Apple style: the team id).") var assertionIssuer: String?
        @Option(help: ArgumentHelp("The longest lifetime its client assertions may have (default 5m; up to 182d).",
                                   discussion: "Longer than 5m lets the client reuse one assertion without jti until it expires, as Sign in with Apple's client secret is used: opt in only for such clients."))
        var assertionLifetime: String?
        @Flag(help: "Pairwise subject identifiers for this client.") var pairwise = false
        @Flag(help: "An API that receives access tokens: it may introspect the tokens carrying its --scope values.")
        var resourceServer = false
        @Option(help: "A domain email links may return to as continue_url (repeatable; redirect URI hosts are allowed too).")
        var linkDomain: [String] = []
        @Option(help: "An iOS app that opens email links: TEAMID.bundle.id (repeatable).") var iosApp: [String] = []
        @Option(help: "An Android app that opens email links: PACKAGE=SHA256_CERT_FINGERPRINT (repeatable).") var androidApp: [String] = []
        @Flag(help: "Print the client as JSON.") var json = false

        func run() async throws {
            var registration = Provider.ClientRegistration(name: name, redirectURIs: redirectURI)
            registration.id = id
            registration.postLogoutRedirectURIs = postLogoutRedirectURI
            registration.isPublic = `public`
            registration.secret = secret
            if !scope.isEmpty { registration.scopes = scope.flatMap { $0.split(separator: " ").map(String.init) } }
            if !grantType.isEmpty { registration.grantTypes = grantType }
            registration.firstParty = firstParty
            registration.assertionIssuer = assertionIssuer
            registration.pairwise = pairwise
            registration.resourceServer = resourceServer
            registration.appLinks.linkDomains = linkDomain
            registration.appLinks.appleAppIDs = iosApp
            do {
                for entry in androidApp {
                    guard let equals = entry.firstIndex(of: "=") else {
                        throw ConfigurationError("--android-app takes PACKAGE=SHA256_CERT_FINGERPRINT, not '\(entry)'")
                    }
                    let package = String(entry[..<equals]), fingerprint = String(entry[entry.index(after: equals)...]).uppercased()
                    if let index = registration.appLinks.androidApps.firstIndex(where: { $0.packageName == package }) {
                        registration.appLinks.androidApps[index].certificateFingerprints.append(fingerprint)
                    } else {
                        registration.appLinks.androidApps.append(.init(packageName: package, certificateFingerprints: [fingerprint]))
                    }
                }
                registration.assertionLifetime = try assertionLifetime.map { try ConfigurationLoader.duration($0, "--assertion-lifetime") }
                if let jwks {
                    guard let data = FileManager.default.contents(atPath: jwks) else { throw ConfigurationError("cannot read \(jwks)") }
                    registration.jwks = try JWKSet.parse(data)
                }
                let (client, secret) = try await withProvider(storage.flags) { try await $0.registerClient(registration) }
                if json {
                    var object: [String: JSONValue] = [
                        "client_id": .string(client.id), "client_name": .string(client.name),
                        "redirect_uris": .array(client.redirectURIs.map(JSONValue.string)),
                        "post_logout_redirect_uris": .array(client.postLogoutRedirectURIs.map(JSONValue.string)),
                        "grant_types": .array(client.grantTypes.map(JSONValue.string)), "scope": .string(client.scopes.description),
                        "token_endpoint_auth_method": .string(client.authMethod.rawValue), "first_party": .bool(client.firstParty),
                        "subject_type": .string(client.subjectType.rawValue),
                    ]
                    if let secret { object["client_secret"] = .string(secret) }
                    if let lifetime = client.assertionLifetime { object["assertion_lifetime"] = .int(lifetime) }
                    print(String(decoding: try CanonicalJSON.encode(object), as: UTF8.self))
                } else {
                    print("client_id: \(client.id)")
                    if let secret { print("client_secret: \(secret)   (shown once; stored hashed)") }
                }
            } catch let error as ConfigurationError { fail(error) } catch let error as StoreError { fail(error) } catch let error as JOSEError {
                fail(error)
            }
        }
    }
}

struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage users.", subcommands: [Add.self, Update.self, Show.self, Delete.self])

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a user: their sessions and tokens end, and upstream tokens (Apple's) are revoked first.")

        @OptionGroup var storage: StorageOptions
        @Argument(help: "The user's email address.") var email: String

        func run() async throws {
            try await Users.run {
                try await withProvider(storage.flags) { provider in
                    guard let user = try await provider.store.user(email: email) else { throw StoreError.notFound("user \(email)") }
                    try await provider.deleteUser(user)
                    print("user \(user.id) <\(user.email)> deleted")
                }
            }
        }
    }

    /// Reads a profile file: a JSON object of claims (see docs/claims.md).
    static func profile(_ path: String?) throws -> [String: JSONValue] {
        guard let path else { return [:] }
        guard let data = FileManager.default.contents(atPath: path) else { throw ConfigurationError("cannot read \(path)") }
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: data) else {
            throw ConfigurationError("\(path) must hold a JSON object of claims")
        }
        return object
    }

    static func printUser(_ user: User, json: Bool) throws {
        if json {
            var object = user.claims
            object["id"] = .string(user.id)
            object["has_password"] = .bool(user.passwordHash != nil)
            object["created_at"] = .int(user.createdAt)
            print(String(decoding: try CanonicalJSON.encode(object), as: UTF8.self))
        } else {
            print("user \(user.id) <\(user.email)>" + (user.name.map { " \($0)" } ?? ""))
            for (name, value) in user.profile.sorted(by: { $0.key < $1.key }) {
                print("  \(name): \(String(decoding: try CanonicalJSON.encode(value), as: UTF8.self))")
            }
        }
    }

    /// Runs an admin action, turning the errors a person can fix into a message and exit code 2.
    static func run(_ body: () async throws -> Void) async throws {
        do { try await body() } catch let error as ConfigurationError { fail(error) } catch let error as StoreError { fail(error) } catch let error as ClaimValidationError {
            fail(error)
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a user (with a verified email unless --unverified).")

        @OptionGroup var storage: StorageOptions
        @Argument(help: "The user's email address.") var email: String
        @Flag(help: "Read the password from standard input (first line).") var passwordStdin = false
        @Option(help: "The user's full name (the name claim).") var name: String?
        @Option(help: "A JSON file of profile claims, e.g. {\"given_name\": \"Anna\", \"birthdate\": \"1990-05-01\"}.") var profile: String?
        @Flag(help: "The email address was not verified (an imported account): the first email-link sign-in removes the password.")
        var unverified = false
        @Flag(help: "Print the user as JSON.") var json = false

        func run() async throws {
            var password: String?
            if passwordStdin {
                guard let line = readLine(strippingNewline: true), !line.isEmpty else { fail(ConfigurationError("no password on standard input")) }
                password = line
            }
            try await Users.run {
                let claims = try Users.profile(profile)
                let user = try await withProvider(storage.flags) {
                    try await $0.createUser(email: email, password: password, name: name, profile: claims, emailVerified: !unverified)
                }
                if json { try Users.printUser(user, json: true) } else { print("user \(user.id) <\(user.email)> created") }
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a user's profile claims.",
            discussion: "The file's claims are merged into the profile; a claim set to null is removed. Nothing is written if any value is invalid.")

        @OptionGroup var storage: StorageOptions
        @Argument(help: "The user's email address.") var email: String
        @Option(help: "A JSON file of profile claims.") var profile: String
        @Flag(help: "Print the user as JSON.") var json = false

        func run() async throws {
            try await Users.run {
                let changes = try Users.profile(profile)
                let user = try await withProvider(storage.flags) { try await $0.updateProfile(email: email, changes: changes) }
                try Users.printUser(user, json: json)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a user and their claims.")

        @OptionGroup var storage: StorageOptions
        @Argument(help: "The user's email address.") var email: String
        @Flag(help: "Print the user as JSON.") var json = false

        func run() async throws {
            try await Users.run {
                guard let user = try await withProvider(storage.flags, { try await $0.store.user(email: email) }) else {
                    throw StoreError.notFound("user \(email)")
                }
                try Users.printUser(user, json: json)
            }
        }
    }
}

struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage signing keys.", subcommands: [Rotate.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make the next key current.",
            discussion: "The previous key stays in the JWKS for the grace period, so tokens it signed keep verifying. "
                + "Running servers pick the change up within a minute.")

        @OptionGroup var storage: StorageOptions
        @Option(help: "Signing algorithm of the new next key: RS256, ES256 or EdDSA.") var signingAlgorithm: String?

        func run() async throws {
            var flags = storage.flags
            flags["signing-algorithm"] = signingAlgorithm
            do {
                let kid = try await withProvider(flags) { try await $0.keys.rotate() }
                print("current signing key is now \(kid)")
            } catch let error as ConfigurationError { fail(error) } catch let error as StoreError { fail(error) }
        }
    }
}
