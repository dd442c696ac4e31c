import Foundation
import Testing
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraInfrastructure
import TesseraOpenSSL
import TesseraSQL

@Suite("Key ring")
struct KeyRingTests {
    @Test("the JWKS publishes current and next; rotation keeps the old key until the grace period ends")
    func rotation() async throws {
        let clock = ManualClock()
        try await withProvider(clock: clock, configure: { $0.keyGracePeriod = 3600 }) { provider async throws in
            let keys = provider.keys
            let before = try JSONDecoder().decode(JWKSet.self, from: try keys.jwksDocument).keys.compactMap(\.kid)
            #expect(before.count == 2)
            let token = try JWT(parsing: try keys.sign(["sub": "x"]))
            let newKid = try await keys.rotate()
            #expect(newKid == before[1])
            #expect(try JWT(parsing: try keys.sign(["sub": "x"])).kid == newKid)
            try keys.verify(token)
            #expect(try JSONDecoder().decode(JWKSet.self, from: try keys.jwksDocument).keys.count == 3)
            clock.advance(by: 3601)
            try await keys.reload()
            #expect(throws: JOSEError.unknownKey(token.kid)) { try keys.verify(token) }
            #expect(try JSONDecoder().decode(JWKSet.self, from: try keys.jwksDocument).keys.count == 2)
        }
    }

    @Test("the configured algorithm signs new keys", arguments: JWSAlgorithm.allCases)
    func algorithms(_ algorithm: JWSAlgorithm) async throws {
        try await withProvider(configure: { $0.signingAlgorithm = algorithm }) { provider async throws in
            let token = try JWT(parsing: try provider.keys.sign([:]))
            #expect(token.algorithm == algorithm.rawValue)
        }
    }

