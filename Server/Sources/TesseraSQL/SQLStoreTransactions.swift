import SQLKit
import TesseraDomain

extension SQLStore: StoreTransactions {
    public func transaction<T: Sendable>(_ body: @Sendable (any TransactionStores) async throws -> T) async throws -> T {
        try await database.transaction { db in
            try await body(SQLStore(database: JoinedTransaction(db: db), clientCache: clientCache))
        }
    }
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
