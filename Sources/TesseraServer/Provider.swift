import Crypto
import Foundation
import Logging
import Synchronization
import TesseraCore
import TesseraDomain
import TesseraSQL

/// The provider, wired: stores, keys and the domain services built from one configuration.
/// Nothing here knows about HTTP.
public final class Provider: Sendable {
    public let configuration: ServerConfiguration
    public let issuer: String
    public let store: SQLStore
    public let keys: KeyRing
    public let passwords: PasswordHasher
    /// Password hashings and sign-ins started, counted per client address and per client.
    public let workLimits: WorkLimits
    public let clock: WallClock
    public let logger: Logger
    let tokenIssuer: TokenIssuer
    let authorizer: Authorizer
    let clientAuthenticator: ClientAuthenticator
    let accessTokens: AccessTokenValidator
    let tokenIntrospection: TokenIntrospection
    /// The grants of `/token`.
    let grants: TokenEndpointGrants
    /// The grants of the native API's `/oauth2/v2.0/token`: its own three, and refresh_token.
    let nativeGrants: TokenEndpointGrants
    let passwordSignIn: PasswordSignIn
    let pages: PageRenderer
    /// The hosted forms' CSRF tokens (keyed by a secret shared by every node through the database).
    let csrf: CSRF
    /// Browsers where users signed in with their password (a key derived from the same secret, for this use only).
    let deviceCookies: DeviceCookies
    /// Sends email through the outbox: over SMTP with `--smtp-url`, to the log without.
    public let mailer: any Mailer
    let mailTemplates: MailTemplates
    /// Delivers the outbox; run by ``MailDeliveryService``.
    let mailDelivery: OutboxDelivery
    /// Sign-up, sign-in and password reset (the native API's flows).
    let flows: AccountFlows
    /// Email-link sign-in.
    let emailLinks: EmailLinks
    /// Grants and tokens for users who signed in without a browser session.
    let userTokens: UserGrantTokens
    /// Sign-in through upstream identity providers.
    let federation: Federation
    /// Browser sessions.
    let sessions: Sessions
    /// A user's account as the account page and API see it.
    let accounts: Accounts
    /// The registered clients.
    let clients: Clients
    /// What happened to accounts and clients (`audit_events`).
    public let audit: AuditTrail

    /// Opens the database, applies migrations and loads (or creates) the signing keys.
    public static func start(_ configuration: ServerConfiguration, clock: WallClock = .system, logger: Logger) async throws -> Provider {
        try configuration.validate()
        let database = try await openDatabase(configuration.database, poolSize: configuration.databasePoolSize, logger: logger)
        do {
            let store = SQLStore(database: database)
            try await store.migrate()
            let masterKey = try MasterKey.load(configuration, logger: logger)
            let keys = KeyRing(store: store, algorithm: configuration.signingAlgorithm, gracePeriod: configuration.keyGracePeriod,
                               masterKey: masterKey, clock: clock, logger: logger)
            try await keys.start()
            let pairwiseSecret = try await store.setting("pairwise_secret") { SecureRandom.token() }
            let csrfSecret = try await store.setting("csrf_secret") { SecureRandom.token(bytes: 32) }
            let provider = try Provider(configuration: configuration, store: store, keys: keys, pairwiseSecret: pairwiseSecret,
                                        csrfSecret: csrfSecret, secretBox: masterKey.box, clock: clock, logger: logger)
            try await provider.federation.sealStoredTokens()
            return provider
        } catch {
            try? await database.close()
            throw error
        }
    }

