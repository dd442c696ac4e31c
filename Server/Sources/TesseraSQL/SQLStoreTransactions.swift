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
            return try Self.grantAndUser(row)
        }
    }

    public func rotateFamilyTokenAtOnce(grantID: String, tokenHash: String, clientID: String, successor: PendingRefreshToken,
                                        clock: WallClock) async throws -> (grant: Grant, user: User)? {
        // PostgreSQL: one prepared statement.
        if database is PostgresDatabase {
            return try await database.withDatabase { db in
                guard let connection = db as? WatchedConnection else { return nil }
                let now = clock.now()
                let rotation = FamilyTokenRotation(now: now, tokenHash: tokenHash, clientID: clientID, successorHash: successor.tokenHash,
                                                   successorExpiry: now + successor.lifetime, grantID: grantID)
                guard let row = try await connection.rows(of: rotation).first else { return nil }
                return try Self.grantAndUser(row)
            }
        }
        // SQLite: the same write, then the user, in a transaction on the calling thread. The user
        // is checked after the write, which a disabled one rolls back: a subquery in the write's
        // WHERE would cost SQLite a statement journal (a temporary file and its page cache,
        // made and dropped at every refresh).
        do {
            let rotated: (grant: Grant, user: User)?? = try await database.transactionHere { db in
                let now = clock.now()
                guard let row = try await db.raw("""
                    UPDATE grants SET refresh_token_hash = \(bind: successor.tokenHash), refresh_generation = refresh_generation + 1,
                        refresh_expires_at = MIN(\(bind: now + successor.lifetime), expires_at), refresh_predecessor = refresh_generation,
                        refresh_rotated_at = \(bind: now)
                    WHERE id = \(bind: grantID) AND refresh_token_hash = \(bind: tokenHash) AND client_id = \(bind: clientID)
                        AND refresh_expires_at > \(bind: now) AND revoked_at IS NULL AND expires_at > \(bind: now) AND device_session_id IS NULL
                    RETURNING *
                    """).first() else { return nil }
                let grant = try Self.grant(row)
                guard let userID = grant.userID, let found = try await db.raw("SELECT * FROM users WHERE id = \(bind: userID)").first(),
                      case let user = try Self.user(found), !user.isDisabled else {
                    throw DeclinedRotation()
                }
                return (grant, user)
            }
            return rotated ?? nil
        } catch is DeclinedRotation {
            return nil
        }
    }

    /// Rolls back a rotation at once whose user can't have tokens: the transaction decides.
    private struct DeclinedRotation: Error {}

    /// The grant and user of a rotation's row (``RefreshTokenRotation``, ``FamilyTokenRotation``).
    private static func grantAndUser(_ row: PostgresRow) throws -> (grant: Grant, user: User) {
        let cells = Array(row)
        return (try grant(columns: PostgresCells(cells: cells, positions: RefreshTokenRotation.grantPositions)),
                try user(columns: PostgresCells(cells: cells, positions: RefreshTokenRotation.userPositions)))
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
