import Foundation

// The admin API's answers (docs/admin.openapi.json, `components/schemas`), as the server encodes
// them and the CLI and the console read them: one Codable type for each schema, in place of
// objects built member by member. Optional members are left out when nil, as the document says.

/// A registered client (`Client`).
public struct AdminClientInfo: Codable, Sendable, Equatable {
    /// The client's id (`client_id`): generated (22 base64url characters) unless given at registration; never changes.
    public var clientID: String
    /// Display name, shown on the login and consent pages (`client_name`).
    public var clientName: String
    /// Where authorization responses may be sent (`redirect_uris`), matched exactly.
    public var redirectURIs: [String]
    /// Where RP-initiated logout may return to (`post_logout_redirect_uris`).
    public var postLogoutRedirectURIs: [String]
    /// Grant types the client may use (`grant_types`), such as `authorization_code`, `refresh_token` or `client_credentials`.
    public var grantTypes: [String]
    /// Space-separated scopes the client may ask for; `tessera:admin` lets it call the admin API with client credentials.
    public var scope: String
    /// How it authenticates at the token endpoint (`token_endpoint_auth_method`): `client_secret_basic`,
    /// `client_secret_post`, `private_key_jwt`, or `none` for a public client (PKCE, no secret); never changes.
    public var tokenEndpointAuthMethod: String
    /// A first-party client (`first_party`): no consent page, and it may use the native sign-in API.
    public var firstParty: Bool
    /// `public` or `pairwise` subject identifiers (`subject_type`); fixed at registration.
    public var subjectType: String
    /// An API that receives access tokens (`resource_server`): it may introspect the tokens carrying its own scopes.
    public var resourceServer: Bool
    /// Hosts email links may return to as `continue_url` (`link_domains`).
    public var linkDomains: [String]
    /// iOS apps that open its email links, as `TEAMID.bundle.id` (`ios_apps`).
    public var iosApps: [String]
    /// Android apps that open its email links (`android_apps`).
    public var androidApps: [AdminAndroidApp]
    /// When the client was registered (`created_at`, Unix seconds).
    public var createdAt: Int64
    /// Counts the client's changes; its ETag is this number in quotes.
    public var version: Int64
    /// Its authorization requests must be pushed first (`require_pushed_authorization_requests`, RFC 9126).
    public var requirePushedAuthorizationRequests: Bool
    /// Every sign-in to it needs a second factor: an authenticator app's code, a recovery code or a passkey (`require_mfa`).
    public var requireMFA = false
    /// The operator's own app, which approves other apps' sign-ins for its signed-in user; only a first-party client can be one.
    public var authenticator: Bool
    /// The Native SSO group whose apps share a device session (`device_sso_group`); nil: in no group.
    public var deviceSSOGroup: String?
    /// The public keys (a JWK Set) a `private_key_jwt` client signs its assertions with; nil when it has none.
    public var jwks: JWKSet?
    /// An extra `iss` accepted in its client assertions (`assertion_issuer`; Sign in with Apple's team id); nil: none.
    public var assertionIssuer: String?
    /// The longest lifetime its client assertions may have (`assertion_lifetime`, seconds); nil: the default, 5 minutes.
    public var assertionLifetime: Int64?
    /// While a rotated-out secret still works (`POST /clients/{id}/secret` with a grace period).
    public var previousSecretExpiresAt: Int64?
    /// Only in the answer that created the client or rotated its secret: shown once.
    public var clientSecret: String?

    /// A client's details, from its parts; `requireMFA` starts false and the optional members nil.
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
    /// The app's package name (`package_name`).
    public var packageName: String
    /// SHA-256 fingerprints of its signing certificates, as 32 colon-separated hex pairs (`sha256_cert_fingerprints`).
    public var sha256CertFingerprints: [String]

    /// An Android app, from its package name and certificate fingerprints.
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
    /// The account's id: its `sub` for clients with public subject identifiers; never changes.
    public var id: String
    /// The account's email address.
    public var email: String
    /// Whether the address is verified (`email_verified`).
    public var emailVerified: Bool
    /// Whether the account has a password (`has_password`).
    public var hasPassword: Bool
    /// Whether the account is disabled: no way of signing in works until it is enabled.
    public var disabled: Bool
    /// When the account was disabled (`disabled_at`, Unix seconds); nil when it is not.
    public var disabledAt: Int64?
    /// The roles it holds, sorted; `admin` is the only one there is.
    public var roles: [String]
    /// Profile claims of the catalogue (docs/claims.md), by name.
    public var profile: [String: JSONValue]
    /// When the account was created (`created_at`, Unix seconds).
    public var createdAt: Int64
    /// When the account last changed (`updated_at`, Unix seconds).
    public var updatedAt: Int64
    /// Counts the account's changes; its ETag is this number in quotes.
    public var version: Int64

    /// A user's details, from its parts.
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
    /// The key's id, its `kid` in the JWKS and in the header of what it signs.
    public var kid: String
    /// The JWS algorithm it signs with: `RS256`, `ES256` or `EdDSA`.
    public var alg: String
    /// `current` (signs now), `next` (published, current after the next rotation) or `retired`.
    public var status: String
    /// Whether the JWKS publishes it: current and next keys, and a retired one for `key-grace-period`.
    public var published: Bool
    /// When the key was made (`created_at`, Unix seconds).
    public var createdAt: Int64
    /// When it became current (`activated_at`, Unix seconds); nil if it never has.
    public var activatedAt: Int64?
    /// When it was retired (`retired_at`, Unix seconds); nil while it is current or next.
    public var retiredAt: Int64?

