import Logging
import NIOPosix
import SQLiteKit
import TesseraSQLite

/// Copies SQLite's write-ahead log back into the database file from a connection and a thread
/// of its own, so that no request waits for it.
///
/// Left to itself, SQLite checkpoints in the connection whose commit takes the log past 1,000
/// pages: every hundred-odd refreshes, one of them also wrote a thousand pages into the database
/// file and waited for its `fsync`, holding the server's only connection — the p99 of every
/// writing load, and most of the stall a purge of millions of rows caused. The copying is now
/// this connection's: it runs a `PASSIVE` checkpoint, which takes no lock a writer waits for,
/// every ``busyInterval`` while the log has pages to copy and every ``idleInterval`` otherwise.
///
/// The log starts again from its beginning only at a write that finds all of it copied, which a
/// steady stream of writes never does: a `PASSIVE` round is always a few commits behind (a
/// first version let the log grow to 4.7 GB during a purge). So the server's connection keeps
/// SQLite's own checkpoint as a backstop, at `restartPages` (64 MB) instead of 1,000 pages:
/// when a commit takes the log there, that connection copies what this one hasn't yet (a few
/// pages) and the next write starts the log over. (A `RESTART` checkpoint from this connection
/// did the same, but holding the server's writes back made them sleep in SQLite's busy handler:
/// a refresh p99 of 49 ms on the 10 M-grant database.) At close the whole log is copied and
/// truncated.
final class WALCheckpointer: Sendable {
    static let busyInterval = Duration.milliseconds(100)
    static let idleInterval = Duration.seconds(1)
    /// Pages in the log (64 MB of 4 KB pages) at which the server's connection checkpoints the
    /// rest itself, so that the log starts over.
    static let restartPages: Int64 = 16_384

    private let handle: SQLiteHandle
    private let pool: NIOThreadPool
    private let loop: Task<Void, Never>

    init(path: String, logger: Logger) throws {
        let handle = try SQLiteHandle(path: path)
        try handle.execute("PRAGMA busy_timeout = 10000", []) { _, _ in }
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        self.handle = handle
        self.pool = pool
        loop = Task {
            var previous: (log: Int64, copied: Int64)?, failing = false
            while !Task.isCancelled {
                var busy = false
                do {
                    let now = try await pool.runIfActive { try Self.checkpoint(handle, mode: "PASSIVE") }
                    // Busy while the log has pages not yet copied, or grew since the last round.
                    busy = now.copied < now.log || previous.map { $0 != now } ?? true
                    previous = now
                    failing = false
                } catch {
                    // Logged once per run of failures; the next round tries again.
                    if !failing { logger.warning("checkpoint failed", metadata: ["error": "\(error)"]) }
                    failing = true
                }
                try? await Task.sleep(for: busy ? Self.busyInterval : Self.idleInterval)
            }
        }
    }

    /// Runs a checkpoint: the pages in the log, and how many of them are now in the database file.
    private static func checkpoint(_ handle: SQLiteHandle, mode: String) throws -> (log: Int64, copied: Int64) {
        var result: (log: Int64, copied: Int64) = (0, 0)
        try handle.execute("PRAGMA wal_checkpoint(\(mode))", []) { _, values in
            // busy, pages in the log, pages copied (-1 and -1 when not in WAL mode).
            if values.count == 3, case .integer(let log) = values[1], case .integer(let copied) = values[2] {
                result = (Int64(log), Int64(copied))
            }
        }
        return result
    }

    /// Stops the loop, copies the whole log into the database file and empties it.
    func stop() async {
        loop.cancel()
        await loop.value
        _ = try? await pool.runIfActive { [handle] in try Self.checkpoint(handle, mode: "TRUNCATE") }
        handle.close()
        try? await pool.shutdownGracefully()
    }
}
