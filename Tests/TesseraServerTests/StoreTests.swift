import Foundation
import Logging
import Testing
import TesseraCore
@testable import TesseraServer
@testable import TesseraNode
@testable import TesseraDomain
@testable import TesseraSQL
import TesseraSQLite
import TesseraTestSupport

@Suite("SQL store")
struct StoreTests {
    func prepare(_ provider: Provider) async throws -> (Client, User) {
        let client = try await provider.addWebClient()
        let user = try await provider.createUser(email: "Alice@Example.com", password: "correct horse", name: "Alice")
        return (client, user)
    }

    func grant(_ user: User, id: String = SecureRandom.token(), now: Int64) -> Grant {
        Grant(id: id, clientID: "web", userID: user.id, scope: ScopeSet(parsing: "openid offline_access"), authTime: now,
              amr: ["pwd"], sid: "sid-1", createdAt: now, expiresAt: now + 3600)
    }

    func code(_ user: User, now: Int64) -> AuthorizationCodeRecord {
        AuthorizationCodeRecord(clientID: "web", userID: user.id, redirectURI: testRedirect, scope: ScopeSet(parsing: "openid"),
                                nonce: nil, codeChallenge: nil, authTime: now, amr: ["pwd"], sid: "sid-1", expiresAt: now + 60)
    }

    @Test("migrations run once and again without harm", arguments: TestBackend.available)
    func migrationsAreIdempotent(on backend: TestBackend) async throws {
        try await withProvider(on: backend) { provider async throws in
            try await provider.store.migrate()
            try await provider.store.migrate()
            let versions = try await provider.store.database.withDatabase { db in
                try await db.raw("SELECT version FROM schema_migrations").all().count
            }
            #expect(versions == Migrations.all.count)
        }
    }

