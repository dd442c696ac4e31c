import Foundation

// The admin API's answers (docs/admin.openapi.json, `components/schemas`), as the server encodes
// them and the CLI and the console read them: one Codable type for each schema, in place of
// objects built member by member. Optional members are left out when nil, as the document says.

/// A registered client (`Client`).
public struct AdminClientInfo: Codable, Sendable, Equatable {
    public var clientID: String
    public var clientName: String
    public var redirectURIs: [String]
    public var postLogoutRedirectURIs: [String]
    public var grantTypes: [String]
    public var scope: String
    public var tokenEndpointAuthMethod: String
    public var firstParty: Bool
    public var subjectType: String
    public var resourceServer: Bool
    public var linkDomains: [String]
    public var iosApps: [String]
    public var androidApps: [AdminAndroidApp]
    public var createdAt: Int64
    public var version: Int64
    public var requirePushedAuthorizationRequests: Bool
    public var authenticator: Bool
    public var deviceSSOGroup: String?
    public var jwks: JWKSet?
    public var assertionIssuer: String?
    public var assertionLifetime: Int64?
    /// While a rotated-out secret still works (`POST /clients/{id}/secret` with a grace period).
    public var previousSecretExpiresAt: Int64?
    /// Only in the answer that created the client or rotated its secret: shown once.
    public var clientSecret: String?

    public init(clientID: String, clientName: String, redirectURIs: [String], postLogoutRedirectURIs: [String], grantTypes: [String],
                scope: String, tokenEndpointAuthMethod: String, firstParty: Bool, subjectType: String, resourceServer: Bool,
                linkDomains: [String], iosApps: [String], androidApps: [AdminAndroidApp], createdAt: Int64, version: Int64,
                requirePushedAuthorizationRequests: Bool, authenticator: Bool) {
        self.clientID = clientID
        self.clientName = clientName
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.grantTypes = grantTypes
        self.scope = scope
        self.tokenEndpointAuthMethod = tokenEndpointAuthMethod
        self.firstParty = firstParty
        self.subjectType = subjectType
        self.resourceServer = resourceServer
        self.linkDomains = linkDomains
        self.iosApps = iosApps
        self.androidApps = androidApps
        self.createdAt = createdAt
        self.version = version
        self.requirePushedAuthorizationRequests = requirePushedAuthorizationRequests
        self.authenticator = authenticator
    }

    enum CodingKeys: String, CodingKey {
        case clientID = "client_id", clientName = "client_name", redirectURIs = "redirect_uris"
        case postLogoutRedirectURIs = "post_logout_redirect_uris", grantTypes = "grant_types", scope
        case tokenEndpointAuthMethod = "token_endpoint_auth_method", firstParty = "first_party", subjectType = "subject_type"
        case resourceServer = "resource_server", linkDomains = "link_domains", iosApps = "ios_apps", androidApps = "android_apps"
        case createdAt = "created_at", version
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests", authenticator
        case deviceSSOGroup = "device_sso_group", jwks, assertionIssuer = "assertion_issuer", assertionLifetime = "assertion_lifetime"
        case previousSecretExpiresAt = "previous_secret_expires_at", clientSecret = "client_secret"
    }
}

/// An Android app that opens a client's email links (`AndroidApp`).
public struct AdminAndroidApp: Codable, Sendable, Equatable {
    public var packageName: String
    public var sha256CertFingerprints: [String]

    public init(packageName: String, sha256CertFingerprints: [String]) {
        self.packageName = packageName
        self.sha256CertFingerprints = sha256CertFingerprints
    }

    enum CodingKeys: String, CodingKey {
        case packageName = "package_name", sha256CertFingerprints = "sha256_cert_fingerprints"
    }
}

/// A user (`User`); never a password hash, only whether there is one.
public struct AdminUserInfo: Codable, Sendable, Equatable {
    public var id: String
    public var email: String
    public var emailVerified: Bool
    public var hasPassword: Bool
    public var disabled: Bool
    public var disabledAt: Int64?
    public var roles: [String]
    public var profile: [String: JSONValue]
    public var createdAt: Int64
    public var updatedAt: Int64
    public var version: Int64

    public init(id: String, email: String, emailVerified: Bool, hasPassword: Bool, disabled: Bool, disabledAt: Int64?, roles: [String],
                profile: [String: JSONValue], createdAt: Int64, updatedAt: Int64, version: Int64) {
        self.id = id
        self.email = email
        self.emailVerified = emailVerified
        self.hasPassword = hasPassword
        self.disabled = disabled
        self.disabledAt = disabledAt
        self.roles = roles
        self.profile = profile
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
    }

    enum CodingKeys: String, CodingKey {
        case id, email, emailVerified = "email_verified", hasPassword = "has_password", disabled, disabledAt = "disabled_at", roles
        case profile, createdAt = "created_at", updatedAt = "updated_at", version
    }
}

/// A signing key (`Key`).
public struct AdminKeyInfo: Codable, Sendable, Equatable {
    public var kid: String
    public var alg: String
    public var status: String
    public var published: Bool
    public var createdAt: Int64
    public var activatedAt: Int64?
    public var retiredAt: Int64?

    public init(kid: String, alg: String, status: String, published: Bool, createdAt: Int64, activatedAt: Int64?, retiredAt: Int64?) {
        self.kid = kid
        self.alg = alg
        self.status = status
        self.published = published
        self.createdAt = createdAt
        self.activatedAt = activatedAt
        self.retiredAt = retiredAt
    }

    enum CodingKeys: String, CodingKey {
        case kid, alg, status, published, createdAt = "created_at", activatedAt = "activated_at", retiredAt = "retired_at"
    }
}

/// An event of the audit trail (`AuditEvent`).
public struct AdminAuditEventInfo: Codable, Sendable, Equatable {
    public var id: String
    public var kind: String
    public var at: Int64
    public var actor: String
    public var userID: String?
    public var clientID: String?
    public var email: String?
    public var ip: String?
    public var detail: String?

    public init(id: String, kind: String, at: Int64, actor: String, userID: String?, clientID: String?, email: String?, ip: String?,
                detail: String?) {
        self.id = id
        self.kind = kind
        self.at = at
        self.actor = actor
        self.userID = userID
        self.clientID = clientID
        self.email = email
        self.ip = ip
        self.detail = detail
    }

    enum CodingKeys: String, CodingKey {
        case id, kind, at, actor, userID = "user_id", clientID = "client_id", email, ip, detail
    }
}

/// What an import did (`ImportReport`).
public struct AdminImportReport: Codable, Sendable, Equatable {
    public struct Failure: Codable, Sendable, Equatable {
        public var line: Int
        public var reference: String
        public var reason: String

        public init(line: Int, reference: String, reason: String) {
            self.line = line
            self.reference = reference
            self.reason = reason
        }
    }

    public var created: Int
    public var updated: Int
    public var refused: Int
    public var failures: [Failure]

    public init(created: Int, updated: Int, refused: Int, failures: [Failure]) {
        self.created = created
        self.updated = updated
        self.refused = refused
        self.failures = failures
    }
}
