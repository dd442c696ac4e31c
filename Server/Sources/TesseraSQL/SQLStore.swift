import Foundation
import SQLKit
import TesseraCore
import TesseraDomain

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

extension SQLRow {
    func string(_ column: String) throws -> String { try decode(column: column, as: String.self) }
    func optionalString(_ column: String) throws -> String? { try decode(column: column, as: String?.self) }
    func int(_ column: String) throws -> Int64 { try decode(column: column, as: Int64.self) }
    func optionalInt(_ column: String) throws -> Int64? { try decode(column: column, as: Int64?.self) }
    func bool(_ column: String) throws -> Bool { try decode(column: column, as: Bool.self) }
    func json<T: Decodable>(_ column: String, as type: T.Type) throws -> T {
        try SQLColumns(row: self).json(column, as: type)
    }
}

/// The columns of a row by name, as the grant's and the user's records are read from it: SQLKit's
/// rows (``SQLColumns``), and the prepared rotation's cells by position (``PostgresCells``), which
/// decode each column as its type, without SQLKit's lookup by name and cast at run time.
protocol StoreColumns {
    func string(_ column: String) throws -> String
    func optionalString(_ column: String) throws -> String?
    func int(_ column: String) throws -> Int64
    func optionalInt(_ column: String) throws -> Int64?
    func bool(_ column: String) throws -> Bool
}

extension StoreColumns {
    func json<T: Decodable>(_ column: String, as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(try string(column).utf8))
    }

    /// A column holding a JSON object (a user's profile), read without `JSONDecoder`: it took a
    /// third of a refresh's row reading on PostgreSQL.
    func jsonObject(_ column: String) throws -> [String: JSONValue] {
        guard case .object(let members) = try JSONValue(parsing: try string(column)) else {
            throw JSONParsingError(reason: "the column \(column) holds JSON that is not an object", offset: 0)
        }
        return members
    }
}

/// A row of SQLKit's (SQLite's, or PostgreSQL's through PostgresKit).
struct SQLColumns: StoreColumns {
    let row: any SQLRow

    func string(_ column: String) throws -> String { try row.string(column) }
    func optionalString(_ column: String) throws -> String? { try row.optionalString(column) }
    func int(_ column: String) throws -> Int64 { try row.int(column) }
    func optionalInt(_ column: String) throws -> Int64? { try row.optionalInt(column) }
    func bool(_ column: String) throws -> Bool { try row.bool(column) }
}


/// Whether an error is a uniqueness violation (SQLite or PostgreSQL).
package func isUniqueViolation(_ error: any Error) -> Bool {
    if isPostgresUniqueViolation(error) { return true }
    let text = String(describing: error)
    return text.contains("UNIQUE constraint failed") || text.contains("constraint failed")
}

extension SQLStore {
    /// Whether the database answers and has every migration this build knows (a node of an
    /// older build on a newer schema is ready too: migrations only add).
    public func isSchemaCurrent() async throws -> Bool {
        try await database.withDatabase { db in
            let row = try await db.raw("SELECT MAX(version) AS version FROM schema_migrations").first()
            return (try row?.decode(column: "version", as: Int?.self) ?? 0) >= (Migrations.all.last?.version ?? 0)
        }
    }
}
