/// The account API's messages (`account_api_endpoint`, docs/account.md): what a first-party app
/// reads and sends to let its signed-in user look after their own account. The server encodes
/// and decodes them; the SDK's `AccountClient` the other way round.

/// `GET /account/v1.0/profile`, and the answer of a change: the account as its owner sees it.
public struct AccountProfile: Codable, Sendable, Equatable {
    /// The account's subject identifier, as ID tokens' `sub` carry it.
    public var sub: String
    /// The account's email address.
    public var email: String
    /// Whether the address is verified (`email_verified`).
    public var emailVerified: Bool
    /// Whether the account has a password (it may sign in by code, link or provider only).
    public var hasPassword: Bool
    /// The profile's claims by name (the catalogue's: `given_name`, `birthdate`, `address`…).
    public var claims: [String: JSONValue]
    /// When the account last changed, Unix time in seconds (`updated_at`).
    public var updatedAt: Int64

    /// A profile from its parts.
    public init(sub: String, email: String, emailVerified: Bool, hasPassword: Bool, claims: [String: JSONValue], updatedAt: Int64) {
        self.sub = sub
        self.email = email
        self.emailVerified = emailVerified
        self.hasPassword = hasPassword
        self.claims = claims
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case sub, email, claims
        case emailVerified = "email_verified", hasPassword = "has_password", updatedAt = "updated_at"
    }
}

/// `POST /account/v1.0/password`: a new password, with the current one when the account has
/// one (or a sign-in within the server's `reauthenticate-after` instead).
public struct AccountPasswordChange: Codable, Sendable, Equatable {
    /// The password now (`current_password`); nil when the account has none, or after a recent sign-in.
    public var currentPassword: String?
    /// The password to set (`new_password`), checked against the password policy.
    public var newPassword: String

    /// A password change from its parts.
    public init(currentPassword: String?, newPassword: String) {
        self.currentPassword = currentPassword
        self.newPassword = newPassword
    }

    enum CodingKeys: String, CodingKey { case currentPassword = "current_password", newPassword = "new_password" }
}

/// `POST /account/v1.0/email`: the address the account should move to (a code goes there).
public struct AccountEmailChange: Codable, Sendable, Equatable {
    /// The address to move to (`new_email`).
    public var newEmail: String
    /// A change to `newEmail`.
    public init(newEmail: String) { self.newEmail = newEmail }
    enum CodingKeys: String, CodingKey { case newEmail = "new_email" }
}

/// The answer of `POST /account/v1.0/email` (202): the change waits for the code.
public struct AccountEmailChangeStarted: Codable, Sendable, Equatable {
    /// Goes back with the code.
    public var changeID: String
    /// The new address, masked, to show ("we sent a code to a***e@e*****e.com").
    public var target: String
    /// Digits in the code (`code_length`; `otp-length`, 6 to 10).
    public var codeLength: Int
    /// Seconds the code stays valid (`expires_in`).
    public var expiresIn: Int64

    /// An answer from its parts.
    public init(changeID: String, target: String, codeLength: Int, expiresIn: Int64) {
        self.changeID = changeID
        self.target = target
        self.codeLength = codeLength
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey { case changeID = "change_id", target, codeLength = "code_length", expiresIn = "expires_in" }
}

/// `POST /account/v1.0/email/confirm`: the code from the new address.
public struct AccountEmailConfirmation: Codable, Sendable, Equatable {
    /// The change's id from the answer that started it (`change_id`).
    public var changeID: String
    /// The code mailed to the new address.
    public var code: String
    /// A confirmation from its parts.
    public init(changeID: String, code: String) {
        self.changeID = changeID
        self.code = code
    }
    enum CodingKeys: String, CodingKey { case changeID = "change_id", code }
}

/// One browser session of the user (`GET /account/v1.0/sessions`).
public struct AccountSession: Codable, Sendable, Equatable {
    /// The session's id (the ID tokens' `sid`): `DELETE /account/v1.0/sessions/{id}` ends it.
    public var id: String
    /// How the user signed in (`pwd`, `otp`, `email`, `fed`).
    public var amr: [String]
    /// When the user signed in, Unix time in seconds (`auth_time`).
    public var authTime: Int64
    /// When the session began, Unix time in seconds (`created_at`).
    public var createdAt: Int64
    /// When it was last used, to the minute.
    public var lastSeenAt: Int64
    /// When the session expires, Unix time in seconds (`expires_at`).
    public var expiresAt: Int64
    /// The browser's `User-Agent` at sign-in, at most 256 characters (`user_agent`); nil when it sent none.
    public var userAgent: String?
    /// The client's IP address at sign-in (`ip_address`); nil when unknown.
    public var ipAddress: String?

    /// A session from its parts.
    public init(id: String, amr: [String], authTime: Int64, createdAt: Int64, lastSeenAt: Int64, expiresAt: Int64, userAgent: String?,
                ipAddress: String?) {
        self.id = id
        self.amr = amr
        self.authTime = authTime
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.expiresAt = expiresAt
        self.userAgent = userAgent
        self.ipAddress = ipAddress
    }

