import Foundation
import Logging
import Metrics
import NIOCore
import NIOPosix
import SQLKit
import NIOConcurrencyHelpers
import TesseraSQLite
import TesseraDomain

/// The SQL database behind every store.
///
/// Stores never open connections themselves: they ask for a reader or a
/// transaction, and receive an `SQLDatabase` that is theirs for the duration.
/// Every multi-row change runs in ``transaction(_:)``.
public protocol TransactionalDatabase: Sendable {
    /// Runs `body` with a database for reads (and single-statement writes).
    func withDatabase<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T
    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws.
    func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T
    /// ``transaction(_:)`` on the calling thread, where the database's statements would otherwise
    /// move to a thread of its own (SQLite) and can start here without waiting for another process;
    /// nil, having run nothing, where they can't. For the short transactions of a request whose
    /// hops between threads would cost more than its statements (the refresh on SQLite).
    func transactionHere<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T?
    /// Closes every connection.
    func close() async throws
    /// Runs `query` on a connection of its own for the pages it reads (its rows are dropped),
    /// beside the connection the other calls wait for: a write about to be made there then finds
    /// its pages in the cache instead of waiting for the disk while it holds that connection.
    /// SQLite only (its one connection serialises every request); elsewhere it does nothing.
    func readAhead(_ query: SQLQueryString) async throws
    /// Whether a statement's `WITH` may write (`UPDATE … RETURNING`, `INSERT`): PostgreSQL's
    /// data-modifying common table expressions, which SQLite has not.
    var writesInCommonTableExpressions: Bool { get }
}

extension TransactionalDatabase {
    public var writesInCommonTableExpressions: Bool { false }
    public func transactionHere<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T? { nil }
    public func readAhead(_ query: SQLQueryString) async throws {}
}

/// How long the database took, and how many reads and transactions are under way (holding a
/// connection or waiting for one): `tessera_database_seconds{operation}`,
/// `tessera_database_connections_in_use`; how many met an outage: `tessera_database_unavailable_total`.
enum DatabaseSignals {
    static let inUse = Meter(label: "tessera_database_connections_in_use")
    /// Reads and transactions that failed because the database was away or no connection came in time.
    static let unavailable = Counter(label: "tessera_database_unavailable_total")
    static let reads = Timer(label: "tessera_database_seconds", dimensions: [("operation", "read")])
    static let transactions = Timer(label: "tessera_database_seconds", dimensions: [("operation", "transaction")])

    static func measure<T>(_ timer: Timer, _ body: () async throws -> T) async throws -> T {
        let started = ContinuousClock.now
        inUse.increment()
        defer {
            inUse.decrement()
            timer.recordInterval(since: started)
        }
        return try await body()
    }
}

