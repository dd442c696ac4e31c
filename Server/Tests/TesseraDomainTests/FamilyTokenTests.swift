import Crypto
import Foundation
import SQLKit
import Testing
import TesseraCore
import TesseraDomain
import TesseraSQL
import TesseraTestSupport

/// ``FamilyToken``s: their format and tag, and ``TokenFamilies``' rotation of them on their
/// grant's row (the same rules as for tokens with rows of their own: reuse, retries, races), over
/// the real SQL store on every database the tests have.
@Suite("Family tokens")
struct FamilyTokenTests {
    let tokens = FamilyTokens(key: "test-refresh-token-key")

    @Test("a token reads back as its family and generation; a changed character, another key or another format is refused")
    func format() throws {
        let token = tokens.make(grantID: "grant-1", generation: 7)
        #expect(FamilyTokens.isFamilyFormat(token))
        #expect(tokens.parse(token) == FamilyToken(grantID: "grant-1", generation: 7))
        #expect(tokens.make(grantID: "grant-1", generation: 7) != token)
        // Each character changed in turn (the grant, the generation, the secret, the tag).
        var refused = 0
        for index in token.indices where token[index] != "." {
            var bytes = Array(token.utf8)
            let offset = token.utf8.distance(from: token.utf8.startIndex, to: index)
            bytes[offset] = bytes[offset] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            if tokens.parse(String(decoding: bytes, as: UTF8.self)) == nil { refused += 1 }
        }
        #expect(refused == token.filter { $0 != "." }.count)
        #expect(FamilyTokens(key: "another-key").parse(token) == nil)
        // A token with a row of its own (base64url) is not of this format.
        #expect(!FamilyTokens.isFamilyFormat(SecureRandom.token(bytes: 36)))
        for bad in ["", ".", "...", "a.b.c.d", token + ".", "." + token, String(token.dropLast()), token + "A",
                    String(repeating: "x.", count: 200)] {
            #expect(tokens.parse(bad) == nil)
        }
    }

