import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import TesseraSQLite

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

    /// Runs `query` in the caller.
    func run(_ query: any SQLExpression, _ onRow: @Sendable (any SQLRow) -> ()) throws {
        let (sql, rawBinds) = serialize(query)
        logger.trace("SQL", metadata: ["sql": "\(sql)"])
        let binds = try rawBinds.map { try Self.direct($0) ?? encoder.encode($0) }
        let decoder = decoder
        try handle.execute(sql, binds) { columns, values in
            onRow(SQLiteValuesRow(columns: columns, values: values, decoder: decoder))
        }
    }

    /// A bind of the types most binds are, as `SQLiteDataEncoder` makes it, without its search for
    /// the value's conformance to `SQLiteDataConvertible` at every value.
    private static func direct(_ value: any Encodable) -> SQLiteData? {
        switch value {
        case let text as String: .text(text)
        case let integer as Int: .integer(integer)
        case let integer as Int64: .integer(Int(integer))
        default: nil
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
        let value = try value(column)
        return try Self.direct(value, as: D.self) ?? decoder.decode(D.self, from: value)
    }

    /// A column of the types most columns are read as, when its value is of that type, as
    /// `SQLiteDataDecoder` reads it, without its search for the type's conformance (or, for an
    /// optional, its `Decoder`) at every value; nil for everything else, which it reads.
    private static func direct<D>(_ value: SQLiteData, as type: D.Type) -> D? {
        switch value {
        case .text(let text):
            if D.self == String.self || D.self == String?.self { return text as? D }
        case .integer(let integer):
            if D.self == Int64.self || D.self == Int64?.self { return Int64(integer) as? D }
            if D.self == Int.self || D.self == Int?.self { return integer as? D }
        case .null:
            if D.self == String?.self { return String?.none as? D }
            if D.self == Int64?.self { return Int64?.none as? D }
            if D.self == Int?.self { return Int?.none as? D }
        default:
            break
        }
        return nil
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

/// A connection that only reads, on a thread of its own: ``SQLiteDatabase/readAhead(_:)``.
final class SQLiteReader: Sendable {
    private let handle: SQLiteHandle
    private let pool: NIOThreadPool

    init(path: String) throws {
        let handle = try SQLiteHandle(path: path)
        do {
            try handle.execute("PRAGMA query_only = ON", []) { _, _ in }
        } catch {
            handle.close()
            throw error
        }
        self.handle = handle
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
    }

    /// Runs `query` on this connection; its rows are dropped.
    func read(_ query: SQLQueryString, logger: Logger) async throws {
        let db = SQLiteHandleDatabase(handle: handle, logger: logger, eventLoop: MultiThreadedEventLoopGroup.singleton.any())
        try await pool.runIfActive { try db.run(query) { _ in } }
    }

    /// Waits for a read under way, then closes the connection.
    func close() async {
        try? await pool.shutdownGracefully()
        handle.close()
    }
}