extension Timer {
    func recordInterval(since started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
}

/// Runs `body` between `begin` and `COMMIT` on one connection; `ROLLBACK` when it throws.
func runTransaction<T>(on sql: any SQLDatabase, begin: SQLQueryString, _ body: (any SQLDatabase) async throws -> T) async throws -> T {
    try await sql.raw(begin).run()
    return try await finishTransaction(on: sql, body)
}

/// Runs `body` in the transaction `sql` has begun, then `COMMIT`; `ROLLBACK` when it throws.
func finishTransaction<T>(on sql: any SQLDatabase, _ body: (any SQLDatabase) async throws -> T) async throws -> T {
    do {
        let result = try await body(sql)
        try await sql.raw("COMMIT").run()
        return result
    } catch {
        try? await sql.raw("ROLLBACK").run()
        throw error
    }
}

/// The database `location` names, opened: SQLite or PostgreSQL.
public func openDatabase(_ location: DatabaseLocation, poolSize: Int, waitLimit: Duration = .seconds(5),
                         logger: Logger) async throws -> any TransactionalDatabase {
    switch location {
    case .postgres(let server): try await PostgresDatabase.open(server, poolSize: poolSize, waitLimit: waitLimit, logger: logger)
    case .sqliteFile, .sqliteMemory: try await SQLiteDatabase.open(location, logger: logger)
    }
}

/// SQLite through one connection in WAL mode.
///
/// SQLite serialises writers anyway; one connection behind an async lock makes
/// every transaction trivially isolated within this process, and `BEGIN IMMEDIATE`
/// with a busy timeout serialises it against other processes (the admin CLI).
///
/// Statements run synchronously on a thread of the database's own (``DatabaseThread``):
/// ``withDatabase(_:)`` and ``transaction(_:)`` move there once, run the body, and come
/// back, so a transaction costs one round trip between threads however many statements
/// it has, and the time it holds the connection is SQLite's time only. Waiting on a lock
/// held by another process (the busy timeout) blocks that thread, never the server's.
/// ``transactionHere(_:)`` makes no hop at all: for a request's few statements (a refresh's
/// rotation) the hops cost more than SQLite, and it never waits for another process either.
public final class SQLiteDatabase: TransactionalDatabase {
    /// Milliseconds a statement waits for a lock another process holds before it fails.
    static let busyTimeout: Int32 = 10_000
    let handle: SQLiteHandle
    let sql: any SQLDatabase
    let lock = AsyncLock()
    let thread: DatabaseThread
    /// A database file's checkpoints, off the connection (none for a database in memory).
    private let checkpointer = NIOLockedValueBox<WALCheckpointer?>(nil)
    /// The file, for ``readAhead(_:)``'s connection (nil in memory).
    private let path: String?
    /// ``readAhead(_:)``'s connection, opened at its first use; `closed` once the database is.
    private let reader = NIOLockedValueBox<(connection: SQLiteReader?, closed: Bool)>((nil, false))
    /// Held by ``readAhead(_:)`` while it reads and by the end of a log's cycle (``WALCheckpointer``).
    let readers = AsyncLock()

    public static func open(_ location: DatabaseLocation, logger: Logger) async throws -> SQLiteDatabase {
        try await open(location, checkpointRestartPages: WALCheckpointer.restartPages, logger: logger)
    }

    /// Opens the database at `location`; a file's write-ahead log is restarted once it holds
    /// `cycleEndPages` (by default half of `checkpointRestartPages`), and by SQLite's own
    /// checkpoint in the server's connection at `checkpointRestartPages` (``WALCheckpointer``).
    package static func open(_ location: DatabaseLocation, checkpointRestartPages: Int64, cycleEndPages: Int64? = nil,
                     logger: Logger) async throws -> SQLiteDatabase {
        let path: String
        switch location {
        case .sqliteMemory:
            path = ":memory:"
        case .postgres:
            preconditionFailure("SQLiteDatabase.open is given a PostgreSQL location; use openDatabase(_:poolSize:waitLimit:logger:)")
        case .sqliteFile(let file):
            let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            path = file
        }
        let thread = DatabaseThread()
        let database: SQLiteDatabase
        do {
            let handle = try await withTaskExecutorPreference(thread) { try SQLiteHandle(path: path) }
            database = SQLiteDatabase(handle: handle, thread: thread, path: path == ":memory:" ? nil : path, logger: logger)
        } catch {
            await thread.shutdown()
            throw error
        }
        do {
            try await database.withDatabase { db in
                for pragma in ["PRAGMA busy_timeout = \(SQLiteDatabase.busyTimeout)", "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL",
                               "PRAGMA foreign_keys = ON"] {
                    try await db.raw(SQLQueryString(pragma)).run()
                }
            }
            if case .sqliteFile(let file) = location {
                chmod(file, 0o600)
                // Checkpoints move to a connection of their own (WALCheckpointer).
                // A cycle's end waits for a read-ahead under way and keeps the next one out: a
                // reader of the log would keep the checkpoint from copying all of it, and the log
                // from starting over (readAhead(_:)).
                let (lock, readers) = (database.lock, database.readers)
                let checkpointer = try WALCheckpointer(path: file, cycleEndPages: cycleEndPages ?? checkpointRestartPages / 2,
                                                       exclusively: { body in
                                                           try await readers.withLock { try await lock.withLock { try await body() } }
                                                       },
                                                       logger: logger)
                database.checkpointer.withLockedValue { $0 = checkpointer }
                try await database.withDatabase { db in
                    try await db.raw("PRAGMA wal_autocheckpoint = \(unsafeRaw: String(checkpointRestartPages))").run()
                }
            }
        } catch {
            try? await database.close()
            throw error
        }
        return database
    }

