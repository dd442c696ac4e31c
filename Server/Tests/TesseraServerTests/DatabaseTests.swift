import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraSQL
import TesseraSQLite
import TesseraTestSupport

@Suite("SQLite file database")
struct SQLiteFileTests {
    @Test("the database file is created private, in WAL mode, and keeps data across opens")
    func persistence() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("data/t.sqlite").path
        try await withProvider(configure: { $0.database = .sqliteFile(path) }) { provider async throws in
            _ = try await provider.createUser(email: "bob@example.com", password: nil, name: nil)
            let mode = try await provider.store.database.withDatabase { db in
                try await db.raw("PRAGMA journal_mode").first()?.decode(column: "journal_mode", as: String.self)
            }
            #expect(mode == "wal")
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        try await withProvider(configure: { $0.database = .sqliteFile(path) }) { provider async throws in
            #expect(try await provider.store.user(email: "bob@example.com") != nil)
        }
    }

    @Test("values round-trip with their SQLite types; prepared statements are reused with new binds")
    func valuesRoundTrip() async throws {
        let database = try await SQLiteDatabase.open(.sqliteMemory, logger: Logger(label: "test"))
        defer { Task { try? await database.close() } }
        let rows = try await database.withDatabase { db in
            try await db.raw("CREATE TABLE t (i INTEGER, f REAL, s TEXT, b BLOB, n TEXT)").run()
            for i in 0..<3 {
                try await db.raw("""
                    INSERT INTO t VALUES (\(bind: Int64(i) * 10_000_000_000), \(bind: Double(i) + 0.5), \(bind: "ж\u{0}\(i)"),
                        \(bind: Data([0, UInt8(i), 255])), \(bind: String?.none))
                    """).run()
            }
            return try await db.raw("SELECT * FROM t ORDER BY i").all()
        }
        #expect(rows.count == 3)
        let last = try #require(rows.last)
        #expect(last.allColumns == ["i", "f", "s", "b", "n"])
        #expect(try last.decode(column: "i", as: Int64.self) == 20_000_000_000)
        #expect(try last.decode(column: "f", as: Double.self) == 2.5)
        #expect(try last.decode(column: "s", as: String.self) == "ж\u{0}2")
        #expect(try last.decode(column: "b", as: Data.self) == Data([0, 2, 255]))
        #expect(try last.decodeNil(column: "n"))
        #expect(try last.decode(column: "n", as: String?.self) == nil)
        #expect(throws: DecodingError.self) { try last.decode(column: "missing", as: String.self) }
    }

