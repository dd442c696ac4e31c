import TesseraCore

/// Counts failures per key (an account, a client address) in a sliding window and says
/// when a key has had too many. Counted in the database, so every node counts together.
public struct FailureThrottle: Sendable {
    /// What is counted (`login:address`): keys of two throttles never meet.
    let name: String
    let limit: Int
    let window: Int64
    let store: any ThrottleStore

    public init(_ name: String, limit: Int, window: Int64, store: any ThrottleStore) {
        self.name = name
        self.limit = limit
        self.window = window
        self.store = store
    }

    /// The stored key of `key`: a hash, so the table holds no address or IP.
    func storedKey(_ key: String) -> String {
        throttleKey(name, key)
    }

    /// Counts a failure for each of `counters` before the attempt is made, in one conditional
    /// write, unless one of them has had its limit in its window: then nil, and nothing is
    /// counted. So N concurrent attempts on any nodes count N, and never more get through
    /// than a limit allows. A right answer takes the count back with ``forgive(_:)``; a wrong
    /// one leaves it as its failure. The counters share one window (the sign-in limits all
    /// count 15 minutes).
    public static func reserve(_ counters: [(FailureThrottle, String)], now: Int64) async throws -> Attempt? {
        guard let first = counters.first?.0 else { return Attempt(id: SecureRandom.token(bytes: 16), store: nil) }
        let attempt = Attempt(id: SecureRandom.token(bytes: 16), store: first.store)
        let keys = counters.map { (key: $0.0.storedKey($0.1), limit: $0.0.limit) }
        guard try await first.store.reserveFailures(keys, since: now - first.window + 1, now: now, attempt: attempt.id) else { return nil }
        return attempt
    }

    /// An attempt counted in advance by ``reserve(_:now:)``.
    public struct Attempt: Sendable {
        let id: String
        let store: (any ThrottleStore)?
    }

    /// Takes back the failures `attempt` counted in advance: it was not a wrong guess.
    public static func forgive(_ attempt: Attempt) async throws {
        try await attempt.store?.forgetFailures(attempt: attempt.id)
    }

    public func reset(_ key: String) async throws {
        try await store.clearFailures(storedKey(key))
    }
}

/// Allows `limit` events per key in any `window` seconds on average, in bursts of up to
/// `limit` (a token bucket per key, refilled continuously). Kept in the database, so every
/// node draws on the same bucket.
public struct RateLimiter: Sendable {
    let name: String
    let limit: Int
    let window: Int64
    let store: any ThrottleStore

    public init(_ name: String, limit: Int, window: Int64, store: any ThrottleStore) {
        self.name = name
        self.limit = limit
        self.window = window
        self.store = store
    }

    /// Takes one event for `key`: nil when it is allowed, else the seconds until it would be.
    public func take(_ key: String, now: Int64) async throws -> Int64? {
        guard limit > 0 else { return window }
        return try await store.takeToken(throttleKey(name, key), limit: limit, window: window, now: now)
    }
}

/// The key a throttle's counter is stored under: SHA-256 of its name and the key.
func throttleKey(_ name: String, _ key: String) -> String {
    tokenHash(name + "\u{0}" + key)
}

/// How much work unauthenticated requests may start, per client address and per client,
/// per minute (docs/security.md, "Bounded work").
public struct WorkLimitSettings: Sendable, Equatable {
    /// Password hashings for new passwords (sign-up, a password chosen in a flow).
    public var hashingPerAddress = 30
    public var hashingPerClient = 600
    /// Sign-ins started: authorization requests that open a hosted page, native flows,
    /// sign-ins at an upstream provider.
    public var flowsPerAddress = 60
    public var flowsPerClient = 6000
    /// Password hashings that may wait for a thread; beyond it the answer is "busy".
    public var hashingQueue = 64

    public init() {}
}

/// The limits of ``WorkLimitSettings``, counted.
public struct WorkLimits: Sendable {
    public enum Work: String, Sendable {
        case hashing, flow
    }

    /// Too much `work` from one address or client: try again in `retryAfter` seconds.
    public struct Exceeded: Error, Sendable, Equatable {
        public var work: Work
        public var retryAfter: Int64

        package init(work: Work, retryAfter: Int64) {
            self.work = work
            self.retryAfter = retryAfter
        }
    }

    let hashingPerAddress: RateLimiter
    let hashingPerClient: RateLimiter
    let flowsPerAddress: RateLimiter
    let flowsPerClient: RateLimiter

    public init(_ settings: WorkLimitSettings, store: any ThrottleStore) {
        hashingPerAddress = RateLimiter("hashing:address", limit: settings.hashingPerAddress, window: 60, store: store)
        hashingPerClient = RateLimiter("hashing:client", limit: settings.hashingPerClient, window: 60, store: store)
        flowsPerAddress = RateLimiter("flows:address", limit: settings.flowsPerAddress, window: 60, store: store)
        flowsPerClient = RateLimiter("flows:client", limit: settings.flowsPerClient, window: 60, store: store)
    }

    /// Counts one piece of `work` for the client address (its throttle key) and the client;
    /// throws ``Exceeded`` when either has had its share.
    public func admit(_ work: Work, address: String, client: String, now: Int64) async throws {
        let (perAddress, perClient) = switch work {
        case .hashing: (hashingPerAddress, hashingPerClient)
        case .flow: (flowsPerAddress, flowsPerClient)
        }
        var wait = try await perAddress.take(address, now: now)
        if wait == nil { wait = try await perClient.take(client, now: now) }
        if let wait {
            Signals.throttled(work.rawValue)
            throw Exceeded(work: work, retryAfter: wait)
        }
    }
}
