import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import PostgresKit
import PostgresNIO
import SQLKit
import TesseraDomain

/// PostgreSQL through a pool of connections (postgres-nio's `PostgresClient`), shared by any
/// number of nodes.
///
/// Transactions run at PostgreSQL's default isolation, READ COMMITTED: the stores never read a
/// row and then write it on what they read; every single-use thing is taken by one conditional
/// write (`UPDATE … WHERE used_at IS NULL … RETURNING`), so two nodes racing for it get one
/// winner however their statements interleave.
///
/// Every read and transaction waits at most ``waitLimit`` for its connection, then fails with
/// ``DatabaseUnavailable`` having done nothing: a request never hangs on a database that is
/// away, and work it came for is not done after its client gave up. A connection that breaks
/// under a statement (PostgreSQL restarted, failed over, out of connections) fails the same way,
/// logged with its SQLSTATE and PostgreSQL's message.
public final class PostgresDatabase: TransactionalDatabase {
    /// The node's connections, shared out between its event loops (one a core): each loop has a
    /// pool of its own whose connections live on it (``pool``), so that a request's statements are
    /// written and their answers read on the thread that runs the request. One pool for the node,
    /// its connections on any loop, cost a statement two hops between threads (there and back).
    /// It also lets a refresh sign on its own loop (``RefreshTokenGrant``): with one pool, a loop
    /// that signed held up the answers its connections brought the other loops' requests.
    let pools: Pools
    let logger: Logger
    /// How long a read or transaction waits for a connection of the pool.
    let waitLimit: Duration
    /// Where the database is, for messages (never the password).
    let location: String
    /// Why the pool's last attempt to connect failed; nil once one succeeds.
    let connectFailure: NIOLockedValueBox<String?>
    /// The task running the pools; cancelling it closes every connection.
    private let running: Task<Void, Never>

    /// Starts the pools, and connects once beside them, so that a wrong address, password or TLS
    /// setting is told at start with the server's reason (a pool would retry quietly). By the
    /// time that connection is made, the pools' task is running and can lease connections.
    public static func open(_ location: PostgresLocation, poolSize: Int, waitLimit: Duration = .seconds(5),
                            logger: Logger) async throws -> PostgresDatabase {
        let tls = try TLSSettings(location)
        let connectFailure = NIOLockedValueBox<String?>(nil)
        var poolLogger = logger
        poolLogger.handler = PoolLogHandler(inner: logger.handler, connectFailure: connectFailure)
        let pools = try Pools(loops: Array(MultiThreadedEventLoopGroup.singleton.makeIterator()), poolSize: poolSize) { loop, size in
            PostgresClient(configuration: try poolConfiguration(location, tls: tls, poolSize: size), eventLoopGroup: loop,
                           backgroundLogger: poolLogger)
        }
        let database = PostgresDatabase(pools: pools, waitLimit: waitLimit, location: location.description,
                                        connectFailure: connectFailure, logger: logger)
        do {
            let connection = try await PostgresConnection.connect(configuration: connectionConfiguration(location, tls: tls),
                                                                  id: 0, logger: logger)
            try await connection.close()
        } catch {
            try? await database.close()
            throw DatabaseUnavailable(location: location.description, reason: Self.reason(error))
        }
        return database
    }

    init(pools: Pools, waitLimit: Duration, location: String, connectFailure: NIOLockedValueBox<String?>, logger: Logger) {
        self.pools = pools
        self.waitLimit = waitLimit
        self.location = location
        self.connectFailure = connectFailure
        self.logger = logger
        // Detached: the pool is a service of ServiceLifecycle, and a task inherits the graceful
        // shutdown of the service that made it (a node that waited for its database opens it
        // from within its service): the pool would close at SIGTERM, under the requests still
        // being answered. It closes when the node is done with it (``close()``).
        running = Task.detached {
            await withDiscardingTaskGroup { group in
                for client in pools.clients { group.addTask { await client.run() } }
            }
        }
    }

    /// The pool of the calling thread's event loop.
    var pool: PostgresClient { pools.here() }

