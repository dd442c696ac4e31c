import Foundation
import Logging
import Testing
import TesseraCore
import TesseraDomain
import TesseraSQL
import TesseraTestSupport

/// ``Passkeys`` over a real SQL store, with a software authenticator playing the person's device.
struct PasskeyBench {
    static let origin = "https://id.example"
    let store: SQLStore
    let clock = ManualClock()
    let passkeys: Passkeys
    let user: User

    init(_ store: SQLStore) async throws {
        self.store = store
        passkeys = Passkeys(store: store, settings: PasskeySettings(relyingPartyID: "id.example", relyingPartyName: "Example ID",
                                                                    origins: [Self.origin]),
                            audit: AuditTrail(store: store, clock: clock.clock, logger: Logger(label: "test")), clock: clock.clock)
        let now = clock.clock.now()
        user = User(id: "u1", email: "owner@example.com", emailVerified: true, profile: ["name": .string("Ann Owner")],
                    createdAt: now, updatedAt: now)
        try await store.insert(user)
    }

    /// A device with a passkey registered to the user.
    func registered(_ configure: (inout SoftwareAuthenticator) -> Void = { _ in }) async throws -> SoftwareAuthenticator {
        var device = SoftwareAuthenticator(origin: Self.origin)
        configure(&device)
        _ = try await passkeys.register(device.register(try await passkeys.creationOptions(for: user)), for: user, name: "Phone")
        return device
    }

    func signIn(_ device: inout SoftwareAuthenticator, binding: String? = "page") async throws(PasskeyFailure) -> Passkeys.SignedIn {
        let options: PasskeyRequestOptions
        do { options = try await passkeys.requestOptions(binding: binding) } catch { throw .unavailable(error) }
        return try await passkeys.signIn(device.assert(options), binding: binding)
    }
}

/// The failure `body` ends with, or nil when it succeeds.
func passkeyFailure<T>(_ body: () async throws(PasskeyFailure) -> T) async -> PasskeyFailure? {
    do {
        _ = try await body()
        return nil
    } catch { return error }
}

extension PasskeyFailure {
    var name: String { String(describing: self).components(separatedBy: "(")[0] }
}

