import Foundation
import SQLKit
import NIOConcurrencyHelpers
import TesseraCore
import TesseraDomain

extension SQLStore: ClientStore {
    /// The client, from a few seconds' memory when it was read recently: every token request
    /// looks its client up, and clients change only through the admin CLI (a change reaches
    /// a running server within ``ClientCache/lifetime``). Unknown ids are never remembered,
    /// so a client registered while the server runs is found at once.
    ///
    /// One read at a time per client: the requests that need it while it is read wait for that
    /// read. Under load every request of the moment read it at once when its time was up, and a
    /// pool on PostgreSQL opened connections for them (which can take seconds on a saturated
    /// machine: docs/performance.md).
    public func client(id: String) async throws -> Client? {
        if database is JoinedTransaction {
            // A transaction's read is made on its connection, by its task, and not shared: it
            // sees what the transaction wrote before it commits.
            if let client = clientCache.remembered(id) { return client }
            return try await currentClient(id: id)
        }
        return try await clientCache.client(id: id) { [self] in try await currentClient(id: id) }
    }

    public func currentClient(id: String) async throws -> Client? {
        try await database.withDatabase { db -> Client? in
            try await db.raw("SELECT * FROM clients WHERE id = \(bind: id)").first().map(Self.client)
        }
    }

    static func client(_ row: any SQLRow) throws -> Client {
        var client = Client(
            id: try row.string("id"), name: try row.string("name"), secretHash: try row.optionalString("secret_hash"),
            authMethod: ClientAuthMethod(rawValue: try row.string("auth_method")) ?? .clientSecretBasic,
            redirectURIs: try row.json("redirect_uris", as: [String].self),
            postLogoutRedirectURIs: try row.json("post_logout_redirect_uris", as: [String].self),
            grantTypes: try row.json("grant_types", as: [String].self),
            scopes: ScopeSet(parsing: try row.string("scopes")), firstParty: try row.bool("first_party"),
            jwks: try row.optionalString("jwks").map { try JWKSet.parse(Data($0.utf8)) },
            assertionIssuer: try row.optionalString("assertion_issuer"), assertionLifetime: try row.optionalInt("assertion_lifetime"),
            subjectType: SubjectType(rawValue: try row.string("subject_type")) ?? .public,
            createdAt: try row.int("created_at"))
        client.resourceServer = try row.bool("resource_server")
        if let links = try row.optionalString("app_links") {
            client.appLinks = try JSONDecoder().decode(ClientAppLinks.self, from: Data(links.utf8))
        }
        client.version = try row.int("version")
        client.previousSecretHash = try row.optionalString("previous_secret_hash")
        client.previousSecretExpiresAt = try row.optionalInt("previous_secret_expires_at")
        client.requirePushedRequests = try row.bool("require_pushed_requests")
        client.requireMFA = try row.bool("require_mfa")
        client.authenticator = try row.bool("authenticator")
        client.deviceSSOGroup = try row.optionalString("device_sso_group")
        return client
    }

    public func clients(after cursor: ClientCursor?, limit: Int) async throws -> [Client] {
        try await database.withDatabase { db in
            let rows = if let cursor {
                try await db.raw("""
                    SELECT * FROM clients WHERE name > \(bind: cursor.name) OR (name = \(bind: cursor.name) AND id > \(bind: cursor.id))
                    ORDER BY name, id LIMIT \(bind: limit)
                    """).all()
            } else {
                try await db.raw("SELECT * FROM clients ORDER BY name, id LIMIT \(bind: limit)").all()
            }
            return try rows.map(Self.client)
        }
    }

    public func update(_ client: Client, ifVersion version: Int64) async throws -> Bool {
        let redirects = try jsonText(client.redirectURIs), logouts = try jsonText(client.postLogoutRedirectURIs)
        let grants = try jsonText(client.grantTypes), jwks = try client.jwks.map(jsonText)
        let appLinks = client.appLinks.isEmpty ? nil : try jsonText(client.appLinks)
        defer { clientCache.forget(client.id) }
        return try await database.withDatabase { db in
            try await db.raw("""
                UPDATE clients SET name = \(bind: client.name), redirect_uris = \(bind: redirects),
                    post_logout_redirect_uris = \(bind: logouts), grant_types = \(bind: grants), scopes = \(bind: client.scopes.description),
                    first_party = \(bind: client.firstParty), jwks = \(bind: jwks), app_links = \(bind: appLinks),
                    resource_server = \(bind: client.resourceServer), require_pushed_requests = \(bind: client.requirePushedRequests),
                    require_mfa = \(bind: client.requireMFA),
                    authenticator = \(bind: client.authenticator), device_sso_group = \(bind: client.deviceSSOGroup), version = version + 1
                WHERE id = \(bind: client.id) AND version = \(bind: version) RETURNING id
                """).first() != nil
        }
    }

