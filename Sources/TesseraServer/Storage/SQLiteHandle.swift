import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import Synchronization
// The SQLite that sqlite-nio bundles (its C target): the same library, called directly.
import VaporCSQLite

/// One SQLite connection, called synchronously.
///
/// SQLiteNIO runs every statement as a job on NIO's thread pool and hands the result back
/// through the event loop and the concurrency pool: three thread switches per statement,
/// fifteen for a five-statement transaction that holds the only connection meanwhile.
/// Here a statement runs on the calling thread, and ``SQLiteDatabase`` calls it only from a
/// thread of its own (``DatabaseThread``): a whole transaction is one hop there and back.
/// Prepared statements are kept by SQL text (the store's SQL is a fixed set of templates),
/// so each is parsed once.
final class SQLiteHandle: Sendable {
    private struct State: ~Copyable {
        var db: OpaquePointer?
        var statements: [String: OpaquePointer] = [:]
    }
    // A Mutex, not thread confinement: the handle is correct from any thread, and the
    // lock is uncontended when, as intended, one thread uses it.
    private let state: Mutex<State>
    private static let maximumCachedStatements = 512

    /// Opens (creating if needed) the database at `path`, or a private in-memory one for `":memory:"`.
    init(path: String) throws {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_CREATE | SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_EXRESCODE
        let status = sqlite_nio_sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite_nio_sqlite3_close_v2(db)
            throw SQLiteFailure(code: status, message: "cannot open \(path): \(message)")
        }
        state = Mutex(State(db: db))
    }

    deinit {
        close()
    }

    /// Runs one statement with `binds`, calling `onRow` for each row it returns.
    func execute(_ sql: String, _ binds: [SQLiteData], onRow: (_ columns: [String], _ values: [SQLiteData]) throws -> Void) throws {
        try state.withLock { state in
            guard let db = state.db else { throw SQLiteFailure(code: SQLITE_MISUSE, message: "the database is closed") }
            let statement = try Self.prepared(sql, in: &state, db: db)
            defer {
                sqlite_nio_sqlite3_reset(statement)
                sqlite_nio_sqlite3_clear_bindings(statement)
            }
            try Self.bind(binds, to: statement, db: db)
            let count = sqlite_nio_sqlite3_column_count(statement)
            let columns = (0..<count).map { String(cString: sqlite_nio_sqlite3_column_name(statement, $0)) }
            while true {
                switch sqlite_nio_sqlite3_step(statement) {
                case SQLITE_ROW:
                    try onRow(columns, (0..<count).map { Self.value(of: statement, at: $0) })
                case SQLITE_DONE:
                    return
                case let status:
                    throw SQLiteFailure(code: status, message: String(cString: sqlite_nio_sqlite3_errmsg(db)))
                }
            }
        }
    }

    /// Finalizes the prepared statements and closes the connection; later calls fail.
    func close() {
        state.withLock { state in
            for statement in state.statements.values { sqlite_nio_sqlite3_finalize(statement) }
            state.statements = [:]
            if let db = state.db { sqlite_nio_sqlite3_close_v2(db) }
            state.db = nil
        }
    }

    var isClosed: Bool { state.withLock { $0.db == nil } }

    private static func prepared(_ sql: String, in state: inout State, db: OpaquePointer) throws -> OpaquePointer {
        if let statement = state.statements[sql] { return statement }
        var statement: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else {
            throw SQLiteFailure(code: status, message: String(cString: sqlite_nio_sqlite3_errmsg(db)))
        }
        if state.statements.count >= maximumCachedStatements {
            for old in state.statements.values { sqlite_nio_sqlite3_finalize(old) }
            state.statements.removeAll()
        }
        state.statements[sql] = statement
        return statement
    }

    private static func bind(_ binds: [SQLiteData], to statement: OpaquePointer, db: OpaquePointer) throws {
        for (offset, value) in binds.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32 = switch value {
            case .integer(let integer): sqlite_nio_sqlite3_bind_int64(statement, index, Int64(integer))
            case .float(let double): sqlite_nio_sqlite3_bind_double(statement, index, double)
            case .text(let text):
                sqlite_nio_sqlite3_bind_text64(statement, index, text, UInt64(text.utf8.count), transient, UInt8(SQLITE_UTF8))
            case .blob(let buffer):
                buffer.withUnsafeReadableBytes {
                    sqlite_nio_sqlite3_bind_blob64(statement, index, $0.baseAddress, UInt64($0.count), transient)
                }
            case .null: sqlite_nio_sqlite3_bind_null(statement, index)
            }
            guard status == SQLITE_OK else {
                throw SQLiteFailure(code: status, message: String(cString: sqlite_nio_sqlite3_errmsg(db)))
            }
        }
    }

    private static func value(of statement: OpaquePointer, at column: Int32) -> SQLiteData {
        switch sqlite_nio_sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER:
            return .integer(Int(sqlite_nio_sqlite3_column_int64(statement, column)))
        case SQLITE_FLOAT:
            return .float(sqlite_nio_sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            guard let text = sqlite_nio_sqlite3_column_text(statement, column) else { return .text("") }
            let length = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self))
        case SQLITE_BLOB:
            let length = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            guard let bytes = sqlite_nio_sqlite3_column_blob(statement, column), length > 0 else { return .blob(ByteBuffer()) }
            return .blob(ByteBuffer(bytes: UnsafeRawBufferPointer(start: bytes, count: length)))
        default:
            return .null
        }
    }

    /// SQLite copies the bound value (`SQLITE_TRANSIENT`, a C macro Swift cannot import).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// An error from SQLite: its (extended) result code and message.
