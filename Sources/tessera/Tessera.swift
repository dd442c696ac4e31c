import ArgumentParser
import Foundation
import Logging
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain

@main
struct Tessera: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tessera",
        abstract: "Tessera: a self-hosted OpenID Connect provider.",
        subcommands: [Serve.self, Clients.self, Users.self, Keys.self, AuditCommand.self, SettingsCommand.self, Login.self])
}

/// Options every command shares: where the data is.
struct StorageOptions: ParsableArguments {
    @Option(help: StorageOptions.help("database")) var database: String?
    @Option(help: StorageOptions.help("config")) var config: String?

    /// The setting's own summary, default and variable.
    static func help(_ name: String) -> ArgumentHelp {
        ArgumentHelp(Setting.named(name)?.helpLine ?? "")
    }

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
            + "Every setting can also be given as its TESSERA_* environment variable or in the --config file "
            + "(docs/configuration.md).\n\nSETTINGS:\n" + SettingFlags.help)

    /// The settings' flags, read by ``SettingFlags`` from the one table of settings.
    @Argument(parsing: .allUnrecognized, help: .hidden) var settings: [String] = []

    func run() async throws {
        let flags = try SettingFlags.parse(settings)
        let configuration: ServerConfiguration
        var logger: Logger
        var provider: Provider?
        var waitingFor: DatabaseUnavailable?
        do {
            configuration = try ConfigurationLoader(flags: flags).configuration()
            bootstrapLogging(format: configuration.logFormat)
            if configuration.metricsPort != nil { bootstrapMetrics() }
            logger = Logger(label: "tessera")  // after the bootstrap: a logger keeps the handler it was made with
            logger.logLevel = Logger.Level(rawValue: configuration.logLevel) ?? .info
            do {
                provider = try await Provider.start(configuration, logger: logger)
            } catch let error as DatabaseUnavailable {
                // PostgreSQL may come after the node (a host's boot, a failover): the node waits for it.
                guard case .postgres = configuration.database else { throw error }
                waitingFor = error
            }
        } catch let error as ConfigurationError {
            fail(error)
        } catch let error as DatabaseUnavailable {
            fail(error)
        }
        let app = try Node.application(configuration, provider: provider, waitingFor: waitingFor, logger: logger) { provider, port in
            let demoText = configuration.demo ? try await Demo.prepare(provider) : nil
            // Written unbuffered: scripts wait for this line.
            FileHandle.standardOutput.write(Data("Tessera is ready: issuer \(provider.issuer), listening on \(configuration.host):\(port), database \(configuration.database), signing \((try? provider.keys.signingDescription) ?? "?")\n".utf8))
            if let demoText { FileHandle.standardOutput.write(Data((demoText + "\n").utf8)) }
        }
        try await Node.run(app, configuration: configuration, logger: logger)
    }
}

struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings", abstract: "List every setting: its flag, environment variable and default.")

    @Flag(help: "The table of docs/configuration.md, in markdown.") var markdown = false

    func run() {
        print(markdown ? Setting.markdownTable : SettingFlags.help, terminator: markdown ? "" : "\n")
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
    static let configuration = CommandConfiguration(
        abstract: "Manage clients.", subcommands: [Add.self, List.self, Show.self, Update.self, RotateSecret.self, Delete.self])

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
        @Flag(help: "Its authorization requests must be pushed first (RFC 9126 require_pushed_authorization_requests).")
        var requirePar = false
        @Flag(help: ArgumentHelp("The operator's own app, which approves other apps' sign-ins for its user (needs --first-party).",
                                 discussion: "Its --ios-app and --android-app values then claim the issuer's /authorize links (docs/cross-app.md)."))
        var authenticator = false
        @Option(name: .customLong("device-sso-group"), help: "Native SSO: the apps of one vendor that share a device session name the same group.")
        var deviceSSOGroup: String?
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
            registration.requirePushedRequests = requirePar
            registration.authenticator = authenticator
            registration.deviceSSOGroup = deviceSSOGroup
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
                registration.assertionLifetime = try assertionLifetime.map { try Setting.duration($0, "--assertion-lifetime") }
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
                    if client.requirePushedRequests { object["require_pushed_authorization_requests"] = .bool(true) }
                    if client.authenticator { object["authenticator"] = .bool(true) }
                    if let group = client.deviceSSOGroup { object["device_sso_group"] = .string(group) }
                    print(String(decoding: try CanonicalJSON.encode(object), as: UTF8.self))
                } else {
                    print("client_id: \(client.id)")
                    if let secret { print("client_secret: \(secret)   (shown once; stored hashed)") }
                }
            } catch let error as ConfigurationError { fail(error) } catch let error as DatabaseUnavailable { fail(error) } catch let error as StoreError { fail(error) } catch let error as JOSEError {
                fail(error)
            } catch let error as AdminError { fail(error) }
        }
    }
}

struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage users.",
        subcommands: [Add.self, List.self, Show.self, Update.self, Disable.self, Enable.self, SignOut.self, Delete.self, Import.self])

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a user: their sessions and tokens end, and upstream tokens (Apple's) are revoked first.")

        @OptionGroup var action: Action

        func run() async throws {
            try await action.target.perform(AdminCall(.delete, "/users/\(action.user)"))
            if !action.target.json { print("user \(action.user) deleted") }
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
        do { try await body() } catch let error as ConfigurationError { fail(error) } catch let error as DatabaseUnavailable { fail(error) } catch let error as StoreError { fail(error) } catch let error as ClaimValidationError {
            fail(error)
        } catch let error as AdminError { fail(error) }
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
            abstract: "Change a user's profile claims, roles, password or address verification.",
            discussion: "The file's claims are merged into the profile; a claim set to null is removed. Nothing is written if any value is invalid, or if someone changed the user since it was read.")

        @OptionGroup var action: Action
        @Option(help: "A JSON file of profile claims.") var profile: String?
        @Option(help: "A role the user holds (repeatable; replaces the roles): admin opens the admin console and API.") var role: [String] = []
        @Flag(help: "Take every role away.") var noRoles = false
        @Flag(help: "Read a new password from standard input (first line).") var passwordStdin = false
        @Flag(help: "Remove the password: the user signs in by email code or link, or an upstream provider.") var clearPassword = false
        @Flag(help: "Mark the email address verified.") var verifyEmail = false

        func run() async throws {
            let target = action.target, user = action.user
            var password: String?
            if passwordStdin {
                guard let line = readLine(strippingNewline: true), !line.isEmpty else { fail(ConfigurationError("no password on standard input")) }
                password = line
            }
            var body: [String: JSONValue] = [:]
            do { if profile != nil { body["profile"] = .object(try Users.profile(profile)) } } catch let error as ConfigurationError { fail(error) }
            if noRoles || !role.isEmpty { body["roles"] = .array(role.map(JSONValue.string)) }
            guard !body.isEmpty || password != nil || clearPassword || verifyEmail else {
                fail(ConfigurationError("nothing to change: give --profile, --role, --password-stdin, --clear-password or --verify-email"))
            }
            var result: AdminResult?
            if !body.isEmpty {
                let current = try await target.perform(AdminCall(.get, "/users/\(user)"))
                result = try await target.perform(AdminCall(.patch, "/users/\(user)", body: body, ifMatch: current.version))
            }
            if let password {
                result = try await target.perform(AdminCall(.put, "/users/\(user)/password", body: ["password": .string(password)]))
            } else if clearPassword {
                result = try await target.perform(AdminCall(.delete, "/users/\(user)/password"))
            }
            if verifyEmail { result = try await target.perform(AdminCall(.post, "/users/\(user)/verify-email")) }
            if let result { try target.print(result, table: Users.describe) }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a user: profile, roles, linked identities, sessions, consents and the last sign-in.")

        @OptionGroup var action: Action

        func run() async throws {
            try action.target.print(try await action.target.perform(AdminCall(.get, "/users/\(action.user)")), table: Users.describe)
        }
    }
}

struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Show the audit events: sign-ins, password and address changes, linked identities, consents, deletions, administrators' changes.",
        discussion: "Newest first. Kept for the audit-retention setting (180 days by default).")

    @OptionGroup var storage: StorageOptions
    @Option(help: "One account's events: its email address, or its id (a deleted account's id still finds its events).") var user: String?
    @Option(help: "Only events of this kind (\(AuditEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))).") var kind: String?
    @Option(help: "At most this many events.") var limit = 50
    @Flag(help: "Print the events as JSON, one object per line.") var json = false

    func run() async throws {
        try await Users.run {
            var filter = AuditFilter()
            if let kind {
                guard let parsed = AuditEvent.Kind(rawValue: kind) else {
                    throw ConfigurationError("--kind must be one of \(AuditEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                filter.kind = parsed
            }
            let events = try await withProvider(storage.flags) { provider in
                if let user {
                    filter.userID = try await provider.store.user(email: MailAddress.normalise(user))?.id ?? user
                }
                return try await provider.store.auditEvents(filter, limit: limit)
            }
            for event in events {
                if json {
                    var object: [String: JSONValue] = ["id": .string(event.id), "kind": .string(event.kind.rawValue),
                                                       "at": .int(event.at), "actor": .string(event.actor.rawValue)]
                    for (name, value) in [("user_id", event.userID), ("client_id", event.clientID), ("email", event.email),
                                          ("ip", event.ip), ("detail", event.detail)] {
                        if let value { object[name] = .string(value) }
                    }
                    print(String(decoding: try CanonicalJSON.encode(object), as: UTF8.self))
                } else {
                    let time = Date(timeIntervalSince1970: TimeInterval(event.at)).formatted(.iso8601)
                    let fields = [event.email, event.clientID.map { "client \($0)" }, event.ip.map { "from \($0)" }, event.detail]
                    print("\(time)  \(event.kind.rawValue)  by \(event.actor.rawValue)  " + fields.compactMap { $0 }.joined(separator: "  "))
                }
            }
        }
    }
}

struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage signing keys.", subcommands: [List.self, Rotate.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make the next key current.",
            discussion: "The previous key stays in the JWKS for the grace period, so tokens it signed keep verifying. "
                + "Running servers pick the change up within seconds.")

        @OptionGroup var target: AdminTarget
        @Option(help: "Signing algorithm of the new next key: RS256, ES256 or EdDSA (on the database; a server uses its own setting).")
        var signingAlgorithm: String?

        func run() async throws {
            var call = AdminCall(.post, "/keys/rotate")
            if let signingAlgorithm {
                guard target.server == nil else {
                    fail(ConfigurationError("--signing-algorithm works on the database; a running server makes keys with its own signing-algorithm setting"))
                }
                var flags = target.storage.flags
                flags["signing-algorithm"] = signingAlgorithm
                do {
                    let kid = try await withProvider(flags) { try await $0.rotateKeys(by: .operator) }
                    call = AdminCall(.get, "/keys")
                    if !target.json { print("current signing key is now \(kid)"); return }
                } catch let error as ConfigurationError { fail(error) } catch let error as DatabaseUnavailable { fail(error) } catch let error as StoreError { fail(error) }
            }
            let result = try await target.perform(call)
            try target.print(result) { "current signing key is now \($0["current"]?.stringValue ?? $0["keys"]?.arrayValue?.first?.objectValue?["kid"]?.stringValue ?? "")\n" }
        }
    }
}
