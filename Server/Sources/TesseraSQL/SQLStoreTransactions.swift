import PostgresKit
import SQLKit
import TesseraDomain

extension SQLStore: StoreTransactions {
    public func transaction<T: Sendable>(_ body: @Sendable (any TransactionStores) async throws -> T) async throws -> T {
        try await database.transaction { db in
            try await body(SQLStore(database: JoinedTransaction(db: db), clientCache: clientCache))
        }
    }
}

extension SQLStore {
    public func rotateRefreshTokenAtOnce(tokenHash: String, clientID: String, successor: PendingRefreshToken,
                                         clock: WallClock) async throws -> (grant: Grant, user: User)? {
        guard database.writesInCommonTableExpressions else { return nil }
        return try await database.withDatabase { db in
            // The token's row is taken as `takeRefreshToken` takes it (a rotation of it under way
            // elsewhere is waited for, then found used); the grant and user rows are read, as a
            // transaction's SELECTs would read them, and returned side by side (the grant's
            // columns prefixed); the successor is inserted only when a row was taken.
            guard let connection = db as? WatchedConnection else { return nil }
            let now = clock.now()
            let rotation = RefreshTokenRotation(now: now, tokenHash: tokenHash, clientID: clientID, successorHash: successor.tokenHash,
                                                successorExpiry: now + successor.lifetime)
            guard let row = try await connection.rows(of: rotation).first?.sql() else { return nil }
            return (try Self.grant(PrefixedRow(row: row, prefix: "grant_")), try Self.user(row))
        }
    }

    /// The columns of `grants`, as ``grant(_:)`` reads them.
    static let grantColumns = ["id", "client_id", "user_id", "scope", "claims", "auth_time", "amr", "sid", "created_at", "expires_at",
                               "revoked_at", "device_session_id"]
    /// The columns of `users`, as ``user(_:)`` reads them.
    static let userColumns = ["id", "email", "email_verified", "password_hash", "profile", "created_at", "updated_at", "version",
                              "disabled_at", "roles"]
}

/// The columns of a row whose names start with `prefix`, by their names without it: one table's
/// columns among another's in a row that returns both.
struct PrefixedRow: SQLRow {
    let row: any SQLRow
    let prefix: String

    var allColumns: [String] { row.allColumns.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) } }
    func contains(column: String) -> Bool { row.contains(column: prefix + column) }
    func decodeNil(column: String) throws -> Bool { try row.decodeNil(column: prefix + column) }
    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D { try row.decode(column: prefix + column, as: type) }
}

/// A connection that is already inside a transaction: every store call made through it
/// runs on that connection and joins the transaction (a nested `transaction` too).
struct JoinedTransaction: TransactionalDatabase {
    let db: any SQLDatabase

    func withDatabase<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await body(db)
    }

    func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await body(db)
    }

    /// The transaction's owner closes the database.
    func close() async throws {}
}
