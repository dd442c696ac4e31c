import Foundation
import TesseraCore

/// What registering a client asks for (`tessera clients add`, `POST /admin/v1/clients`).
public struct ClientRegistration: Sendable {
    public var id: String?
    public var name: String
    public var redirectURIs: [String]
    public var postLogoutRedirectURIs: [String] = []
    /// How the client authenticates at the token endpoint, when it says; nil: by the credentials
    /// it registers (`private_key_jwt` with `jwks`, else a secret).
    public var authMethod: ClientAuthMethod?
    /// A public client (`none`): an app whose every copy would hold its credentials, so it has none.
    public var isPublic: Bool {
        get { authMethod == ClientAuthMethod.none }
        set { authMethod = newValue ? ClientAuthMethod.none : (authMethod == ClientAuthMethod.none ? nil : authMethod) }
    }
    public var secret: String?
    public var scopes: [String] = ["openid", "profile", "email", "offline_access"]
    public var grantTypes: [String] = [GrantType.authorizationCode, GrantType.refreshToken]
    public var firstParty = false
    public var jwks: JWKSet?
    public var assertionIssuer: String?
    /// Seconds; set only to accept long-lived, reusable assertions (Sign in with Apple's shape).
    public var assertionLifetime: Int64?
    public var pairwise = false
    /// An API that may introspect tokens carrying its (non-catalogue) scopes.
    public var resourceServer = false
    /// Email-link settings: continue-URL domains, iOS and Android apps.
    public var appLinks = ClientAppLinks()
    /// RFC 9126: its authorization requests must be pushed.
    public var requirePushedRequests = false
    /// Every sign-in to it needs a second factor.
    public var requireMFA = false
    /// The operator's app that approves other apps' requests (first-party only).
    public var authenticator = false
    /// Native SSO: the group of the vendor's apps that share a device session.
    public var deviceSSOGroup: String?
    public init(name: String, redirectURIs: [String]) {
        self.name = name
        self.redirectURIs = redirectURIs
    }
}

/// What an administrator changes about a client; nil members stay as they are. How the
/// client authenticates, its id and its subject type never change: register a new client.
public struct ClientChanges: Sendable, Equatable {
    public var name: String?
    public var redirectURIs: [String]?
    public var postLogoutRedirectURIs: [String]?
    public var scopes: [String]?
    public var grantTypes: [String]?
    public var firstParty: Bool?
    public var resourceServer: Bool?
    /// Email-link settings, each replacing its part of the client's.
    public var linkDomains: [String]?
    public var appleAppIDs: [String]?
    public var androidApps: [ClientAppLinks.AndroidApp]?
    /// New keys for a client that authenticates with private_key_jwt.
    public var jwks: JWKSet?
    public var requirePushedRequests: Bool?
    public var requireMFA: Bool?
    public var authenticator: Bool?
    /// `.some(nil)` takes the client out of its device SSO group.
    public var deviceSSOGroup: String??

    public init() {}

    /// The names of the members set, for the audit trail.
    var changed: [String] {
        [("name", name != nil), ("redirect_uris", redirectURIs != nil), ("post_logout_redirect_uris", postLogoutRedirectURIs != nil),
         ("scope", scopes != nil), ("grant_types", grantTypes != nil), ("first_party", firstParty != nil),
         ("resource_server", resourceServer != nil), ("link_domains", linkDomains != nil), ("ios_apps", appleAppIDs != nil),
         ("android_apps", androidApps != nil), ("jwks", jwks != nil),
         ("require_pushed_authorization_requests", requirePushedRequests != nil), ("require_mfa", requireMFA != nil), ("authenticator", authenticator != nil),
         ("device_sso_group", deviceSSOGroup != nil)]
            .filter(\.1).map(\.0)
    }
}

/// Registering, listing, changing and deleting clients, and rotating their secrets: the rules
/// the admin API, the console and the CLI share.
public struct ClientAdministration: Sendable {
    let store: any ClientStore
    let audit: AuditTrail
    let clock: WallClock

    /// The longest a rotated-out secret may keep working.
    public static let maxSecretGracePeriod: Int64 = 30 * 86_400

    package init(store: any ClientStore, audit: AuditTrail, clock: WallClock) {
        self.store = store
        self.audit = audit
        self.clock = clock
    }

