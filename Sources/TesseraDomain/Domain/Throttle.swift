import Synchronization

/// Counts failures per key (an account, a client address) in a sliding window and says
/// when a key has had too many. Kept in memory on each node.
public final class FailureThrottle: Sendable {
    let limit: Int
    let window: Int64
    private let failures = Mutex<[String: [Int64]]>([:])

    public init(limit: Int, window: Int64) {
        self.limit = limit
        self.window = window
    }

    public func isBlocked(_ key: String, now: Int64) -> Bool {
        failures.withLock { table in
            let recent = (table[key] ?? []).filter { $0 > now - window }
            table[key] = recent.isEmpty ? nil : recent
            return recent.count >= limit
        }
    }

    public func recordFailure(_ key: String, now: Int64) {
        failures.withLock { table in
            if table.count > 100_000 { table = table.filter { $0.value.contains { $0 > now - window } } }
            table[key, default: []].append(now)
        }
    }

    public func reset(_ key: String) {
        _ = failures.withLock { $0.removeValue(forKey: key) }
    }
}

/// Allows `limit` events per key in any `window` seconds on average, in bursts of up to
/// `limit` (a token bucket per key, refilled continuously). Kept in memory on each node.
public final class RateLimiter: Sendable {
    let limit: Int
    let window: Int64
    private let buckets = Mutex<[String: Bucket]>([:])

    struct Bucket {
        var tokens: Double
        var updated: Int64
    }

    public init(limit: Int, window: Int64) {
        self.limit = limit
        self.window = window
    }

    var refillPerSecond: Double { Double(limit) / Double(max(1, window)) }

    /// Takes one event for `key`: nil when it is allowed, else the seconds until it would be.
    public func take(_ key: String, now: Int64) -> Int64? {
        guard limit > 0 else { return window }
        let rate = refillPerSecond
        return buckets.withLock { table in
            if table.count > 100_000 {
                // Full buckets are the same as no bucket: forget them.
                table = table.filter { Double(now - $0.value.updated) * rate + $0.value.tokens < Double(limit) }
            }
            var bucket = table[key] ?? Bucket(tokens: Double(limit), updated: now)
            bucket.tokens = min(Double(limit), bucket.tokens + Double(max(0, now - bucket.updated)) * rate)
            bucket.updated = now
            guard bucket.tokens >= 1 else {
                table[key] = bucket
                return max(1, Int64(((1 - bucket.tokens) / rate).rounded(.up)))
            }
            bucket.tokens -= 1
            table[key] = bucket
            return nil
        }
    }
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
public final class WorkLimits: Sendable {
    public enum Work: String, Sendable {
        case hashing, flow
    }

    /// Too much `work` from one address or client: try again in `retryAfter` seconds.
    public struct Exceeded: Error, Sendable, Equatable {
        public var work: Work
        public var retryAfter: Int64
    }

    let hashingPerAddress: RateLimiter
    let hashingPerClient: RateLimiter
    let flowsPerAddress: RateLimiter
    let flowsPerClient: RateLimiter

    public init(_ settings: WorkLimitSettings) {
        hashingPerAddress = RateLimiter(limit: settings.hashingPerAddress, window: 60)
        hashingPerClient = RateLimiter(limit: settings.hashingPerClient, window: 60)
        flowsPerAddress = RateLimiter(limit: settings.flowsPerAddress, window: 60)
        flowsPerClient = RateLimiter(limit: settings.flowsPerClient, window: 60)
    }

    /// Counts one piece of `work` for the client address (its throttle key) and the client;
    /// throws ``Exceeded`` when either has had its share.
    public func admit(_ work: Work, address: String, client: String, now: Int64) throws(Exceeded) {
        let (perAddress, perClient) = switch work {
        case .hashing: (hashingPerAddress, hashingPerClient)
        case .flow: (flowsPerAddress, flowsPerClient)
        }
        if let wait = perAddress.take(address, now: now) ?? perClient.take(client, now: now) {
            throw Exceeded(work: work, retryAfter: wait)
        }
    }
}
