/// Counters that limit guessing and work, kept in the database so that every node counts
/// together: a client that spreads its attempts over the nodes of a cluster gets no more.
/// Keys are opaque (``Throttles`` hashes them).
public protocol ThrottleStore: Sendable {
    /// How many failures each of `keys` has had at or after `since` (absent: none).
    func failureCounts(_ keys: [String], since: Int64) async throws -> [String: Int]
    /// Counts one failure for each of `keys`, at `now`.
    func recordFailures(_ keys: [String], now: Int64) async throws
    /// Forgets the failures of `key`.
    func clearFailures(_ key: String) async throws
    /// Takes one token from `key`'s bucket, which holds `limit` and refills at `limit` per
    /// `window` seconds: nil when there was one, else the seconds until there will be.
    func takeToken(_ key: String, limit: Int, window: Int64, now: Int64) async throws -> Int64?
}