struct SQLiteFailure: Error, CustomStringConvertible {
    let code: Int32
    let message: String

    var description: String { "SQLite error \(code): \(message)" }
}

/// ``SQLiteHandle`` as SQLKit's `SQLDatabase`: statements run synchronously in the caller.
struct SQLiteHandleDatabase: SQLDatabase {
    let handle: SQLiteHandle
    let logger: Logger
    let eventLoop: any EventLoop
    let dialect: any SQLDialect = SQLiteDialect()
    var queryLogLevel: Logger.Level? { .trace }
    private let encoder = SQLiteDataEncoder()
    private let decoder = SQLiteDataDecoder()

    init(handle: SQLiteHandle, logger: Logger, eventLoop: any EventLoop) {
        self.handle = handle
        self.logger = logger
        self.eventLoop = eventLoop
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) -> EventLoopFuture<Void> {
        do {
            try run(query, onRow)
            return eventLoop.makeSucceededVoidFuture()
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) async throws {
        try run(query, onRow)
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }

    private func run(_ query: any SQLExpression, _ onRow: @Sendable (any SQLRow) -> ()) throws {
        let (sql, rawBinds) = serialize(query)
        logger.trace("SQL", metadata: ["sql": "\(sql)"])
        let binds = try rawBinds.map { try encoder.encode($0) }
        let decoder = decoder
        try handle.execute(sql, binds) { columns, values in
            onRow(SQLiteValuesRow(columns: columns, values: values, decoder: decoder))
        }
    }
}

/// A row read by ``SQLiteHandle``.
struct SQLiteValuesRow: SQLRow {
    let columns: [String]
    let values: [SQLiteData]
    let decoder: SQLiteDataDecoder

    var allColumns: [String] { columns }

    func contains(column: String) -> Bool { columns.contains(column) }

    func decodeNil(column: String) throws -> Bool { try value(column) == .null }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        try decoder.decode(D.self, from: try value(column))
    }

    private func value(_ column: String) throws -> SQLiteData {
        guard let index = columns.firstIndex(of: column) else {
            throw DecodingError.keyNotFound(SQLiteColumnKey(stringValue: column),
                                            .init(codingPath: [], debugDescription: "no column \(column) in \(columns)"))
        }
        return values[index]
    }
}

private struct SQLiteColumnKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// The one thread that runs the database's statements: a `TaskExecutor`, so that code in
/// `withTaskExecutorPreference` runs there between its statements too.
final class DatabaseThread: TaskExecutor {
    private let pool: NIOThreadPool

    init() {
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pool.submit { _ in job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    func shutdown() async {
        try? await pool.shutdownGracefully()
    }
}