    @Test("emails are unique regardless of case", arguments: TestBackend.available)
    func uniqueEmail(on backend: TestBackend) async throws {
        try await withProvider(on: backend) { provider async throws in
            _ = try await prepare(provider)
            await #expect(throws: StoreError.duplicate("a user with this email")) {
                _ = try await provider.createUser(email: "alice@example.COM", password: "another one", name: nil)
            }
            #expect(try await provider.store.user(email: "ALICE@example.com")?.name == "Alice")
        }
    }

    @Test("a change made with the version read wins once: of ten concurrent updates of a user or a client, one is written",
          arguments: TestBackend.available)
    func versionedUpdates(on backend: TestBackend) async throws {
        try await withProvider(on: backend) { provider async throws in
            let (client, user) = try await prepare(provider)
            let store = provider.store, version = user.version
            let written = try await withThrowingTaskGroup(of: Bool.self) { group in
                for n in 0..<10 {
                    group.addTask {
                        try await store.updateAccount(userID: user.id, profile: ["nickname": .string("n\(n)")], roles: [], now: 2000,
                                                      ifVersion: version)
                    }
                }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(written == 1)
            #expect(try await store.user(id: user.id)?.version == version + 1)
            var change = try #require(try await store.currentClient(id: client.id))
            change.name = "Renamed"
            let renamed = change, clientVersion = change.version
            let clientWrites = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<10 { group.addTask { try await store.update(renamed, ifVersion: clientVersion) } }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(clientWrites == 1)
            #expect(try await store.client(id: client.id)?.name == "Renamed")
            #expect(try await store.client(id: client.id)?.version == clientVersion + 1)
        }
    }

    @Test("a pushed request and a hand-off ticket are taken once of twenty concurrent takes; a device session ends once; revoking its grants leaves the others",
          arguments: TestBackend.available)
    func crossAppSingleUse(on backend: TestBackend) async throws {
        try await withProvider(on: backend) { provider async throws in
            let (client, user) = try await prepare(provider)
            let store = provider.store, now: Int64 = 1000
            try await store.insertPushedRequest(uriHash: "u", PushedRequest(clientID: client.id, request: "{}", createdAt: now,
                                                                            expiresAt: now + 90))
            try await store.insertHandoffTicket(hash: "t", HandoffTicket(clientID: client.id, userID: user.id, issuedBy: "bank",
                                                                         authTime: now, amr: ["pwd"], expiresAt: now + 60), now: now)
            #expect(try await store.pushedRequest(uriHash: "u", now: now + 90) == nil)  // expired at its end
            let (requests, tickets) = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        (try await store.takePushedRequest(uriHash: "u", now: now) == nil ? 0 : 1,
                         try await store.takeHandoffTicket(hash: "t", now: now) == nil ? 0 : 1)
                    }
                }
                return try await group.reduce(into: (0, 0)) { $0.0 += $1.0; $0.1 += $1.1 }
            }
            #expect(requests == 1 && tickets == 1)
            #expect(try await store.pushedRequest(uriHash: "u", now: now) == nil)
            #expect(try await store.handoffTicket(hash: "t", now: now) == nil)

            var session = DeviceSession(id: "ds-1", userID: user.id, group: "acme", authTime: now, amr: ["pwd"], createdAt: now,
                                        expiresAt: now + 3600)
            session.dsHash = "half"
            try await store.insertDeviceSession(secretHash: "secret-hash", session)
            #expect(try await store.deviceSession(secretHash: "secret-hash", now: now)?.dsHash == "half")
            var joined = grant(user, now: now), outside = grant(user, now: now)
            joined.deviceSessionID = "ds-1"
            try await store.insertGrant(joined, refreshToken: nil)
            try await store.insertGrant(outside, refreshToken: nil)
            #expect(try await store.grant(id: joined.id)?.deviceSessionID == "ds-1")
            #expect(try await store.endDeviceSession(id: "ds-1", now: now + 5))
            #expect(try await store.endDeviceSession(id: "ds-1", now: now + 6) == false)
            try await store.revokeGrants(deviceSessionID: "ds-1", now: now + 5)
            #expect(try await store.grant(id: joined.id)?.revokedAt == now + 5)
            #expect(try await store.grant(id: outside.id)?.revokedAt == nil)
            #expect(try await store.deviceSession(secretHash: "secret-hash", now: now) == nil)
            #expect(try await store.deviceSession(id: "ds-1", now: now) == nil)
        }
    }

    @Test("users are searched by address, profile value or id, literally, and paged by address", arguments: TestBackend.available)
    func userSearch(on backend: TestBackend) async throws {
        try await withProvider(on: backend) { provider async throws in
            let store = provider.store
            for (email, name) in [("b@example.com", "Boris 100%"), ("a@example.com", "Anna Pavlova"), ("c@example.com", "Carl_X")] {
                _ = try await provider.createUser(email: email, password: nil, name: name)
            }
            #expect(try await store.users(matching: nil, after: nil, limit: 10).map(\.email) == ["a@example.com", "b@example.com", "c@example.com"])
            #expect(try await store.users(matching: nil, after: "a@example.com", limit: 1).map(\.email) == ["b@example.com"])
            #expect(try await store.users(matching: "PAVLOVA", after: nil, limit: 10).map(\.email) == ["a@example.com"])
            #expect(try await store.users(matching: "100%", after: nil, limit: 10).map(\.email) == ["b@example.com"])
            #expect(try await store.users(matching: "%", after: nil, limit: 10).map(\.email) == ["b@example.com"])
            #expect(try await store.users(matching: "_", after: nil, limit: 10).map(\.email) == ["c@example.com"])
            let anna = try #require(try await store.user(email: "a@example.com"))
            #expect(try await store.users(matching: anna.id, after: nil, limit: 10).map(\.email) == ["a@example.com"])
            #expect(try await store.users(matching: "nobody", after: nil, limit: 10).isEmpty)
        }
    }

    @Test("an upstream identity links to one account: of ten accounts linking it at once one wins, its owner relinks it, the others are told",
          arguments: TestBackend.available)
    func identityLinksOnce(on backend: TestBackend) async throws {
        try await withProvider(on: backend) { provider async throws in
            let store = provider.store
            var users: [User] = []
            for n in 0..<10 { users.append(try await provider.createUser(email: "u\(n)@example.com", password: nil, name: nil)) }
            let candidates = users
            let winners = try await withThrowingTaskGroup(of: String?.self) { group in
                for user in candidates {
                    group.addTask {
                        try await store.link(UpstreamIdentity(providerID: "corp", subject: "s1", userID: user.id, email: user.email,
                                                              proven: false, createdAt: 1, lastUsedAt: 1)) == .linked ? user.id : nil
                    }
                }
                return try await group.reduce(into: [String]()) { if let id = $1 { $0.append(id) } }
            }
            #expect(winners.count == 1)
            let owner = try #require(winners.first)
            #expect(try await store.link(UpstreamIdentity(providerID: "corp", subject: "s1", userID: owner, email: "new@example.com",
                                                          proven: true, createdAt: 2, lastUsedAt: 2)) == .linked)
            let linked = try #require(try await store.identity(providerID: "corp", subject: "s1"))
            #expect(linked.userID == owner && linked.proven && linked.email == "new@example.com" && linked.lastUsedAt == 2 && linked.createdAt == 1)
        }
    }

    @Test("housekeeping turns: of nodes asking together one gets it, and nobody again before the period ends",
          arguments: TestBackend.available)
    func housekeepingTurns(on backend: TestBackend) async throws {
        try await withProvider(on: backend) { provider async throws in
            let store = provider.store
            let taken = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<10 { group.addTask { try await store.takeTurn("purge", now: 10_000, every: 3600) } }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(taken == 1)
            #expect(try await !store.takeTurn("purge", now: 10_000 + 3599, every: 3600))
            #expect(try await store.takeTurn("other", now: 10_000, every: 3600), "each task has its own turn")
            #expect(try await store.takeTurn("purge", now: 10_000 + 3600, every: 3600))
        }
    }

    @Test("ready while the database answers with the current schema; the reason when it does not", arguments: TestBackend.available)
    func readiness(on backend: TestBackend) async throws {
        try await withProvider(on: backend) { provider async throws in
            #expect(await provider.unreadiness() == nil)
            try await provider.store.database.close()
            let reason = try #require(await provider.unreadiness())
            #expect(reason.hasPrefix("database: "), "\(reason)")
        }
    }

    @Test("audit events: read newest first, by account, kind and time; purged after their retention", arguments: TestBackend.available)
    func auditEvents(on backend: TestBackend) async throws {
        try await withProvider(on: backend) { provider async throws in
            let store = provider.store
            try await store.recordAudit(AuditEvent(.signIn, at: 100, userID: "u1", clientID: "web", email: "a@example.com",
                                                   ip: "192.0.2.1", detail: "password"))
            try await store.recordAudit(AuditEvent(.signInFailed, at: 200, email: "a@example.com", ip: "192.0.2.9", detail: "password"))
            try await store.recordAudit(AuditEvent(.consentGiven, at: 300, userID: "u1", clientID: "web", detail: "openid email"))
            try await store.recordAudit(AuditEvent(.clientChanged, at: 400, actor: .admin, clientID: "web"))
            let all = try await store.auditEvents(AuditFilter(), limit: 10)
            #expect(all.map(\.at) == [400, 300, 200, 100])
            #expect(all.last == AuditEvent(.signIn, at: 100, userID: "u1", clientID: "web", email: "a@example.com", ip: "192.0.2.1",
                                           detail: "password", id: all.last?.id ?? ""))
            #expect(try await store.auditEvents(AuditFilter(userID: "u1"), limit: 10).map(\.kind) == [.consentGiven, .signIn])
            #expect(try await store.auditEvents(AuditFilter(kind: .signInFailed), limit: 10).map(\.ip) == ["192.0.2.9"])
            #expect(try await store.auditEvents(AuditFilter(userID: "u1", since: 150), limit: 10).count == 1)
            #expect(try await store.auditEvents(AuditFilter(), limit: 2).count == 2)
            try await store.purgeAudit(before: 250)
            #expect(try await store.auditEvents(AuditFilter(), limit: 10).map(\.at) == [400, 300])
        }
    }

    @Test("consents accumulate per client", arguments: TestBackend.available)
    func consentsMerge(on backend: TestBackend) async throws {
        try await withProvider(on: backend) { provider async throws in
            let (_, user) = try await prepare(provider)
            try await provider.store.recordConsent(userID: user.id, clientID: "web", scopes: ScopeSet(parsing: "openid email"), now: 1)
            try await provider.store.recordConsent(userID: user.id, clientID: "web", scopes: ScopeSet(parsing: "profile"), now: 2)
            #expect(try await provider.store.consentedScopes(userID: user.id, clientID: "web").values == ["openid", "email", "profile"])
        }
    }

    @Test("ending a session revokes its grants except offline ones", arguments: TestBackend.available)
    func logoutRevokesOnlineGrants(on backend: TestBackend) async throws {
        try await withProvider(on: backend) { provider async throws in
            let (_, user) = try await prepare(provider)
            let store = provider.store, now: Int64 = 1000
            var online = grant(user, now: now)
            online.scope = ScopeSet(parsing: "openid")
            let offline = grant(user, now: now)
            try await store.insertGrant(online, refreshToken: nil)
            try await store.insertGrant(offline, refreshToken: nil)
            try await store.insertSession(tokenHash: "c", BrowserSession(sid: "sid-1", userID: user.id, authTime: now, amr: ["pwd"], expiresAt: now + 60), now: now)
            try await store.endSession(sid: "sid-1", now: now)
            #expect(try await store.session(tokenHash: "c", now: now) == nil)
            #expect(try await store.grant(id: online.id)?.revokedAt == now)
            #expect(try await store.grant(id: offline.id)?.revokedAt == nil)
        }
    }

    @Test("a client assertion id is accepted once", arguments: TestBackend.available)
    func assertionReplay(on backend: TestBackend) async throws {
        try await withProvider(on: backend) { provider async throws in
            #expect(try await provider.store.recordAssertion(clientID: "c", jti: "j", expiresAt: 100, now: 10))
            #expect(try await !provider.store.recordAssertion(clientID: "c", jti: "j", expiresAt: 100, now: 20))
            #expect(try await provider.store.recordAssertion(clientID: "c", jti: "j", expiresAt: 300, now: 200))
        }
    }
}

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
            let database = try await PostgresDatabase.open(location, poolSize: 1, logger: Logger(label: "test"))
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

    @Test("PostgreSQL: a connection cut under a statement is DatabaseUnavailable, with the SQLSTATE and PostgreSQL's message",
          .enabled(if: TestBackend.available.contains(.postgres), "needs TESSERA_TEST_POSTGRES"))
    func postgresConnectionCut() async throws {
        let location = try PostgresLocation(parsing: try #require(ProcessInfo.processInfo.environment["TESSERA_TEST_POSTGRES"]))
        let database = try await PostgresDatabase.open(location, poolSize: 2, logger: Logger(label: "test"))
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

    @Test("a write waits for another process's transaction (the admin CLI) instead of failing")
    func busyTimeout() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("busy.sqlite").path
        let server = try await SQLiteDatabase.open(.sqliteFile(path), logger: Logger(label: "server"))
        let cli = try await SQLiteDatabase.open(.sqliteFile(path), logger: Logger(label: "cli"))
        try await server.withDatabase { db in try await db.raw("CREATE TABLE c (v INTEGER)").run() }
        // The other connection holds the write lock for a while.
        let (holding, signal) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await cli.transaction { db in
                try await db.raw("INSERT INTO c VALUES (1)").run()
                signal.yield()
                try await Task.sleep(for: .milliseconds(300))
            }
        }
        for await _ in holding { break }
        try await server.transaction { db in try await db.raw("INSERT INTO c VALUES (2)").run() }
        try await holder.value
        let values = try await server.withDatabase { db in
            try await db.raw("SELECT v FROM c ORDER BY rowid").all().map { try $0.decode(column: "v", as: Int.self) }
        }
        #expect(values == [1, 2])
        try await cli.close()
        try await server.close()
    }
}

/// Set once, read from any task.
actor SetOnce {
    private(set) var isSet = false
    func set() { isSet = true }
}
