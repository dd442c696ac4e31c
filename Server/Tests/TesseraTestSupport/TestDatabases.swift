import Foundation
import Logging
import TesseraCore
import TesseraDomain
import SQLKit
import TesseraSQL

/// The databases the store tests run on: SQLite always, and PostgreSQL when
/// `TESSERA_TEST_POSTGRES` names a server (`scripts/test` starts a private one).
public enum TestBackend: String, Sendable, CaseIterable, CustomStringConvertible {
    case sqlite
    case postgres

    /// SQLite, and PostgreSQL when a server is given.
    public static var available: [TestBackend] {
        ProcessInfo.processInfo.environment["TESSERA_TEST_POSTGRES"] == nil ? [.sqlite] : [.sqlite, .postgres]
    }

    public var description: String { rawValue }

    /// A database of its own for one test: SQLite in memory, or a new, empty schema on the
    /// PostgreSQL server (its `search_path`), so tests run side by side without meeting.
    public func freshLocation() async throws -> DatabaseLocation {
        switch self {
        case .sqlite:
            return .sqliteMemory
        case .postgres:
            guard let url = ProcessInfo.processInfo.environment["TESSERA_TEST_POSTGRES"] else {
                throw ConfigurationError("TESSERA_TEST_POSTGRES is not set")
            }
            var location = try PostgresLocation(parsing: url)
            let schema = "test_" + SecureRandom.token(bytes: 8).lowercased().filter { $0.isLetter || $0.isNumber }
            let admin = try await PostgresDatabase.open(location, poolSize: 1, waitLimit: .seconds(60), logger: Logger(label: "test"))
            do {
                try await admin.withDatabase { db in try await db.raw("CREATE SCHEMA \(unsafeRaw: schema)").run() }
            } catch {
                try? await admin.close()
                throw error
            }
            try await admin.close()
            location.parameters["search_path"] = schema
            return .postgres(location)
        }
    }

    /// A fresh database of this kind, opened. Its leases wait up to a minute, not the server's
    /// 5 s: the race tests send 20 to 50 transactions at once through a pool of 4, beside every
    /// other suite, on a 2-core machine; a test of the wait limit itself opens its own.
    public func open() async throws -> any TransactionalDatabase {
        try await openDatabase(try await freshLocation(), poolSize: 4, waitLimit: .seconds(60), logger: Logger(label: "test"))
    }
}

/// A fresh, migrated store on `backend`, closed after `body`.
public func withStore(_ backend: TestBackend = .sqlite, _ body: (SQLStore) async throws -> Void) async throws {
    let database = try await backend.open()
    let store = SQLStore(database: database)
    do {
        try await store.migrate()
        try await body(store)
    } catch {
        try? await database.close()
        throw error
    }
    try await database.close()
}
