import Foundation
import Logging
import SQLKit
import Testing
import TesseraCore
import TesseraDomain
import TesseraSQL
import TesseraTestSupport

/// The store contract: every test runs on SQLite and, when the tests have one, PostgreSQL.
@Suite("SQL store")
struct StoreTests {
    func prepare(_ store: SQLStore) async throws -> (Client, User) {
        let client = try await store.addClient()
        let user = try await store.addUser(email: "Alice@Example.com", name: "Alice")
        return (client, user)
    }

    @Test("migrations run once and again without harm", arguments: TestBackend.available)
    func migrationsAreIdempotent(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
            try await store.migrate()
            try await store.migrate()
            let versions = try await store.database.withDatabase { db in
                try await db.raw("SELECT version FROM schema_migrations").all().count
            }
            #expect(versions == Migrations.all.count)
        }
    }

    @Test("emails are unique regardless of case", arguments: TestBackend.available)
    func uniqueEmail(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
            _ = try await prepare(store)
            await #expect(throws: StoreError.duplicate("a user with this email")) {
                _ = try await store.addUser(email: "alice@example.COM")
            }
            #expect(try await store.user(email: "ALICE@example.com")?.name == "Alice")
        }
    }

    @Test("a change made with the version read wins once: of ten concurrent updates of a user or a client, one is written",
          arguments: TestBackend.available)
    func versionedUpdates(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
            let (client, user) = try await prepare(store)
            let version = user.version
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
        try await withStore(backend) { store async throws in
            let (client, user) = try await prepare(store)
            let now: Int64 = 1000
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
            var joined = testGrant(user, now: now), outside = testGrant(user, now: now)
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
        try await withStore(backend) { store async throws in
            for (email, name) in [("b@example.com", "Boris 100%"), ("a@example.com", "Anna Pavlova"), ("c@example.com", "Carl_X")] {
                _ = try await store.addUser(email: email, name: name)
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
        try await withStore(backend) { store async throws in
            var users: [User] = []
            for n in 0..<10 { users.append(try await store.addUser(email: "u\(n)@example.com")) }
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
        try await withStore(backend) { store async throws in
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

    @Test("audit events: read newest first, by account, kind and time; purged after their retention", arguments: TestBackend.available)
    func auditEvents(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
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

    @Test("ten consents to one client at once, each for another scope: every scope is kept", arguments: TestBackend.available)
    func concurrentConsents(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
            let (_, user) = try await prepare(store)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<10 {
                    group.addTask { try await store.recordConsent(userID: user.id, clientID: "web", scopes: ScopeSet(["s\(n)"]), now: 1) }
                }
                try await group.waitForAll()
            }
            #expect(Set(try await store.consentedScopes(userID: user.id, clientID: "web").values) == Set((0..<10).map { "s\($0)" }))
        }
    }

    @Test("consents accumulate per client", arguments: TestBackend.available)
    func consentsMerge(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
            let (_, user) = try await prepare(store)
            try await store.recordConsent(userID: user.id, clientID: "web", scopes: ScopeSet(parsing: "openid email"), now: 1)
            try await store.recordConsent(userID: user.id, clientID: "web", scopes: ScopeSet(parsing: "profile"), now: 2)
            #expect(try await store.consentedScopes(userID: user.id, clientID: "web").values == ["openid", "email", "profile"])
        }
    }

    @Test("a session ends once; the grants made in it are found while they live", arguments: TestBackend.available)
    func sessionEnd(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
            let (_, user) = try await prepare(store)
            let now: Int64 = 1000
            let first = testGrant(user, now: now), second = testGrant(user, now: now)
            var elsewhere = testGrant(user, now: now)
            elsewhere.sid = "sid-2"
            for g in [first, second, elsewhere] { try await store.insertGrant(g, refreshToken: nil) }
            try await store.revokeGrant(id: second.id, now: now)
            #expect(try await store.liveGrants(sid: "sid-1").map(\.id) == [first.id])
            try await store.insertSession(tokenHash: "c", BrowserSession(sid: "sid-1", userID: user.id, authTime: now, amr: ["pwd"], expiresAt: now + 60), now: now)
            try await store.endSession(sid: "sid-1", now: now)
            #expect(try await store.session(tokenHash: "c", now: now) == nil)
            #expect(try await store.grant(id: first.id)?.revokedAt == nil, "the store ends the session only: its grants are the domain's decision")
        }
    }

    @Test("the purge deletes what expired a day ago, a batch at a time, and nothing that lives", arguments: TestBackend.available)
    func purgeInBatches(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
            let (_, user) = try await prepare(store)
            let now: Int64 = 1_000_000, day: Int64 = 86_400
            // 250 grants expired two days ago (with their refresh tokens), 3 expired an hour ago (kept a
            // day), 5 live; sessions, codes and revoked access tokens of each age.
            var grants: [(Grant, expired: Bool)] = []
            for index in 0..<258 {
                var grant = testGrant(user, now: now - 3 * day)
                grant.expiresAt = index < 250 ? now - 2 * day : index < 253 ? now - 3600 : now + day
                grants.append((grant, index < 250))
                try await store.insertGrant(grant, refreshToken: RefreshTokenRecord(tokenHash: "rt-\(index)", grantID: grant.id, clientID: "web",
                                                                                   expiresAt: grant.expiresAt))
            }
            for (index, expiresAt) in [now - 2 * day, now - 2 * day, now + 60].enumerated() {
                try await store.insertSession(tokenHash: "s-\(index)", BrowserSession(sid: "sid-\(index)", userID: user.id, authTime: now - 3 * day,
                                                                                    amr: ["pwd"], expiresAt: expiresAt), now: now - 3 * day)
                var code = testCode(user, now: now - 3 * day)
                code.expiresAt = expiresAt
                try await store.insertCode(codeHash: "c-\(index)", code, now: now - 3 * day)
                try await store.revokeAccessToken(jti: "j-\(index)", expiresAt: index < 2 ? now - 1 : now + 60)
            }
            try await store.purgeExpired(now: now, keepFor: day, batch: 100)
            func count(_ table: String) async throws -> Int {
                try await store.database.withDatabase { db in try await db.raw("SELECT 1 FROM \(unsafeRaw: table)").all().count }
            }
            let (grantsLeft, tokensLeft) = (try await count("grants"), try await count("refresh_tokens"))
            #expect(grantsLeft == 8 && tokensLeft == 8, "250 expired grants went, in three batches")
            for (grant, expired) in grants { #expect(try await (store.grant(id: grant.id) == nil) == expired) }
            let (sessionsLeft, codesLeft, revokedLeft) = (try await count("sessions"), try await count("authorization_codes"),
                                                          try await count("revoked_access_tokens"))
            #expect(sessionsLeft == 1 && codesLeft == 1 && revokedLeft == 1)
            try await store.purgeExpired(now: now, keepFor: day)
            #expect(try await count("grants") == 8, "nothing more to delete")
        }
    }

    @Test("the purge reads each batch's rows, their index entries and a grant's tokens beside the server's connection, on a database file")
    func purgeReadsAhead() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try await SQLiteDatabase.open(.sqliteFile(directory.appendingPathComponent("purge.sqlite").path),
                                                     logger: Logger(label: "test"))
        let store = SQLStore(database: database)
        try await store.migrate()
        let (_, user) = try await prepare(store)
        let now: Int64 = 1_000_000
        // Three grants expired (one token each), two live; all of one user, in one browser session (sid-1).
        for index in 0..<5 {
            var grant = testGrant(user, now: now - 100)
            grant.expiresAt = index < 3 ? now - 10 : now + 100
            try await store.insertGrant(grant, refreshToken: RefreshTokenRecord(tokenHash: "rt-\(index)", grantID: grant.id, clientID: "web",
                                                                               expiresAt: grant.expiresAt))
        }
        for (index, expiresAt) in [now - 10, now - 10, now + 100].enumerated() {
            try await store.insertSession(tokenHash: "s-\(index)", BrowserSession(sid: "sid-s\(index)", userID: user.id, authTime: now - 100,
                                                                                amr: ["pwd"], expiresAt: expiresAt), now: now - 100)
        }
        // What each statement finds is the sum of its lookups: for the tokens, 3 by hash and 3 by
        // grant; for the grants, 3 by id, 5 by sid and by user, none and 3 by device session, 3
        // tokens; for the sessions, 2 by hash and by sid, 3 by user.
        for (table, found) in [("refresh_tokens", 6), ("grants", 19), ("sessions", 7)] {
            let statement = try #require(SQLStore.readAhead(table, before: now, limit: 10))
            try await database.readAhead(statement)
            let sum = try await database.withDatabase { db in try await db.raw(statement).first()?.decode(column: "found", as: Int.self) }
            #expect(sum == found, "\(table)")
        }
        #expect(SQLStore.readAhead("authorization_codes", before: now, limit: 10) == nil)
        try await database.close()
        // Closed, the database opens no reader again.
        try await database.readAhead(try #require(SQLStore.readAhead("grants", before: now, limit: 10)))
    }

    @Test("a client assertion id is accepted once", arguments: TestBackend.available)
    func assertionReplay(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
            #expect(try await store.recordAssertion(clientID: "c", jti: "j", expiresAt: 100, now: 10))
            #expect(try await !store.recordAssertion(clientID: "c", jti: "j", expiresAt: 100, now: 20))
            #expect(try await store.recordAssertion(clientID: "c", jti: "j", expiresAt: 300, now: 200))
        }
    }
}