    /// A signing key's details, from its parts.
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
    /// The event's id.
    public var id: String
    /// What happened: an event kind such as `sign_in`, `account_created` or `client_changed` (docs/deployment.md#audit-events).
    public var kind: String
    /// When it happened (Unix seconds).
    public var at: Int64
    /// Who acted: `user` (the account's owner), `admin` or `system` (the server itself).
    public var actor: String
    /// The account's id (`user_id`); nil when no account is involved.
    public var userID: String?
    /// The client involved (`client_id`); nil when none is.
    public var clientID: String?
    /// The email address involved (for a failed sign-in, the one tried); nil when none is.
    public var email: String?
    /// The caller's network address as the throttles count it (an IPv4 address or an IPv6 /64); nil when unknown.
    public var ip: String?
    /// What else says what happened (the sign-in method, the upstream provider, the scopes); never a password, code or token.
    public var detail: String?

    /// An audit event, from its parts.
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
    /// A row the import refused, and why.
    public struct Failure: Codable, Sendable, Equatable {
        /// The row's line (JSON Lines, CSV) or its position in Firebase's `users`, from 1.
        public var line: Int
        /// The row's id or email address.
        public var reference: String
        /// Why the row was refused; never with its password hash.
        public var reason: String

        /// A refused row, from its line, reference and reason.
        public init(line: Int, reference: String, reason: String) {
            self.line = line
            self.reference = reference
            self.reason = reason
        }
    }

    /// How many accounts the import created.
    public var created: Int
    /// How many existing accounts it updated.
    public var updated: Int
    /// How many rows it refused: the count of `failures`.
    public var refused: Int
    /// The refused rows, with their lines and reasons.
    public var failures: [Failure]

    /// An import's report, from its counts and refused rows.
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
    /// An upstream identity linked to the account.
    public struct Identity: Codable, Sendable, Equatable {
        /// The upstream provider's id at this server (`google`, `apple`…).
        public var provider: String
        /// The user's subject identifier at the upstream provider.
        public var subject: String
        /// The email address the upstream gave; nil when it gave none.
        public var email: String?
        /// Whether the link is proven: the upstream verified the address, or the account's owner signed in to link it.
        public var proven: Bool

        /// A linked identity, from its parts.
        public init(provider: String, subject: String, email: String?, proven: Bool) {
            self.provider = provider
            self.subject = subject
            self.email = email
            self.proven = proven
        }
    }

    /// A live browser session of the user.
    public struct Session: Codable, Sendable, Equatable {
        /// The session's id, the `sid` of the ID tokens issued in it.
        public var sid: String
        /// When the user signed in (`signed_in_at`, Unix seconds).
        public var signedInAt: Int64
        /// How the user signed in, as `amr` values (`pwd`, `otp`…).
        public var methods: [String]
        /// When the session ends (`expires_at`, Unix seconds).
        public var expiresAt: Int64

        /// A browser session, from its parts.
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

    /// A client the user allowed, and the scopes allowed to it.
    public struct Consent: Codable, Sendable, Equatable {
        /// The client's id (`client_id`).
        public var clientID: String
        /// The client's name (`client_name`); its id when the client is gone.
        public var clientName: String
        /// The scopes the user allowed, space-separated.
        public var scope: String
        /// When the user gave the consent (`granted_at`, Unix seconds).
        public var grantedAt: Int64

        /// A consent, from its parts.
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

    /// A successful sign-in, as the audit trail recorded it.
    public struct SignIn: Codable, Sendable, Equatable {
        /// When it happened (Unix seconds).
        public var at: Int64
        /// The network address it came from (an IPv4 address or an IPv6 /64); nil when not recorded.
        public var ip: String?
        /// The client signed in to (`client_id`); nil when not recorded.
        public var clientID: String?
        /// How the user signed in, the event's `detail` (`password`, `email_code`, `email_link`,
        /// `upstream google`…); nil when not recorded.
        public var method: String?

        /// A sign-in, from its parts.
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

    /// The user; its members are encoded at the top level, beside these.
    public var user: AdminUserInfo
    /// The upstream identities linked to the account.
    public var identities: [Identity]
    /// Its live browser sessions, the latest first.
    public var sessions: [Session]
    /// The clients the user allowed, with the scopes.
    public var consents: [Consent]
    /// The latest successful sign-in still in the audit trail (`last_sign_in`); nil when there is none.
    public var lastSignIn: SignIn?

    /// A user's details, from the user and what hangs off the account.
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
    /// This page's clients, by name, then id.
    public var clients: [AdminClientInfo]
    /// The `page_token` of the next page (`next_page_token`); nil, encoded as null, on the last page.
    public var nextPageToken: String?

    /// A page of clients, from its clients and the next page's token.
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
    /// This page's users, by email address.
    public var users: [AdminUserInfo]
    /// The `page_token` of the next page (`next_page_token`); nil, encoded as null, on the last page.
    public var nextPageToken: String?

    /// A page of users, from its users and the next page's token.
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
    /// After a rotation (`POST /keys/rotate`), the kid of the key that now signs; nil in a plain listing.
    public var current: String?
    /// The keys: current first, then next, then retired (newest first); never a private key.
    public var keys: [AdminKeyInfo]

    /// The keys, with the new current kid after a rotation.
    public init(current: String? = nil, keys: [AdminKeyInfo]) {
        self.current = current
        self.keys = keys
    }
}

/// Audit events, newest first.
public struct AdminAuditEventList: Codable, Sendable, Equatable {
    /// The events, newest first.
    public var events: [AdminAuditEventInfo]

    /// A list of audit events, newest first.
    public init(events: [AdminAuditEventInfo]) {
        self.events = events
    }
}
