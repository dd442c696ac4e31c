import Crypto
import Foundation
import Logging
import TesseraAuthCore
import TesseraCore
import TesseraDomain

/// What the services run on that the domain only declares: where the outbox's mail goes, how
/// upstream identity providers are reached, and the threads that hash passwords. The wiring
/// gives TesseraInfrastructure's (SMTP, AsyncHTTPClient, a thread pool).
public struct ServiceInfrastructure: Sendable {
    public var mailTransport: any MailTransport
    public var httpTransport: any HTTPTransport
    public var hashingThreads: any HashingThreads

    public init(mailTransport: any MailTransport, httpTransport: any HTTPTransport, hashingThreads: any HashingThreads) {
        self.mailTransport = mailTransport
        self.httpTransport = httpTransport
        self.hashingThreads = hashingThreads
    }
}

/// What the endpoints use: the domain's services, the keys and the pages, built from one
/// configuration over the stores' protocols. It holds no store: an endpoint reaches data only
/// through a service, and this target does not depend on TesseraSQL, so an endpoint that
/// tried to reach a store would not compile. `Provider` (TesseraNode) builds it.
public final class Services: Sendable {
    public let configuration: ServerConfiguration
    public let issuer: String
    public let keys: KeyRing
    public let passwords: PasswordHasher
    /// Password hashings and sign-ins started, counted per client address and per client.
    public let workLimits: WorkLimits
    public let clock: WallClock
    public let logger: Logger
    package let tokenIssuer: TokenIssuer
    package let authorizer: Authorizer
    package let clientAuthenticator: ClientAuthenticator
    package let accessTokens: AccessTokenValidator
    package let tokenIntrospection: TokenIntrospection
    /// The grants of `/token`.
    package let grants: TokenEndpointGrants
    /// The grants of the native API's `/oauth2/v2.0/token`: its own three, and refresh_token.
    package let nativeGrants: TokenEndpointGrants
    package let passwordSignIn: PasswordSignIn
    package let pages: PageRenderer
    /// The hosted forms' CSRF tokens (keyed by a secret shared by every node through the database).
    package let csrf: CSRF
    /// Browsers where users signed in with their password (a key derived from the same secret, for this use only).
    package let deviceCookies: DeviceCookies
    /// Sends email through the outbox: over SMTP with `--smtp-url`, to the log without.
    public let mailer: any Mailer
    package let mailTemplates: MailTemplates
    /// Delivers the outbox; run by ``MailDeliveryService``.
    package let mailDelivery: OutboxDelivery
    /// Sign-up, sign-in and password reset (the native API's flows).
    package let flows: AccountFlows
    /// Email-link sign-in.
    package let emailLinks: EmailLinks
    /// Grants and tokens for users who signed in without a browser session.
    package let userTokens: UserGrantTokens
    /// Sign-in through upstream identity providers.
    package let federation: Federation
    /// Browser sessions.
    package let sessions: Sessions
    /// RP-initiated logout: what a request may do.
    package let logout: Logout
    /// A user's account as the account page and API see it.
    package let accounts: Accounts
    /// What people change on their own account (the account page and API).
    package let selfService: SelfService
    /// Passkeys: registering, signing in, looking after them.
    package let passkeys: Passkeys
    /// Authenticator apps and recovery codes.
    package let secondFactors: SecondFactors
    /// The registered clients.
    package let clients: Clients
    /// What happened to accounts and clients (`audit_events`).
    public let audit: AuditTrail
    /// The rules of the admin API, the console and the CLI.
    public let clientAdministration: ClientAdministration
    public let userAdministration: UserAdministration
    public let userImport: UserImport
    /// App-to-app authorization and hand-off tickets (authenticator apps).
    package let appApprovals: AppApprovals
    /// Native SSO's device sessions.
    package let deviceSessions: DeviceSessions