    /// libpq's `sslmode` as NIOSSL's settings.
    struct TLSSettings {
        /// nil: no TLS.
        var configuration: TLSConfiguration?
        var required: Bool

        init(_ location: PostgresLocation) throws {
            var tls = TLSConfiguration.makeClientConfiguration()
            switch location.sslMode {
            case .disable:
                configuration = nil
                required = false
                return
            case .prefer, .require:
                // libpq's meaning: encrypted, but the server is not authenticated.
                tls.certificateVerification = .none
            case .verifyCA:
                tls.certificateVerification = .noHostnameVerification
            case .verifyFull:
                tls.certificateVerification = .fullVerification
            }
            if let file = location.sslRootCertificate {
                do {
                    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
                } catch {
                    throw ConfigurationError("sslrootcert \(file) can't be read as PEM certificates: \(error)")
                }
            }
            configuration = tls
            required = location.sslMode != .prefer
        }
    }

    static func connectionConfiguration(_ location: PostgresLocation, tls: TLSSettings) throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let directory = location.socketDirectory {
            configuration = .init(unixSocketPath: "\(directory)/.s.PGSQL.\(location.port)", username: location.user,
                                  password: location.password, database: location.database)
        } else {
            let mode: PostgresConnection.Configuration.TLS = switch tls.configuration {
            case nil: .disable
            case let settings?: tls.required ? .require(try NIOSSLContext(configuration: settings))
                                             : .prefer(try NIOSSLContext(configuration: settings))
            }
            configuration = .init(host: location.host, port: location.port, username: location.user, password: location.password,
                                  database: location.database, tls: mode)
        }
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = startupParameters(location)
        return configuration
    }

    static func poolConfiguration(_ location: PostgresLocation, tls: TLSSettings, poolSize: Int) throws -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let directory = location.socketDirectory {
            configuration = .init(unixSocketPath: "\(directory)/.s.PGSQL.\(location.port)", username: location.user,
                                  password: location.password, database: location.database)
        } else {
            let mode: PostgresClient.Configuration.TLS = switch tls.configuration {
            case nil: .disable
            case let settings?: tls.required ? .require(settings) : .prefer(settings)
            }
            configuration = .init(host: location.host, port: location.port, username: location.user, password: location.password,
                                  database: location.database, tls: mode)
        }
        configuration.options.maximumConnections = poolSize
        // Two connections of each loop's pool stay open (fewer with a smaller pool): postgres-nio
        // sets an idle timer (a task sleeping on Dispatch's timers for a minute) each time a
        // connection above the minimum goes back to the pool, ≈ 1 % of a refresh's CPU; the pool
        // leases the first free connection, so the two take nearly every statement of its loop.
        configuration.options.minimumConnections = min(2, poolSize)
        // No keep-alive statement: an idle connection is closed after a minute (the pool's
        // connectionIdleTimeout) and would have been pinged once before; the keep-alive's timer,
        // set each time a connection goes back to the pool, was a Dispatch timer per statement
        // that fired 30 s later, cancelled or not. A connection PostgreSQL closes meanwhile (a
        // restart, `idle_session_timeout`) leaves the pool when its socket closes, as before.
        configuration.options.keepAliveBehavior = nil
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = startupParameters(location)
        return configuration
    }

    static func startupParameters(_ location: PostgresLocation) -> [(String, String)] {
        location.parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    public var writesInCommonTableExpressions: Bool { true }

    public func withDatabase<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await DatabaseSignals.measure(DatabaseSignals.reads) {
            try await leased { sql in try await body(sql) }
        }
    }

    public func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await DatabaseSignals.measure(DatabaseSignals.transactions) {
            try await leased { sql in try await runTransaction(on: sql, begin: "BEGIN", body) }
        }
    }

    /// Runs `body` on a connection of the pool leased within ``waitLimit``. A lease not granted
    /// by then is withdrawn and the body never runs (nor later); an outage met under the body
    /// becomes ``DatabaseUnavailable``, logged once here with its SQLSTATE; another PostgreSQL
    /// error becomes ``PostgresFailure``, which says what PostgreSQL said.
    private func leased<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        do {
            return try await withinWaitLimit(body)
        } catch let error as DatabaseUnavailable {
            DatabaseSignals.unavailable.increment()
            logger.warning("database unavailable", metadata: ["reason": .string(error.reason)])
            throw error
        } catch let error as PSQLError {
            let failure = PostgresFailure(error)
            guard failure.isOutage else { throw failure }
            DatabaseSignals.unavailable.increment()
            logger.warning("database unavailable", metadata: failure.metadata)
            throw DatabaseUnavailable(location: location, reason: failure.description)
        }
    }

    private func withinWaitLimit<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let lease = LeaseRace()
        let (client, logger, waitLimit, location, connectFailure) = (pool, logger, waitLimit, location, connectFailure)
        return try await withoutActuallyEscaping(body) { body in
            try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        // The deadline passed while the pool was handing this connection over.
                        guard lease.start() else { throw CancellationError() }
                        connectFailure.withLockedValue { $0 = nil }
                        return try await body(WatchedConnection(connection, location: location, logger: logger))
                    }
                }
                group.addTask {
                    try await Self.sleep(for: waitLimit)
                    guard lease.giveUp() else { return nil }
                    let why = connectFailure.withLockedValue { $0 }.map { "the last attempt to connect failed: \($0)" } ?? "every one busy"
                    throw DatabaseUnavailable(location: location,
                                              reason: "no connection within \(waitLimit.components.seconds) s (database-timeout): \(why)")
                }
                while let next = try await group.next() {
                    if let result = next {
                        group.cancelAll()
                        return result
                    }
                }
                preconditionFailure("the lease's task ended without a result or an error")
            }
        }
    }

    /// `Task.sleep` on an event loop's timer. Swift's own sleep goes to Dispatch's timers,
    /// and one cancelled there still fires at its deadline: a lease's wait limit, set and
    /// cancelled at every statement, kept a Dispatch thread waking for each request seconds
    /// after it was answered (with the pool's own timers, a tenth of a refresh's CPU). A
    /// cancelled NIO timer is taken off its loop's heap at once. Cancelled, it throws what
    /// `Task.sleep` throws, `CancellationError` (a service stopping tells it from a failure).
    package static func sleep(for duration: Duration) async throws {
        let loop = MultiThreadedEventLoopGroup.currentEventLoop ?? MultiThreadedEventLoopGroup.singleton.any()
        let timer = loop.scheduleTask(in: TimeAmount(duration)) {}
        do {
            try await withTaskCancellationHandler {
                try await timer.futureResult.get()
            } onCancel: {
                timer.cancel()
            }
        } catch EventLoopError.cancelled {
            throw CancellationError()
        }
    }

    public func close() async throws {
        running.cancel()
        await running.value
    }

    /// What the server said, without the details postgres-nio keeps out of descriptions by design.
    static func reason(_ error: any Error) -> String {
        if let failure = error as? PostgresFailure { return failure.description }
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                return error.serverInfo?[.sqlState].map { "\(message) (SQLSTATE \($0))" } ?? message
            }
            switch error.code {
            case .connectionError:
                return "can't connect: " + (error.underlying.map(connectionFailure) ?? "the connection was refused")
            case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
                return "the connection closed" + (error.underlying.map { ": " + connectionFailure($0) } ?? "")
            case .sslUnsupported:
                return "the server does not offer TLS, and sslmode asks for it"
            default:
                return "\(error.code)" + (error.underlying.map { ": \($0)" } ?? "")
            }
        }
        return "\(error)"
    }
}