    @Test("a uniqueness violation is recognised (with SQLite's message), and a failed transaction leaves nothing behind",
          arguments: TestBackend.available)
    func errors(on backend: TestBackend) async throws {
        let database = try await backend.open()
        defer { Task { try? await database.close() } }
        try await database.withDatabase { db in try await db.raw("CREATE TABLE u (k TEXT PRIMARY KEY)").run() }
        try await database.withDatabase { db in try await db.raw("INSERT INTO u VALUES ('a')").run() }
        do {
            try await database.transaction { db in
                try await db.raw("INSERT INTO u VALUES ('b')").run()
                try await db.raw("INSERT INTO u VALUES ('a')").run()
            }
            Issue.record("a duplicate key was accepted")
        } catch {
            #expect(isUniqueViolation(error))
            if backend == .sqlite { #expect("\(error)".contains("UNIQUE constraint failed: u.k")) }
        }
        let keys = try await database.withDatabase { db in
            try await db.raw("SELECT k FROM u").all().map { try $0.decode(column: "k", as: String.self) }
        }
        #expect(keys == ["a"])
        guard backend == .sqlite else { return }
        await #expect(throws: SQLiteFailure.self) {
            try await database.withDatabase { db in try await db.raw("SELEKT 1").run() }
        }
        try await database.close()
        await #expect(throws: SQLiteFailure.self) {
            try await database.withDatabase { db in try await db.raw("SELECT 1").run() }
        }
    }

    // SQLite in memory is one process's own database: the race is PostgreSQL's.
    @Test("nodes starting together migrate once and agree on every generated secret",
          .enabled(if: TestBackend.available.contains(.postgres), "needs TESSERA_TEST_POSTGRES"))
    func concurrentStarts() async throws {
        let location = try await TestBackend.postgres.freshLocation()
        let databases = try await withThrowingTaskGroup(of: (any TransactionalDatabase).self) { group in
            for _ in 0..<6 { group.addTask { try await openDatabase(location, poolSize: 2, logger: Logger(label: "node")) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let secrets = try await withThrowingTaskGroup(of: String.self) { group in
            for database in databases {
                group.addTask {
                    let store = SQLStore(database: database)
                    try await store.migrate()
                    return try await store.setting("test_secret") { SecureRandom.token() }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(secrets).count == 1)
        let versions = try await databases[0].withDatabase { db in try await db.raw("SELECT version FROM schema_migrations").all().count }
        #expect(versions == Migrations.all.count)
        for database in databases { try await database.close() }
    }

    @Test("PostgreSQL over TLS: each sslmode does what libpq's does",
          .enabled(if: ProcessInfo.processInfo.environment["TESSERA_TEST_POSTGRES_CA"] != nil, "needs TESSERA_TEST_POSTGRES_CA"))
    func postgresTLS() async throws {
        let environment = ProcessInfo.processInfo.environment
        let base = try PostgresLocation(parsing: try #require(environment["TESSERA_TEST_POSTGRES"]))
        let ca = try #require(environment["TESSERA_TEST_POSTGRES_CA"])
        func encrypted(_ query: String, host: String) async throws -> Bool {
            var location = try PostgresLocation(parsing: "postgres://u@h/d?" + query)
            location.host = host
            location.port = base.port
            location.user = base.user
            location.password = base.password
            location.database = base.database
            let database = try await PostgresDatabase.open(location, poolSize: 1, waitLimit: .seconds(60), logger: Logger(label: "test"))
            defer { Task { try? await database.close() } }
            return try await database.withDatabase { db in
                try await db.raw("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").first()?.decode(column: "ssl", as: Bool.self) ?? false
            }
        }
        #expect(try await encrypted("sslmode=verify-full&sslrootcert=\(ca)", host: "localhost"))
        #expect(try await encrypted("sslmode=verify-ca&sslrootcert=\(ca)", host: "127.0.0.1"), "verify-ca checks the chain, not the name")
        #expect(try await encrypted("sslmode=require", host: "127.0.0.1"))
        #expect(try await encrypted("sslmode=prefer", host: "127.0.0.1"))
        #expect(try await !encrypted("sslmode=disable", host: "127.0.0.1"))
        await #expect(throws: DatabaseUnavailable.self, "the certificate does not name 127.0.0.1") {
            _ = try await encrypted("sslmode=verify-full&sslrootcert=\(ca)", host: "127.0.0.1")
        }
        await #expect(throws: DatabaseUnavailable.self, "a certificate no trusted root signed") {
            _ = try await encrypted("sslmode=verify-full", host: "localhost")
        }
    }

    @Test("PostgreSQL: a wrong password or port is told at start, without the password",
          .enabled(if: TestBackend.available.contains(.postgres), "needs TESSERA_TEST_POSTGRES"))
    func postgresUnavailable() async throws {
        let url = try #require(ProcessInfo.processInfo.environment["TESSERA_TEST_POSTGRES"])
        var wrong = try PostgresLocation(parsing: url)
        wrong.password = "not-the-password"
        do {
            _ = try await PostgresDatabase.open(wrong, poolSize: 1, logger: Logger(label: "test"))
            Issue.record("a wrong password was accepted")
        } catch let error as DatabaseUnavailable {
            #expect(error.description.contains("password authentication failed"))
            #expect(!error.description.contains("not-the-password"))
        }
        var closed = try PostgresLocation(parsing: url)
        closed.port = 1
        await #expect(throws: DatabaseUnavailable.self) {
            _ = try await PostgresDatabase.open(closed, poolSize: 1, logger: Logger(label: "test"))
        }
    }

    @Test("PostgreSQL: no connection within the wait limit fails at once, and the work is never done later",
          .enabled(if: TestBackend.available.contains(.postgres), "needs TESSERA_TEST_POSTGRES"))
    func postgresWaitLimit() async throws {
        let location = try PostgresLocation(parsing: try #require(ProcessInfo.processInfo.environment["TESSERA_TEST_POSTGRES"]))
        let database = try await PostgresDatabase.open(location, poolSize: 1, waitLimit: .seconds(2), logger: Logger(label: "test"))
        // The pool makes its one connection (a debug build's SCRAM can take seconds on a loaded machine).
        for attempt in 1... {
            do {
                try await database.withDatabase { db in try await db.raw("SELECT 1").run() }
                break
            } catch is DatabaseUnavailable where attempt < 10 {}
        }
        // Which is then busy for 6 s.
        let (held, holding) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await database.withDatabase { db in
                holding.yield()
                try await db.raw("SELECT pg_sleep(6)").run()
            }
        }
        var leased = held.makeAsyncIterator()
        _ = await leased.next()
        let ran = SetOnce()
        let started = ContinuousClock.now
        await #expect(throws: DatabaseUnavailable.self) {
            try await database.transaction { _ in await ran.set() }
        }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(1900) && waited < .seconds(5), "answered at the limit, not when the connection came")
        try await holder.value
        // The connection is free again: the abandoned transaction did not run on it afterwards.
        try await database.withDatabase { db in try await db.raw("SELECT 1").run() }
        #expect(await !ran.isSet)
        try await database.close()
    }

    @Test("the wait limit's sleep ends at its deadline, and when cancelled ends at once with CancellationError, as Task.sleep does")
    func waitLimitSleep() async throws {
        let started = ContinuousClock.now
        try await PostgresDatabase.sleep(for: .milliseconds(50))
        #expect(ContinuousClock.now - started >= .milliseconds(45))
        let sleeper = Task { try await PostgresDatabase.sleep(for: .seconds(60)) }
        sleeper.cancel()
        let cancelled = ContinuousClock.now
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(ContinuousClock.now - cancelled < .seconds(10))
    }

    @Test("PostgreSQL: a connection cut under a statement is DatabaseUnavailable, with the SQLSTATE and PostgreSQL's message",
          .enabled(if: TestBackend.available.contains(.postgres), "needs TESSERA_TEST_POSTGRES"))
    func postgresConnectionCut() async throws {
        let location = try PostgresLocation(parsing: try #require(ProcessInfo.processInfo.environment["TESSERA_TEST_POSTGRES"]))
        let database = try await PostgresDatabase.open(location, poolSize: 2, waitLimit: .seconds(60), logger: Logger(label: "test"))
        do {
            // What every connection gets from `pg_ctl restart -m fast`.
            try await database.transaction { db in try await db.raw("SELECT pg_terminate_backend(pg_backend_pid())").run() }
            Issue.record("the terminated connection's transaction succeeded")
        } catch let error as DatabaseUnavailable {
            #expect(error.reason.contains("57P01") && error.reason.contains("terminating connection due to administrator command"),
                    "\(error.reason)")
            #expect(!error.description.contains(location.password ?? "-"))
        }
        // Another statement error stays what it is, and says PostgreSQL's words.
        do {
            try await database.withDatabase { db in try await db.raw("SELECT * FROM no_such_table").run() }
            Issue.record("a query of a missing table succeeded")
        } catch let error as PostgresFailure {
            #expect(error.sqlState == "42P01" && error.description.contains("no_such_table"), "\(error)")
        }
        // The pool goes on with a new connection.
        try await database.withDatabase { db in try await db.raw("SELECT 1").run() }
        try await database.close()
    }

    @Test("PostgreSQL: a request's statements run on connections of its own event loop, however the pool is shared out",
          .enabled(if: TestBackend.available.contains(.postgres), "needs TESSERA_TEST_POSTGRES"))
    func postgresConnectionsOnTheCallersLoop() async throws {
        let location = try PostgresLocation(parsing: try #require(ProcessInfo.processInfo.environment["TESSERA_TEST_POSTGRES"]))
        let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
        for poolSize in Set([1, loops.count, 2 * loops.count + 1]) {
            let database = try await PostgresDatabase.open(location, poolSize: poolSize, waitLimit: .seconds(60), logger: Logger(label: "test"))
            let pools = min(loops.count, poolSize)
            for (index, loop) in loops.enumerated() {
                // A loop beyond the pool size uses an earlier loop's pool (a pool of one: the first's).
                let expected = loops[index % pools]
                for _ in 0..<3 {
                    let used = try await withTaskExecutorPreference(EventLoopTaskExecutor(loop)) {
                        try await database.withDatabase { db in
                            try await db.raw("SELECT 1").run()
                            return db.eventLoop
                        }
                    }
                    #expect(used === expected, "pool size \(poolSize): loop \(index)'s statement ran on another loop's connection")
                }
            }
            // From no loop (the CLI's tasks), the pools in turn: every one of them answers.
            var seen: [any EventLoop] = []
            for _ in 0..<(2 * pools) {
                let used = try await database.withDatabase { db in
                    try await db.raw("SELECT 1").run()
                    return db.eventLoop
                }
                if !seen.contains(where: { $0 === used }) { seen.append(used) }
            }
            #expect(seen.count == pools, "pool size \(poolSize): \(seen.count) of \(pools) pools used from outside the loops")
            try await database.close()
        }
    }

    /// `other` (standing for the admin CLI's connection) inserts `value` into `c` and holds the
    /// write lock for `duration`: once this returns it holds it; the task ends when it lets go.
    static func holdWriteLock(_ other: SQLiteDatabase, inserting value: Int, for duration: Duration) async -> Task<Void, any Error> {
        let (holding, signal) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await other.transaction { db in
                try await db.raw("INSERT INTO c VALUES (\(bind: value))").run()
                signal.yield()
                try await Task.sleep(for: duration)
            }
        }
        for await _ in holding { break }
        return holder
    }

    @Test("a write waits for another process's transaction (the admin CLI) instead of failing")
    func busyTimeout() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("busy.sqlite").path
        let server = try await SQLiteDatabase.open(.sqliteFile(path), logger: Logger(label: "server"))
        let cli = try await SQLiteDatabase.open(.sqliteFile(path), logger: Logger(label: "cli"))
        try await server.withDatabase { db in try await db.raw("CREATE TABLE c (v INTEGER)").run() }
        // The other connection holds the write lock for a while.
        let holder = await Self.holdWriteLock(cli, inserting: 1, for: .milliseconds(300))
        try await server.transaction { db in try await db.raw("INSERT INTO c VALUES (2)").run() }
        try await holder.value
        let values = try await server.withDatabase { db in
            try await db.raw("SELECT v FROM c ORDER BY rowid").all().map { try $0.decode(column: "v", as: Int.self) }
        }
        #expect(values == [1, 2])
        try await cli.close()
        try await server.close()
    }

    @Test("a transaction here runs on the calling thread; while another process holds the write lock it runs nothing and answers nil at once, and a transaction still waits")
    func transactionHere() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("here.sqlite").path
        let server = try await SQLiteDatabase.open(.sqliteFile(path), logger: Logger(label: "server"))
        let cli = try await SQLiteDatabase.open(.sqliteFile(path), logger: Logger(label: "cli"))
        try await server.withDatabase { db in try await db.raw("CREATE TABLE c (v INTEGER)").run() }
        @Sendable func thread() -> String { (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "" }
        // Not on the database's thread (NIO's `TP-#…`), as a transaction is.
        #expect(try await server.transaction { _ in thread() }.hasPrefix("TP-"))
        let here = try await server.transactionHere { db in
            try await db.raw("INSERT INTO c VALUES (0)").run()
            return thread()
        }
        #expect(here.map { !$0.hasPrefix("TP-") } == true)
        // A failing body rolls back, as in a transaction.
        await #expect(throws: SQLiteFailure.self) {
            try await server.transactionHere { db in
                try await db.raw("INSERT INTO c VALUES (9)").run()
                try await db.raw("INSERT INTO nowhere VALUES (1)").run()
            }
        }
        let holder = await Self.holdWriteLock(cli, inserting: 1, for: .milliseconds(400))
        let started = ContinuousClock.now
        // Nil: the body never ran (had it, its `()` would be the answer).
        let refused: Void? = try await server.transactionHere { db in try await db.raw("INSERT INTO c VALUES (8)").run() }
        #expect(refused == nil)
        #expect(ContinuousClock.now - started < .milliseconds(200))
        // SQLite's busy timeout is back: this one waits for the other process instead of failing.
        try await server.transaction { db in try await db.raw("INSERT INTO c VALUES (2)").run() }
        try await holder.value
        let values = try await server.withDatabase { db in
            try await db.raw("SELECT v FROM c ORDER BY rowid").all().map { try $0.decode(column: "v", as: Int.self) }
        }
        #expect(values == [0, 1, 2])
        try await cli.close()
        try await server.close()
    }

    @Test("the server's connection checkpoints only at 64 MB: a connection of its own copies the log soon after, and empties it at close")
    func checkpointsOffTheConnection() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("wal.sqlite").path
        let database = try await SQLiteDatabase.open(.sqliteFile(path), logger: Logger(label: "test"))
        let autocheckpoint = try await database.withDatabase { db in
            try await db.raw("PRAGMA wal_autocheckpoint").first()?.decode(column: "wal_autocheckpoint", as: Int.self)
        }
        #expect(autocheckpoint == 16_384, "the server's connection checkpoints only as a backstop, at 64 MB")
        // 2,000 pages in the log: SQLite's default would have checkpointed in the server's connection at 1,000.
        try await database.withDatabase { db in try await db.raw("CREATE TABLE pages (v BLOB)").run() }
        for _ in 0..<20 {
            try await database.transaction { db in
                for _ in 0..<100 { try await db.raw("INSERT INTO pages VALUES (randomblob(4000))").run() }
            }
        }
        // The database file grows only when a checkpoint copies pages into it.
        func fileSize(_ file: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int) ?? 0 }
        var copied = false
        for _ in 0..<40 where !copied {
            try await Task.sleep(for: .milliseconds(100))
            copied = fileSize(path) > 2000 * 4000
        }
        #expect(copied, "the checkpointer copied the log into the database file within 4 s")
        try await database.close()
        #expect(fileSize(path + "-wal") == 0, "the log is emptied (or gone) at close")
        let reopened = try await SQLiteDatabase.open(.sqliteFile(path), logger: Logger(label: "test"))
        let rows = try await reopened.withDatabase { db in try await db.raw("SELECT count(*) AS n FROM pages").first()?.decode(column: "n", as: Int.self) }
        #expect(rows == 2000)
        try await reopened.close()
    }

    @Test("under writes that never pause, the log is restarted once it holds the restart size: it doesn't grow without end")
    func logRestartsUnderSteadyWrites() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("steady.sqlite").path
        // Restart from 256 pages (1 MB): the checkpointer ends the cycles from 128.
        let database = try await SQLiteDatabase.open(.sqliteFile(path), checkpointRestartPages: 256, logger: Logger(label: "test"))
        let largest = try await Self.largestLog(to: database, at: path)
        // Without restarts the log would hold all 48 MB; with them, what is written between two rounds.
        #expect(largest < 16_000_000, "the log reached \(largest) bytes")
        try await database.close()
    }

    @Test("reads ahead one after another, as a purge's from a cold cache, don't keep the log from starting over")
    func readsAheadLetTheLogStartOver() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("reads.sqlite").path
        // As in checkpointerEndsCycles: only the checkpointer's cycle ends (from 1 MB) restart the log.
        let database = try await SQLiteDatabase.open(.sqliteFile(path), checkpointRestartPages: 1 << 20, cycleEndPages: 256,
                                                     logger: Logger(label: "test"))
        // Reads of some milliseconds each, back to back: each holds a snapshot of the log while it runs.
        let reading = Task {
            while !Task.isCancelled {
                try? await database.readAhead("""
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
                    SELECT count(*) FROM n, (SELECT count(*) FROM sqlite_master)
                    """)
            }
        }
        let largest = try await Self.largestLog(writing: 96, to: database, at: path)
        reading.cancel()
        await reading.value
        // A cycle's end waits for the read under way and keeps the next one out; without that, the
        // reads keep the checkpoint behind and the log from starting over: it holds all 96 MB.
        #expect(largest < 64_000_000, "the log reached \(largest) bytes")
        try await database.close()
    }

    /// Writes `megabytes` (48 by default) in small transactions, a millisecond's pause every 20 (a
    /// busy server's refreshes, much faster), none waiting for the checkpoints; the largest the log grew.
    static func largestLog(writing megabytes: Int = 48, to database: SQLiteDatabase, at path: String) async throws -> Int {
        try await database.withDatabase { db in try await db.raw("CREATE TABLE pages (v BLOB)").run() }
        var largest = 0
        for round in 0..<megabytes * 25 {
            try await database.transaction { db in
                for _ in 0..<10 { try await db.raw("INSERT INTO pages VALUES (randomblob(4000))").run() }
            }
            largest = max(largest, ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int) ?? 0)
            if round % 20 == 19 { try await Task.sleep(for: .milliseconds(1)) }
        }
        return largest
    }

    @Test("the checkpointer ends the log's cycles itself: with SQLite's backstop out of reach, the log still starts over")
    func checkpointerEndsCycles() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("cycles.sqlite").path
        // The server's connection would checkpoint only at 4 GB; the checkpointer ends a cycle
        // from 256 pages (1 MB).
        let database = try await SQLiteDatabase.open(.sqliteFile(path), checkpointRestartPages: 1 << 20, cycleEndPages: 256,
                                                     logger: Logger(label: "test"))
        let largest = try await Self.largestLog(writing: 96, to: database, at: path)
        // A cycle ends at most once a round (100 ms): how far the log gets past 1 MB depends on how
        // fast the writes go meanwhile (27–44 MB under parallel tests). Without the cycles' ends
        // it holds all 96 MB: 122 MB.
        #expect(largest < 64_000_000, "the log reached \(largest) bytes")
        let rows = try await database.withDatabase { db in try await db.raw("SELECT count(*) AS n FROM pages").first()?.decode(column: "n", as: Int.self) }
        #expect(rows == 24_000, "every write is there")
        try await database.close()
    }
}

/// Set once, read from any task.
actor SetOnce {
    private(set) var isSet = false
    func set() { isSet = true }
}

@Suite("Readiness")
struct ReadinessTests {
    @Test("ready while the database answers with the current schema; the reason when it does not", arguments: TestBackend.available)
    func readiness(on backend: TestBackend) async throws {
        try await withProvider(on: backend) { provider async throws in
            #expect(await provider.unreadiness() == nil)
            try await provider.store.database.close()
            let reason = try #require(await provider.unreadiness())
            #expect(reason.hasPrefix("database: "), "\(reason)")
        }
    }
}
