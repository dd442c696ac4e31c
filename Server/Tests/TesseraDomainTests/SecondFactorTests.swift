import Foundation
import Logging
import Testing
import TesseraCore
import TesseraDomain
import TesseraSQL
import TesseraTestSupport

/// ``SecondFactors`` over a real SQL store: an authenticator app computed in the test from the
/// secret it was shown, and recovery codes.
struct SecondFactorBench {
    let store: SQLStore
    let clock = ManualClock()
    let factors: SecondFactors
    let user: User

    init(_ store: SQLStore) async throws {
        self.store = store
        factors = SecondFactors(store: store, secretBox: try SecretBox(masterKey: Data(repeating: 7, count: 32).base64EncodedString()),
                                issuerName: "Example ID", audit: AuditTrail(store: store, clock: clock.clock, logger: Logger(label: "test")),
                                clock: clock.clock)
        let now = clock.clock.now()
        user = User(id: "u1", email: "owner@example.com", emailVerified: true, profile: [:], createdAt: now, updatedAt: now)
        try await store.insert(user)
    }

    /// The code the person's app shows now.
    func code(_ enrolment: SecondFactors.Enrolment, offset: Int64 = 0) throws -> String {
        TOTP(secret: try #require(TOTPSecret(base32: enrolment.secret))).code(at: clock.clock.now() + offset)
    }
}

func secondFactorFailure<T>(_ body: () async throws(SecondFactorFailure) -> T) async -> SecondFactorFailure? {
    do {
        _ = try await body()
        return nil
    } catch { return error }
}

@Suite("Second factors: authenticator app and recovery codes")
struct SecondFactorTests {
    @Test("set up by the first right code, which answers ten recovery codes; the secret is sealed", arguments: TestBackend.available)
    func enrolment(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await SecondFactorBench(store)
            let enrolment = try await bench.factors.startTOTP(for: bench.user)
            let uri = try #require(URLComponents(string: enrolment.uri))
            #expect(uri.scheme == "otpauth" && uri.queryItems?.first { $0.name == "secret" }?.value == enrolment.secret)
            #expect(try await bench.factors.pendingTOTP(for: bench.user)?.secret == enrolment.secret, "shown again while pending")
            let stored = try #require(try await store.totpFactor(userID: "u1"))
            #expect(!stored.sealedSecret.contains(enrolment.secret) && stored.sealedSecret.hasPrefix("enc:v1:"))
            #expect(try await bench.factors.hasTOTP(bench.user) == false)
            #expect(await secondFactorFailure { () async throws(SecondFactorFailure) in
                try await bench.factors.confirmTOTP(for: bench.user, code: "000000") } != nil)
            let current = try bench.code(enrolment)
            let codes = try await bench.factors.confirmTOTP(for: bench.user, code: current)
            #expect(codes.count == 10 && Set(codes).count == 10 && codes.allSatisfy { $0.count == 11 && $0.contains("-") })
            #expect(try await bench.factors.hasTOTP(bench.user))
            #expect(try await store.recoveryCodesLeft(userID: "u1") == 10)
            #expect(try await bench.factors.pendingTOTP(for: bench.user) == nil)
            let again = await secondFactorFailure { () async throws(SecondFactorFailure) in try await bench.factors.startTOTP(for: bench.user) }
            #expect(again.map { "\($0)" } == "alreadySet")
        }
    }

    @Test("a code works within a step either side, once: the confirming code and a replay are refused", arguments: TestBackend.available)
    func codes(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await SecondFactorBench(store)
            let enrolment = try await bench.factors.startTOTP(for: bench.user)
            let first = try bench.code(enrolment)
            _ = try await bench.factors.confirmTOTP(for: bench.user, code: first)
            #expect(await secondFactorFailure { () async throws(SecondFactorFailure) in try await bench.factors.verify(bench.user, code: first) } != nil,
                    "the code that confirmed the app is spent")
            bench.clock.advance(by: 30)
            let next = try bench.code(enrolment)
            #expect(try await bench.factors.verify(bench.user, code: String(next.prefix(3)) + " " + next.dropFirst(3)) == ["otp"])
            #expect(await secondFactorFailure { () async throws(SecondFactorFailure) in try await bench.factors.verify(bench.user, code: next) } != nil,
                    "a replay")
            bench.clock.advance(by: 60)
            let before = try bench.code(enrolment, offset: -30)
            #expect(try await bench.factors.verify(bench.user, code: before) == ["otp"], "the step before")
            bench.clock.advance(by: 30)
            let old = try bench.code(enrolment, offset: -90)
            #expect(await secondFactorFailure { () async throws(SecondFactorFailure) in try await bench.factors.verify(bench.user, code: old) } != nil,
                    "three steps old")
        }
    }

    @Test("a recovery code works once, however it is typed; new ones replace the old", arguments: TestBackend.available)
    func recovery(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await SecondFactorBench(store)
            let enrolment = try await bench.factors.startTOTP(for: bench.user)
            let current = try bench.code(enrolment)
            let codes = try await bench.factors.confirmTOTP(for: bench.user, code: current)
            #expect(try await bench.factors.verify(bench.user, code: " " + codes[0].uppercased() + " ") == ["otp"])
            #expect(try await store.recoveryCodesLeft(userID: "u1") == 9)
            #expect(await secondFactorFailure { () async throws(SecondFactorFailure) in try await bench.factors.verify(bench.user, code: codes[0]) } != nil)
            let events = try await store.auditEvents(AuditFilter(userID: "u1", kind: .recoveryCodeUsed), limit: 5)
            #expect(events.first?.detail == "9 left")
            let fresh = try await bench.factors.newRecoveryCodes(for: bench.user)
            #expect(await secondFactorFailure { () async throws(SecondFactorFailure) in try await bench.factors.verify(bench.user, code: codes[1]) } != nil)
            #expect(try await bench.factors.verify(bench.user, code: fresh[1]) == ["otp"])
            try await bench.factors.removeTOTP(for: bench.user)
            #expect(try await bench.factors.hasTOTP(bench.user) == false)
            #expect(try await store.recoveryCodesLeft(userID: "u1") == 0)
        }
    }

    @Test("a waiting sign-in opens sealed only as it was made, for five minutes, allowing another node's clock a little ahead")
    func pendingSignIn() async throws {
        try await withStore { store in
            let bench = try await SecondFactorBench(store)
            let now = bench.clock.clock.now()
            var pending = PendingSecondFactor(userID: bench.user.id, amr: ["pwd"], issuedAt: now, next: .authorization("i-1"))
            let sealed = try bench.factors.seal(pending)
            // Sealed, not signed: neither the text nor its base64 shows (a two-letter id may occur in
            // random base64 by chance, so the test looks for the whole encoded value).
            let plain = try JSONEncoder().encode(pending)
            let body = try #require(Data(base64Encoded: String(sealed.drop { $0 != ":" }.dropFirst().drop { $0 != ":" }.dropFirst())))
            #expect(body.count == plain.count + 28, "a nonce, the ciphertext, a tag")
            #expect(body.range(of: plain.prefix(12)) == nil && !sealed.contains(plain.base64EncodedString().prefix(12)),
                    "sealed, not signed: nothing readable")
            #expect(bench.factors.pending(sealed) == pending)
            #expect(bench.factors.pending(nil) == nil && bench.factors.pending("enc:v1:AAAA") == nil)
            var tampered = Array(sealed)
            tampered[tampered.count - 3] = tampered[tampered.count - 3] == "A" ? "B" : "A"
            #expect(bench.factors.pending(String(tampered)) == nil)
            // Made by a node whose clock is 20 s ahead: still good; a minute ahead: not.
            pending.issuedAt = now + 20
            #expect(bench.factors.pending(try bench.factors.seal(pending)) != nil)
            pending.issuedAt = now + 60
            #expect(bench.factors.pending(try bench.factors.seal(pending)) == nil)
            bench.clock.advance(by: PendingSecondFactor.lifetime)
            #expect(bench.factors.pending(sealed) == nil, "five minutes is all it waits")
        }
    }
}
