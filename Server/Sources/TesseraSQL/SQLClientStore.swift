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
    public func client(id: String) async throws -> Client? {
        if let cached = clientCache.client(id: id) { return cached }
        let client = try await currentClient(id: id)
        if let client { clientCache.remember(client) }
        return client
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

/// Recently read clients, each kept for ``lifetime``.
final class ClientCache: Sendable {
    static let lifetime: Duration = .seconds(5)
    private static let capacity = 1_000
    private let entries = NIOLockedValueBox<[String: (client: Client, expires: ContinuousClock.Instant)]>([:])

    func client(id: String) -> Client? {
        let now = ContinuousClock.now
        return entries.withLockedValue { entries in
            guard let entry = entries[id] else { return nil }
            guard entry.expires > now else {
                entries[id] = nil
                return nil
            }
            return entry.client
        }
    }

    /// Forgets a client this node changed, so the change applies here at once.
    func forget(_ id: String) {
        _ = entries.withLockedValue { $0.removeValue(forKey: id) }
    }

    func remember(_ client: Client) {
        let expires = ContinuousClock.now + Self.lifetime
        entries.withLockedValue { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[client.id] = (client, expires)
        }
    }
}
