import Foundation
import TesseraCore

/// The stores user administration reads and changes.
public typealias UserAdministrationStores = UserStore & SessionStore & ConsentStore & IdentityStore & GrantStore & AuditStore
    & ClientStore & StoreTransactions

/// Everything an administrator sees about one user.
public struct UserDetails: Sendable {
    public var user: User
    public var identities: [UpstreamIdentity]
    /// Live browser sessions, the latest first.
    public var sessions: [BrowserSession]
    /// The apps the user allowed, with each client's name (its id when it is gone).
    public var consents: [(consent: Consent, clientName: String)]
    /// The latest successful sign-in still in the audit trail.
    public var lastSignIn: AuditEvent?
}

/// Finding, creating, changing, disabling and signing out users: the rules the admin API, the
/// console and the CLI share. Every change is an audit event naming the administrator.
public struct UserAdministration: Sendable {
    let store: any UserAdministrationStores
    let passwords: PasswordHasher
    let policy: PasswordPolicy
    let audit: AuditTrail
    let clock: WallClock

    /// The roles a user may hold.
    public static let roles: Set<String> = [User.adminRole]

    package init(store: any UserAdministrationStores, passwords: PasswordHasher, policy: PasswordPolicy, audit: AuditTrail, clock: WallClock) {
        self.store = store
        self.passwords = passwords
        self.policy = policy
        self.audit = audit
        self.clock = clock
    }

    /// Users by email address, `limit` at a time; `query` matches an id, or part of an address
    /// or a profile value.
    public func list(matching query: String?, after cursor: String?, limit: Int) async throws -> Page<User, String> {
        let query = query?.trimmingCharacters(in: .whitespaces)
        let rows = try await store.users(matching: query?.isEmpty == false ? query : nil, after: cursor, limit: limit + 1)
        return Page(reading: rows, limit: limit) { $0.email }
    }

    public func user(id: String) async throws -> User {
        guard let user = try await store.user(id: id) else { throw AdminError.notFound("user \(id)") }
        return user
    }

    /// The user by id, or by email address when `reference` has an `@`.
    public func user(_ reference: String) async throws -> User {
        if reference.contains("@") {
            guard let user = try await store.user(email: MailAddress.normalise(reference)) else { throw AdminError.notFound("user \(reference)") }
            return user
        }
        return try await user(id: reference)
    }

    public func details(of reference: String) async throws -> UserDetails {
        let user = try await user(reference)
        var consents: [(Consent, String)] = []
        for consent in try await store.consents(userID: user.id) {
            consents.append((consent, try await store.client(id: consent.clientID)?.name ?? consent.clientID))
        }
        let lastSignIn = try await store.auditEvents(AuditFilter(userID: user.id, kind: .signIn), limit: 1).first
        return UserDetails(user: user, identities: try await store.identities(userID: user.id),
                           sessions: try await store.sessions(userID: user.id, now: clock.now()), consents: consents, lastSignIn: lastSignIn)
    }

    /// Creates a user; the profile is validated first and the password hashed off the event loop.
    public func create(email: String, password: String?, name: String? = nil, profile: [String: JSONValue] = [:],
                       emailVerified: Bool = true, roles: Set<String> = [], by admin: Administrator) async throws -> User {
        let email = MailAddress.normalise(email)
        guard MailAddress.isPlausible(email) else { throw ConfigurationError("'\(email)' is not an email address") }
        if let password { try check(password, email: email) }
        try Self.check(roles)
        var profile = ScopeCatalogue.normalised(profile: profile)
        if let name { profile["name"] = .string(name) }
        try ScopeCatalogue.validate(profile: profile)
        let now = clock.now()
        let hash: String? = if let password { try await passwords.hash(password) } else { nil }
        var user = User(id: UUID().uuidString.lowercased(), email: email, emailVerified: emailVerified, passwordHash: hash,
                        profile: profile, createdAt: now, updatedAt: now)
        user.roles = roles
        try await store.insert(user)
        await audit.record(.accountCreated, actor: .admin, userID: user.id, email: user.email, detail: "by \(admin.description)")
        return user
    }