    /// The services over `store`, running on `infrastructure`.
    package init(configuration: ServerConfiguration, store: any ServiceStores, infrastructure: ServiceInfrastructure, keys: KeyRing,
                 pairwiseSecret: String, refreshTokenKey: String, csrfSecret: String, secretBox: SecretBox, clock: WallClock,
                 logger: Logger) throws {
        self.configuration = configuration
        self.issuer = configuration.issuerURL
        self.keys = keys
        self.clock = clock
        self.logger = logger
        passwords = PasswordHasher(parameters: configuration.passwordHashing, threads: infrastructure.hashingThreads,
                                   queueLength: configuration.workLimits.hashingQueue)
        workLimits = WorkLimits(configuration.workLimits, store: store)
        audit = AuditTrail(store: store, clock: clock, logger: logger)
        tokenIssuer = TokenIssuer(issuer: issuer, keys: keys, clock: clock, accessTokenLifetime: configuration.accessTokenLifetime,
                                  idTokenLifetime: configuration.idTokenLifetime,
                                  refreshTokenLifetime: configuration.refreshTokenLifetime, pairwiseSecret: pairwiseSecret,
                                  familyTokens: FamilyTokens(key: refreshTokenKey),
                                  issuesFamilyTokens: !configuration.storedRefreshTokens)
        authorizer = Authorizer(issuer: issuer, clients: store, users: store, consents: store, interactions: store, grants: store,
                                crossApp: store, factors: store, keys: keys, tokenIssuer: tokenIssuer, clock: clock,
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
        pages = try PageRenderer(branding: configuration.branding)
        // One stored secret, a key of its own for each use: a MAC made for one can never pass as the other's.
        csrf = CSRF(key: Self.key(from: csrfSecret, for: "csrf-form-token"), secure: configuration.secureCookies)
        deviceCookies = DeviceCookies(key: Self.key(from: csrfSecret, for: "device-cookie"), secure: configuration.secureCookies)
        let mailDomain = MailAddress.domain(ofIssuer: issuer)
        mailDelivery = OutboxDelivery(store: store, transport: infrastructure.mailTransport, clock: clock, logger: logger)
        mailer = OutboxMailer(store: store, sender: try configuration.mailFrom.map(MailAddress.init(parsing:))
                                  ?? MailAddress.defaultSender(issuer: issuer, product: configuration.branding.name),
                              domain: mailDomain, clock: clock, signal: mailDelivery.signal)
        mailTemplates = try MailTemplates(branding: configuration.branding)
        secondFactors = SecondFactors(store: store, secretBox: secretBox, issuerName: configuration.branding.name, audit: audit, clock: clock)
        flows = AccountFlows(settings: configuration.nativeAuth, enumerationProtection: configuration.enumerationProtection, store: store,
                             hasher: passwords, policy: PasswordPolicy(), passwordSignIn: passwordSignIn, secondFactors: secondFactors,
                             limits: workLimits,
                             mail: FlowMail(mailer: mailer, templates: mailTemplates, issuerHost: configuration.issuerHost ?? issuer),
                             audit: audit, clock: clock, logger: logger)
        emailLinks = EmailLinks(lifetime: configuration.emailLinkLifetime, issuer: issuer, store: store, limits: flows.mailLimits,
                                mail: flows.mail, audit: audit, clock: clock, logger: logger)
        federation = try Federation(settings: configuration.upstreamProviders, issuer: issuer, store: store, secretBox: secretBox,
                                    transport: infrastructure.httpTransport,
                                    audit: audit, clock: clock, logger: logger)
        sessions = Sessions(store: store, users: store, lifetime: configuration.sessionLifetime, clock: clock)
        logout = Logout(tokenIssuer: tokenIssuer, clients: store, sessions: sessions, deviceSessions: deviceSessions)
        accounts = Accounts(users: store, clients: store, consents: store, identities: store, audit: audit, clock: clock)
        selfService = SelfService(store: store, passwords: passwords, policy: PasswordPolicy(), passwordSignIn: passwordSignIn,
                                  mail: flows.mail, codes: configuration.nativeAuth, mailLimits: flows.mailLimits, audit: audit,
                                  clock: clock)
        passkeys = Passkeys(store: store, settings: PasskeySettings(relyingPartyID: configuration.passkeyRPID,
                                                                    relyingPartyName: configuration.branding.name,
                                                                    origins: Set([configuration.issuerOrigin] + configuration.passkeyOrigins)),
                            audit: audit, clock: clock)
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
                upstream: UpstreamTokenExchangeGrant(federation: federation, tokens: userTokens, accessTokens: accessTokens,
                                                     signIn: flows.signIn)),
        ])
        nativeGrants = TokenEndpointGrants(NativeFlowGrant.all(flows.signIn, tokens: userTokens) + [refreshGrant])
    }

    /// A key for one `purpose` from a stored secret (HKDF-SHA256, RFC 5869).
    package static func key(from secret: String, for purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: Data(secret.utf8)), info: Data(purpose.utf8), outputByteCount: 32)
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

    /// Deletes a user, revoking the upstream tokens the account holds first (Apple requires it).
    public func deleteUser(_ user: User, by admin: Administrator = .operator) async throws {
        try await federation.deleteUser(user, by: .admin, detail: "by \(admin.description)")
    }
}
