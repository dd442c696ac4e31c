import Foundation
import Logging
import NIOConcurrencyHelpers
import TesseraCore
import TesseraDomain
import TesseraInfrastructure
import TesseraSQL
import TesseraServer

/// The provider, wired: the database and its store, the mail transport, and the ``Services``
/// the endpoints use, built from one configuration. The one place that knows both the SQL store
/// and the endpoints; nothing here knows about HTTP.
///
/// Its services read as its own members (`provider.authorizer`), for the node and the tests.
@dynamicMemberLookup
public final class Provider: Sendable {
    public let store: SQLStore
    public let services: Services

    init(store: SQLStore, services: Services) {
        self.store = store
        self.services = services
    }

    public subscript<Value>(dynamicMember member: KeyPath<Services, Value>) -> Value {
        services[keyPath: member]
    }

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
            let refreshTokenKey = try await SealedSetting("refresh_token_key").value(store: store, masterKey: masterKey, logger: logger)
            let infrastructure = ServiceInfrastructure(mailTransport: try mailTransport(configuration, logger: logger),
                                                       httpTransport: AsyncHTTPClientTransport(), hashingThreads: NIOHashingThreads())
            let services = try Services(configuration: configuration, store: store, infrastructure: infrastructure, keys: keys,
                                        pairwiseSecret: pairwiseSecret, refreshTokenKey: refreshTokenKey, csrfSecret: csrfSecret,
                                        secretBox: masterKey.box, clock: clock,
                                        logger: logger)
            try await services.federation.sealStoredTokens()
            return Provider(store: store, services: services)
        } catch {
            try? await database.close()
            throw error
        }
    }

    /// Where mail goes: the SMTP relay of `--smtp-url`; the log in dev mode; else nowhere (the
    /// outbox keeps it, and readiness says so).
    static func mailTransport(_ configuration: ServerConfiguration, logger: Logger) throws -> any MailTransport {
        if let smtpURL = configuration.smtpURL {
            return try SMTPTransport(settings: SMTPSettings(parsing: smtpURL),
                                     clientName: MailAddress.domain(ofIssuer: configuration.issuerURL), logger: logger)
        }
        return configuration.dev ? LogTransport(logger: logger) : UnsentTransport()
    }

    /// Removes what has expired (codes, sessions, flows, delivered mail), keeping a day of it,
    /// and audit events older than `audit-retention`;
    /// once an hour across all nodes (whichever asks first after the hour takes the turn).
    /// True when this node did it.
    @discardableResult
    func purgeExpiredIfDue() async throws -> Bool {
        let now = services.clock.now()
        guard try await store.takeTurn("purge", now: now, every: 3600) else { return false }
        try await store.purgeExpired(now: now, keepFor: 86_400)
        try Task.checkCancellation()  // the purge stopped between two batches: the node is stopping
        try await store.purgeAudit(before: now - services.configuration.auditRetention)
        return true
    }

    /// Why this node should not be sent requests now, or nil when it is ready: the signing keys
    /// are loaded, and the database answers within `timeout` with every migration applied.
    public func unreadiness(timeout: Duration = .seconds(2)) async -> String? {
        do {
            _ = try services.keys.signingDescription
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

    // MARK: Administration, as the operator (the CLI on the database)

    public typealias ClientRegistration = TesseraDomain.ClientRegistration

    /// Registers a client (as the operator, from the CLI); returns it with its secret in clear text.
    public func registerClient(_ registration: ClientRegistration) async throws -> (client: Client, secret: String?) {
        try await services.registerClient(registration)
    }

    /// Creates a user (as the operator, from the CLI).
    public func createUser(email: String, password: String?, name: String? = nil, profile: [String: JSONValue] = [:],
                           emailVerified: Bool = true) async throws -> User {
        try await services.createUser(email: email, password: password, name: name, profile: profile, emailVerified: emailVerified)
    }

    /// Merges `changes` into a user's profile (as the operator, from the CLI).
    public func updateProfile(email: String, changes: [String: JSONValue]) async throws -> User {
        try await services.updateProfile(email: email, changes: changes)
    }

    /// Makes the next signing key current (every node signs with it within seconds); returns its kid.
    public func rotateKeys(by admin: Administrator) async throws -> String {
        try await services.rotateKeys(by: admin)
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
