import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
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
    /// RP-initiated logout: what a request may do.
    let logout: Logout
    /// A user's account as the account page and API see it.
    let accounts: Accounts
    /// The registered clients.
    let clients: Clients
    /// What happened to accounts and clients (`audit_events`).
    public let audit: AuditTrail
    /// The rules of the admin API, the console and the CLI.
    public let clientAdministration: ClientAdministration
    public let userAdministration: UserAdministration
    public let userImport: UserImport
    /// App-to-app authorization and hand-off tickets (authenticator apps).
    let appApprovals: AppApprovals
    /// Native SSO's device sessions.
    let deviceSessions: DeviceSessions

    /// Opens the database, applies migrations and loads (or creates) the signing keys.
    public static func start(_ configuration: ServerConfiguration, clock: WallClock = .system, logger: Logger) async throws -> Provider {
        try configuration.validate()
        let database = try await openDatabase(configuration.database, poolSize: configuration.databasePoolSize,
                                              waitLimit: .seconds(configuration.databaseTimeout), logger: logger)
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
                                crossApp: store, keys: keys, tokenIssuer: tokenIssuer, clock: clock,
                                codeLifetime: configuration.authorizationCodeLifetime,
                                interactionLifetime: configuration.interactionLifetime, limits: workLimits, audit: audit)
        let issuer = configuration.issuerURL
        clientAuthenticator = ClientAuthenticator(clients: store, grants: store, audiences: [issuer, issuer + Endpoint.token.path], clock: clock)
        accessTokens = AccessTokenValidator(issuer: issuer, keys: keys, grants: store, clock: clock)
        deviceSessions = DeviceSessions(store: store, lifetime: configuration.refreshTokenLifetime, issuer: tokenIssuer, audit: audit,
                                        clock: clock)
        tokenIntrospection = TokenIntrospection(issuer: issuer, grants: store, accessTokens: accessTokens,
                                                tokenIssuer: tokenIssuer, deviceSessions: deviceSessions, clock: clock)
        userTokens = UserGrantTokens(issuer: tokenIssuer, users: store, grants: store, deviceSessions: deviceSessions, clock: clock)
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
        sessions = Sessions(store: store, users: store, lifetime: configuration.sessionLifetime, clock: clock)
        logout = Logout(tokenIssuer: tokenIssuer, clients: store, sessions: sessions, deviceSessions: deviceSessions)
        accounts = Accounts(users: store, clients: store, consents: store, identities: store, audit: audit, clock: clock)
        clients = Clients(store: store)
        clientAdministration = ClientAdministration(store: store, audit: audit, clock: clock)
        userAdministration = UserAdministration(store: store, passwords: passwords, policy: PasswordPolicy(), audit: audit, clock: clock)
        userImport = UserImport(store: store, audit: audit, clock: clock, logger: logger)
        let families = TokenFamilies(store: store)
        let refreshGrant = RefreshTokenGrant(families: families, tokens: userTokens, deviceSessions: deviceSessions, clock: clock,
                                             reuseInterval: configuration.refreshTokenReuseInterval)
        appApprovals = AppApprovals(authorizer: authorizer, accessTokens: accessTokens, handoffLifetime: configuration.handoffTicketLifetime)
        grants = TokenEndpointGrants([
            AuthorizationCodeGrant(grants: store, families: families, tokens: userTokens, deviceSessions: deviceSessions, clock: clock),
            refreshGrant,
            ClientCredentialsGrant(issuer: tokenIssuer),
            TokenExchangeGrant(
                nativeSSO: NativeSSOExchangeGrant(sessions: deviceSessions, clients: store, issuer: tokenIssuer, tokens: userTokens),
                upstream: UpstreamTokenExchangeGrant(federation: federation, tokens: userTokens, accessTokens: accessTokens)),
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

    public typealias ClientRegistration = TesseraDomain.ClientRegistration

    /// Registers a client (as the operator, from the CLI); returns it with its secret in clear text.
    public func registerClient(_ registration: ClientRegistration) async throws -> (client: Client, secret: String?) {
        try await clientAdministration.register(registration, by: .operator)
    }

    /// Creates a user (as the operator, from the CLI).
    public func createUser(email: String, password: String?, name: String? = nil, profile: [String: JSONValue] = [:],
                           emailVerified: Bool = true) async throws -> User {
        try await userAdministration.create(email: email, password: password, name: name, profile: profile,
                                            emailVerified: emailVerified, by: .operator)
    }

    /// Merges `changes` into a user's profile (as the operator, from the CLI).
    public func updateProfile(email: String, changes: [String: JSONValue]) async throws -> User {
        try await userAdministration.update(email, profile: changes, ifVersion: nil, by: .operator)
    }

    /// Makes the next signing key current (every node signs with it within seconds); returns its kid.
    public func rotateKeys(by admin: Administrator) async throws -> String {
        let kid = try await keys.rotate()
        await audit.record(.keysRotated, actor: .admin, detail: "\(kid) made current by \(admin.description)")
        return kid
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
    public func deleteUser(_ user: User, by admin: Administrator = .operator) async throws {
        try await federation.deleteUser(user, by: .admin, detail: "by \(admin.description)")
    }
}

/// Resumes a continuation with the first value given; later ones are dropped.
final class FirstAnswer<Value: Sendable>: Sendable {
    private let continuation: NIOLockedValueBox<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = NIOLockedValueBox(continuation)
    }

    func give(_ value: Value) {
        continuation.withLockedValue { pending in
            let taken = pending
            pending = nil
            return taken
        }?.resume(returning: value)
    }
}
