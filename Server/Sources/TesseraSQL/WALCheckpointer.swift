#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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
/// The log starts again from its beginning only at a write that finds all of it copied and the
/// copies on disk, which a steady stream of writes never gives a `PASSIVE` round: it is always a
/// few commits behind, and it syncs the log but never the database file (a first version let the
/// log grow to 4.7 GB during a purge). So once the log holds `cycleEndPages` (32 MB), a round
/// ends the log's cycle: it syncs the database file itself — the second's worth of copies, the
/// slow part (30–45 ms on the 10 M-grant database) — while the server goes on, and then, with
/// the server's connection held idle (`exclusively`, the connection's own lock: waiters wake as
/// soon as it is free), copies the few pages written meanwhile (2–5 ms). The whole log is then
/// in the database file and the server's next write starts it over.
///
/// The server's connection keeps SQLite's own checkpoint as a backstop at ``restartPages`` (64
/// MB), should a cycle's end fail. Had the backstop to end the cycles, the server's connection
/// would sync the copies itself: 42–48 ms every 1.8 s on that database, a refresh p99 of 31–37 ms
/// against 5.5–6 ms now. (A `RESTART` checkpoint from this connection held the server's writes
/// back through SQLite's busy handler, which sleeps in steps of milliseconds: a p99 of 49 ms.)
/// At close the whole log is copied and truncated.
final class WALCheckpointer: Sendable {
    /// The pages in the log, and how many of them are in the database file.
    typealias Progress = (log: Int64, copied: Int64)

    static let busyInterval = Duration.milliseconds(100)
    static let idleInterval = Duration.seconds(1)
    /// Pages in the log (64 MB of 4 KB pages) at which the server's connection checkpoints the
    /// rest itself, so that the log starts over: the backstop.
    static let restartPages: Int64 = 16_384

    private let handle: SQLiteHandle
    /// The database file, opened to sync the copies at a cycle's end (-1 if it couldn't be: the
    /// cycle's end then leaves the sync to SQLite's checkpoint, in the held section).
    private let file: Int32
    private let pool: NIOThreadPool
    private let loop: Task<Void, Never>

    /// - Parameters:
    ///   - cycleEndPages: the log's size, in pages, from which a round ends the log's cycle.
    ///   - exclusively: runs its body while the server's connection is idle and no read-ahead
    ///     reads, and keeps it so.
    init(path: String, cycleEndPages: Int64,
         exclusively: @escaping @Sendable (@Sendable () async throws -> Progress) async throws -> Progress, logger: Logger) throws {
        let handle = try SQLiteHandle(path: path)
        try handle.execute("PRAGMA busy_timeout = \(SQLiteDatabase.busyTimeout)", []) { _, _ in }
        let file = open(path, O_RDONLY | O_CLOEXEC)
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        self.handle = handle
        self.pool = pool
        self.file = file
        loop = Task {
            var previous: Progress?, failing = false
            while !Task.isCancelled {
                var busy = false
                do {
                    var now = try await pool.runIfActive { try Self.checkpoint(handle, mode: "PASSIVE") }
                    if now.log >= cycleEndPages {
                        if file >= 0 { try await pool.runIfActive { _ = fsync(file) } }
                        now = try await exclusively { try await pool.runIfActive { try Self.checkpoint(handle, mode: "PASSIVE") } }
                    }
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
    private static func checkpoint(_ handle: SQLiteHandle, mode: String) throws -> Progress {
        var result: Progress = (0, 0)
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
        if file >= 0 { close(file) }
        try? await pool.shutdownGracefully()
    }
}