    /// Registers a client; returns it with its secret in clear text (shown once, stored hashed).
    public func register(_ registration: ClientRegistration, by admin: Administrator) async throws -> (client: Client, secret: String?) {
        try Self.validate(registration)
        let authMethod: ClientAuthMethod = registration.isPublic ? .none : (registration.jwks != nil ? .privateKeyJWT : .clientSecretBasic)
        var secret: String?
        if authMethod == .clientSecretBasic {
            secret = registration.secret ?? SecureRandom.token()
        }
        var client = Client(
            id: registration.id ?? Self.newClientID(), name: registration.name, secretHash: secret.map(ClientSecretHash.make),
            authMethod: authMethod, redirectURIs: registration.redirectURIs, postLogoutRedirectURIs: registration.postLogoutRedirectURIs,
            grantTypes: registration.grantTypes, scopes: ScopeSet(registration.scopes), firstParty: registration.firstParty,
            jwks: registration.jwks, assertionIssuer: registration.assertionIssuer, assertionLifetime: registration.assertionLifetime,
            subjectType: registration.pairwise ? .pairwise : .public, createdAt: clock.now())
        client.appLinks = registration.appLinks
        client.resourceServer = registration.resourceServer
        client.requirePushedRequests = registration.requirePushedRequests
        client.requireMFA = registration.requireMFA
        client.authenticator = registration.authenticator
        client.deviceSSOGroup = registration.deviceSSOGroup
        try await store.insert(client)
        await audit.record(.clientChanged, actor: .admin, clientID: client.id, detail: "registered by \(admin.description)")
        return (client, secret)
    }

    /// Clients by name, `limit` at a time.
    public func list(after cursor: ClientCursor?, limit: Int) async throws -> Page<Client, ClientCursor> {
        let rows = try await store.clients(after: cursor, limit: limit + 1)
        return Page(reading: rows, limit: limit) { ClientCursor(name: $0.name, id: $0.id) }
    }

    public func client(id: String) async throws -> Client {
        guard let client = try await store.client(id: id) else { throw AdminError.notFound("client \(id)") }
        return client
    }

    /// Applies `changes` when the client is still at `version` (nil: whatever it is now). The
    /// result is checked by the rules registration uses, so a change can't make a client that
    /// could not be registered.
    public func update(id: String, _ changes: ClientChanges, ifVersion version: Int64?, by admin: Administrator) async throws -> Client {
        var client = try await fresh(id)
        if let version, version != client.version { throw AdminError.versionMismatch(current: client.version) }
        if changes.jwks != nil && client.authMethod != .privateKeyJWT {
            throw AdminError.invalid("only a client that authenticates with private_key_jwt has keys to replace; register a new client to change how one authenticates")
        }
        client.name = changes.name ?? client.name
        client.redirectURIs = changes.redirectURIs ?? client.redirectURIs
        client.postLogoutRedirectURIs = changes.postLogoutRedirectURIs ?? client.postLogoutRedirectURIs
        client.scopes = changes.scopes.map { ScopeSet($0.flatMap { $0.split(separator: " ").map(String.init) }) } ?? client.scopes
        client.grantTypes = changes.grantTypes ?? client.grantTypes
        client.firstParty = changes.firstParty ?? client.firstParty
        client.resourceServer = changes.resourceServer ?? client.resourceServer
        client.appLinks.linkDomains = changes.linkDomains ?? client.appLinks.linkDomains
        client.appLinks.appleAppIDs = changes.appleAppIDs ?? client.appLinks.appleAppIDs
        client.appLinks.androidApps = changes.androidApps ?? client.appLinks.androidApps
        client.jwks = changes.jwks ?? client.jwks
        client.requirePushedRequests = changes.requirePushedRequests ?? client.requirePushedRequests
        client.requireMFA = changes.requireMFA ?? client.requireMFA
        client.authenticator = changes.authenticator ?? client.authenticator
        client.deviceSSOGroup = changes.deviceSSOGroup ?? client.deviceSSOGroup
        do {
            try Self.validate(registration(of: client))
        } catch let error as ConfigurationError {
            throw AdminError.invalid(error.description)
        }
        guard try await store.update(client, ifVersion: client.version) else {
            throw AdminError.versionMismatch(current: try await fresh(id).version)
        }
        client.version += 1
        await audit.record(.clientChanged, actor: .admin, clientID: id,
                           detail: "changed \(changes.changed.joined(separator: ", ")) by \(admin.description)")
        return client
    }