@Suite("Passkeys")
struct PasskeyTests {
    @Test("registered, then signs in without an address: the account, its methods, the counter recorded", arguments: TestBackend.available)
    func registerAndSignIn(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await PasskeyBench(store)
            let options = try await bench.passkeys.creationOptions(for: bench.user)
            #expect(options.rp.id == "id.example" && options.user.name == "owner@example.com" && options.user.displayName == "Ann Owner")
            #expect(options.user.id == Base64URL.encode(Passkeys.userHandle(for: "u1")), "an opaque handle, not the id")
            #expect(options.authenticatorSelection.residentKey == "required" && options.attestation == "none")
            var device = try await bench.registered()
            let stored = try #require(try await store.passkeys(userID: "u1").first)
            #expect(stored.id == device.credentialIDText && stored.name == "Phone" && stored.transports == ["internal"])
            #expect(stored.signCount == 1 && !stored.backupEligible && stored.attestationFormat == "none")
            let signedIn = try await bench.signIn(&device)
            #expect(signedIn.user.id == "u1" && signedIn.amr == ["hwk", "pin", "mfa"])
            let used = try #require(try await store.passkey(id: device.credentialIDText))
            #expect(used.signCount == 2 && used.lastUsedAt == bench.clock.clock.now())
            // The next registration's options name it, so the device says it has one.
            #expect(try await bench.passkeys.creationOptions(for: bench.user).excludeCredentials.map(\.id) == [device.credentialIDText])
        }
    }

    @Test("a challenge is single use, expires, and works only for what it was given for", arguments: TestBackend.available)
    func challenges(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await PasskeyBench(store)
            var device = try await bench.registered()
            let options = try await bench.passkeys.requestOptions(binding: "page-1")
            let answer = device.assert(options)
            _ = try await bench.passkeys.signIn(answer, binding: "page-1")
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in try await bench.passkeys.signIn(answer, binding: "page-1") }?.name
                    == "challengeExpired", "a replayed answer finds no challenge")
            let other = device.assert(try await bench.passkeys.requestOptions(binding: "page-1"))
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in try await bench.passkeys.signIn(other, binding: "page-2") }?.name
                    == "invalid", "given to another page")
            let late = device.assert(try await bench.passkeys.requestOptions(binding: nil))
            bench.clock.advance(by: 301)
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in try await bench.passkeys.signIn(late, binding: nil) }?.name
                    == "challengeExpired")
            // A registration's challenge doesn't sign in.
            var registering = SoftwareAuthenticator(origin: PasskeyBench.origin)
            let creation = try await bench.passkeys.creationOptions(for: bench.user)
            _ = registering.register(creation)
            let misused = device.assert(PasskeyRequestOptions(challenge: creation.challenge, timeout: 1, rpId: "id.example",
                                                              allowCredentials: [], userVerification: "preferred"))
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in try await bench.passkeys.signIn(misused, binding: nil) }?.name
                    == "invalid")
        }
    }

    @Test("refused: another origin, another account's user handle, a changed BE flag, an unknown passkey, a disabled account", arguments: TestBackend.available)
    func refusals(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await PasskeyBench(store)
            var device = try await bench.registered()
            var phishing = device
            phishing.origin = "https://id.example.evil"
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in try await bench.signIn(&phishing) }?.name == "invalid")
            var wrongHandle = device
            wrongHandle.userHandle = Base64URL.encode(Passkeys.userHandle(for: "someone-else"))
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in try await bench.signIn(&wrongHandle) }?.name == "invalid")
            var resynced = device
            resynced.backupEligible = true
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in try await bench.signIn(&resynced) }?.name == "invalid",
                    "backup eligibility is fixed at registration")
            var stranger = SoftwareAuthenticator(origin: PasskeyBench.origin)
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in try await bench.signIn(&stranger) }?.name == "unknownPasskey")
            try await store.setDisabled(userID: "u1", at: bench.clock.clock.now(), now: bench.clock.clock.now())
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in try await bench.signIn(&device) }?.name == "accountDisabled")
        }
    }

    @Test("an operator's Android app signs with its certificate's origin; another app's origin is refused", arguments: TestBackend.available)
    func androidOrigins(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await PasskeyBench(store)
            let fingerprint = (0..<32).map { String(format: "%02X", $0 * 7 % 256) }.joined(separator: ":")
            let origin = try #require(Passkeys.androidOrigin(fingerprint))
            #expect(origin == "android:apk-key-hash:" + Base64URL.encode(Data((0..<32).map { UInt8($0 * 7 % 256) })))
            #expect(Passkeys.androidOrigin("AB:CD") == nil && Passkeys.androidOrigin(String(repeating: "ZZ:", count: 31) + "ZZ") == nil)
            var android = SoftwareAuthenticator(origin: origin)
            let options = try await bench.passkeys.creationOptions(for: bench.user)
            let made = android.register(options)
            let refused = await passkeyFailure { () async throws(PasskeyFailure) in try await bench.passkeys.register(made, for: bench.user, name: nil) }
            #expect(refused?.name == "invalid", "not yet an operator's app")
            var app = Client(id: "android", name: "Android", authMethod: .none, redirectURIs: ["com.example:/cb"],
                             grantTypes: [GrantType.authorizationCode], scopes: ScopeSet(["openid"]), firstParty: true, createdAt: 1)
            app.appLinks.androidApps = [.init(packageName: "com.example.app", certificateFingerprints: [fingerprint])]
            try await store.insert(app)
            _ = try await bench.passkeys.register(android.register(try await bench.passkeys.creationOptions(for: bench.user)),
                                                  for: bench.user, name: nil)
            let signedIn = try await bench.signIn(&android)
            #expect(signedIn.user.id == bench.user.id)
        }
    }

    @Test("a counter that goes backwards blocks the passkey, unless it's a synced one that reports 0", arguments: TestBackend.available)
    func counters(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await PasskeyBench(store)
            var device = try await bench.registered()
            _ = try await bench.signIn(&device)
            var clone = device
            clone.signCount = 0
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in try await bench.signIn(&clone) }?.name == "suspended")
            #expect(try await store.passkey(id: device.credentialIDText)?.isSuspended == true)
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in try await bench.signIn(&device) }?.name == "suspended",
                    "blocked for the original too")
            let events = try await store.auditEvents(AuditFilter(userID: "u1"), limit: 10)
            #expect(events.contains { $0.kind == .passkeySuspended && $0.actor == .system })

            var synced = try await bench.registered { device in
                device.backupEligible = true
                device.backedUp = true
                device.counterStep = 0
            }
            for _ in 0..<2 { #expect(try await bench.signIn(&synced).amr == ["swk", "pin", "mfa"]) }
        }
    }

    @Test("one registration per device; renamed within limits; the last way in isn't removed", arguments: TestBackend.available)
    func management(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await PasskeyBench(store)
            var device = try await bench.registered()
            let again = device.register(try await bench.passkeys.creationOptions(for: bench.user))
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in try await bench.passkeys.register(again, for: bench.user, name: nil) }?.name
                    == "alreadyRegistered")
            let id = device.credentialIDText
            #expect(try await bench.passkeys.rename(id, of: bench.user, to: "  Work laptop "))
            #expect(try await store.passkey(id: id)?.name == "Work laptop")
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in try await bench.passkeys.rename(id, of: bench.user, to: "") }?.name
                    == "invalidName")
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in
                try await bench.passkeys.rename(id, of: bench.user, to: String(repeating: "x", count: 65)) }?.name == "invalidName")
            #expect(try await bench.passkeys.rename("nope", of: bench.user, to: "x") == false)
            // Without a password, a verified address or a provider, the only passkey stays.
            var bare = bench.user
            bare.emailVerified = false
            #expect(await passkeyFailure { () async throws(PasskeyFailure) in try await bench.passkeys.remove(id, of: bare) }?.name == "lastWayIn")
            #expect(try await bench.passkeys.remove(id, of: bench.user))
            #expect(try await store.passkeys(userID: "u1").isEmpty)
            #expect(try await bench.passkeys.remove(id, of: bench.user) == false)
        }
    }
}