/// Why a connection could not be made, in a line: the address and the system's reason
/// (`127.0.0.1:5432: Connection refused`), not NIO's nested descriptions.
func connectionFailure(_ error: any Error) -> String {
    if let error = error as? NIOConnectionError {
        var reasons = error.connectionErrors.map { "\($0.target.ipAddress ?? error.host):\($0.target.port ?? error.port): \(connectionFailure($0.error))" }
        if let lookup = error.dnsAError ?? error.dnsAAAAError { reasons.append("\(error.host) can't be resolved: \(lookup)") }
        return reasons.isEmpty ? "\(error.host):\(error.port): \(error)" : reasons.joined(separator: "; ")
    }
    if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
    if error is PSQLError { return PostgresDatabase.reason(error) }
    return "\(error)"
}

/// What a database error says, for an operator: PostgreSQL's own message where there is one
/// (postgres-nio keeps it out of the error's description, lest a query's values leak).
public func databaseErrorReason(_ error: any Error) -> String {
    PostgresDatabase.reason(error)
}

/// Whether `error` is PostgreSQL's uniqueness violation (SQLSTATE 23505).
func isPostgresUniqueViolation(_ error: any Error) -> Bool {
    ((error as? PostgresFailure)?.error ?? error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
}

/// A PostgreSQL error as an operator reads it: PostgreSQL's SQLSTATE and message (postgres-nio's
/// own description is a placeholder, lest a statement's values leak; the message names none).
public struct PostgresFailure: Error, CustomStringConvertible {
    let error: PSQLError

    init(_ error: PSQLError) {
        self.error = error
    }

    /// SQLSTATE, when the server answered one.
    public var sqlState: String? { error.serverInfo?[.sqlState] }

    public var description: String { PostgresDatabase.reason(error) }

    /// The database is away or refusing work, rather than the statement being wrong: the
    /// connection failed or closed, or SQLSTATE class 08 (connection exception), 57P01–57P03
    /// (shut down, crashed, starting), 53 (out of connections, memory or disk) or 25006 (a
    /// read-only server: a standby after a failover).
    var isOutage: Bool {
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed: return true
        default: break
        }
        guard let state = sqlState else { return false }
        return state.hasPrefix("08") || state.hasPrefix("53") || ["57P01", "57P02", "57P03", "25006"].contains(state)
    }

    var metadata: Logger.Metadata {
        var metadata: Logger.Metadata = ["reason": .string(description)]
        if let sqlState { metadata["sqlstate"] = .string(sqlState) }
        return metadata
    }
}