    init(configuration: ServerConfiguration, store: SQLStore, keys: KeyRing, pairwiseSecret: String, csrfSecret: String,
         secretBox: SecretBox, clock: WallClock, logger: Logger) throws {
        self.configuration = configuration
        self.issuer = configuration.issuerURL
        self.store = store
        self.keys = keys
        self.clock = clock
        self.logger = logger
        passwords = PasswordHasher(parameters: configuration.passwordHashing, queueLength: configuration.workLimits.hashingQueue)
        workLimits = WorkLimits(configuration.workLimits, store: store)
        audit = AuditTrail(store: store, clock: clock, logger: logger)
        tokenIssuer = TokenIssuer(issuer: issuer, keys: keys, clock: clock, accessTokenLifetime: configuration.accessTokenLifetime,
                                  idTokenLifetime: configuration.idTokenLifetime,
                                  refreshTokenLifetime: configuration.refreshTokenLifetime, pairwiseSecret: pairwiseSecret)
        authorizer = Authorizer(issuer: issuer, clients: store, users: store, consents: store, interactions: store, grants: store,
                                keys: keys, tokenIssuer: tokenIssuer, clock: clock,
                                codeLifetime: configuration.authorizationCodeLifetime,
                                interactionLifetime: configuration.interactionLifetime, limits: workLimits, audit: audit)
        let issuer = configuration.issuerURL
        clientAuthenticator = ClientAuthenticator(clients: store, grants: store, audiences: [issuer, issuer + Endpoint.token.path], clock: clock)
        accessTokens = AccessTokenValidator(issuer: issuer, keys: keys, grants: store, clock: clock)
        tokenIntrospection = TokenIntrospection(issuer: issuer, grants: store, accessTokens: accessTokens,
                                                tokenIssuer: tokenIssuer, clock: clock)
        userTokens = UserGrantTokens(issuer: tokenIssuer, users: store, grants: store, clock: clock)
        passwordSignIn = PasswordSignIn(users: store, passwords: passwords, limits: configuration.loginLimits, throttles: store, audit: audit, clock: clock)
        pages = try PageRenderer()
        // One stored secret, a key of its own for each use: a MAC made for one can never pass as the other's.
        csrf = CSRF(key: Self.key(from: csrfSecret, for: "csrf-form-token"), secure: configuration.secureCookies)
        deviceCookies = DeviceCookies(key: Self.key(from: csrfSecret, for: "device-cookie"), secure: configuration.secureCookies)
        let mailDomain = MailAddress.domain(ofIssuer: issuer)
        let transport: any MailTransport = if let smtpURL = configuration.smtpURL {
            try SMTPTransport(settings: SMTPSettings(parsing: smtpURL), clientName: mailDomain, logger: logger)
        } else if configuration.dev {
            LogTransport(logger: logger)
        } else {
            UnsentTransport()
        }
        mailDelivery = OutboxDelivery(store: store, transport: transport, clock: clock, logger: logger)
        mailer = OutboxMailer(store: store, sender: try configuration.mailFrom.map(MailAddress.init(parsing:))
                                  ?? MailAddress.defaultSender(issuer: issuer),
                              domain: mailDomain, clock: clock, signal: mailDelivery.signal)
        mailTemplates = try MailTemplates()
        flows = AccountFlows(settings: configuration.nativeAuth, enumerationProtection: configuration.enumerationProtection, store: store,
                             hasher: passwords, policy: PasswordPolicy(), passwordSignIn: passwordSignIn, limits: workLimits,
                             mail: FlowMail(mailer: mailer, templates: mailTemplates, issuerHost: URLComponents(string: issuer)?.host ?? issuer),
                             audit: audit, clock: clock, logger: logger)
        emailLinks = EmailLinks(lifetime: configuration.emailLinkLifetime, issuer: issuer, store: store, limits: flows.mailLimits,
                                mail: flows.mail, audit: audit, clock: clock, logger: logger)
        federation = try Federation(settings: configuration.upstreamProviders, issuer: issuer, store: store, secretBox: secretBox,
                                    audit: audit, clock: clock, logger: logger)
        sessions = Sessions(store: store, lifetime: configuration.sessionLifetime, clock: clock)
        accounts = Accounts(users: store, clients: store, consents: store, identities: store, audit: audit, clock: clock)
        clients = Clients(store: store)
        let refreshGrant = RefreshTokenGrant(grants: store, tokens: userTokens, clock: clock,
                                             reuseInterval: configuration.refreshTokenReuseInterval)
        grants = TokenEndpointGrants([
            AuthorizationCodeGrant(grants: store, tokens: userTokens, clock: clock),
            refreshGrant,
            ClientCredentialsGrant(issuer: tokenIssuer),
            UpstreamTokenExchangeGrant(federation: federation, tokens: userTokens, accessTokens: accessTokens),
        ])
        nativeGrants = TokenEndpointGrants(NativeFlowGrant.all(flows.signIn, tokens: userTokens) + [refreshGrant])
    }