    /// Merges `changes` into the profile (a JSON null removes a claim) and sets the roles when
    /// given, if the user is still at `version` (nil: whatever it is now). The result is
    /// validated as a whole and written at once, so a bad value changes nothing.
    public func update(_ reference: String, profile changes: [String: JSONValue], roles: Set<String>? = nil, ifVersion version: Int64?,
                       by admin: Administrator) async throws -> User {
        var user = try await user(reference)
        if let version, version != user.version { throw AdminError.versionMismatch(current: user.version) }
        for (name, value) in changes {
            user.profile[name] = value == .null ? nil : ScopeCatalogue.normalised(profile: [name: value])[name]
        }
        try ScopeCatalogue.validate(profile: user.profile)
        if let roles {
            try Self.check(roles)
            user.roles = roles
        }
        user.updatedAt = clock.now()
        guard try await store.updateAccount(userID: user.id, profile: user.profile, roles: user.roles, now: user.updatedAt,
                                            ifVersion: user.version) else {
            throw AdminError.versionMismatch(current: try await self.user(id: user.id).version)
        }
        user.version += 1
        var changed = changes.keys.sorted().map { "profile \($0)" }
        if let roles { changed.append("roles [\(roles.sorted().joined(separator: " "))]") }
        await audit.record(.userChanged, actor: .admin, userID: user.id, email: user.email,
                           detail: "changed \(changed.joined(separator: ", ")) by \(admin.description)")
        return user
    }

    /// Sets the password (checked by the password policy), or removes it (`nil`): the user then
    /// signs in by email code or link, or an upstream provider.
    public func setPassword(_ reference: String, to password: String?, by admin: Administrator) async throws -> User {
        var user = try await user(reference)
        let now = clock.now()
        if let password {
            try check(password, email: user.email)
            let hash = try await passwords.hash(password)
            try await store.updatePasswordHash(userID: user.id, hash: hash, now: now)
            user.passwordHash = hash
        } else {
            try await store.removePassword(userID: user.id, now: now)
            user.passwordHash = nil
        }
        user.version += 1
        await audit.record(.passwordSet, actor: .admin, userID: user.id, email: user.email,
                           detail: (password == nil ? "password removed" : "password set") + " by \(admin.description)")
        return user
    }

    /// Marks the address verified, as if its owner had proven it.
    public func markEmailVerified(_ reference: String, by admin: Administrator) async throws -> User {
        var user = try await user(reference)
        guard !user.emailVerified else { return user }
        try await store.markEmailVerified(userID: user.id, now: clock.now())
        user.emailVerified = true
        user.version += 1
        await audit.record(.userChanged, actor: .admin, userID: user.id, email: user.email, detail: "email verified by \(admin.description)")
        return user
    }

    /// Disables the account: every session ends and every grant is revoked (refresh and access
    /// tokens stop working), and no way of signing in works until it is enabled again.
    public func disable(_ reference: String, by admin: Administrator) async throws -> User {
        var user = try await user(reference)
        let now = clock.now()
        let event = AuditEvent(.userChanged, at: now, actor: .admin, userID: user.id, email: user.email,
                               detail: "disabled by \(admin.description)")
        try await store.transaction { [user] tx in
            try await AccountRules.disable(user.id, now: now, in: tx)
            try await tx.recordAudit(event)
        }
        user.disabledAt = now
        user.version += 1
        return user
    }

    public func enable(_ reference: String, by admin: Administrator) async throws -> User {
        var user = try await user(reference)
        guard user.isDisabled else { return user }
        try await store.setDisabled(userID: user.id, at: nil, now: clock.now())
        user.disabledAt = nil
        user.version += 1
        await audit.record(.userChanged, actor: .admin, userID: user.id, email: user.email, detail: "enabled by \(admin.description)")
        return user
    }

    /// Ends every browser session and revokes every grant: the user signs in again everywhere.
    public func signOutEverywhere(_ reference: String, by admin: Administrator) async throws {
        let user = try await user(reference)
        let now = clock.now()
        let event = AuditEvent(.userChanged, at: now, actor: .admin, userID: user.id, email: user.email,
                               detail: "signed out everywhere by \(admin.description)")
        try await store.transaction { tx in
            try await AccountRules.signOutEverywhere(userID: user.id, now: now, in: tx)
            try await tx.recordAudit(event)
        }
    }

    func check(_ password: String, email: String) throws {
        if let violation = policy.check(password, email: email) {
            throw ConfigurationError(PasswordPolicy.explanation(violation, policy: policy))
        }
    }

    static func check(_ roles: Set<String>) throws {
        for role in roles where !Self.roles.contains(role) {
            throw AdminError.invalid("'\(role)' is not a role (the roles are: \(Self.roles.sorted().joined(separator: ", ")))")
        }
    }
}
