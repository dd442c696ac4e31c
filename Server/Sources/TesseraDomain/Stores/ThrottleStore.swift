/// Counters that limit guessing and work, kept in the database so that every node counts
/// together: a client that spreads its attempts over the nodes of a cluster gets no more.
/// Keys are opaque (``Throttles`` hashes them).
public protocol ThrottleStore: Sendable {
    /// Counts one failure for each of `keys` at `now`, under `attempt`, in one conditional
    /// write: only when every key has had fewer than its `limit` failures at or after `since`.
    /// False (and nothing counted) when one has had its limit. Concurrent calls on any node
    /// are serialised per key, so N of them never count past a limit.
    func reserveFailures(_ keys: [(key: String, limit: Int)], since: Int64, now: Int64, attempt: String) async throws -> Bool
    /// Takes back the failures counted under `attempt` (it succeeded).
    func forgetFailures(attempt: String) async throws
    /// Forgets the failures of `key`.
    func clearFailures(_ key: String) async throws
    /// Takes one token from `key`'s bucket, which holds `limit` and refills at `limit` per
    /// `window` seconds: nil when there was one, else the seconds until there will be.
    func takeToken(_ key: String, limit: Int, window: Int64, now: Int64) async throws -> Int64?
}
