import TesseraCore

/// Something that happened to an account or a client that its owner, an operator or an
/// investigator may need to know later: who (the actor), to which account and client, from
/// which address, and when. Kept for `audit-retention`, then purged.
public struct AuditEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case signIn = "sign_in"
        case signInFailed = "sign_in_failed"
        case passwordSet = "password_set"
        case passwordReset = "password_reset"
        case addressProven = "address_proven"
        case identityLinked = "identity_linked"
        case identityUnlinked = "identity_unlinked"
        case consentGiven = "consent_given"
        case consentWithdrawn = "consent_withdrawn"
        case accountCreated = "account_created"
        case accountDeleted = "account_deleted"
        case userChanged = "user_changed"
        case clientChanged = "client_changed"
        case keysRotated = "keys_rotated"
        case appApproved = "app_approved"
        case appDenied = "app_denied"
        case handoffIssued = "handoff_issued"
        case handoffUsed = "handoff_used"
        case deviceSessionEnded = "device_session_ended"
        case passkeyAdded = "passkey_added"
        case passkeyRemoved = "passkey_removed"
        /// A passkey's signature counter went backwards (a cloned authenticator is the likely cause).
        case passkeySuspended = "passkey_suspended"
        case secondFactorAdded = "second_factor_added"
        case secondFactorRemoved = "second_factor_removed"
        case recoveryCodeUsed = "recovery_code_used"
    }

    /// Who acted: the account's owner, an administrator, or the provider itself.
    public enum Actor: String, Sendable {
        case user, admin, system
    }

    public var id: String
    public var kind: Kind
    public var at: Int64
    public var actor: Actor
    public var userID: String?
    public var clientID: String?
    /// The email address involved (the one tried, for a failed sign-in).
    public var email: String?
    /// The client's network address (its throttle key: an IPv4 address, or an IPv6 /64).
    public var ip: String?
    /// What else says what happened: the sign-in method, the upstream provider, the scopes.
    public var detail: String?

    public init(_ kind: Kind, at: Int64, actor: Actor = .user, userID: String? = nil, clientID: String? = nil, email: String? = nil,
                ip: String? = nil, detail: String? = nil, id: String = SecureRandom.token(bytes: 12)) {
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
}

/// Which audit events to read: all of one account, of one kind, or since a time.
public struct AuditFilter: Sendable, Equatable {
    public var userID: String?
    public var kind: AuditEvent.Kind?
    public var since: Int64?

    public init(userID: String? = nil, kind: AuditEvent.Kind? = nil, since: Int64? = nil) {
        self.userID = userID
        self.kind = kind
        self.since = since
    }
}

public protocol AuditStore: Sendable {
    func recordAudit(_ event: AuditEvent) async throws
    /// The newest first, at most `limit`.
    func auditEvents(_ filter: AuditFilter, limit: Int) async throws -> [AuditEvent]
    /// Deletes the events older than `before`.
    func purgeAudit(before: Int64) async throws
}
