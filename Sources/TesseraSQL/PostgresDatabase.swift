import Foundation
import Logging
import NIOSSL
import PostgresKit
import PostgresNIO
import SQLKit
import TesseraDomain

/// PostgreSQL through a pool of connections (postgres-nio's `PostgresClient`), shared by any
/// number of nodes.
///
/// Transactions run at PostgreSQL's default isolation, READ COMMITTED: the stores never read a
/// row and then write it on what they read; every single-use thing is taken by one conditional
/// write (`UPDATE … WHERE used_at IS NULL … RETURNING`), so two nodes racing for it get one
/// winner however their statements interleave.
public final class PostgresDatabase: TransactionalDatabase {
    let client: PostgresClient
    let logger: Logger
    /// The task running the pool; cancelling it closes every connection.
    private let running: Task<Void, Never>

    /// Starts the pool, and connects once beside it, so that a wrong address, password or TLS
    /// setting is told at start with the server's reason (the pool would retry quietly). By the
    /// time that connection is made, the pool's task is running and can lease connections.
    public static func open(_ location: PostgresLocation, poolSize: Int, logger: Logger) async throws -> PostgresDatabase {
        let tls = try TLSSettings(location)
        let database = PostgresDatabase(client: PostgresClient(configuration: try poolConfiguration(location, tls: tls, poolSize: poolSize),
                                                               backgroundLogger: logger),
                                        logger: logger)
        do {
            let connection = try await PostgresConnection.connect(configuration: connectionConfiguration(location, tls: tls),
                                                                  id: 0, logger: logger)
            try await connection.close()
        } catch {
            try? await database.close()
            throw DatabaseUnavailable(location: location.description, reason: Self.reason(error))
        }
        return database
    }

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
        running = Task { await client.run() }
    }

    /// libpq's `sslmode` as NIOSSL's settings.
    struct TLSSettings {
        /// nil: no TLS.
        var configuration: TLSConfiguration?
        var required: Bool

        init(_ location: PostgresLocation) throws {
            var tls = TLSConfiguration.makeClientConfiguration()
            switch location.sslMode {
            case .disable:
                configuration = nil
                required = false
                return
            case .prefer, .require:
                // libpq's meaning: encrypted, but the server is not authenticated.
                tls.certificateVerification = .none
            case .verifyCA:
                tls.certificateVerification = .noHostnameVerification
            case .verifyFull:
                tls.certificateVerification = .fullVerification
            }
            if let file = location.sslRootCertificate {
                do {
                    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
                } catch {
                    throw ConfigurationError("sslrootcert \(file) can't be read as PEM certificates: \(error)")
                }
            }
            configuration = tls
            required = location.sslMode != .prefer
        }
    }

    static func connectionConfiguration(_ location: PostgresLocation, tls: TLSSettings) throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let directory = location.socketDirectory {
            configuration = .init(unixSocketPath: "\(directory)/.s.PGSQL.\(location.port)", username: location.user,
                                  password: location.password, database: location.database)
        } else {
            let mode: PostgresConnection.Configuration.TLS = switch tls.configuration {
            case nil: .disable
            case let settings?: tls.required ? .require(try NIOSSLContext(configuration: settings))
                                             : .prefer(try NIOSSLContext(configuration: settings))
            }
            configuration = .init(host: location.host, port: location.port, username: location.user, password: location.password,
                                  database: location.database, tls: mode)
        }
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = startupParameters(location)
        return configuration
    }

    static func poolConfiguration(_ location: PostgresLocation, tls: TLSSettings, poolSize: Int) throws -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let directory = location.socketDirectory {
            configuration = .init(unixSocketPath: "\(directory)/.s.PGSQL.\(location.port)", username: location.user,
                                  password: location.password, database: location.database)
        } else {
            let mode: PostgresClient.Configuration.TLS = switch tls.configuration {
            case nil: .disable
            case let settings?: tls.required ? .require(settings) : .prefer(settings)
            }
            configuration = .init(host: location.host, port: location.port, username: location.user, password: location.password,
                                  database: location.database, tls: mode)
        }
        configuration.options.maximumConnections = poolSize
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = startupParameters(location)
        return configuration
    }

    static func startupParameters(_ location: PostgresLocation) -> [(String, String)] {
        location.parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    public func withDatabase<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await DatabaseSignals.measure(DatabaseSignals.reads) {
            try await client.withConnection { connection in
                try await body(connection.sql(queryLogLevel: nil, logger: logger))
            }
        }
    }

    public func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await DatabaseSignals.measure(DatabaseSignals.transactions) { try await pooledTransaction(body) }
    }

    private func pooledTransaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await client.withConnection { connection in
            try await runTransaction(on: connection.sql(queryLogLevel: nil, logger: logger), begin: "BEGIN", body)
        }
    }

    public func close() async throws {
        running.cancel()
        await running.value
    }

    /// What the server said, without the details postgres-nio keeps out of descriptions by design.
    static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            switch error.code {
            case .connectionError, .serverClosedConnection, .clientClosedConnection:
                return "can't connect (\(error.underlying.map { "\($0)" } ?? "connection refused or closed"))"
            case .sslUnsupported:
                return "the server does not offer TLS, and sslmode asks for it"
            default:
                return "\(error.code)" + (error.underlying.map { ": \($0)" } ?? "")
            }
        }
        return "\(error)"
    }
}

/// What a database error says, for an operator: PostgreSQL's own message where there is one
/// (postgres-nio keeps it out of the error's description, lest a query's values leak).
public func databaseErrorReason(_ error: any Error) -> String {
    PostgresDatabase.reason(error)
}

/// Whether `error` is PostgreSQL's uniqueness violation (SQLSTATE 23505).
func isPostgresUniqueViolation(_ error: any Error) -> Bool {
    (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
}