    /// A key for one `purpose` from a stored secret (HKDF-SHA256, RFC 5869).
    static func key(from secret: String, for purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: Data(secret.utf8)), info: Data(purpose.utf8), outputByteCount: 32)
    }

    /// Removes what has expired (codes, sessions, flows, delivered mail), keeping a day of it,
    /// and audit events older than `audit-retention`;
    /// once an hour across all nodes (whichever asks first after the hour takes the turn).
    /// True when this node did it.
    @discardableResult
    func purgeExpiredIfDue() async throws -> Bool {
        let now = clock.now()
        guard try await store.takeTurn("purge", now: now, every: 3600) else { return false }
        try await store.purgeExpired(now: now, keepFor: 86_400)
        try await store.purgeAudit(before: now - configuration.auditRetention)
        return true
    }

    /// Why this node should not be sent requests now, or nil when it is ready: the signing keys
    /// are loaded, and the database answers within `timeout` with every migration applied.
    public func unreadiness(timeout: Duration = .seconds(2)) async -> String? {
        do {
            _ = try keys.signingDescription
        } catch {
            return "signing keys: \(error)"
        }
        let store = store
        // A database that hangs must not hang the probe: the first of the answer and the
        // deadline wins, and the check is left to finish (or fail) on its own.
        return await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            let answer = FirstAnswer(continuation)
            Task {
                do {
                    answer.give(try await store.isSchemaCurrent() ? nil : "database: migrations not applied")
                } catch {
                    answer.give("database: \(databaseErrorReason(error))")
                }
            }
            Task {
                try? await Task.sleep(for: timeout)
                answer.give("database: no answer within \(timeout.components.seconds) s")
            }
        }
    }

    /// Starts a provider, runs `body` with it, and shuts it down whatever happens.
    public static func with<T>(_ configuration: ServerConfiguration, clock: WallClock = .system, logger: Logger,
                               _ body: (Provider) async throws -> T) async throws -> T {
        let provider = try await start(configuration, clock: clock, logger: logger)
        do {
            let result = try await body(provider)
            await provider.shutdown()
            return result
        } catch {
            await provider.shutdown()
            throw error
        }
    }

    public func shutdown() async {
        try? await store.database.close()
    }

    // MARK: Administration

    /// What `tessera clients add` asks for.
    public struct ClientRegistration: Sendable {
        public var id: String?
        public var name: String
        public var redirectURIs: [String]
        public var postLogoutRedirectURIs: [String] = []
        public var isPublic = false
        public var secret: String?
        public var scopes: [String] = ["openid", "profile", "email", "offline_access"]
        public var grantTypes: [String] = [GrantType.authorizationCode, GrantType.refreshToken]
        public var firstParty = false
        public var jwks: JWKSet?
        public var assertionIssuer: String?
        /// Seconds; set only to accept long-lived, reusable assertions (Sign in with Apple's shape).
        public var assertionLifetime: Int64?
        public var pairwise = false
        /// An API that may introspect tokens carrying its (non-catalogue) scopes.
        public var resourceServer = false
        /// Email-link settings: continue-URL domains, iOS and Android apps.
        public var appLinks = ClientAppLinks()
        public init(name: String, redirectURIs: [String]) {
            self.name = name
            self.redirectURIs = redirectURIs
        }
    }

    /// Registers a client; returns it with its secret in clear text (shown once, stored hashed).
    public func registerClient(_ registration: ClientRegistration) async throws -> (client: Client, secret: String?) {
        try Self.validate(registration)
        let authMethod: ClientAuthMethod = registration.isPublic ? .none : (registration.jwks != nil ? .privateKeyJWT : .clientSecretBasic)
        var secret: String?
        if authMethod == .clientSecretBasic {
            secret = registration.secret ?? SecureRandom.token()
        }
        let client = Client(
            id: registration.id ?? Self.newClientID(), name: registration.name, secretHash: secret.map(ClientSecretHash.make),
            authMethod: authMethod, redirectURIs: registration.redirectURIs, postLogoutRedirectURIs: registration.postLogoutRedirectURIs,
            grantTypes: registration.grantTypes, scopes: ScopeSet(registration.scopes), firstParty: registration.firstParty,
            jwks: registration.jwks, assertionIssuer: registration.assertionIssuer, assertionLifetime: registration.assertionLifetime,
            subjectType: registration.pairwise ? .pairwise : .public, createdAt: clock.now())
        var registered = client
        registered.appLinks = registration.appLinks
        registered.resourceServer = registration.resourceServer
        try await store.insert(registered)
        await audit.record(.clientChanged, actor: .admin, clientID: registered.id, detail: "registered")
        return (registered, secret)
    }

    /// A new client id: 16 random bytes as base64url, never starting with `-` or `_`, so that
    /// a command line (`tessera login --client-id ID`) never takes it for an option.
    static func newClientID() -> String {
        while true {
            let id = SecureRandom.token(bytes: 16)
            if let first = id.first, first.isLetter || first.isNumber { return id }
        }
    }

    static func validate(_ links: ClientAppLinks) throws {
        for domain in links.linkDomains {
            guard !domain.isEmpty, domain.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }), !domain.hasPrefix("."),
                  !domain.hasSuffix(".") else {
                throw ConfigurationError("'\(domain)' is not a domain name (give the host only, e.g. app.example.com)")
            }
        }
        for appID in links.appleAppIDs {
            let parts = appID.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 10, parts[0].allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }),
                  parts[1].contains(".") else {
                throw ConfigurationError("'\(appID)' is not an iOS app id: TEAMID.bundle.id, the team id being 10 characters (ABCDE12345.com.example.app)")
            }
        }
        for app in links.androidApps {
            guard app.packageName.split(separator: ".").count >= 2,
                  app.packageName.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_") }) else {
                throw ConfigurationError("'\(app.packageName)' is not an Android package name (com.example.app)")
            }
            for fingerprint in app.certificateFingerprints {
                let bytes = fingerprint.split(separator: ":")
                guard bytes.count == 32, bytes.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else {
                    throw ConfigurationError("'\(fingerprint)' is not a SHA-256 certificate fingerprint (32 hex bytes separated by colons)")
                }
            }
        }
    }

    static func validate(_ registration: ClientRegistration) throws {
        guard !registration.name.trimmingCharacters(in: .whitespaces).isEmpty else { throw ConfigurationError("a client needs a --name") }
        let supported: Set = [GrantType.authorizationCode, GrantType.refreshToken, GrantType.clientCredentials]
        for grant in registration.grantTypes where !supported.contains(grant) {
            throw ConfigurationError("unsupported grant type '\(grant)' (use authorization_code, refresh_token or client_credentials)")
        }
        if registration.grantTypes.contains(GrantType.authorizationCode) && registration.redirectURIs.isEmpty {
            throw ConfigurationError("the authorization_code grant needs at least one --redirect-uri")
        }
        for uri in registration.redirectURIs + registration.postLogoutRedirectURIs {
            guard let url = URL(string: uri), let scheme = url.scheme?.lowercased(), url.fragment == nil else {
                throw ConfigurationError("'\(uri)' is not an absolute URI without a fragment")
            }
            if scheme == "http" {
                let host = url.host ?? ""
                guard ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) else {
                    throw ConfigurationError("'\(uri)' uses http: only loopback redirect URIs may (RFC 8252 §7.3); use https")
                }
            } else if scheme != "https" && !scheme.contains(".") {
                throw ConfigurationError("'\(uri)': a custom scheme must be a reverse domain name such as com.example.app (RFC 8252 §7.1)")
            }
        }
        if registration.resourceServer {
            guard !registration.isPublic else { throw ConfigurationError("a --resource-server authenticates to introspect: it can't be --public") }
            guard registration.scopes.contains(where: { ScopeCatalogue.definition($0) == nil }) else {
                throw ConfigurationError("a --resource-server needs the --scope values it serves (e.g. --scope api.read)")
            }
        }
        if registration.isPublic {
            if registration.secret != nil { throw ConfigurationError("a --public client has no secret") }
            if registration.grantTypes.contains(GrantType.clientCredentials) {
                throw ConfigurationError("a --public client cannot use client_credentials")
            }
        }
        if let secret = registration.secret, secret.count < 32 {
            throw ConfigurationError("a client secret must be at least 32 characters (leave --secret out to generate one)")
        }
        try validate(registration.appLinks)
        if registration.jwks != nil && registration.secret != nil {
            throw ConfigurationError("a client authenticates either with a secret or with its keys, not both")
        }
        for key in registration.jwks?.keys ?? [] {
            _ = try JWSVerificationKey(jwk: key)
        }
        if let lifetime = registration.assertionLifetime {
            guard registration.jwks != nil else { throw ConfigurationError("--assertion-lifetime is for clients that authenticate with --jwks") }
            guard (ClientAuthenticator.defaultAssertionLifetime...ClientAuthenticator.maxAssertionLifetime).contains(lifetime) else {
                throw ConfigurationError("--assertion-lifetime must be between 5m and 182d (Sign in with Apple's six months)")
            }
        }
    }

    /// Creates a user; the profile is validated first and the password hashed off the event loop.
    public func createUser(email: String, password: String?, name: String? = nil, profile: [String: JSONValue] = [:],
                           emailVerified: Bool = true) async throws -> User {
        let email = MailAddress.normalise(email)
        guard MailAddress.isPlausible(email) else { throw ConfigurationError("'\(email)' is not an email address") }
        if let password, let violation = PasswordPolicy().check(password, email: email) {
            throw ConfigurationError(PasswordPolicy.explanation(violation, policy: PasswordPolicy()))
        }
        var profile = profile
        if let name { profile["name"] = .string(name) }
        try ScopeCatalogue.validate(profile: profile)
        let now = clock.now()
        let hash: String? = if let password { try await passwords.hash(password) } else { nil }
        let user = User(id: UUID().uuidString.lowercased(), email: email, emailVerified: emailVerified, passwordHash: hash,
                        profile: profile, createdAt: now, updatedAt: now)
        try await store.insert(user)
        await audit.record(.accountCreated, actor: .admin, userID: user.id, email: user.email)
        return user
    }

    /// Merges `changes` into a user's profile (a JSON null removes a claim); the result is
    /// validated as a whole and written at once, so a bad value changes nothing.
    public func updateProfile(email: String, changes: [String: JSONValue]) async throws -> User {
        guard var user = try await store.user(email: email) else { throw StoreError.notFound("user \(email)") }
        for (name, value) in changes {
            user.profile[name] = value == .null ? nil : value
        }
        try ScopeCatalogue.validate(profile: user.profile)
        user.updatedAt = clock.now()
        try await store.updateProfile(userID: user.id, profile: user.profile, now: user.updatedAt)
        await audit.record(.userChanged, actor: .admin, userID: user.id, email: user.email,
                           detail: "profile: " + changes.keys.sorted().joined(separator: ", "))
        return user
    }

    /// How the user can sign in: `password`, `email` (codes and links, for a verified address)
    /// and the ids of the upstream providers linked to the account.
    public func linkedProviders(of user: User) async throws -> [String] {
        var providers: [String] = []
        if user.passwordHash != nil { providers.append("password") }
        if user.emailVerified && !user.email.hasSuffix(".upstream.invalid") { providers.append("email") }
        providers += try await store.identities(userID: user.id).map(\.providerID)
        return providers
    }

    /// Deletes a user, revoking the upstream tokens the account holds first (Apple requires it).
    public func deleteUser(_ user: User) async throws {
        try await federation.deleteUser(user, by: .admin)
    }
}

/// Resumes a continuation with the first value given; later ones are dropped.
final class FirstAnswer<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Mutex(continuation)
    }

    func give(_ value: Value) {
        continuation.withLock { pending in
            let taken = pending
            pending = nil
            return taken
        }?.resume(returning: value)
    }
}