    @Test("with a master key, private keys are sealed at rest and need that key to open")
    func sealedKeys() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("k.sqlite").path
        let master = Data(SecureRandom.bytes(32)).base64EncodedString()
        try await withProvider(configure: { $0.database = .sqliteFile(path); $0.masterKey = master }) { provider async throws in
            let stored = try await provider.store.signingKeys()
            #expect(stored.allSatisfy { $0.privateKey.hasPrefix("enc:v1:") })
        }
        await #expect(throws: ConfigurationError.self) {
            try await withProvider(configure: { $0.database = .sqliteFile(path) }) { _ in }
        }
        let wrong = Data(SecureRandom.bytes(32)).base64EncodedString()
        await #expect(throws: ConfigurationError.self) {
            try await withProvider(configure: { $0.database = .sqliteFile(path); $0.masterKey = wrong }) { _ in }
        }
        try await withProvider(configure: { $0.database = .sqliteFile(path); $0.masterKey = master }) { provider async throws in
            _ = try provider.keys.sign([:])
        }
    }

    @Test("the refresh-token key is sealed at rest, bound to its setting; one kept in clear is sealed at the next start, its value kept")
    func sealedRefreshTokenKey() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("k.sqlite").path
        let master = Data(SecureRandom.bytes(32)).base64EncodedString()
        let masterKey = MasterKey(box: try SecretBox(masterKey: master), source: "the test")
        let setting = SealedSetting("refresh_token_key")
        var first = ""
        try await withProvider(configure: { $0.database = .sqliteFile(path); $0.masterKey = master }) { provider async throws in
            let stored = try await provider.store.setting(setting.name) { "" }
            #expect(stored.hasPrefix("enc:v1:"))
            first = try await setting.value(store: provider.store, masterKey: masterKey, logger: nil)
            #expect(first.count == 43 && !stored.contains(first))
            // Another setting sealed under the same key doesn't open as this one.
            let other = try await SealedSetting("another_key").value(store: provider.store, masterKey: masterKey, logger: nil)
            let otherStored = try await provider.store.setting("another_key") { "" }
            #expect(other != first)
            #expect(try await provider.store.replaceSetting(setting.name, old: stored, new: otherStored))
            await #expect(throws: ConfigurationError.self) {
                _ = try await setting.value(store: provider.store, masterKey: masterKey, logger: nil)
            }
            // As a release that kept it in clear left it.
            #expect(try await provider.store.replaceSetting(setting.name, old: otherStored, new: first))
            #expect(try await provider.store.replaceSetting(setting.name, old: "not what is stored", new: "x") == false)
        }
        try await withProvider(configure: { $0.database = .sqliteFile(path); $0.masterKey = master }) { provider async throws in
            let stored = try await provider.store.setting(setting.name) { "" }
            #expect(stored.hasPrefix("enc:v1:"))
            #expect(try await setting.value(store: provider.store, masterKey: masterKey, logger: nil) == first)
            let wrong = MasterKey(box: try SecretBox(masterKey: Data(SecureRandom.bytes(32)).base64EncodedString()), source: "another key")
            await #expect(throws: ConfigurationError.self) {
                _ = try await setting.value(store: provider.store, masterKey: wrong, logger: nil)
            }
        }
    }

    // The project's machines have OpenSSL 3 (Debian's libssl3); elsewhere the server falls
    // back to swift-crypto and these tests have nothing to compare, so they skip.
    @Test("RS256 keys sign through OpenSSL on this machine, byte for byte as swift-crypto does",
          .enabled(if: LibCrypto.shared != nil, "libcrypto.so.3 is not on this machine"))
    func openSSLSignatures() async throws {
        let key = try JWSSigningKey.generate(.rs256, kid: "k1")
        let engine = try #require(OpenSSLRSASigner.make(for: key))
        for length in [0, 1, 57, 1_000, 100_000] {
            let input = Data(SecureRandom.bytes(length))
            let openSSL = try #require(engine.openSSLSignature(for: input))
            #expect(openSSL == (try key.signature(for: input)))
            #expect(key.publicKey.isValid(signature: openSSL, for: input))
        }
        // Contexts are pooled: concurrent signers each get their own and all agree.
        let input = Data("concurrent".utf8), expected = try key.signature(for: input)
        let results = await withTaskGroup(of: Data?.self) { group in
            for _ in 0..<32 { group.addTask { engine.openSSLSignature(for: input) } }
            return await group.reduce(into: [Data?]()) { $0.append($1) }
        }
        #expect(results.count == 32 && results.allSatisfy { $0 == expected })
        // Not RSA: no engine.
        #expect(OpenSSLRSASigner.make(for: try JWSSigningKey.generate(.es256, kid: "e")) == nil)
    }

    @Test("OpenSSL signs where the CPU has AVX-512 IFMA or the setting names it; swift-crypto elsewhere")
    func rsaEngineChoice() {
        let ifma: Set<Substring> = ["fpu", "avx2", "avx512f", "avx512ifma", "adx"], plain: Set<Substring> = ["fpu", "avx2", "adx"]
        #expect(RSAEngine.choose(setting: nil, cpuFlags: ifma) == .openSSL)
        #expect(RSAEngine.choose(setting: nil, cpuFlags: plain) == .boringSSL)
        #expect(RSAEngine.choose(setting: nil, cpuFlags: []) == .boringSSL)
        #expect(RSAEngine.choose(setting: "auto", cpuFlags: ifma) == .openSSL)
        #expect(RSAEngine.choose(setting: "BoringSSL", cpuFlags: ifma) == .boringSSL)
        #expect(RSAEngine.choose(setting: "openssl", cpuFlags: plain) == .openSSL)
        let cpuinfo = "processor\t: 0\nflags\t\t: fpu vme avx512f avx512ifma\nbugs\t\t: spectre_v1\n\nprocessor\t: 1\nflags\t\t: fpu\n"
        #expect(RSAEngine.firstFlags(cpuinfo) == ["fpu", "vme", "avx512f", "avx512ifma"])
        #expect(RSAEngine.firstFlags("no flags here") == [])
    }

    @Test("without AVX-512 IFMA the key ring signs RS256 with swift-crypto",
          .enabled(if: RSAEngine.chosen == .boringSSL, "this machine signs RS256 through OpenSSL"))
    func keyRingSkipsOpenSSL() async throws {
        try await withProvider(configure: { $0.signingAlgorithm = .rs256 }) { provider async throws in
            let token = try JWT(parsing: try provider.keys.sign(["sub": "x"]))
            try provider.keys.verify(token)
            #expect(try provider.keys.currentKey.engine == nil)
            #expect(try provider.keys.signingDescription == "RS256 (swift-crypto)")
        }
    }

    @Test("the key ring signs RS256 through OpenSSL and its tokens verify with swift-crypto",
          .enabled(if: RSAEngine.chosen == .openSSL && LibCrypto.shared != nil, "this machine signs RS256 with swift-crypto"))
    func keyRingUsesOpenSSL() async throws {
        try await withProvider(configure: { $0.signingAlgorithm = .rs256 }) { provider async throws in
            let token = try JWT(parsing: try provider.keys.sign(["sub": "x"]))
            try provider.keys.verify(token)
            let current = try provider.keys.currentKey
            #expect(current.engine is OpenSSLRSASigner)
            let plain = try JWSSigningKey(algorithm: .rs256, privateKeyData: current.privateKeyData, kid: current.kid)
            #expect(plain.engine == nil)
            #expect(try plain.signature(for: Data("abc".utf8)) == (try current.signature(for: Data("abc".utf8))))
        }
    }

    @Test("a master key must be 32 bytes")
    func masterKeyFormat() {
        #expect(throws: ConfigurationError.self) { try SecretBox(masterKey: "too short") }
        #expect(throws: Never.self) { try SecretBox(masterKey: String(repeating: "ab", count: 32)) }
    }
}

