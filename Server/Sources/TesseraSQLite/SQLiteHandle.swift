import CTesseraSQLite
import NIOCore
import SQLiteNIO
import NIOConcurrencyHelpers

/// One SQLite connection, called synchronously.
///
/// SQLiteNIO runs every statement as a job on NIO's thread pool and hands the result back
/// through the event loop and the concurrency pool: three thread switches per statement,
/// fifteen for a five-statement transaction that holds the only connection meanwhile.
/// Here a statement runs on the calling thread, and ``SQLiteDatabase`` calls it from a thread
/// of its own (``DatabaseThread``): a whole transaction is one hop there and back. A
/// transaction that can begin without waiting may also run on the caller's
/// (``SQLiteDatabase/transactionHere(_:)``).
/// Prepared statements are kept by SQL text (the store's SQL is a fixed set of templates),
/// so each is parsed once.
package final class SQLiteHandle: Sendable {
    /// The connection and its statements: C pointers, touched only under the lock.
    private struct State: @unchecked Sendable {
        var db: OpaquePointer?
        var statements: [String: OpaquePointer] = [:]
    }
    // A lock, not thread confinement: the handle is correct from any thread, and the lock
    // is uncontended when, as intended, one thread uses it.
    private let state: NIOLockedValueBox<State>
    private static let maximumCachedStatements = 512

    /// Opens (creating if needed) the database at `path`, or a private in-memory one for `":memory:"`.
    package init(path: String) throws {
        var db: OpaquePointer?
        let status = tessera_sqlite_open(path, &db)
        guard status == TESSERA_SQLITE_OK, let db else {
            let message = db.map { String(cString: tessera_sqlite_errmsg($0)) } ?? "out of memory"
            tessera_sqlite_close(db)
            throw SQLiteFailure(code: status, message: "cannot open \(path): \(message)")
        }
        state = NIOLockedValueBox(State(db: db))
    }

    deinit {
        close()
    }

    /// Runs one statement with `binds`, calling `onRow` for each row it returns.
    package func execute(_ sql: String, _ binds: [SQLiteData], onRow: (_ columns: [String], _ values: [SQLiteData]) throws -> Void) throws {
        try state.withLockedValue { state in
            guard let db = state.db else { throw SQLiteFailure(code: TESSERA_SQLITE_MISUSE, message: "the database is closed") }
            let statement = try Self.prepared(sql, in: &state, db: db)
            defer {
                tessera_sqlite_reset(statement)
                tessera_sqlite_clear_bindings(statement)
            }
            try Self.bind(binds, to: statement, db: db)
            let count = tessera_sqlite_column_count(statement)
            let columns = (0..<count).map { String(cString: tessera_sqlite_column_name(statement, $0)) }
            while true {
                switch tessera_sqlite_step(statement) {
                case TESSERA_SQLITE_ROW:
                    try onRow(columns, (0..<count).map { Self.value(of: statement, at: $0) })
                case TESSERA_SQLITE_DONE:
                    return
                case let status:
                    throw SQLiteFailure(code: status, message: String(cString: tessera_sqlite_errmsg(db)))
                }
            }
        }
    }

    /// Runs `body` with SQLite's busy timeout at `milliseconds` (how long a statement waits for a lock
    /// another connection holds), then puts back `restoring`.
    package func withBusyTimeout<T>(_ milliseconds: Int32, restoring: Int32, _ body: () throws -> T) throws -> T {
        try state.withLockedValue { state in
            guard let db = state.db else { throw SQLiteFailure(code: TESSERA_SQLITE_MISUSE, message: "the database is closed") }
            tessera_sqlite_busy_timeout(db, milliseconds)
        }
        defer { state.withLockedValue { state in state.db.map { _ = tessera_sqlite_busy_timeout($0, restoring) } } }
        return try body()
    }

    /// Finalizes the prepared statements and closes the connection; later calls fail.
    package func close() {
        state.withLockedValue { state in
            for statement in state.statements.values { tessera_sqlite_finalize(statement) }
            state.statements = [:]
            if let db = state.db { tessera_sqlite_close(db) }
            state.db = nil
        }
    }

    package var isClosed: Bool { state.withLockedValue { $0.db == nil } }

    private static func prepared(_ sql: String, in state: inout State, db: OpaquePointer) throws -> OpaquePointer {
        if let statement = state.statements[sql] { return statement }
        var statement: OpaquePointer?
        let status = tessera_sqlite_prepare(db, sql, &statement)
        guard status == TESSERA_SQLITE_OK, let statement else {
            throw SQLiteFailure(code: status, message: String(cString: tessera_sqlite_errmsg(db)))
        }
        if state.statements.count >= maximumCachedStatements {
            for old in state.statements.values { tessera_sqlite_finalize(old) }
            state.statements.removeAll()
        }
        state.statements[sql] = statement
        return statement
    }

    private static func bind(_ binds: [SQLiteData], to statement: OpaquePointer, db: OpaquePointer) throws {
        for (offset, value) in binds.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32 = switch value {
            case .integer(let integer): tessera_sqlite_bind_int64(statement, index, Int64(integer))
            case .float(let double): tessera_sqlite_bind_double(statement, index, double)
            case .text(let text):
                tessera_sqlite_bind_text(statement, index, text, UInt64(text.utf8.count))
            case .blob(let buffer):
                buffer.withUnsafeReadableBytes {
                    tessera_sqlite_bind_blob(statement, index, $0.baseAddress, UInt64($0.count))
                }
            case .null: tessera_sqlite_bind_null(statement, index)
            }
            guard status == TESSERA_SQLITE_OK else {
                throw SQLiteFailure(code: status, message: String(cString: tessera_sqlite_errmsg(db)))
            }
        }
    }

    private static func value(of statement: OpaquePointer, at column: Int32) -> SQLiteData {
        switch tessera_sqlite_column_type(statement, column) {
        case TESSERA_SQLITE_INTEGER:
            return .integer(Int(tessera_sqlite_column_int64(statement, column)))
        case TESSERA_SQLITE_FLOAT:
            return .float(tessera_sqlite_column_double(statement, column))
        case TESSERA_SQLITE_TEXT:
            guard let text = tessera_sqlite_column_text(statement, column) else { return .text("") }
            let length = Int(tessera_sqlite_column_bytes(statement, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self))
        case TESSERA_SQLITE_BLOB:
            let length = Int(tessera_sqlite_column_bytes(statement, column))
            guard let bytes = tessera_sqlite_column_blob(statement, column), length > 0 else { return .blob(ByteBuffer()) }
            return .blob(ByteBuffer(bytes: UnsafeRawBufferPointer(start: bytes, count: length)))
        default:
            return .null
        }
    }

}

/// An error from SQLite: its (extended) result code and message.
package struct SQLiteFailure: Error, CustomStringConvertible {
    package let code: Int32
    package let message: String

    package var description: String { "SQLite error \(code): \(message)" }

    /// Another connection holds the lock the statement needed (`SQLITE_BUSY` and its extended codes).
    package var isBusy: Bool { code & 0xFF == TESSERA_SQLITE_BUSY }
}
