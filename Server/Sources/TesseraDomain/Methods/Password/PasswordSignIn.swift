import TesseraCore

/// Signing in with email and password, for every page and API that offers it.
///
/// A wrong email and a wrong password give the same answer and cost the same time (the
/// hasher checks a decoy hash when there is no account). Failures are counted so that
/// guessing is slow, without handing anyone a way to lock the owner out:
///
/// - per account *and* client address: five wrong passwords lock that address out of that
///   account only, not the owner elsewhere;
/// - per client address, over all accounts (credential stuffing from one place);
/// - per account over all addresses, with a high limit (guessing from many places) — and
///   a browser the owner signed in from before (its device cookie, as OWASP describes) is
///   let through that and the address limit, counted on its own instead.
///
/// Past a limit every attempt is refused, the right password too. Counted in the database,
/// so that every node of a cluster counts together.
public struct PasswordSignIn: Sendable {
    let users: any UserStore
    let passwords: PasswordHasher
    let limits: LoginLimits
    let clock: WallClock
    let perAccountAndAddress: FailureThrottle
    let perAddress: FailureThrottle
    let perAccount: FailureThrottle
    let perDevice: FailureThrottle
    let audit: AuditTrail

    package init(users: any UserStore, passwords: PasswordHasher, limits: LoginLimits, throttles: any ThrottleStore, audit: AuditTrail,
                 clock: WallClock) {
        self.users = users
        self.audit = audit
        self.passwords = passwords
        self.limits = limits
        self.clock = clock
        perAccountAndAddress = FailureThrottle("login:account+address", limit: limits.perAccountAndAddress, window: limits.window,
                                               store: throttles)
        perAddress = FailureThrottle("login:address", limit: limits.perAddress, window: limits.window, store: throttles)
        perAccount = FailureThrottle("login:account", limit: limits.perAccount, window: limits.window, store: throttles)
        perDevice = FailureThrottle("login:device", limit: limits.perAccountAndAddress, window: limits.window, store: throttles)
    }

    public enum Failure: Error, Sendable {
        case badCredentials
        case throttled
        /// The password hashing queue is full; nothing was counted.
        case busy
        /// The password was right, but an administrator disabled the account.
        case disabled
    }

    /// Where an attempt comes from: the client address (its throttle key) and, from a
    /// browser, the device it proved with a device cookie the provider signed.
    public struct Origin: Sendable {
        public var address: String
        public var device: KnownDevice?
        /// The app the user is signing in to, when there is one (for the audit trail).
        public var clientID: String?

        public init(address: String, device: KnownDevice? = nil, clientID: String? = nil) {
            self.address = address
            self.device = device
            self.clientID = clientID
        }
    }

    public func signIn(email: String, password: String, from origin: Origin) async throws -> Result<User, Failure> {
        let now = clock.now()
        let email = MailAddress.normalise(email)
        let user = try await users.user(email: email)
        let counters: [(FailureThrottle, String)]
        if let device = origin.device, let user, device.userID == user.id {
            counters = [(perDevice, device.id)]
        } else {
            counters = [(perAccountAndAddress, email + "|" + origin.address), (perAddress, origin.address), (perAccount, email)]
        }
        // The attempt counts as a failure before the hash runs, so concurrent guesses can't
        // all pass the check before any of them is counted; a right password takes it back.
        guard let attempt = try await FailureThrottle.reserve(counters, now: now) else {
            await audit.record(.signInFailed, userID: user?.id, clientID: origin.clientID, email: email, ip: origin.address,
                               detail: "password: throttled")
            Signals.signIn("password", "throttled")
            Signals.throttled("login")
            return .failure(.throttled)
        }
        let verification: PasswordHasher.Verification
        do {
            verification = try await passwords.verify(password, against: user?.passwordHash)
        } catch is PasswordHasher.Busy {
            try await FailureThrottle.forgive(attempt)
            Signals.signIn("password", "busy")
            return .failure(.busy)
        }
        guard let user, verification.matches else {
            await audit.record(.signInFailed, userID: user?.id, clientID: origin.clientID, email: email, ip: origin.address,
                               detail: "password")
            Signals.signIn("password", "failure")
            return .failure(.badCredentials)
        }
        try await FailureThrottle.forgive(attempt)
        if user.isDisabled {
            await audit.record(.signInFailed, userID: user.id, clientID: origin.clientID, email: email, ip: origin.address,
                               detail: "password: account disabled")
            Signals.signIn("password", "disabled")
            return .failure(.disabled)
        }
        Signals.signIn("password", "success")
        await audit.record(.signIn, userID: user.id, clientID: origin.clientID, email: email, ip: origin.address, detail: "password")
        // The guesses of others (per account, per address) still count; this place's own are forgiven.
        if let (throttle, key) = counters.first { try await throttle.reset(key) }
        if verification.needsRehash {
            // A busy queue leaves the old hash for the next sign-in.
            if let hash = try? await passwords.hash(password) {
                try await users.updatePasswordHash(userID: user.id, hash: hash, now: now)
            }
        }
        return .success(user)
    }
}

/// A browser the user signed in from before, as its device cookie says.
public struct KnownDevice: Sendable, Equatable {
    public var userID: String
    /// The cookie's random part: its failures are counted under it.
    public var id: String

    package init(userID: String, id: String) {
        self.userID = userID
        self.id = id
    }
}

/// How many failed sign-ins are allowed within ``window`` seconds (docs/security.md).
public struct LoginLimits: Sendable, Equatable {
    /// From one client address to one account (and from one known device).
    public var perAccountAndAddress = 5
    /// From one client address, over all accounts.
    public var perAddress = 20
    /// To one account, from all addresses together (not counting its known devices).
    public var perAccount = 100
    public var window: Int64 = 900

    public init() {}
}
