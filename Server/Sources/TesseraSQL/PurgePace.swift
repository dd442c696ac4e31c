#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// How long the purge rests after each batch: the busier the node, the longer.
///
/// What a request loses to the purge is CPU (the deletes, their pages in the log and copied into
/// the file), not the connection. On the 10 M-grant database, under a refresh load that kept both
/// cores busy, the load's p99 rose by 20–31 % when the purge took a tenth of the database's time,
/// by 6–19 % with a twentieth and by 0–5 % with a fortieth (docs/performance.md, issue 30's
/// twentieth and twenty-second sessions). A node with nothing else to do has no one to slow down:
/// there the purge takes a tenth, twice its old fixed pace.
///
/// How busy the node is: the CPU its process used in the last ``window`` beside the purge's own
/// batches, as a share of its cores. Until a window has passed the purge rests as on a busy node.
package struct PurgePace {
    /// The rest after a batch, in batches' times, on an idle node: the purge takes a tenth of the time.
    package static let idleRest = 9.0
    /// The rest on a busy node: a fortieth.
    package static let busyRest = 39.0
    /// The share of the node's cores used beside the purge from which it rests ``busyRest``; the
    /// rest grows in proportion up to there.
    package static let busyShare = 0.5
    /// How much time a measurement of the node's CPU spans (a batch and its rest are 10–40 ms:
    /// one alone would follow every burst of requests).
    package static let window = Duration.milliseconds(250)

    /// The rest after a batch that took `took`, on a node whose process used `busy` of its cores beside the purge.
    package static func rest(after took: Duration, busy: Double) -> Duration {
        let share = min(max(busy, 0) / busyShare, 1)
        return max(took * (idleRest + (busyRest - idleRest) * share), .milliseconds(2))
    }

    private let cores: Int
    private var windowStart: (cpu: Duration, at: ContinuousClock.Instant)
    /// The purge's own time since the window started, which is not the node's load.
    private var own = Duration.zero
    /// The last window's share; as busy as can be until there is one.
    package private(set) var busy = 1.0

    package init(cores: Int = System.coreCount) {
        self.cores = max(cores, 1)
        windowStart = (Self.processCPUTime(), .now)
    }

    /// The rest after a batch that took `took` (counted as the purge's own time, with `readAhead`,
    /// the time it read the batch's pages beforehand).
    package mutating func rest(after took: Duration, readAhead: Duration = .zero) -> Duration {
        own += took + readAhead
        let now = ContinuousClock.now
        let elapsed = now - windowStart.at
        if elapsed >= Self.window {
            let cpu = Self.processCPUTime()
            let used = cpu - windowStart.cpu - own
            busy = max(used / elapsed, 0) / Double(cores)
            windowStart = (cpu, now)
            own = .zero
        }
        return Self.rest(after: took, busy: busy)
    }

    /// The CPU time every thread of this process has used.
    package static func processCPUTime() -> Duration {
        var time = timespec()
        guard clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time) == 0 else { return .zero }
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}
