import Foundation
import SQLKit
import Testing
import TesseraCore
import TesseraDomain
import TesseraSQL
import TesseraTestSupport

/// ``TokenFamilies``: codes, refresh-token rotation, reuse, retries and revoking a family, over the
/// real SQL store on every database the tests have (races included).
@Suite("Token families")
struct TokenFamilyTests {
    /// A client "web" and Alice, to hang grants on.
    func prepare(_ store: SQLStore) async throws -> User {
        _ = try await store.addClient()
        return try await store.addUser(email: "alice@example.com")
    }

    @Test("a code redeems once; the second redemption revokes the first one's grant", arguments: TestBackend.available)
    func codeIsSingleUse(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store)
            let families = TokenFamilies(store: store), now: Int64 = 1000
            try await store.insertCode(codeHash: "h", testCode(user, now: now), now: now)
            let first = testGrant(user, now: now)
            let refresh = RefreshTokenRecord(tokenHash: "r1", grantID: first.id, clientID: "web", expiresAt: now + 100)
            #expect(try await families.redeem(codeHash: "h", grant: first, refreshToken: refresh, now: now) == .redeemed)
            #expect(try await store.refreshTokenGrant(tokenHash: "r1", now: now) != nil)
            #expect(try await families.redeem(codeHash: "h", grant: testGrant(user, now: now), refreshToken: nil, now: now) == .replayed)
            #expect(try await store.grant(id: first.id)?.revokedAt == now)
            #expect(try await store.refreshTokenGrant(tokenHash: "r1", now: now) == nil)
            #expect(try await families.redeem(codeHash: "nope", grant: testGrant(user, now: now), refreshToken: nil, now: now) == .notFound)
        }
    }

    @Test("a rotated refresh token presented again revokes the whole family", arguments: TestBackend.available)
    func refreshReuseRevokesFamily(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store)
            let families = TokenFamilies(store: store), now: Int64 = 1000
            let g = try await store.addFamily(user, token: "r1", now: now)
            let next = RefreshTokenRecord(tokenHash: "r2", grantID: g.id, clientID: "web", expiresAt: now + 100)
            guard case .rotated = try await families.rotate(tokenHash: "r1", clientID: "web", now: now, makeSuccessor: { _ in next }) else {
                Issue.record("first rotation failed"); return
            }
            #expect(try await families.rotate(tokenHash: "r1", clientID: "web", now: now, makeSuccessor: { _ in next }) == .reused)
            #expect(try await store.refreshTokenGrant(tokenHash: "r2", now: now) == nil)
            #expect(try await store.grant(id: g.id)?.revokedAt != nil)
        }
    }

    @Test("50 concurrent refreshes of one token, with or without the one statement and the transaction here first: one rotates, the others are reuse and revoke the family",
          arguments: TestBackend.available, [false, true])
    func concurrentRefreshes(on backend: TestBackend, atOnceFirst: Bool) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store)
            let families = TokenFamilies(store: store), now: Int64 = 1000
            let g = try await store.addFamily(user, token: "r1", now: now)
            let outcomes = try await withThrowingTaskGroup(of: RefreshRotation.self) { group in
                for attempt in 0..<50 {
                    group.addTask {
                        // As RefreshTokenGrant does: the statement (PostgreSQL), the transaction on this
                        // thread (SQLite), then the transaction for what neither took.
                        if atOnceFirst, let taken = try await families.rotateAtOnce(
                            tokenHash: "r1", clientID: "web", successor: PendingRefreshToken(tokenHash: "next-\(attempt)", lifetime: 100),
                            clock: WallClock { now }) {
                            return .rotated(taken.grant)
                        }
                        if atOnceFirst, let outcome = try await families.rotateHere(
                            tokenHash: "r1", clientID: "web", clock: WallClock { now }, reuseInterval: 0, makeSuccessor: { _, _ in
                                RefreshTokenRecord(tokenHash: "here-\(attempt)", grantID: g.id, clientID: "web", expiresAt: now + 100)
                            }) {
                            return outcome
                        }
                        return try await families.rotate(tokenHash: "r1", clientID: "web", now: now) { _ in
                            RefreshTokenRecord(tokenHash: "late-\(attempt)", grantID: g.id, clientID: "web", expiresAt: now + 100)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .rotated(g) }.count == 1)
            #expect(outcomes.filter { $0 == .reused }.count == 49)
            #expect(try await store.grant(id: g.id)?.revokedAt != nil)
            for attempt in 0..<50 {
                #expect(try await store.refreshTokenGrant(tokenHash: "next-\(attempt)", now: now) == nil)
                #expect(try await store.refreshTokenGrant(tokenHash: "late-\(attempt)", now: now) == nil)
                #expect(try await store.refreshTokenGrant(tokenHash: "here-\(attempt)", now: now) == nil)
            }
        }
    }

    @Test("within the reuse interval a retry retires the unused successor; a used successor, the retired one, or a late retry is reuse",
          arguments: TestBackend.available)
    func refreshRetryWithinReuseInterval(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store)
            let families = TokenFamilies(store: store), now: Int64 = 1000
            func successor(_ hash: String, _ g: Grant) -> @Sendable (Grant) throws -> RefreshTokenRecord {
                { _ in RefreshTokenRecord(tokenHash: hash, grantID: g.id, clientID: "web", expiresAt: now + 100) }
            }
            func rotate(_ hash: String, at time: Int64, to next: String, _ g: Grant) async throws -> RefreshRotation {
                try await families.rotate(tokenHash: hash, clientID: "web", now: time, reuseInterval: 30, makeSuccessor: successor(next, g))
            }
            func family(_ token: String) async throws -> Grant { try await store.addFamily(user, token: token, now: now) }
            // A retry: the lost successor is retired, the new one works, the family lives.
            let a = try await family("a1")
            #expect(try await rotate("a1", at: now, to: "a2", a) == .rotated(a))
            #expect(try await rotate("a1", at: now + 5, to: "a3", a) == .rotated(a))
            #expect(try await store.refreshTokenGrant(tokenHash: "a2", now: now + 5) == nil)
            #expect(try await store.refreshTokenGrant(tokenHash: "a3", now: now + 5) != nil)
            // Once the successor is used the chain has moved on: the old token again is a replay.
            #expect(try await rotate("a3", at: now + 6, to: "a4", a) == .rotated(a))
            #expect(try await rotate("a1", at: now + 7, to: "a5", a) == .reused)
            #expect(try await store.grant(id: a.id)?.revokedAt != nil)
            #expect(try await store.refreshTokenGrant(tokenHash: "a4", now: now + 7) == nil)
            // The retired successor presented (its holder was not the one retrying) is reuse.
            let b = try await family("b1")
            #expect(try await rotate("b1", at: now, to: "b2", b) == .rotated(b))
            #expect(try await rotate("b1", at: now + 1, to: "b3", b) == .rotated(b))
            #expect(try await rotate("b2", at: now + 2, to: "b4", b) == .reused)
            #expect(try await store.refreshTokenGrant(tokenHash: "b3", now: now + 2) == nil)
            // After the interval a retry is reuse.
            let c = try await family("c1")
            #expect(try await rotate("c1", at: now, to: "c2", c) == .rotated(c))
            #expect(try await rotate("c1", at: now + 30, to: "c3", c) == .reused)
            #expect(try await store.grant(id: c.id)?.revokedAt != nil)
            // Without an interval the first retry is reuse.
            let d = try await family("d1")
            #expect(try await families.rotate(tokenHash: "d1", clientID: "web", now: now, makeSuccessor: successor("d2", d)) == .rotated(d))
            #expect(try await families.rotate(tokenHash: "d1", clientID: "web", now: now + 1, makeSuccessor: successor("d3", d)) == .reused)
        }
    }

    @Test("within the reuse interval, 20 concurrent retries take turns: each is answered and one token is left working",
          arguments: TestBackend.available)
    func concurrentRetriesWithinReuseInterval(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store)
            let families = TokenFamilies(store: store), now: Int64 = 1000
            let g = try await store.addFamily(user, token: "r1", now: now)
            let outcomes = try await withThrowingTaskGroup(of: RefreshRotation.self) { group in
                for attempt in 0..<20 {
                    group.addTask {
                        try await families.rotate(tokenHash: "r1", clientID: "web", now: now, reuseInterval: 10) { _ in
                            RefreshTokenRecord(tokenHash: "next-\(attempt)", grantID: g.id, clientID: "web", expiresAt: now + 100)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 == .rotated(g) })
            var working = 0
            for attempt in 0..<20 where try await store.refreshTokenGrant(tokenHash: "next-\(attempt)", now: now) != nil { working += 1 }
            #expect(working == 1)
            #expect(try await store.grant(id: g.id)?.revokedAt == nil)
        }
    }

    @Test("the rotation on the calling thread (SQLite): every outcome as in a transaction; PostgreSQL declines, changing nothing",
          arguments: TestBackend.available)
    func rotationHere(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store), now: Int64 = 1000
            let families = TokenFamilies(store: store)
            func here(_ hash: String, to next: String, reuseInterval: Int64 = 0, at time: Int64 = now) async throws -> RefreshRotation? {
                try await families.rotateHere(tokenHash: hash, clientID: "web", clock: WallClock { time }, reuseInterval: reuseInterval) { grant, tx in
                    // The transaction's stores read what the answer needs, as RefreshTokenGrant's do.
                    let read = try await tx.user(id: grant.userID ?? "")
                    #expect(read == user)
                    return RefreshTokenRecord(tokenHash: next, grantID: grant.id, clientID: "web", expiresAt: time + 100)
                }
            }
            let g = try await store.addFamily(user, token: "r1", now: now)
            guard backend == .sqlite else {
                #expect(try await here("r1", to: "r2") == nil)
                #expect(try await store.refreshTokenGrant(tokenHash: "r1", now: now) != nil)
                #expect(try await store.refreshTokenGrant(tokenHash: "r2", now: now) == nil)
                return
            }
            #expect(try await here("r1", to: "r2") == .rotated(g))
            #expect(try await store.refreshTokenGrant(tokenHash: "r1", now: now) == nil)
            #expect(try await store.refreshTokenGrant(tokenHash: "r2", now: now) != nil)
            // A retry within the reuse interval retires r2 for r3; then r1 again, too late, is reuse.
            #expect(try await here("r1", to: "r3", reuseInterval: 30, at: now + 1) == .rotated(g))
            #expect(try await store.refreshTokenGrant(tokenHash: "r2", now: now + 1) == nil)
            #expect(try await here("r1", to: "r4", reuseInterval: 30, at: now + 40) == .reused)
            #expect(try await store.grant(id: g.id)?.revokedAt != nil)
            #expect(try await store.refreshTokenGrant(tokenHash: "r3", now: now + 40) == nil)
            #expect(try await here("unknown", to: "r5") == .invalid)
        }
    }

    @Test("the common rotation in one statement (PostgreSQL): grant and user back, the successor in the family, capped by the grant; SQLite declines",
          arguments: TestBackend.available)
    func rotationAtOnce(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store), now: Int64 = 1000
            let families = TokenFamilies(store: store), clock = WallClock { now }
            func atOnce(_ hash: String, to next: String, lifetime: Int64 = 86_400) async throws -> (grant: Grant, user: User)? {
                try await families.rotateAtOnce(tokenHash: hash, clientID: "web", successor: PendingRefreshToken(tokenHash: next, lifetime: lifetime),
                                                clock: clock)
            }
            let g = try await store.addFamily(user, token: "r1", now: now)
            let taken = try await atOnce("r1", to: "r2")
            guard backend == .postgres else {
                #expect(taken == nil)
                #expect(try await store.refreshTokenGrant(tokenHash: "r1", now: now) != nil)
                #expect(try await store.refreshTokenGrant(tokenHash: "r2", now: now) == nil)
                return
            }
            let rotated = try #require(taken)
            #expect(rotated.grant == g)
            #expect(rotated.user == user)
            #expect(try await store.refreshTokenGrant(tokenHash: "r1", now: now) == nil)
            // A day's lifetime, but the grant ends in an hour.
            #expect(try await store.refreshTokenGrant(tokenHash: "r2", now: now)?.expiresAt == g.expiresAt)
            // Presented again: nothing is taken, and the transaction sorts it out. Within the reuse
            // interval it is a retry, which finds r2 as r1's successor and retires it.
            #expect(try await atOnce("r1", to: "r3") == nil)
            #expect(try await families.rotate(tokenHash: "r1", clientID: "web", now: now + 1, reuseInterval: 30) { _ in
                RefreshTokenRecord(tokenHash: "r3", grantID: g.id, clientID: "web", expiresAt: now + 100)
            } == .rotated(g))
            #expect(try await store.refreshTokenGrant(tokenHash: "r2", now: now + 1) == nil)
            // A shorter lifetime than the grant's is kept.
            _ = try #require(try await atOnce("r3", to: "r4", lifetime: 60))
            #expect(try await store.refreshTokenGrant(tokenHash: "r4", now: now)?.expiresAt == now + 60)
            // The retired r2 presented: reuse, the family ends.
            #expect(try await atOnce("r2", to: "r5") == nil)
            #expect(try await families.rotate(tokenHash: "r2", clientID: "web", now: now + 2) { _ in
                RefreshTokenRecord(tokenHash: "r5", grantID: g.id, clientID: "web", expiresAt: now + 100)
            } == .reused)
            #expect(try await store.refreshTokenGrant(tokenHash: "r4", now: now + 2) == nil)
            // The statement is prepared on its connection; PostgreSQL plans it generically after five
            // runs. Another node's migration then adds a column to users: the rotation keeps the shape
            // it was prepared with (no "cached plan must not change result type").
            let h = try await store.addFamily(user, token: "s1", now: now)
            for step in 1...6 { #expect(try await atOnce("s\(step)", to: "s\(step + 1)")?.grant == h) }
            try await store.database.withDatabase { db in try await db.raw("ALTER TABLE users ADD COLUMN added_later TEXT").run() }
            let after = try #require(try await atOnce("s7", to: "s8"))
            #expect(after.grant == h && after.user == user)
        }
    }

    @Test("the one statement takes no token the transaction must judge: another client's, expired, revoked, a disabled user's, a device session's",
          arguments: TestBackend.available)
    func rotationAtOnceDeclines(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store), now: Int64 = 1000
            let families = TokenFamilies(store: store)
            func atOnce(_ hash: String, client: String = "web", at time: Int64 = now) async throws -> (grant: Grant, user: User)? {
                try await families.rotateAtOnce(tokenHash: hash, clientID: client, successor: PendingRefreshToken(tokenHash: "next-" + hash,
                                                                                                                  lifetime: 60),
                                                clock: WallClock { time })
            }
            func isLive(_ hash: String) async throws -> Bool { try await store.refreshTokenGrant(tokenHash: hash, now: now) != nil }
            _ = try await store.addFamily(user, token: "other-client", now: now)
            #expect(try await atOnce("other-client", client: "other") == nil)
            #expect(try await isLive("other-client"))
            #expect(try await atOnce("unknown") == nil)
            _ = try await store.addFamily(user, token: "expired", now: now)
            #expect(try await atOnce("expired", at: now + 100) == nil)
            let revoked = try await store.addFamily(user, token: "revoked", now: now)
            try await store.revokeGrant(id: revoked.id, now: now)
            #expect(try await atOnce("revoked") == nil)
            try await store.insertDeviceSession(secretHash: "s", DeviceSession(id: "ds-1", userID: user.id, group: "acme", authTime: now,
                                                                               amr: ["pwd"], createdAt: now, expiresAt: now + 3600))
            var joined = testGrant(user, now: now)
            joined.deviceSessionID = "ds-1"
            try await store.insertGrant(joined, refreshToken: RefreshTokenRecord(tokenHash: "joined", grantID: joined.id, clientID: "web",
                                                                                  expiresAt: now + 100))
            #expect(try await atOnce("joined") == nil)
            #expect(try await isLive("joined"))
            let bob = try await store.addUser(email: "bob@example.com")
            _ = try await store.addFamily(bob, token: "disabled", now: now)
            try await store.setDisabled(userID: bob.id, at: now, now: now)
            #expect(try await atOnce("disabled") == nil)
            #expect(try await isLive("disabled"))
            for hash in ["other-client", "unknown", "expired", "revoked", "joined", "disabled"] {
                #expect(try await store.refreshTokenGrant(tokenHash: "next-" + hash, now: now) == nil)
            }
        }
    }

    @Test("a code redeemed concurrently: one grant, the others replays that revoke it", arguments: TestBackend.available)
    func concurrentCodeRedemption(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store)
            let families = TokenFamilies(store: store), now: Int64 = 1000
            try await store.insertCode(codeHash: "h", testCode(user, now: now), now: now)
            let outcomes = try await withThrowingTaskGroup(of: CodeRedemption.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await families.redeem(codeHash: "h", grant: testGrant(user, now: now), refreshToken: nil, now: now) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .redeemed }.count == 1)
            #expect(outcomes.filter { $0 == .replayed }.count == 19)
            let grantID = try #require(try await store.code(codeHash: "h")?.grantID)
            #expect(try await store.grant(id: grantID)?.revokedAt != nil)
        }
    }

    @Test("a refused rotation changes nothing", arguments: TestBackend.available)
    func rotationRollsBack(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store)
            let families = TokenFamilies(store: store), now: Int64 = 1000
            let g = try await store.addFamily(user, token: "r1", now: now)
            await #expect(throws: OAuthError.self) {
                _ = try await families.rotate(tokenHash: "r1", clientID: "web", now: now) { _ in throw OAuthError(.invalidScope) }
            }
            #expect(try await store.refreshTokenGrant(tokenHash: "r1", now: now)?.grant.id == g.id)
        }
    }

    @Test("a refresh token is bound to its client and expires", arguments: TestBackend.available)
    func refreshBinding(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store)
            let families = TokenFamilies(store: store), now: Int64 = 1000
            let g = try await store.addFamily(user, token: "r1", now: now)
            let next = RefreshTokenRecord(tokenHash: "r2", grantID: g.id, clientID: "web", expiresAt: now + 100)
            #expect(try await families.rotate(tokenHash: "r1", clientID: "other", now: now, makeSuccessor: { _ in next }) == .invalid)
            #expect(try await families.rotate(tokenHash: "r1", clientID: "web", now: now + 200, makeSuccessor: { _ in next }) == .invalid)
        }
    }

    @Test("a device session's end revokes the families made in it, and only those", arguments: TestBackend.available)
    func deviceSessionEnd(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store)
            let families = TokenFamilies(store: store), now: Int64 = 1000
            try await store.insertDeviceSession(secretHash: "secret-hash", DeviceSession(id: "ds-1", userID: user.id, group: "acme", authTime: now,
                                                                                         amr: ["pwd"], createdAt: now, expiresAt: now + 3600))
            var joined = testGrant(user, now: now)
            let outside = testGrant(user, now: now)
            joined.deviceSessionID = "ds-1"
            try await store.insertGrant(joined, refreshToken: RefreshTokenRecord(tokenHash: "j1", grantID: joined.id, clientID: "web",
                                                                                  expiresAt: now + 100))
            try await store.insertGrant(outside, refreshToken: nil)
            #expect(try await families.endDeviceSession(id: "ds-1", now: now + 5))
            #expect(try await families.endDeviceSession(id: "ds-1", now: now + 6) == false)
            #expect(try await store.grant(id: joined.id)?.revokedAt == now + 5)
            #expect(try await store.refreshTokenGrant(tokenHash: "j1", now: now + 5) == nil)
            #expect(try await store.grant(id: outside.id)?.revokedAt == nil)
            #expect(try await store.deviceSession(id: "ds-1", now: now) == nil)
        }
    }

    @Test("every family of a user ends at once: grants, their tokens, device sessions; another user's stay", arguments: TestBackend.available)
    func revokeAll(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store), now: Int64 = 1000
            let bob = try await store.addUser(email: "bob@example.com")
            try await store.insertDeviceSession(secretHash: "s", DeviceSession(id: "ds-a", userID: user.id, group: "acme", authTime: now,
                                                                               amr: ["pwd"], createdAt: now, expiresAt: now + 3600))
            let mine = try await store.addFamily(user, token: "m1", now: now)
            _ = try await store.addFamily(bob, token: "b1", now: now)
            try await store.transaction { tx in try await TokenFamilies.revokeAll(userID: user.id, now: now + 1, in: tx) }
            #expect(try await store.grant(id: mine.id)?.revokedAt == now + 1)
            #expect(try await store.refreshTokenGrant(tokenHash: "m1", now: now + 1) == nil)
            #expect(try await store.deviceSession(id: "ds-a", now: now + 1) == nil)
            #expect(try await store.refreshTokenGrant(tokenHash: "b1", now: now + 1) != nil)
        }
    }

    @Test("a browser session's end revokes the families made in it, except offline ones", arguments: TestBackend.available)
    func sessionEnd(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store), now: Int64 = 1000
            var online = testGrant(user, now: now)
            online.scope = ScopeSet(parsing: "openid")
            let offline = testGrant(user, now: now)
            try await store.insertGrant(online, refreshToken: RefreshTokenRecord(tokenHash: "o1", grantID: online.id, clientID: "web",
                                                                                  expiresAt: now + 100))
            try await store.insertGrant(offline, refreshToken: nil)
            try await store.insertSession(tokenHash: "c", BrowserSession(sid: "sid-1", userID: user.id, authTime: now, amr: ["pwd"],
                                                                        expiresAt: now + 60), now: now)
            try await store.transaction { tx in try await TokenFamilies.sessionEnded(sid: "sid-1", now: now, in: tx) }
            #expect(try await store.session(tokenHash: "c", now: now) == nil)
            #expect(try await store.grant(id: online.id)?.revokedAt == now)
            #expect(try await store.refreshTokenGrant(tokenHash: "o1", now: now) == nil)
            #expect(try await store.grant(id: offline.id)?.revokedAt == nil)
        }
    }

    @Test("withdrawing a client's consent ends the user's families at that client only", arguments: TestBackend.available)
    func consentWithdrawn(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store), now: Int64 = 1000
            _ = try await store.addClient(id: "other")
            try await store.recordConsent(userID: user.id, clientID: "web", scopes: ScopeSet(["openid"]), now: now)
            _ = try await store.addFamily(user, token: "w1", now: now)
            var other = testGrant(user, now: now)
            other.clientID = "other"
            try await store.insertGrant(other, refreshToken: nil)
            try await store.transaction { tx in try await TokenFamilies.consentWithdrawn(userID: user.id, clientID: "web", now: now, in: tx) }
            #expect(try await store.consentedScopes(userID: user.id, clientID: "web").values.isEmpty)
            #expect(try await store.refreshTokenGrant(tokenHash: "w1", now: now) == nil)
            #expect(try await store.grant(id: other.id)?.revokedAt == nil)
        }
    }

    /// The refresh grant over `store` at `now`, and client "web" to present tokens as; `users`
    /// answers the reads made outside the rotation.
    func refreshGrant(_ store: SQLStore, now: Int64, users: any UserStore,
                      reuseInterval: Int64) async throws -> (client: Client, grant: RefreshTokenGrant) {
        let clock = WallClock { now }
        guard let client = try await store.client(id: "web") else { throw StoreError.notFound("client web") }
        let tokens = UserGrantTokens(issuer: try await AuthorizationHarness.tokenIssuer(store, clock: clock), users: users,
                                     grants: store, clock: clock)
        return (client, RefreshTokenGrant(families: TokenFamilies(store: store), tokens: tokens, clock: clock, reuseInterval: reuseInterval))
    }

    @Test("a refresh token starts with the second it was issued: its key is that second in hex and the whole token's hash, so later keys sort after; anything else keys on the hash alone")
    func refreshTokenKeys() {
        let early = RefreshTokenKey.token(issuedAt: 0x6A00_00FF), late = RefreshTokenKey.token(issuedAt: 0x6A00_0100)
        #expect(early.count == 48 && late.count == 48)
        #expect(RefreshTokenKey.key(early) == "6a0000ff" + tokenHash(early))
        #expect(RefreshTokenKey.key(late) == "6a000100" + tokenHash(late))
        #expect(RefreshTokenKey.key(early) < RefreshTokenKey.key(late))
        // Within one second, 32 random bytes after the time: no two tokens alike.
        let second = (0..<200).map { _ in RefreshTokenKey.token(issuedAt: 1000) }
        #expect(Set(second).count == 200 && second.allSatisfy { RefreshTokenKey.key($0).hasPrefix("000003e8") })
        #expect(Set(second.map { $0.dropFirst(6) }).count == 200)
        // Tokens of the format before (43 characters) and other strings: the hash alone.
        for other in [SecureRandom.token(), "first-refresh-token", String(repeating: "*", count: 48), String(repeating: "A", count: 47)] {
            #expect(RefreshTokenKey.key(other) == tokenHash(other), "\(other)")
        }
    }

    @Test("a refresh token of the format before still refreshes, and its successor is keyed by the second it was issued",
          arguments: TestBackend.available)
    func refreshTokenOfTheFormatBefore(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store), now: Int64 = 0x6A12_3456
            let before = SecureRandom.token()
            let grantRow = try await store.addFamily(user, token: tokenHash(before), now: now)
            let (client, grant) = try await refreshGrant(store, now: now, users: store, reuseInterval: 0)
            func refresh(_ token: String, scope: String? = nil) async throws -> String? {
                var parameters = [("grant_type", "refresh_token"), ("refresh_token", token)]
                if let scope { parameters.append(("scope", scope)) }
                return try await grant.exchange(TokenRequest(parameters: RequestParameters(parameters), client: client,
                                                             address: "192.0.2.1")).refreshToken
            }
            // Through the one statement (no scope) and through the transaction (a scope).
            let next = try #require(try await refresh(before))
            #expect(next.count == 48 && RefreshTokenKey.key(next).hasPrefix("6a123456"))
            #expect(try await store.refreshTokenGrant(tokenHash: RefreshTokenKey.key(next), now: now)?.grant.id == grantRow.id)
            let third = try #require(try await refresh(next, scope: "openid"))
            #expect(try await store.refreshTokenGrant(tokenHash: RefreshTokenKey.key(third), now: now)?.grant.id == grantRow.id)
            // The token of the format before, presented again, is reuse: the family ends.
            await #expect(throws: OAuthError.self) { _ = try await refresh(before) }
            #expect(try await store.grant(id: grantRow.id)?.revokedAt != nil)
        }
    }

    @Test("a refresh reads what its answer needs in the rotation's transaction: the database lost after the commit changes nothing",
          arguments: TestBackend.available)
    func refreshAnswerNeedsNoDatabaseAfterRotation(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store), now: Int64 = 1000
            _ = try await store.addFamily(user, token: tokenHash("first-refresh-token"), now: now)
            // Every read outside a transaction fails, as when PostgreSQL stops right after the
            // rotation committed: before, the answer read the user there and a 503 went out for
            // a rotation that happened (its retry, after a long outage, was taken for reuse).
            let (client, grant) = try await refreshGrant(store, now: now, users: DatabaseGone(), reuseInterval: 10)
            let request = TokenRequest(parameters: RequestParameters([("grant_type", "refresh_token"),
                                                                      ("refresh_token", "first-refresh-token")]),
                                       client: client, address: "192.0.2.1")
            let answer = try await grant.exchange(request)
            #expect(answer.refreshToken != nil && answer.idToken != nil)
        }
    }
}

/// A user store whose database is gone.
private struct DatabaseGone: UserStore {
    var gone: DatabaseUnavailable { DatabaseUnavailable(location: "test", reason: "stopped") }
    func user(id: String) async throws -> User? { throw gone }
    func user(email: String) async throws -> User? { throw gone }
    func insert(_ user: User) async throws { throw gone }
    func updatePasswordHash(userID: String, hash: String, now: Int64) async throws { throw gone }
    func updateProfile(userID: String, profile: [String: JSONValue], now: Int64) async throws { throw gone }
    func markEmailVerified(userID: String, now: Int64) async throws { throw gone }
    func removePassword(userID: String, now: Int64) async throws { throw gone }
    func changeEmail(userID: String, to email: String, now: Int64) async throws { throw gone }
    func updateAccount(userID: String, profile: [String: JSONValue], roles: Set<String>, now: Int64,
                       ifVersion version: Int64) async throws -> Bool { throw gone }
    func saveImported(_ user: User, now: Int64) async throws { throw gone }
    func setDisabled(userID: String, at disabledAt: Int64?, now: Int64) async throws { throw gone }
    func users(matching query: String?, after cursor: String?, limit: Int) async throws -> [User] { throw gone }
}