@Suite("Password hashing")
struct PasswordHasherTests {
    @Test("a hash verifies its password only, and is salted")
    func verify() async throws {
        let hasher = PasswordHasher(parameters: .testing, threads: NIOHashingThreads())
        let hash = try await hasher.hash("correct horse")
        #expect(hash.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        #expect(try await hasher.hash("correct horse") != hash)
        #expect(try await hasher.verify("correct horse", against: hash).matches)
        #expect(try await !hasher.verify("correct horsE", against: hash).matches)
        #expect(try await !hasher.verify("anything", against: "garbage").matches)
    }

    @Test("no account never matches, but costs a hash")
    func decoy() async throws {
        let hasher = PasswordHasher(parameters: .testing, threads: NIOHashingThreads())
        #expect(try await !hasher.verify("x", against: nil).matches)
        #expect(PasswordHasher.parse(hasher.decoy) != nil)
    }

    @Test("a hash made with other parameters asks to be rehashed")
    func rehash() async throws {
        let old = try await PasswordHasher(parameters: ScryptParameters(logN: 9, r: 8, p: 1), threads: NIOHashingThreads()).hash("pw-12345")
        let result = try await PasswordHasher(parameters: .testing, threads: NIOHashingThreads()).verify("pw-12345", against: old)
        #expect(result.matches && result.needsRehash)
    }

    @Test("a stored hash costlier than the caps is refused without being run", arguments: [
        // Each would take seconds and gigabytes if it ran: the test would time out, not pass.
        "$scrypt$ln=24,r=32,p=16$c2FsdHNhbHRzYWx0c2FsdA$" + String(repeating: "A", count: 43),
        "$argon2id$v=19$m=1048576,t=32,p=1$c2FsdHNhbHRzYWx0$" + String(repeating: "A", count: 43),
        "$pbkdf2-sha256$10000000$c2FsdHNhbHQ$" + String(repeating: "A", count: 43),
        "$2b$16$" + String(repeating: "a", count: 53),
    ])
    func overCap(stored: String) async throws {
        // Refused by the parsers, before any derivation: nothing of the hash's cost is spent.
        if stored.hasPrefix("$scrypt$") {
            #expect(PasswordHasher.parse(stored) == nil)
        } else {
            #expect(throws: ImportedHashError.self) { _ = try ImportedPasswordHash.verify("any guess", against: stored) }
        }
        #expect(try await !PasswordHasher(parameters: .testing, threads: NIOHashingThreads()).verify("any guess", against: stored).matches)
    }

    @Test("the scrypt caps: memory 128 MiB, work 2^21, and the server's own parameters within them")
    func scryptCaps() {
        #expect(PasswordCostCaps.scryptProblem(logN: 15, r: 8, p: 3) == nil)
        #expect(PasswordCostCaps.scryptProblem(logN: 17, r: 8, p: 1) == nil)
        #expect(PasswordCostCaps.scryptProblem(logN: 18, r: 8, p: 1)?.contains("128 MiB") == true)
        #expect(PasswordCostCaps.scryptProblem(logN: 15, r: 8, p: 9)?.contains("2^21") == true)
        #expect(PasswordHasher.problem(with: "$scrypt$ln=22,r=8,p=1$c2FsdA$" + String(repeating: "A", count: 43))?.contains("4096 MiB") == true)
        #expect(PasswordHasher.problem(with: "$scrypt$ln=x$c2FsdA$AAAA")?.contains("must be $scrypt$") == true)
    }

    @Test("the default parameters are OWASP's")
    func defaults() {
        #expect(ServerConfiguration().passwordHashing == ScryptParameters(logN: 15, r: 8, p: 3))
    }
}

@Suite("Client secrets")
struct ClientSecretTests {
    @Test("secrets are stored salted and compared exactly")
    func hashing() {
        let stored = ClientSecretHash.make("secret-value")
        #expect(!stored.contains("secret-value"))
        #expect(ClientSecretHash.verify("secret-value", against: stored))
        #expect(!ClientSecretHash.verify("secret-valuE", against: stored))
        #expect(ClientSecretHash.make("secret-value") != stored)
    }
}