    /// A new secret for a client that has one; the old one keeps working for `gracePeriod`
    /// seconds (0: it stops at once), so the client's deployments can change over.
    public func rotateSecret(id: String, gracePeriod: Int64, by admin: Administrator) async throws -> (client: Client, secret: String) {
        var client = try await fresh(id)
        guard let current = client.secretHash else {
            throw AdminError.invalid("client \(id) has no secret: it is public or authenticates with its keys")
        }
        guard (0...Self.maxSecretGracePeriod).contains(gracePeriod) else {
            throw AdminError.invalid("the grace period must be between 0 and 30 days")
        }
        let secret = SecureRandom.token()
        let expires = gracePeriod > 0 ? clock.now() + gracePeriod : nil
        client.secretHash = ClientSecretHash.make(secret)
        client.previousSecretHash = expires == nil ? nil : current
        client.previousSecretExpiresAt = expires
        try await store.replaceSecret(clientID: id, hash: client.secretHash!, previousHash: client.previousSecretHash, previousExpiresAt: expires)
        client.version += 1
        let kept = gracePeriod > 0 ? "the previous one valid for \(gracePeriod) s" : "the previous one revoked"
        await audit.record(.clientChanged, actor: .admin, clientID: id, detail: "secret rotated, \(kept), by \(admin.description)")
        return (client, secret)
    }

    /// Deletes a client with its grants (every refresh and access token issued under them
    /// stops working) and the consents given to it.
    public func delete(id: String, by admin: Administrator) async throws {
        guard try await store.deleteClient(id: id) else { throw AdminError.notFound("client \(id)") }
        await audit.record(.clientChanged, actor: .admin, clientID: id, detail: "deleted by \(admin.description)")
    }

    /// The client as stored now (not from a node's short cache): changes start from it.
    func fresh(_ id: String) async throws -> Client {
        guard let client = try await store.currentClient(id: id) else { throw AdminError.notFound("client \(id)") }
        return client
    }

    /// The registration that would make `client`, for checking a change by the same rules.
    func registration(of client: Client) -> ClientRegistration {
        var registration = ClientRegistration(name: client.name, redirectURIs: client.redirectURIs)
        registration.id = client.id
        registration.postLogoutRedirectURIs = client.postLogoutRedirectURIs
        registration.isPublic = client.isPublic
        registration.scopes = client.scopes.values
        registration.grantTypes = client.grantTypes
        registration.firstParty = client.firstParty
        registration.jwks = client.jwks
        registration.assertionIssuer = client.assertionIssuer
        registration.assertionLifetime = client.assertionLifetime
        registration.pairwise = client.subjectType == .pairwise
        registration.resourceServer = client.resourceServer
        registration.appLinks = client.appLinks
        registration.requirePushedRequests = client.requirePushedRequests
        registration.requireMFA = client.requireMFA
        registration.authenticator = client.authenticator
        registration.deviceSSOGroup = client.deviceSSOGroup
        return registration
    }

    /// A new client id: 16 random bytes as base64url, never starting with `-` or `_`, so that
    /// a command line (`tessera login --client-id ID`) never takes it for an option.
    package static func newClientID() -> String {
        while true {
            let id = SecureRandom.token(bytes: 16)
            if let first = id.first, first.isLetter || first.isNumber { return id }
        }
    }

