import PostgresKit
import SQLKit
import TesseraDomain

extension SQLStore: StoreTransactions {
    public func transaction<T: Sendable>(_ body: @Sendable (any TransactionStores) async throws -> T) async throws -> T {
        try await database.transaction { db in
            try await body(SQLStore(database: JoinedTransaction(db: db), clientCache: clientCache))
        }
    }

    public func transactionHere<T: Sendable>(_ body: @Sendable (any TransactionStores) async throws -> T) async throws -> T? {
        try await database.transactionHere { db in
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
            guard let row = try await connection.rows(of: rotation).first else { return nil }
            let cells = Array(row)
            return (try Self.grant(columns: PostgresCells(cells: cells, positions: RefreshTokenRotation.grantPositions)),
                    try Self.user(columns: PostgresCells(cells: cells, positions: RefreshTokenRotation.userPositions)))
        }
    }

    /// The columns of `grants`, as ``grant(_:)`` reads them.
    static let grantColumns = ["id", "client_id", "user_id", "scope", "claims", "auth_time", "amr", "sid", "created_at", "expires_at",
                               "revoked_at", "device_session_id"]
    /// The columns of `users`, as ``user(_:)`` reads them.
    static let userColumns = ["id", "email", "email_verified", "password_hash", "profile", "created_at", "updated_at", "version",
                              "disabled_at", "roles"]
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

    func transactionHere<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T? {
        try await body(db)
    }

    /// The transaction's owner closes the database.
    func close() async throws {}
}
