import Foundation
import SQLKit
import TesseraCore

/// The SQL implementation of every store protocol, on any ``TransactionalDatabase``.
public struct SQLStore: Sendable {
    public let database: any TransactionalDatabase
    let clientCache: ClientCache

    public init(database: any TransactionalDatabase) {
        self.init(database: database, clientCache: ClientCache())
    }

    init(database: any TransactionalDatabase, clientCache: ClientCache) {
        self.database = database
        self.clientCache = clientCache
    }

    /// Runs migrations; call once at start.
    public func migrate() async throws {
        try await Migrations.run(on: database)
    }
}

/// A store-level failure the caller can act on.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    case duplicate(String)
    case notFound(String)

    public var description: String {
        switch self {
        case .duplicate(let what): "\(what) already exists"
        case .notFound(let what): "\(what) not found"
        }
    }
}

extension SQLRow {
    func string(_ column: String) throws -> String { try decode(column: column, as: String.self) }
    func optionalString(_ column: String) throws -> String? { try decode(column: column, as: String?.self) }
    func int(_ column: String) throws -> Int64 { try decode(column: column, as: Int64.self) }
    func optionalInt(_ column: String) throws -> Int64? { try decode(column: column, as: Int64?.self) }
    func bool(_ column: String) throws -> Bool { try decode(column: column, as: Bool.self) }
    func json<T: Decodable>(_ column: String, as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(try string(column).utf8))
    }
}

func jsonText<T: Encodable>(_ value: T) throws -> String {
    String(decoding: try CanonicalJSON.encode(value), as: UTF8.self)
}

/// Whether an error is a uniqueness violation (SQLite or PostgreSQL).
func isUniqueViolation(_ error: any Error) -> Bool {
    let text = String(describing: error)
    return text.contains("UNIQUE constraint failed") || text.contains("duplicate key value") || text.contains("constraint failed")
}