    enum CodingKeys: String, CodingKey {
        case id, amr
        case authTime = "auth_time", createdAt = "created_at", lastSeenAt = "last_seen_at", expiresAt = "expires_at"
        case userAgent = "user_agent", ipAddress = "ip_address"
    }
}

/// One of the account's passkeys (`GET /account/v1.0/passkeys`).
public struct AccountPasskey: Codable, Sendable, Equatable {
    /// The credential id (base64url): `DELETE /account/v1.0/passkeys/{id}` removes it.
    public var id: String
    /// Its name (one line, at most 64 characters): the one given, else `Synced passkey` or `Security key`.
    public var name: String
    /// Backup-eligible: synced between the person's devices.
    public var synced: Bool
    /// When it was added, Unix time in seconds (`created_at`).
    public var createdAt: Int64
    /// When it last signed the user in, Unix time in seconds (`last_used_at`); nil if never.
    public var lastUsedAt: Int64?
    /// Blocked after its counter went backwards (a copied key).
    public var blocked: Bool

    /// A passkey from its parts.
    public init(id: String, name: String, synced: Bool, createdAt: Int64, lastUsedAt: Int64?, blocked: Bool) {
        self.id = id
        self.name = name
        self.synced = synced
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.blocked = blocked
    }

    enum CodingKeys: String, CodingKey {
        case id, name, synced, createdAt = "created_at", lastUsedAt = "last_used_at", blocked
    }
}

/// `GET /account/v1.0/passkeys`: the account's passkeys.
public struct AccountPasskeyList: Codable, Sendable, Equatable {
    /// The passkeys, the oldest first.
    public var passkeys: [AccountPasskey]
    /// A list of `passkeys`.
    public init(passkeys: [AccountPasskey]) { self.passkeys = passkeys }
}

/// `POST /account/v1.0/passkeys`: what `navigator.credentials.create` (or the platform's
/// passkey API) answered to the options, and an optional name.
public struct AccountPasskeyRegistration: Codable, Sendable, Equatable {
    /// WebAuthn's `RegistrationResponseJSON` for the options `POST /account/v1.0/passkeys/options` gave.
    public var credential: PasskeyRegistration
    /// What to call the passkey (one line, at most 64 characters); nil: `Synced passkey` or `Security key`.
    public var name: String?
    /// A registration from its parts.
    public init(credential: PasskeyRegistration, name: String? = nil) {
        self.credential = credential
        self.name = name
    }
}

/// The answer of `GET /account/v1.0/sessions`.
public struct AccountSessionList: Codable, Sendable, Equatable {
    /// The live browser sessions, the latest sign-in first.
    public var sessions: [AccountSession]
    /// A list of `sessions`.
    public init(sessions: [AccountSession]) { self.sessions = sessions }
}

/// The account API's refusals: `error` (a code below), `error_description` in words, and for
/// profile changes every claim refused with its reason.
public struct AccountAPIError: Codable, Sendable, Equatable, Error {
    /// The code: one of those below, or `invalid_request`, `invalid_token`, `insufficient_scope`, `temporarily_unavailable`.
    public var error: String
    /// What went wrong, in English, for developers (`error_description`).
    public var errorDescription: String?
    /// `invalid_claims`: the reason for each claim refused.
    public var invalidClaims: [String: String]?
    /// `insufficient_user_authentication`: the sign-in must be at most this many seconds old (RFC 9470).
    public var maxAge: Int64?

    /// A refusal from its parts.
    public init(error: String, errorDescription: String?, invalidClaims: [String: String]? = nil, maxAge: Int64? = nil) {
        self.error = error
        self.errorDescription = errorDescription
        self.invalidClaims = invalidClaims
        self.maxAge = maxAge
    }

    /// A value that doesn't fit its claim, an unknown claim, or one the server maintains (400).
    public static let invalidClaimsCode = "invalid_claims"
    /// The change needs a recent sign-in: sign in again (`max_age`) and retry (401, RFC 9470).
    public static let insufficientUserAuthentication = "insufficient_user_authentication"
    /// The current password is wrong (403), or its checks are throttled (`password_throttled`, 429).
    public static let wrongPassword = "wrong_password"
    /// Too many wrong current passwords: try again later (429).
    public static let passwordThrottled = "password_throttled"
    /// The new password is refused by the policy (400; the reason in `error_description`).
    public static let passwordTooWeak = "password_too_weak"
    /// Removing the password would leave no way to sign in (409).
    public static let lastWayIn = "last_way_in"
    /// The account changed meanwhile (another device, an administrator): read it and retry (409).
    public static let conflict = "conflict"
    /// No live session of the user has this id (404).
    public static let notFound = "not_found"
    /// The new address is not an email address, or is the account's own (400).
    public static let invalidAddress = "invalid_address"
    /// Too many codes went to the address or from the network in the last hour (429).
    public static let tooManyCodes = "too_many_codes"
    /// The code is wrong; `error_description` says how many tries are left (400).
    public static let wrongCode = "wrong_code"
    /// The change is unknown, used, or its code expired or was tried too often: start again (400).
    public static let expiredChange = "expired_change"
    /// A passkey the server refused (its challenge, origin, signature…), or one already registered.
    public static let invalidPasskey = "invalid_passkey"

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description", invalidClaims = "invalid_claims", maxAge = "max_age"
    }
}