/// The statements of one leased connection, none of which can wait forever for an answer.
///
/// postgres-nio (1.33) hands a statement to its channel without a promise for the write: one
/// sent in the instant the server closes the connection (a restart, a failover) is dropped with
/// the closed channel, and its answer never comes — the request would hang, holding its
/// connection, and the node could never stop. Here a statement on a connection already closed
/// fails at once, and one still unanswered when its connection is found closed (checked every
/// ``watchInterval``) fails then, as an outage. Slow statements on a live connection are left
/// alone.
struct WatchedConnection: SQLDatabase {
    static let watchInterval: TimeAmount = .milliseconds(500)

    let connection: PostgresConnection
    let statements: any SQLDatabase
    let location: String

    init(_ connection: PostgresConnection, location: String, logger: Logger) {
        self.connection = connection
        self.statements = connection.sql(queryLogLevel: nil, logger: logger)
        self.location = location
    }

    var logger: Logger { statements.logger }
    var eventLoop: any EventLoop { statements.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { statements.version }
    var dialect: any SQLDialect { statements.dialect }
    var queryLogLevel: Logger.Level? { statements.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) -> EventLoopFuture<Void> {
        guard !connection.isClosed else { return eventLoop.makeFailedFuture(lost) }
        let answer = eventLoop.makePromise(of: Void.self)
        statements.execute(sql: query, onRow).cascade(to: answer)
        return watched(answer)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) async throws {
        try await execute(sql: query, onRow).get()
    }

    /// The rows of a statement PostgreSQL parses and plans once per connection, at its first use
    /// there (postgres-nio keeps the connection's prepared statements by name), watched as
    /// ``execute(sql:_:)`` watches a statement.
    func rows<Statement: PostgresPreparedStatement>(of statement: Statement) async throws -> [Statement.Row]
    where Statement.Row: Sendable {
        guard !connection.isClosed else { throw lost }
        let answer = eventLoop.makePromise(of: [Statement.Row].self)
        let (connection, logger) = (connection, logger)
        answer.completeWithTask {
            var rows: [Statement.Row] = []
            for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
            return rows
        }
        return try await watched(answer).get()
    }

    private var lost: DatabaseUnavailable {
        DatabaseUnavailable(location: location, reason: "the connection closed under a statement, which got no answer")
    }

    /// `answer`'s future, failed as an outage if the connection is found closed before it comes.
    private func watched<T>(_ answer: EventLoopPromise<T>) -> EventLoopFuture<T> {
        let (connection, lost) = (connection, lost)
        let watch = eventLoop.scheduleRepeatedTask(initialDelay: Self.watchInterval, delay: Self.watchInterval) { watch in
            // An answer that came meanwhile wins: a promise is completed once.
            if connection.isClosed {
                answer.fail(lost)
                watch.cancel()
            }
        }
        answer.futureResult.whenComplete { _ in watch.cancel() }
        return answer.futureResult
    }
}

/// The pool's log lines as postgres-nio writes them, but for a failed attempt to connect: that
/// is a warning (postgres-nio says it at info), and its reason is kept (``PostgresDatabase/connectFailure``,
/// cleared when a connection is next handed over) for the requests that then wait in vain.
struct PoolLogHandler: LogHandler {
    var inner: any LogHandler
    let connectFailure: NIOLockedValueBox<String?>

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        switch event.message.description {
        case "Connection creation failed":
            event.level = max(event.level, .warning)
            let error = event.metadata?["psql_error"].map { "\($0)" } ?? "unknown"
            connectFailure.withLockedValue { $0 = error }
        default:
            break
        }
        inner.log(event: event)
    }
}

