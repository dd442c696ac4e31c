import Foundation
import TesseraCore

/// How a client authenticates at the token, introspection and revocation endpoints
/// (OpenID Connect Core §9, RFC 7591 `token_endpoint_auth_method`).
public enum ClientAuthMethod: String, Sendable, Codable, CaseIterable {
    case clientSecretBasic = "client_secret_basic"
    case clientSecretPost = "client_secret_post"
    case privateKeyJWT = "private_key_jwt"
    case none
}

/// `subject_type` (OpenID Connect Core §8).
public enum SubjectType: String, Sendable, Codable {
    case `public`
    case pairwise
}

/// A registered client (relying party).
public struct Client: Sendable, Equatable {
    public var id: String
    public var name: String
    /// `sha256$<salt>$<hash>` of the secret; nil for public and private_key_jwt clients.
    public var secretHash: String?
    public var authMethod: ClientAuthMethod
    public var redirectURIs: [String]
    public var postLogoutRedirectURIs: [String]
    public var grantTypes: [String]
    /// Scopes this client may ask for.
    public var scopes: ScopeSet
    /// First-party clients skip the consent page.
    public var firstParty: Bool
    /// Public keys for private_key_jwt.
    public var jwks: JWKSet?
    /// An extra `iss` accepted in client assertions: Sign in with Apple puts the team id there.
    public var assertionIssuer: String?
    /// The longest lifetime (`exp` − `iat`, seconds) this client's assertions may have, when
    /// registered longer than ``ClientAuthenticator/defaultAssertionLifetime`` (Sign in with
    /// Apple's client-secret shape: up to six months, reused, without `jti`). nil: the default.
    public var assertionLifetime: Int64?
    /// An API that receives access tokens: it may introspect the tokens that carry one of its
    /// own scopes (those outside the claim catalogue), whichever client they were issued to.
    public var resourceServer = false
    public var subjectType: SubjectType
    public var createdAt: Int64
    /// Where email links may send users back, and the apps that open them.
    public var appLinks = ClientAppLinks()
    /// Counts the client's changes: its ETag, so two administrators never silently overwrite each other.
    public var version: Int64 = 1
    /// The secret a rotation replaced, accepted until ``previousSecretExpiresAt``.
    public var previousSecretHash: String?
    public var previousSecretExpiresAt: Int64?
    /// RFC 9126 `require_pushed_authorization_requests`: its authorization requests must come
    /// through the pushed authorization request endpoint.
    public var requirePushedRequests = false
    /// Every sign-in to it needs a second factor (`amr` with `mfa`), whatever the request asks.
    public var requireMFA = false
    /// The operator's own app that approves other apps' requests for its signed-in user
    /// (app-to-app authorization and hand-off tickets). Only a first-party client can be one.
    public var authenticator = false
    /// Native SSO: the clients of one vendor that share a device session (a keychain group on
    /// the device) name the same group; nil for a client that takes no part.
    public var deviceSSOGroup: String?

    public var isPublic: Bool { authMethod == .none }

    /// The scopes this client serves as a resource server: its scopes that are not the
    /// provider's own (OpenID and claim scopes are for userinfo, which the issuer serves).
    public var servedScopes: ScopeSet {
        resourceServer ? ScopeSet(scopes.values.filter { ScopeCatalogue.definition($0) == nil }) : ScopeSet([String]())
    }

    /// Whether `uri` is one of the client's redirect URIs: compared as exact strings, except
    /// that a public client's loopback IP redirect matches on any port, since a native app
    /// listens on whatever port the OS gives it (RFC 8252 §7.3, RFC 9700 §4.1.1).
    public func accepts(redirectURI uri: String) -> Bool {
        if redirectURIs.contains(uri) { return true }
        guard isPublic, let candidate = URLComponents(string: uri), candidate.scheme == "http",
              let host = candidate.host, ["127.0.0.1", "[::1]", "::1"].contains(host), candidate.port != nil else { return false }
        return redirectURIs.contains { registered in
            guard var expected = URLComponents(string: registered), expected.scheme == "http", expected.host == host else { return false }
            var actual = candidate
            expected.port = nil
            actual.port = nil
            return expected.string == actual.string
        }
    }