    public func replaceSecret(clientID: String, hash: String, previousHash: String?, previousExpiresAt: Int64?) async throws {
        defer { clientCache.forget(clientID) }
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE clients SET secret_hash = \(bind: hash), previous_secret_hash = \(bind: previousHash),
                    previous_secret_expires_at = \(bind: previousExpiresAt), version = version + 1
                WHERE id = \(bind: clientID)
                """).run()
        }
    }

    public func deleteClient(id: String) async throws -> Bool {
        defer { clientCache.forget(id) }
        return try await database.transaction { db in
            // Its grants go with it (and their refresh tokens with them), and with them every
            // access token issued under one.
            try await db.raw("DELETE FROM clients WHERE id = \(bind: id) RETURNING id").first() != nil
        }
    }

    public func clientAppLinks() async throws -> [(links: ClientAppLinks, firstParty: Bool, authenticator: Bool)] {
        try await database.withDatabase { db in
            try await db.raw("""
                SELECT app_links, first_party, authenticator FROM clients WHERE app_links IS NOT NULL ORDER BY created_at, id
                """).all().map {
                (try JSONDecoder().decode(ClientAppLinks.self, from: Data(try $0.string("app_links").utf8)), try $0.bool("first_party"),
                 try $0.bool("authenticator"))
            }
        }
    }

    public func insert(_ client: Client) async throws {
        let redirects = try jsonText(client.redirectURIs), logouts = try jsonText(client.postLogoutRedirectURIs)
        let grants = try jsonText(client.grantTypes), jwks = try client.jwks.map(jsonText)
        let appLinks = client.appLinks.isEmpty ? nil : try jsonText(client.appLinks)
        do {
            try await database.withDatabase { db in
                try await db.raw("""
                    INSERT INTO clients (id, name, secret_hash, auth_method, redirect_uris, post_logout_redirect_uris,
                        grant_types, scopes, first_party, jwks, assertion_issuer, assertion_lifetime, subject_type, created_at, app_links,
                        resource_server, require_pushed_requests, require_mfa, authenticator, device_sso_group)
                    VALUES (\(bind: client.id), \(bind: client.name), \(bind: client.secretHash), \(bind: client.authMethod.rawValue),
                        \(bind: redirects), \(bind: logouts), \(bind: grants), \(bind: client.scopes.description),
                        \(bind: client.firstParty), \(bind: jwks), \(bind: client.assertionIssuer), \(bind: client.assertionLifetime),
                        \(bind: client.subjectType.rawValue), \(bind: client.createdAt), \(bind: appLinks),
                        \(bind: client.resourceServer), \(bind: client.requirePushedRequests), \(bind: client.requireMFA),
                        \(bind: client.authenticator), \(bind: client.deviceSSOGroup))
                    """).run()
            }
        } catch where isUniqueViolation(error) {
            throw StoreError.duplicate("client \(client.id)")
        }
    }
}

/// Recently read clients, each kept for ``lifetime``, and the reads under way: a client is read
/// by one caller at a time, and the others that need it meanwhile wait for that read.
final class ClientCache: Sendable {
    static let lifetime: Duration = .seconds(5)
    private static let capacity = 1_000

    private enum Entry {
        case remembered(Client, expires: ContinuousClock.Instant)
        /// A read under way, told from a later one by its number.
        case reading(Task<Client?, any Error>, number: UInt64)
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var reads: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())
    let lifetime: Duration

    init(lifetime: Duration = ClientCache.lifetime) {
        self.lifetime = lifetime
    }

    /// The client `id`: remembered, or from the read under way, or from `read` (called here, by
    /// this caller alone). A client found is remembered for ``lifetime``; an unknown id is not
    /// (a client registered meanwhile is found at once); a failed read is not, and every caller
    /// waiting for it gets its error.
    func client(id: String, read: @escaping @Sendable () async throws -> Client?) async throws -> Client? {
        let now = ContinuousClock.now
        let found: Found = state.withLockedValue { state in
            switch state.entries[id] {
            case .remembered(let client, let expires)? where now < expires:
                return .client(client)
            case .reading(let task, _)?:
                return .read(task)
            default:
                if state.entries.count >= Self.capacity { state.entries.removeAll(keepingCapacity: true) }
                state.reads &+= 1
                let number = state.reads
                let task = Task<Client?, any Error> { [self] in
                    do {
                        let client = try await read()
                        finish(id, number: number, with: client)
                        return client
                    } catch {
                        finish(id, number: number, with: nil)
                        throw error
                    }
                }
                state.entries[id] = .reading(task, number: number)
                return .read(task)
            }
        }
        switch found {
        case .client(let client): return client
        case .read(let task): return try await task.value
        }
    }

    /// The client `id` if it is remembered and its time isn't up.
    func remembered(_ id: String) -> Client? {
        let now = ContinuousClock.now
        return state.withLockedValue { state in
            guard case .remembered(let client, let expires)? = state.entries[id], now < expires else { return nil }
            return client
        }
    }

    private enum Found {
        case client(Client)
        case read(Task<Client?, any Error>)
    }

    /// Forgets a client this node changed, so the change applies here at once (a read under way
    /// may have read it before the change: what it reads is not remembered).
    func forget(_ id: String) {
        _ = state.withLockedValue { $0.entries.removeValue(forKey: id) }
    }

    private func finish(_ id: String, number: UInt64, with client: Client?) {
        let expires = ContinuousClock.now + lifetime
        state.withLockedValue { state in
            guard case .reading(_, number)? = state.entries[id] else { return }
            state.entries[id] = client.map { .remembered($0, expires: expires) }
        }
    }
}
