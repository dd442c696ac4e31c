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
    public var requireMFA = false
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
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests", requireMFA = "require_mfa", authenticator
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

/// A user with what hangs off the account (`UserDetails`): linked identities, browser
/// sessions, consents and the last sign-in. Encoded flat: the user's members, then these.
public struct AdminUserDetails: Codable, Sendable, Equatable {
    public struct Identity: Codable, Sendable, Equatable {
        public var provider: String
        public var subject: String
        public var email: String?
        public var proven: Bool

        public init(provider: String, subject: String, email: String?, proven: Bool) {
            self.provider = provider
            self.subject = subject
            self.email = email
            self.proven = proven
        }
    }

    public struct Session: Codable, Sendable, Equatable {
        public var sid: String
        public var signedInAt: Int64
        public var methods: [String]
        public var expiresAt: Int64

        public init(sid: String, signedInAt: Int64, methods: [String], expiresAt: Int64) {
            self.sid = sid
            self.signedInAt = signedInAt
            self.methods = methods
            self.expiresAt = expiresAt
        }

        enum CodingKeys: String, CodingKey {
            case sid, signedInAt = "signed_in_at", methods, expiresAt = "expires_at"
        }
    }

    public struct Consent: Codable, Sendable, Equatable {
        public var clientID: String
        public var clientName: String
        public var scope: String
        public var grantedAt: Int64

        public init(clientID: String, clientName: String, scope: String, grantedAt: Int64) {
            self.clientID = clientID
            self.clientName = clientName
            self.scope = scope
            self.grantedAt = grantedAt
        }

        enum CodingKeys: String, CodingKey {
            case clientID = "client_id", clientName = "client_name", scope, grantedAt = "granted_at"
        }
    }

    public struct SignIn: Codable, Sendable, Equatable {
        public var at: Int64
        public var ip: String?
        public var clientID: String?
        public var method: String?

        public init(at: Int64, ip: String?, clientID: String?, method: String?) {
            self.at = at
            self.ip = ip
            self.clientID = clientID
            self.method = method
        }

        enum CodingKeys: String, CodingKey {
            case at, ip, clientID = "client_id", method
        }
    }

    public var user: AdminUserInfo
    public var identities: [Identity]
    public var sessions: [Session]
    public var consents: [Consent]
    public var lastSignIn: SignIn?

    public init(user: AdminUserInfo, identities: [Identity], sessions: [Session], consents: [Consent], lastSignIn: SignIn?) {
        self.user = user
        self.identities = identities
        self.sessions = sessions
        self.consents = consents
        self.lastSignIn = lastSignIn
    }

    enum CodingKeys: String, CodingKey {
        case identities, sessions, consents, lastSignIn = "last_sign_in"
    }

    public init(from decoder: any Decoder) throws {
        user = try AdminUserInfo(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        identities = try container.decode([Identity].self, forKey: .identities)
        sessions = try container.decode([Session].self, forKey: .sessions)
        consents = try container.decode([Consent].self, forKey: .consents)
        lastSignIn = try container.decodeIfPresent(SignIn.self, forKey: .lastSignIn)
    }

    public func encode(to encoder: any Encoder) throws {
        try user.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identities, forKey: .identities)
        try container.encode(sessions, forKey: .sessions)
        try container.encode(consents, forKey: .consents)
        try container.encodeIfPresent(lastSignIn, forKey: .lastSignIn)
    }
}

/// A page of clients, by name; `next_page_token` is null on the last page.
public struct AdminClientList: Codable, Sendable, Equatable {
    public var clients: [AdminClientInfo]
    public var nextPageToken: String?

    public init(clients: [AdminClientInfo], nextPageToken: String?) {
        self.clients = clients
        self.nextPageToken = nextPageToken
    }

    enum CodingKeys: String, CodingKey {
        case clients, nextPageToken = "next_page_token"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(clients, forKey: .clients)
        try container.encode(nextPageToken, forKey: .nextPageToken)
    }
}

/// A page of users, by address; `next_page_token` is null on the last page.
public struct AdminUserList: Codable, Sendable, Equatable {
    public var users: [AdminUserInfo]
    public var nextPageToken: String?

    public init(users: [AdminUserInfo], nextPageToken: String?) {
        self.users = users
        self.nextPageToken = nextPageToken
    }

    enum CodingKeys: String, CodingKey {
        case users, nextPageToken = "next_page_token"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(users, forKey: .users)
        try container.encode(nextPageToken, forKey: .nextPageToken)
    }
}

/// The signing keys; after a rotation, `current` names the key that signs now.
public struct AdminKeyList: Codable, Sendable, Equatable {
    public var current: String?
    public var keys: [AdminKeyInfo]

    public init(current: String? = nil, keys: [AdminKeyInfo]) {
        self.current = current
        self.keys = keys
    }
}

/// Audit events, newest first.
public struct AdminAuditEventList: Codable, Sendable, Equatable {
    public var events: [AdminAuditEventInfo]

    public init(events: [AdminAuditEventInfo]) {
        self.events = events
    }
}
