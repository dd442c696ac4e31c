import Foundation
import Logging
import NIOConcurrencyHelpers
import TesseraCore
import TesseraOpenSSL

/// The provider's signing keys: signs with the current key and publishes the current,
/// next and recently retired keys in the JWKS.
///
/// Keys live in the database so that every node and the admin CLI see the same ones;
/// ``reload()`` picks up a rotation made elsewhere (the server calls it periodically).
public final class KeyRing: Sendable {
    struct Snapshot: Sendable {
        var current: JWSSigningKey
        var published: [JWSVerificationKey]
        var jwks: Data
    }

    let store: any KeyStore
    let algorithm: JWSAlgorithm
    let gracePeriod: Int64
    let masterKey: MasterKey
    let clock: WallClock
    let logger: Logger?
    private let snapshot: NIOLockedValueBox<Snapshot?> = NIOLockedValueBox(nil)
    /// Keys already decoded, by kid: a key's material never changes, and decoding it
    /// (unsealing, parsing, the OpenSSL self-test) is not free.
    private let decoded: NIOLockedValueBox<[String: JWSSigningKey]> = NIOLockedValueBox([:])

    public init(store: any KeyStore, algorithm: JWSAlgorithm, gracePeriod: Int64, masterKey: MasterKey, clock: WallClock,
                logger: Logger? = nil) {
        self.store = store
        self.algorithm = algorithm
        self.gracePeriod = gracePeriod
        self.masterKey = masterKey
        self.clock = clock
        self.logger = logger
    }

    /// Makes sure a current and a next key exist, then loads them.
    public func start() async throws {
        try await sealClearKeys()
        try await store.ensureKeys(now: clock.now(), generate: makeKey)
        try await reload()
    }

    /// Re-reads the keys from the store.
    public func reload() async throws {
        let now = clock.now()
        let stored = try await store.signingKeys()
        var current: JWSSigningKey?
        var published: [JWSVerificationKey] = []
        let known = decoded.withLockedValue { $0 }
        var live: [String: JWSSigningKey] = [:]
        for key in stored {
            guard key.state != .retired || (key.retiredAt ?? 0) + gracePeriod > now else { continue }
            let signingKey = try known[key.kid] ?? decode(key)
            live[key.kid] = signingKey
            if key.state == .current { current = signingKey }
            published.append(signingKey.publicKey)
        }
        guard let current else { throw ConfigurationError("the database has no current signing key") }
        // Current first: the key clients should prefer.
        published.sort { $0.kid == current.kid && $1.kid != current.kid }
        let jwks = try CanonicalJSON.encode(JWKSet(keys: published.map(\.jwk)))
        snapshot.withLockedValue { $0 = Snapshot(current: current, published: published, jwks: jwks) }
        decoded.withLockedValue { $0 = live }
    }

    /// Every stored key with its state, and whether the JWKS publishes it (a retired key
    /// stays published for the grace period): the current key first, then the next, then the
    /// retired ones, newest first.
    public func list() async throws -> [SigningKeyInfo] {
        let now = clock.now()
        let order: [KeyState: Int] = [.current: 0, .next: 1, .retired: 2]
        return try await store.signingKeys().map { key in
            SigningKeyInfo(kid: key.kid, algorithm: key.algorithm, state: key.state, createdAt: key.createdAt,
                           activatedAt: key.activatedAt, retiredAt: key.retiredAt,
                           published: key.state != .retired || (key.retiredAt ?? 0) + gracePeriod > now)
        }.sorted { (order[$0.state] ?? 3, -$0.createdAt) < (order[$1.state] ?? 3, -$1.createdAt) }
    }

    /// Promotes the next key to current and creates a new next key.
    public func rotate() async throws -> String {
        let kid = try await store.rotateKeys(now: clock.now(), generate: makeKey)
        try await reload()
        return kid
    }

    private var loaded: Snapshot {
        get throws {
            guard let value = snapshot.withLockedValue({ $0 }) else { throw ConfigurationError("the key ring was not started") }
            return value
        }
    }

    /// The JWK Set document served at `jwks_uri`.
    public var jwksDocument: Data { get throws { try loaded.jwks } }

    public var signingAlgorithm: JWSAlgorithm { get throws { try currentKey.algorithm } }

    /// What signs tokens, for the start-up line: "RS256 (OpenSSL 3.0.19 27 Jan 2026)", "ES256 (swift-crypto)".
    public var signingDescription: String {
        get throws {
            let key = try currentKey
            let engine = key.engine is OpenSSLRSASigner ? LibCrypto.shared?.version ?? "OpenSSL" : "swift-crypto"
            return "\(key.algorithm.rawValue) (\(engine))"
        }
    }

    /// The key that signs now.
    package var currentKey: JWSSigningKey { get throws { try loaded.current } }

    /// Signs a claim set with the current key.
    public func sign(_ claims: [String: JSONValue], type: String = "JWT") throws -> String {
        try JWT.sign(claims, with: try currentKey, type: type)
    }

    /// Verifies a token's signature against the published keys.
    public func verify(_ token: JWT) throws {
        try token.verify(with: try loaded.published)
    }

    @Sendable func makeKey() throws -> StoredSigningKey {
        let kid = Base64URL.encode(SecureRandom.bytes(12))
        let key = try JWSSigningKey.generate(algorithm, kid: kid)
        let material = try masterKey.box.seal(key.privateKeyData, context: kid)
        return StoredSigningKey(kid: kid, algorithm: algorithm, state: .next, privateKey: material, createdAt: clock.now())
    }

    /// Seals the keys a database kept in clear (from before keys were always sealed).
    func sealClearKeys() async throws {
        for key in try await store.signingKeys() where !SecretBox.isSealed(key.privateKey) {
            guard let plain = Data(base64Encoded: key.privateKey) else { throw ConfigurationError("signing key \(key.kid) is corrupt") }
            if try await store.replacePrivateKey(kid: key.kid, old: key.privateKey, new: try masterKey.box.seal(plain, context: key.kid)) {
                logger?.notice("sealed a signing key stored in clear", metadata: ["kid": "\(key.kid)", "master_key": "\(masterKey.source)"])
            }
        }
    }

    func decode(_ key: StoredSigningKey) throws -> JWSSigningKey {
        let data: Data
        if SecretBox.isSealed(key.privateKey) {
            do { data = try masterKey.box.open(key.privateKey, context: key.kid) } catch {
                throw ConfigurationError("signing key \(key.kid) does not open with the master key from \(masterKey.source): "
                                         + "set TESSERA_MASTER_KEY (or master-key-file) to the key it was sealed with")
            }
        } else {
            guard let plain = Data(base64Encoded: key.privateKey) else { throw ConfigurationError("signing key \(key.kid) is corrupt") }
            data = plain
        }
        let signingKey = try JWSSigningKey(algorithm: key.algorithm, privateKeyData: data, kid: key.kid)
        // RS256 through OpenSSL where it is faster (RSAEngine), is there and signs identically
        // (OpenSSLRSASigner); nothing loads libcrypto otherwise.
        if RSAEngine.chosen == .openSSL, let engine = OpenSSLRSASigner.make(for: signingKey, logger: logger) {
            return signingKey.signing(through: engine)
        }
        return signingKey
    }
}

/// A signing key as an administrator sees it: never its private part.
public struct SigningKeyInfo: Sendable, Equatable {
    public var kid: String
    public var algorithm: JWSAlgorithm
    public var state: KeyState
    public var createdAt: Int64
    public var activatedAt: Int64?
    public var retiredAt: Int64?
    /// In the JWKS: current, next, or retired within the grace period.
    public var published: Bool
}