    @Test("the tag is HMAC-SHA-256 (RFC 4231's vectors, and swift-crypto's HMAC for keys of every length)")
    func tagIsHMAC() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        #expect(Base64URL.hex(FamilyTokens(key: "Jefe").tag(Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c7")
        for length in [0, 1, 32, 63, 64, 65, 200] {
            let key = String(repeating: "k", count: length), body = Array("grant.1.secret".utf8)
            let expected = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Array(key.utf8)))
            #expect(FamilyTokens(key: key).tag(body) == Array(expected).prefix(16).map { $0 })
        }
    }

    /// A client "web", Alice, and a grant of hers whose family token (generation 0) is returned.
    func family(_ store: SQLStore, user: User, now: Int64, lifetime: Int64 = 100) async throws -> (grant: Grant, token: String) {
        let grant = testGrant(user, now: now)
        let token = tokens.make(grantID: grant.id, generation: 0)
        try await store.insertGrant(grant, refreshToken: RefreshTokenRecord(tokenHash: tokenHash(token), grantID: grant.id, clientID: "web",
                                                                             expiresAt: now + lifetime, generation: 0))
        return (grant, token)
    }

    func prepare(_ store: SQLStore) async throws -> User {
        _ = try await store.addClient()
        return try await store.addUser(email: "alice@example.com")
    }

    /// Makes successors as RefreshTokenGrant does, keeping each in `made` by generation.
    final class Successors: @unchecked Sendable {
        let tokens: FamilyTokens
        let lock = NSLock()
        var made: [Int64: String] = [:]
        init(_ tokens: FamilyTokens) { self.tokens = tokens }

        func maker(now: Int64, lifetime: Int64 = 100) -> FamilySuccessorMaker {
            { grant, generation, _ in
                let token = self.tokens.make(grantID: grant.id, generation: generation)
                self.lock.withLock { self.made[generation] = token }
                return RefreshTokenRecord(tokenHash: tokenHash(token), grantID: grant.id, clientID: "web",
                                          expiresAt: min(now + lifetime, grant.expiresAt), generation: generation)
            }
        }

        subscript(generation: Int64) -> String { lock.withLock { made[generation] ?? "" } }
    }

    func rotate(_ families: TokenFamilies, _ token: String, client: String = "web", at now: Int64, reuseInterval: Int64 = 0,
                _ successors: Successors) async throws -> RefreshRotation {
        let parsed = try #require(tokens.parse(token))
        return try await families.rotate(parsed, tokenHash: tokenHash(token), clientID: client, clock: WallClock { now },
                                         reuseInterval: reuseInterval, makeSuccessor: successors.maker(now: now))
    }

    func isLive(_ store: SQLStore, _ token: String, at now: Int64) async throws -> Bool {
        guard let parsed = tokens.parse(token) else { return false }
        return try await store.familyTokenGrant(grantID: parsed.grantID, tokenHash: tokenHash(token), now: now) != nil
    }

    @Test("rotations move the family on its grant's row alone; an earlier token presented revokes the family",
          arguments: TestBackend.available)
    func rotationAndReuse(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store), now: Int64 = 1000
            let families = TokenFamilies(store: store), successors = Successors(tokens)
            let (g, first) = try await family(store, user: user, now: now)
            #expect(try await rotate(families, first, at: now, successors) == .rotated(g))
            #expect(try await rotate(families, successors[1], at: now + 1, successors) == .rotated(g))
            #expect(try await rotate(families, successors[2], at: now + 2, successors) == .rotated(g))
            #expect(try await isLive(store, successors[3], at: now + 2))
            for old in [first, successors[1], successors[2]] { #expect(try await isLive(store, old, at: now + 2) == false) }
            // No row per token: the family is its grant's row.
            let rows = try await store.database.withDatabase { db in
                try await db.raw("SELECT count(*) AS n FROM refresh_tokens").first()?.decode(column: "n", as: Int.self)
            }
            #expect(rows == 0)
            // A token two generations back is known as used without a row: reuse.
            #expect(try await rotate(families, successors[1], at: now + 3, successors) == .reused)
            #expect(try await store.grant(id: g.id)?.revokedAt == now + 3)
            #expect(try await isLive(store, successors[3], at: now + 3) == false)
            #expect(try await rotate(families, successors[3], at: now + 4, successors) == .invalid)
        }
    }

    @Test("within the reuse interval a retry retires the unused successor; a used successor, the retired one, or a late retry is reuse",
          arguments: TestBackend.available)
    func retries(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store), now: Int64 = 1000
            let families = TokenFamilies(store: store)
            // A retry: the lost successor is retired, the new one works, the family lives.
            let a = try await family(store, user: user, now: now), sa = Successors(tokens)
            #expect(try await rotate(families, a.token, at: now, reuseInterval: 30, sa) == .rotated(a.grant))
            #expect(try await rotate(families, a.token, at: now + 5, reuseInterval: 30, sa) == .rotated(a.grant))
            #expect(try await isLive(store, sa[1], at: now + 5) == false)
            #expect(try await isLive(store, sa[2], at: now + 5))
            // A second retry within the interval is answered too, from the same rotation.
            #expect(try await rotate(families, a.token, at: now + 6, reuseInterval: 30, sa) == .rotated(a.grant))
            #expect(try await isLive(store, sa[3], at: now + 6))
            // Once the successor is used the chain has moved on: the old token again is a replay.
            #expect(try await rotate(families, sa[3], at: now + 7, reuseInterval: 30, sa) == .rotated(a.grant))
            #expect(try await rotate(families, a.token, at: now + 8, reuseInterval: 30, sa) == .reused)
            #expect(try await store.grant(id: a.grant.id)?.revokedAt != nil)
            // The retired successor presented (its holder was not the one retrying) is reuse.
            let b = try await family(store, user: user, now: now), sb = Successors(tokens)
            #expect(try await rotate(families, b.token, at: now, reuseInterval: 30, sb) == .rotated(b.grant))
            #expect(try await rotate(families, b.token, at: now + 1, reuseInterval: 30, sb) == .rotated(b.grant))
            #expect(try await rotate(families, sb[1], at: now + 2, reuseInterval: 30, sb) == .reused)
            #expect(try await isLive(store, sb[2], at: now + 2) == false)
            // After the interval a retry is reuse; without one, the first retry is.
            let c = try await family(store, user: user, now: now), sc = Successors(tokens)
            #expect(try await rotate(families, c.token, at: now, reuseInterval: 30, sc) == .rotated(c.grant))
            #expect(try await rotate(families, c.token, at: now + 30, reuseInterval: 30, sc) == .reused)
            let d = try await family(store, user: user, now: now), sd = Successors(tokens)
            #expect(try await rotate(families, d.token, at: now, sd) == .rotated(d.grant))
            #expect(try await rotate(families, d.token, at: now + 1, sd) == .reused)
        }
    }

    @Test("refused without revoking: another client's, expired, revoked, a generation never issued; a refused successor changes nothing",
          arguments: TestBackend.available)
    func refusals(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store), now: Int64 = 1000
            let families = TokenFamilies(store: store), successors = Successors(tokens)
            let (g, token) = try await family(store, user: user, now: now)
            #expect(try await rotate(families, token, client: "other", at: now, successors) == .invalid)
            #expect(try await rotate(families, token, at: now + 100, successors) == .invalid)
            // A later generation, or another token of the current one, made under the key but never issued.
            #expect(try await rotate(families, tokens.make(grantID: g.id, generation: 5), at: now, successors) == .invalid)
            #expect(try await rotate(families, tokens.make(grantID: g.id, generation: 0), at: now, successors) == .invalid)
            #expect(try await rotate(families, tokens.make(grantID: "no-such-grant", generation: 0), at: now, successors) == .invalid)
            #expect(try await store.grant(id: g.id)?.revokedAt == nil)
            await #expect(throws: OAuthError.self) {
                _ = try await families.rotate(try #require(tokens.parse(token)), tokenHash: tokenHash(token), clientID: "web",
                                              clock: WallClock { now }, reuseInterval: 0) { _, _, _ in throw OAuthError(.invalidScope) }
            }
            #expect(try await isLive(store, token, at: now))
            let revoked = try await family(store, user: user, now: now)
            try await store.revokeGrant(id: revoked.grant.id, now: now)
            #expect(try await rotate(families, revoked.token, at: now, successors) == .invalid)
            #expect(try await isLive(store, token, at: now))
        }
    }

    @Test("the common rotation at once: grant and user back, the successor current and capped by the grant; what it can't judge it leaves",
          arguments: TestBackend.available)
    func rotationAtOnce(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store), now: Int64 = 1000
            let families = TokenFamilies(store: store)
            func atOnce(_ token: String, client: String = "web", at time: Int64 = now, lifetime: Int64 = 86_400) async throws
                -> (successor: String, rotated: (grant: Grant, user: User)?) {
                let parsed = try #require(tokens.parse(token))
                let next = tokens.make(grantID: parsed.grantID, generation: parsed.generation + 1)
                let rotated = try await families.rotateAtOnce(parsed, tokenHash: tokenHash(token), clientID: client,
                                                              successor: PendingRefreshToken(tokenHash: tokenHash(next), lifetime: lifetime,
                                                                                             generation: parsed.generation + 1),
                                                              clock: WallClock { time })
                return (next, rotated)
            }
            let (g, first) = try await family(store, user: user, now: now)
            let one = try await atOnce(first)
            let rotated = try #require(one.rotated)
            #expect(rotated.grant == g && rotated.user == user)
            #expect(try await isLive(store, first, at: now) == false)
            // A day's lifetime, but the grant ends in an hour.
            let second = try #require(tokens.parse(one.successor))
            #expect(try await store.familyTokenGrant(grantID: g.id, tokenHash: tokenHash(one.successor), now: now)?.expiresAt == g.expiresAt)
            // A shorter one is kept.
            let two = try await atOnce(one.successor, lifetime: 60)
            #expect(two.rotated?.grant == g)
            #expect(try await store.familyTokenGrant(grantID: g.id, tokenHash: tokenHash(two.successor), now: now)?.expiresAt == now + 60)
            // Presented again: nothing taken; the transaction then judges it (reuse).
            #expect(try await atOnce(one.successor).rotated == nil)
            #expect(try await rotate(families, one.successor, at: now + 1, Successors(tokens)) == .reused)
            #expect(second.generation == 1)
            // What the statement leaves to the transaction changes nothing.
            let other = try await family(store, user: user, now: now)
            #expect(try await atOnce(other.token, client: "other").rotated == nil)
            #expect(try await atOnce(other.token, at: now + 100).rotated == nil)
            #expect(try await isLive(store, other.token, at: now))
            let revoked = try await family(store, user: user, now: now)
            try await store.revokeGrant(id: revoked.grant.id, now: now)
            #expect(try await atOnce(revoked.token).rotated == nil)
            try await store.insertDeviceSession(secretHash: "s", DeviceSession(id: "ds-1", userID: user.id, group: "acme", authTime: now,
                                                                               amr: ["pwd"], createdAt: now, expiresAt: now + 3600))
            var joined = testGrant(user, now: now)
            joined.deviceSessionID = "ds-1"
            let joinedToken = tokens.make(grantID: joined.id, generation: 0)
            try await store.insertGrant(joined, refreshToken: RefreshTokenRecord(tokenHash: tokenHash(joinedToken), grantID: joined.id,
                                                                                  clientID: "web", expiresAt: now + 100, generation: 0))
            #expect(try await atOnce(joinedToken).rotated == nil)
            #expect(try await isLive(store, joinedToken, at: now))
            let bob = try await store.addUser(email: "bob@example.com")
            let bobs = try await family(store, user: bob, now: now)
            try await store.setDisabled(userID: bob.id, at: now, now: now)
            #expect(try await atOnce(bobs.token).rotated == nil)
            #expect(try await isLive(store, bobs.token, at: now))
        }
    }

    @Test("50 concurrent refreshes of one token, with or without the rotation at once first: one rotates, the others are reuse",
          arguments: TestBackend.available, [false, true])
    func concurrentRefreshes(on backend: TestBackend, atOnceFirst: Bool) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store), now: Int64 = 1000
            let families = TokenFamilies(store: store), successors = Successors(tokens)
            let (g, token) = try await family(store, user: user, now: now)
            let parsed = try #require(tokens.parse(token)), hash = tokenHash(token)
            let outcomes = try await withThrowingTaskGroup(of: RefreshRotation.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        // As RefreshTokenGrant does: at once, then the transaction on this thread (SQLite),
                        // then the transaction for what neither took.
                        if atOnceFirst {
                            let next = tokens.make(grantID: g.id, generation: 1)
                            if let taken = try await families.rotateAtOnce(parsed, tokenHash: hash, clientID: "web",
                                                                           successor: PendingRefreshToken(tokenHash: tokenHash(next), lifetime: 100,
                                                                                                          generation: 1),
                                                                           clock: WallClock { now }) {
                                return .rotated(taken.grant)
                            }
                            if let outcome = try await families.rotateHere(parsed, tokenHash: hash, clientID: "web", clock: WallClock { now },
                                                                           reuseInterval: 0, makeSuccessor: successors.maker(now: now)) {
                                return outcome
                            }
                        }
                        return try await families.rotate(parsed, tokenHash: hash, clientID: "web", clock: WallClock { now },
                                                         reuseInterval: 0, makeSuccessor: successors.maker(now: now))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .rotated(g) }.count == 1)
            #expect(outcomes.filter { $0 == .reused }.count == 49)
            #expect(try await store.grant(id: g.id)?.revokedAt != nil)
        }
    }

    @Test("within the reuse interval, 20 concurrent retries take turns: each is answered and one token is left working",
          arguments: TestBackend.available)
    func concurrentRetries(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let user = try await prepare(store), now: Int64 = 1000
            let families = TokenFamilies(store: store), successors = Successors(tokens)
            let (g, token) = try await family(store, user: user, now: now)
            let outcomes = try await withThrowingTaskGroup(of: RefreshRotation.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await rotate(families, token, at: now, reuseInterval: 10, successors) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 == .rotated(g) })
            var working = 0
            for generation in Int64(1)...20 where try await isLive(store, successors[generation], at: now) { working += 1 }
            #expect(working == 1)
            #expect(try await store.grant(id: g.id)?.revokedAt == nil)
        }
    }
}