    public init(id: String, name: String, secretHash: String? = nil, authMethod: ClientAuthMethod,
                redirectURIs: [String], postLogoutRedirectURIs: [String] = [], grantTypes: [String],
                scopes: ScopeSet, firstParty: Bool = false, jwks: JWKSet? = nil, assertionIssuer: String? = nil,
                assertionLifetime: Int64? = nil, subjectType: SubjectType = .public, createdAt: Int64) {
        self.id = id; self.name = name; self.secretHash = secretHash; self.authMethod = authMethod
        self.redirectURIs = redirectURIs; self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.grantTypes = grantTypes; self.scopes = scopes; self.firstParty = firstParty; self.jwks = jwks
        self.assertionIssuer = assertionIssuer; self.assertionLifetime = assertionLifetime; self.subjectType = subjectType
        self.createdAt = createdAt
    }
}

/// A person who can sign in.
public struct User: Sendable, Equatable {
    public var id: String
    /// Lower-cased.
    public var email: String
    public var emailVerified: Bool
    /// PHC-formatted password hash; nil when the user has no password.
    public var passwordHash: String?
    /// The user's claims by name (OpenID and Sber ID catalogue), validated against
    /// ``ScopeCatalogue``; the email, its verification and `updated_at` live in fields.
    public var profile: [String: JSONValue]
    public var createdAt: Int64
    public var updatedAt: Int64
    /// Counts the user's changes: its ETag, so two administrators never silently overwrite each other.
    public var version: Int64 = 1
    /// Set while an administrator has disabled the account: it cannot sign in and has no tokens.
    public var disabledAt: Int64?
    /// What the user may do beyond their own account: `admin` opens the admin console and API.
    public var roles: Set<String> = []

    public var isDisabled: Bool { disabledAt != nil }
    public var isAdmin: Bool { roles.contains(User.adminRole) }
    /// May use the admin console and API now: holds the role and is not disabled.
    public var mayAdminister: Bool { isAdmin && !isDisabled }
    public static let adminRole = "admin"

    package init(id: String, email: String, emailVerified: Bool, passwordHash: String? = nil,
                 profile: [String: JSONValue], createdAt: Int64, updatedAt: Int64) {
        self.id = id
        self.email = email
        self.emailVerified = emailVerified
        self.passwordHash = passwordHash
        self.profile = profile
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    public var name: String? { profile["name"]?.stringValue }

    /// Every claim the user has, as the provider releases them.
    public var claims: [String: JSONValue] {
        var claims = profile
        claims["email"] = .string(email)
        claims["email_verified"] = .bool(emailVerified)
        claims["updated_at"] = .int(updatedAt)
        return claims
    }
}

/// A browser session at the provider (the `tessera_session` cookie).
public struct BrowserSession: Sendable, Equatable {
    /// Public session id, the ID token's `sid`.
    public var sid: String
    public var userID: String
    public var authTime: Int64
    public var amr: [String]
    public var expiresAt: Int64
    /// Where the browser signed in, for its owner to recognise it on the account page: its
    /// `User-Agent` (cut to 256 characters) and IP address, when known.
    public var device: SessionDevice = SessionDevice()
    /// When the session was created (its sign-in, or the latest confirmation that replaced it).
    public var createdAt: Int64 = 0
    /// When a request last came with it, to the minute.
    public var lastSeenAt: Int64 = 0

    package init(sid: String, userID: String, authTime: Int64, amr: [String], expiresAt: Int64) {
        self.sid = sid
        self.userID = userID
        self.authTime = authTime
        self.amr = amr
        self.expiresAt = expiresAt
        self.createdAt = authTime
        self.lastSeenAt = authTime
    }

    /// Whether the user signed in (or confirmed it was them) at most `seconds` ago: the
    /// proof asked for before a sensitive change, which a stolen or forgotten session lacks.
    public func isRecent(now: Int64, within seconds: Int64) -> Bool {
        now - authTime <= seconds
    }
}

/// The browser a session lives in, as its owner sees it in their list of sessions.
public struct SessionDevice: Sendable, Equatable {
    /// The `User-Agent` header at sign-in.
    public var userAgent: String?
    /// The client's IP address at sign-in (behind a trusted proxy, the one it names).
    public var address: String?

