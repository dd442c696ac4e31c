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