    static func validate(_ links: ClientAppLinks) throws {
        for domain in links.linkDomains {
            guard !domain.isEmpty, domain.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }), !domain.hasPrefix("."),
                  !domain.hasSuffix(".") else {
                throw ConfigurationError("'\(domain)' is not a domain name (give the host only, e.g. app.example.com)")
            }
        }
        for appID in links.appleAppIDs {
            let parts = appID.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 10, parts[0].allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }),
                  parts[1].contains(".") else {
                throw ConfigurationError("'\(appID)' is not an iOS app id: TEAMID.bundle.id, the team id being 10 characters (ABCDE12345.com.example.app)")
            }
        }
        for app in links.androidApps {
            guard app.packageName.split(separator: ".").count >= 2,
                  app.packageName.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_") }) else {
                throw ConfigurationError("'\(app.packageName)' is not an Android package name (com.example.app)")
            }
            for fingerprint in app.certificateFingerprints {
                let bytes = fingerprint.split(separator: ":")
                guard bytes.count == 32, bytes.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else {
                    throw ConfigurationError("'\(fingerprint)' is not a SHA-256 certificate fingerprint (32 hex bytes separated by colons)")
                }
            }
        }
    }

    static func validate(_ registration: ClientRegistration) throws {
        guard !registration.name.trimmingCharacters(in: .whitespaces).isEmpty else { throw ConfigurationError("a client needs a --name") }
        let supported: Set = [GrantType.authorizationCode, GrantType.refreshToken, GrantType.clientCredentials]
        for grant in registration.grantTypes where !supported.contains(grant) {
            throw ConfigurationError("unsupported grant type '\(grant)' (use authorization_code, refresh_token or client_credentials)")
        }
        if registration.grantTypes.contains(GrantType.authorizationCode) && registration.redirectURIs.isEmpty {
            throw ConfigurationError("the authorization_code grant needs at least one --redirect-uri")
        }
        for uri in registration.redirectURIs + registration.postLogoutRedirectURIs {
            guard let url = URL(string: uri), let scheme = url.scheme?.lowercased(), url.fragment == nil else {
                throw ConfigurationError("'\(uri)' is not an absolute URI without a fragment")
            }
            if scheme == "http" {
                let host = url.host ?? ""
                guard ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) else {
                    throw ConfigurationError("'\(uri)' uses http: only loopback redirect URIs may (RFC 8252 §7.3); use https")
                }
            } else if scheme != "https" && !scheme.contains(".") {
                throw ConfigurationError("'\(uri)': a custom scheme must be a reverse domain name such as com.example.app (RFC 8252 §7.1)")
            }
        }
        if registration.resourceServer {
            guard !registration.isPublic else { throw ConfigurationError("a --resource-server authenticates to introspect: it can't be --public") }
            guard registration.scopes.contains(where: { ScopeCatalogue.definition($0) == nil }) else {
                throw ConfigurationError("a --resource-server needs the --scope values it serves (e.g. --scope api.read)")
            }
        }
        if registration.isPublic {
            if registration.secret != nil { throw ConfigurationError("a --public client has no secret") }
            if registration.grantTypes.contains(GrantType.clientCredentials) {
                throw ConfigurationError("a --public client cannot use client_credentials")
            }
        }
        if let secret = registration.secret, secret.count < 32 {
            throw ConfigurationError("a client secret must be at least 32 characters (leave --secret out to generate one)")
        }
        try validate(registration.appLinks)
        if registration.authMethod == .privateKeyJWT, registration.jwks == nil {
            throw ConfigurationError("private_key_jwt needs the client's 'jwks'")
        }
        if registration.jwks != nil && registration.secret != nil {
            throw ConfigurationError("a client authenticates either with a secret or with its keys, not both")
        }
        for key in registration.jwks?.keys ?? [] {
            _ = try JWSVerificationKey(jwk: key)
        }
        if registration.scopes.contains(Administrator.scope), !registration.firstParty {
            throw ConfigurationError("the \(Administrator.scope) scope administers the whole server: only a --first-party client may be allowed it")
        }
        if registration.authenticator {
            guard registration.firstParty else {
                throw ConfigurationError("an --authenticator approves sign-ins for the provider's users: it must be --first-party")
            }
        }
        if let group = registration.deviceSSOGroup {
            guard (1...64).contains(group.count), group.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else {
                throw ConfigurationError("'\(group)' is not a device SSO group name (letters, digits, '.', '_' and '-', at most 64)")
            }
        }
        if registration.scopes.contains(ScopeCatalogue.deviceSSO) && registration.deviceSSOGroup == nil {
            throw ConfigurationError("the device_sso scope needs a --device-sso-group: the apps that may share the device session")
        }
        if let lifetime = registration.assertionLifetime {
            guard registration.jwks != nil else { throw ConfigurationError("--assertion-lifetime is for clients that authenticate with --jwks") }
            guard (ClientAuthenticator.defaultAssertionLifetime...ClientAuthenticator.maxAssertionLifetime).contains(lifetime) else {
                throw ConfigurationError("--assertion-lifetime must be between 5m and 182d (Sign in with Apple's six months)")
            }
        }
    }
}