    init(handle: SQLiteHandle, thread: DatabaseThread, path: String?, logger: Logger) {
        self.handle = handle
        self.thread = thread
        self.path = path
        self.sql = SQLiteHandleDatabase(handle: handle, logger: logger, eventLoop: MultiThreadedEventLoopGroup.singleton.any())
    }

    public func withDatabase<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await withTaskExecutorPreference(thread) {
            try await lock.withLock { try await DatabaseSignals.measure(DatabaseSignals.reads) { try await body(sql) } }
        }
    }

    public func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await withTaskExecutorPreference(thread) {
            try await lockedTransaction(body)
        }
    }

    /// The statements run on the calling thread (an event loop, for a request), which waits for
    /// nothing: the connection is awaited as ``transaction(_:)`` awaits it, and `BEGIN IMMEDIATE`
    /// runs without SQLite's busy timeout, so while another process (the CLI) holds the file's write
    /// lock this answers nil at once and the caller's ``transaction(_:)`` waits for it on
    /// ``DatabaseThread``. In WAL mode a transaction begun so needs no other lock: its reads come
    /// from the log and the file, and its commit appends to the log without a flush
    /// (`synchronous = NORMAL`).
    public func transactionHere<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T? {
        try await lock.withLock {
            let begun = try handle.withBusyTimeout(0, restoring: Self.busyTimeout) { () throws -> Bool in
                do {
                    try handle.execute("BEGIN IMMEDIATE", []) { _, _ in }
                    return true
                } catch let failure as SQLiteFailure where failure.isBusy {
                    return false
                }
            }
            guard begun else { return nil }
            return try await DatabaseSignals.measure(DatabaseSignals.transactions) { try await finishTransaction(on: sql, body) }
        }
    }

    /// On a connection and thread of their own, opened at the first call (not the checkpointer's,
    /// whose rounds would wait behind reads from disk). A read takes turns with the end of a log's
    /// cycle: a reader of the log keeps the checkpoint from copying the pages written after it
    /// began, and the log from starting over, so during a long purge from a cold cache the log
    /// would otherwise grow past the cycle's end to SQLite's backstop, whose checkpoint runs on
    /// the server's connection. A database in memory has nothing to read.
    public func readAhead(_ query: SQLQueryString) async throws {
        guard let path else { return }
        let reader = try self.reader.withLockedValue { reader -> SQLiteReader? in
            guard !reader.closed else { return nil }
            if let connection = reader.connection { return connection }
            let opened = try SQLiteReader(path: path)
            reader.connection = opened
            return opened
        }
        guard let reader else { return }
        try await readers.withLock { try await reader.read(query, logger: sql.logger) }
    }

    private func lockedTransaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await lock.withLock {
            try await DatabaseSignals.measure(DatabaseSignals.transactions) { try await runTransaction(on: sql, begin: "BEGIN IMMEDIATE", body) }
        }
    }

    public func close() async throws {
        if let reader = reader.withLockedValue({ reader in defer { reader = (nil, true) }; return reader.connection }) {
            await reader.close()
        }
        if let checkpointer = checkpointer.withLockedValue({ current in defer { current = nil }; return current }) {
            await checkpointer.stop()
        }
        let first = await lock.withLock { () -> Bool in
            let open = !handle.isClosed
            handle.close()
            return open
        }
        if first { await thread.shutdown() }
    }
}

/// A mutual-exclusion lock for async code; waiters are served in arrival order.
final class AsyncLock: Sendable {
    private struct State {
        var locked = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = NIOLockedValueBox(State())

    func lock() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLockedValue { state -> Bool in
                if state.locked {
                    state.waiters.append(continuation)
                    return false
                }
                state.locked = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    func unlock() {
        let next = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.locked = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }

    func withLock<T>(_ body: () async throws -> T) async rethrows -> T {
        await lock()
        defer { unlock() }
        return try await body()
    }
}