/// Who wins between a connection handed over and the wait's deadline: exactly one.
private final class LeaseRace: Sendable {
    private enum State { case waiting, started, gaveUp }
    private let state = NIOLockedValueBox(State.waiting)

    /// The connection came first: the body may run.
    func start() -> Bool { settle(.started) }
    /// The deadline came first: the body will not run.
    func giveUp() -> Bool { settle(.gaveUp) }

    private func settle(_ outcome: State) -> Bool {
        state.withLockedValue { state in
            guard state == .waiting else { return false }
            state = outcome
            return true
        }
    }
}

extension PostgresDatabase {
    /// A node's pools: `database-pool-size` connections shared out between its event loops.
    struct Pools: Sendable {
        /// The group's loops, in its order: the loop at `index` uses `clients[index % clients.count]`
        /// (a pool of 3 connections on 4 loops: the fourth loop uses the first's).
        let loops: [any EventLoop]
        /// One pool a loop, or fewer when the pool size is smaller than the loops.
        let clients: [PostgresClient]
        /// Callers on no loop of the group (the CLI's commands, tasks on Swift's own pool) take
        /// the pools in turn.
        private let turn = NIOLockedValueBox(0)

        /// `poolSize` connections at most between them: one pool a loop, or one a connection
        /// when there are fewer connections than loops; where the size doesn't divide, the
        /// first pools get one more.
        init(loops: [any EventLoop], poolSize: Int, make: (any EventLoop, Int) throws -> PostgresClient) rethrows {
            precondition(!loops.isEmpty && poolSize > 0, "a pool needs a loop and a connection")
            let count = min(loops.count, poolSize)
            let clients = try (0..<count).map { index in
                try make(loops[index], poolSize / count + (index < poolSize % count ? 1 : 0))
            }
            self.clients = clients
            self.loops = loops
        }

        /// The pool of the calling thread's event loop; another caller's turn.
        func here() -> PostgresClient {
            if let loop = MultiThreadedEventLoopGroup.currentEventLoop, let index = loops.firstIndex(where: { $0 === loop }) {
                return clients[index % clients.count]
            }
            guard clients.count > 1 else { return clients[0] }
            let next = turn.withLockedValue { turn in
                let this = turn
                turn = (this + 1) % clients.count
                return this
            }
            return clients[next]
        }
    }
}