    public init(userAgent: String? = nil, address: String? = nil) {
        self.userAgent = userAgent.map { String($0.unicodeScalars.filter { $0.value >= 32 && $0.value != 127 }.prefix(256)) }
        self.address = address
    }
}

/// What an authorization code stands for until it is redeemed.
public struct AuthorizationCodeRecord: Sendable, Equatable {
    public var clientID: String
    public var userID: String
    public var redirectURI: String
    public var scope: ScopeSet
    /// Individual claims the `claims` parameter asked for.
    public var claims: ClaimsRequest?
    public var nonce: String?
    public var codeChallenge: String?
    public var authTime: Int64
    public var amr: [String]
    public var sid: String
    public var expiresAt: Int64
    public var redeemedAt: Int64?
    public var grantID: String?

    package init(clientID: String, userID: String, redirectURI: String, scope: ScopeSet, claims: ClaimsRequest? = nil,
                 nonce: String? = nil, codeChallenge: String? = nil, authTime: Int64, amr: [String], sid: String,
                 expiresAt: Int64, redeemedAt: Int64? = nil, grantID: String? = nil) {
        self.clientID = clientID
        self.userID = userID
        self.redirectURI = redirectURI
        self.scope = scope
        self.claims = claims
        self.nonce = nonce
        self.codeChallenge = codeChallenge
        self.authTime = authTime
        self.amr = amr
        self.sid = sid
        self.expiresAt = expiresAt
        self.redeemedAt = redeemedAt
        self.grantID = grantID
    }
}

/// A grant: what a user (or, for client_credentials, nobody) allowed a client, and the
/// family of every token issued under it. Revoking the grant revokes them all.
public struct Grant: Sendable, Equatable {
    public var id: String
    public var clientID: String
    public var userID: String?
    public var scope: ScopeSet
    public var claims: ClaimsRequest? = nil
    public var authTime: Int64?
    public var amr: [String]
    public var sid: String?
    public var createdAt: Int64
    public var expiresAt: Int64
    public var revokedAt: Int64?
    /// The Native SSO device session the grant belongs to: ending that session revokes it.
    public var deviceSessionID: String?

    package init(id: String, clientID: String, userID: String? = nil, scope: ScopeSet, claims: ClaimsRequest? = nil,
                 authTime: Int64? = nil, amr: [String], sid: String? = nil, createdAt: Int64, expiresAt: Int64,
                 revokedAt: Int64? = nil) {
        self.id = id
        self.clientID = clientID
        self.userID = userID
        self.scope = scope
        self.claims = claims
        self.authTime = authTime
        self.amr = amr
        self.sid = sid
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }
}

/// A client's email-link settings: the domains a `continue_url` may be on, and its mobile
/// apps, which make the links universal links (iOS) and app links (Android).
public struct ClientAppLinks: Sendable, Equatable, Codable {
    /// Hosts a `continue_url` may use (besides those of the redirect URIs).
    public var linkDomains: [String] = []
    /// `TEAMID.bundle.id` of each iOS app.
    public var appleAppIDs: [String] = []
    public var androidApps: [AndroidApp] = []

    public struct AndroidApp: Sendable, Equatable, Codable {
        public var packageName: String
        /// SHA-256 fingerprints of the signing certificates, `AA:BB:…` (32 bytes).
        public var certificateFingerprints: [String]

        public init(packageName: String, certificateFingerprints: [String]) {
            self.packageName = packageName
            self.certificateFingerprints = certificateFingerprints
        }
    }

    public init() {}

    package var isEmpty: Bool { linkDomains.isEmpty && appleAppIDs.isEmpty && androidApps.isEmpty }

    /// The iOS bundle ids (the part after the team id).
    package var appleBundleIDs: [String] {
        appleAppIDs.compactMap { id in id.firstIndex(of: ".").map { String(id[id.index(after: $0)...]) } }
    }
}
