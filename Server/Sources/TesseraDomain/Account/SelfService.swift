import TesseraCore

/// The stores a person's own changes to their account read and write.
public typealias SelfServiceStores = UserStore & SessionStore & IdentityStore & GrantStore & AuditStore & EmailChangeStore & PasskeyStore
    & StoreTransactions

/// What people do to their own account, from the account page or an app through the account
/// API (docs/account.md): edit their profile, set, change or remove their password, see and
/// end their sessions. Every change is an audit event with the user as its actor.
///
/// Changes that would let someone who found a signed-in browser (or a stolen access token)
/// take the account over need proof that it is its owner: a **recent sign-in** (within
/// `reauthenticate-after`) for sensitive claims, a password set or removed, and the current
/// password or a recent sign-in to change one.
package struct SelfService: Sendable {
    let store: any SelfServiceStores
    let passwords: PasswordHasher
    let policy: PasswordPolicy
    let passwordSignIn: PasswordSignIn
    let mail: FlowMail
    /// The one-time codes' length, lifetime and attempts, and the hourly mail limits (a new address's code).
    let codes: NativeAuthSettings
    let mailLimits: MailLimits
    let audit: AuditTrail
    let clock: WallClock

    package init(store: any SelfServiceStores, passwords: PasswordHasher, policy: PasswordPolicy, passwordSignIn: PasswordSignIn,
                 mail: FlowMail, codes: NativeAuthSettings, mailLimits: MailLimits, audit: AuditTrail, clock: WallClock) {
        self.store = store
        self.mail = mail
        self.codes = codes
        self.mailLimits = mailLimits
        self.passwords = passwords
        self.policy = policy
        self.passwordSignIn = passwordSignIn
        self.audit = audit
        self.clock = clock
    }

    /// Who asks, and how recently they proved it is them.
    package struct Owner: Sendable {
        package var user: User
        /// The sign-in behind the request (the browser session's, or the access token's `auth_time`).
        package var authTime: Int64
        /// The browser session the request comes with, which a password change keeps.
        package var sid: String?
        /// The grant of the access token the request comes with, which a password change keeps.
        package var grantID: String?
        /// Where the request comes from (its throttle key), and the browser's device cookie.
        package var origin: PasswordSignIn.Origin
        /// The language of the emails a change sends.
        package var language: PageLanguage

        package init(user: User, authTime: Int64, sid: String? = nil, grantID: String? = nil, origin: PasswordSignIn.Origin,
                     language: PageLanguage) {
            self.user = user
            self.language = language
            self.authTime = authTime
            self.sid = sid
            self.grantID = grantID
            self.origin = origin
        }
    }

    /// The claims a person may write to their own profile: the catalogue's, except those the
    /// server maintains and the verification flags, which only a proof may set.
    package static func isEditable(_ claim: String) -> Bool {
        guard let definition = ScopeCatalogue.claim(claim) else { return false }
        return !definition.managed && !claim.hasSuffix("_verified")
    }

    /// Whether the owner signed in recently enough for a sensitive change.
    package func isRecent(_ owner: Owner, within seconds: Int64) -> Bool {
        clock.now() - owner.authTime <= seconds
    }

    // MARK: Profile

    /// Merges `changes` into the profile (`null` removes a claim). Every problem is reported
    /// at once, by claim; a sensitive claim needs a recent sign-in; nothing changes unless all
    /// of it can. A changed phone number is no longer verified.
    package func updateProfile(_ owner: Owner, changes: [String: JSONValue], recentSignIn: Bool) async throws(SelfServiceError) -> User {
        var user = owner.user
        var problems: [String: String] = [:]
        var changed: [String] = []
        for (name, value) in changes.sorted(by: { $0.key < $1.key }) {
            guard Self.isEditable(name) else {
                problems[name] = ScopeCatalogue.claim(name) == nil ? "is not a known claim" : "is maintained by the server and can't be set"
                continue
            }
            let normalised = value == .null ? nil : ScopeCatalogue.normalised(profile: [name: value])[name]
            if let normalised {
                do { try ScopeCatalogue.validate(profile: [name: normalised]) } catch { problems[name] = error.reason; continue }
                if case .string(let text) = normalised, text.count > 256 { problems[name] = "must be at most 256 characters"; continue }
            }
            guard user.profile[name] != normalised else { continue }
            changed.append(name)
            user.profile[name] = normalised
        }
        guard problems.isEmpty else { throw .invalidClaims(problems) }
        guard !changed.isEmpty else { return user }
        if !recentSignIn, let sensitive = changed.first(where: ScopeCatalogue.isSensitive(claim:)) {
            throw .recentSignInRequired(sensitive)
        }
        if changed.contains("phone_number") { user.profile["phone_number_verified"] = nil }
        user.updatedAt = clock.now()
        do {
            guard try await store.updateAccount(userID: user.id, profile: user.profile, roles: user.roles, now: user.updatedAt,
                                                ifVersion: user.version) else { throw SelfServiceError.changedMeanwhile }
        } catch let error as SelfServiceError { throw error } catch { throw .unavailable(error) }
        user.version += 1
        await audit.record(.userChanged, userID: user.id, clientID: owner.origin.clientID, email: user.email,
                           detail: "changed " + changed.map { "profile \($0)" }.joined(separator: ", ") + " by the user")
        return user
    }

    // MARK: Password

    /// Sets a new password: with the current one when there is one (a wrong one counts as a
    /// failed sign-in), or a recent sign-in instead. Every other browser session and every
    /// grant but the request's own ends, since whoever knew the old password may hold them;
    /// the address is told.
    package func changePassword(_ owner: Owner, current: String?, to new: String, recentSignIn: Bool) async throws(SelfServiceError) -> User {
        var user = owner.user
        if user.passwordHash != nil, !recentSignIn || !(current ?? "").isEmpty {
            guard let current, !current.isEmpty else { throw .recentSignInRequired("password") }
            let outcome: Result<User, PasswordSignIn.Failure>
            do { outcome = try await passwordSignIn.signIn(email: user.email, password: current, from: owner.origin) } catch { throw .unavailable(error) }
            if case .failure(let failure) = outcome { throw .currentPassword(failure) }
        } else if user.passwordHash == nil, !recentSignIn {
            throw .recentSignInRequired("password")
        }
        if let violation = policy.check(new, email: user.email) {
            throw .weakPassword(violation, reason: PasswordPolicy.explanation(violation, policy: policy))
        }
        let now = clock.now()
        do {
            let hash = try await passwords.hash(new)
            let event = AuditEvent(.passwordSet, at: now, actor: .user, userID: user.id, clientID: owner.origin.clientID, email: user.email,
                                   detail: user.passwordHash == nil ? "password set by the user" : "password changed by the user")
            try await store.transaction { [user] tx in
                try await tx.updatePasswordHash(userID: user.id, hash: hash, now: now)
                try await AccountRules.signOutElsewhere(userID: user.id, keepingSession: owner.sid, keepingGrant: owner.grantID,
                                                        now: now, in: tx)
                try await tx.recordAudit(event)
            }
            user.passwordHash = hash
        } catch is PasswordHasher.Busy {
            throw .busy
        } catch { throw .unavailable(error) }
        user.version += 1
        try? await mail.send(.passwordChanged, to: user.email, language: owner.language, flow: "account", expiresAt: nil)
        return user
    }

    /// Removes the password, when another way in remains: an upstream identity, or a verified
    /// address (email codes and links sign in with it). Needs a recent sign-in.
    package func removePassword(_ owner: Owner, recentSignIn: Bool) async throws(SelfServiceError) -> User {
        var user = owner.user
        guard user.passwordHash != nil else { return user }
        guard recentSignIn else { throw .recentSignInRequired("password") }
        do {
            guard Self.hasAnotherWayIn(user, identities: try await store.identities(userID: user.id),
                                       passkeys: try await store.passkeys(userID: user.id)) else {
                throw SelfServiceError.lastWayIn
            }
            try await store.removePassword(userID: user.id, now: clock.now())
        } catch let error as SelfServiceError { throw error } catch { throw .unavailable(error) }
        await audit.record(.passwordSet, userID: user.id, clientID: owner.origin.clientID, email: user.email,
                           detail: "password removed by the user")
        user.passwordHash = nil
        user.version += 1
        return user
    }

    /// Whether the account can be opened without its password: a verified address (email codes
    /// and links sign in with it), a connected provider or a passkey that isn't blocked.
    package static func hasAnotherWayIn(_ user: User, identities: [UpstreamIdentity], passkeys: [Passkey]) -> Bool {
        user.emailVerified || !identities.isEmpty || passkeys.contains { !$0.isSuspended }
    }

    // MARK: Sessions

    /// The user's live browser sessions, the latest sign-in first.
    package func sessions(of user: User) async throws -> [BrowserSession] {
        try await store.sessions(userID: user.id, now: clock.now())
    }

    /// Ends one of the user's browser sessions (with the grants made in it that were not for
    /// offline access). False when the user has no live session of that id.
    package func endSession(_ owner: Owner, sid: String) async throws -> Bool {
        let now = clock.now()
        guard try await store.sessions(userID: owner.user.id, now: now).contains(where: { $0.sid == sid }) else { return false }
        let event = AuditEvent(.userChanged, at: now, actor: .user, userID: owner.user.id, clientID: owner.origin.clientID,
                               email: owner.user.email, detail: "signed out a browser session by the user")
        try await store.transaction { tx in
            try await TokenFamilies.sessionEnded(sid: sid, now: now, in: tx)
            try await tx.recordAudit(event)
        }
        return true
    }

    /// Ends every browser session of the user but the one the request comes with.
    package func endOtherSessions(_ owner: Owner) async throws -> Int {
        let now = clock.now()
        let others = try await store.sessions(userID: owner.user.id, now: now).filter { $0.sid != owner.sid }
        guard !others.isEmpty else { return 0 }
        let event = AuditEvent(.userChanged, at: now, actor: .user, userID: owner.user.id, clientID: owner.origin.clientID,
                               email: owner.user.email, detail: "signed out \(others.count) other browser session(s) by the user")
        try await store.transaction { tx in
            for session in others { try await TokenFamilies.sessionEnded(sid: session.sid, now: now, in: tx) }
            try await tx.recordAudit(event)
        }
        return others.count
    }
}

/// Why a change to one's own account was not made. Nothing changed.
package enum SelfServiceError: Error, Sendable {
    /// Values that don't fit their claims, by claim.
    case invalidClaims([String: String])
    /// The change needs a sign-in within `reauthenticate-after`; `what` names it (a claim, `password`, `account`).
    case recentSignInRequired(String)
    /// The current password was wrong, or its sign-in is throttled.
    case currentPassword(PasswordSignIn.Failure)
    /// The new password is refused by the policy, with the reason in words.
    case weakPassword(PasswordPolicy.Violation, reason: String)
    /// Removing it would leave no way to sign in.
    case lastWayIn
    /// The account changed between reading and writing it (another tab, an administrator): read it again.
    case changedMeanwhile
    /// The password-hashing queue is full: try again in a few seconds.
    case busy
    /// A new address that is not an email address, or the one the account has.
    case invalidAddress
    /// Too many codes were mailed to the address or from the network in the last hour.
    case tooManyCodes
    /// The code is wrong; `attemptsLeft` more may be tried (0: start again).
    case wrongCode(attemptsLeft: Int)
    /// The change is unknown, used, another account's, or its code expired: start again.
    case expiredChange
    /// The database failed: nothing changed; try again shortly.
    case unavailable(any Error)
}
