import Crypto
import CryptoExtras
import Foundation

/// A public key that verifies JWS signatures.
public struct JWSVerificationKey: Sendable {
    enum Backing: Sendable {
        case rsa(_RSA.Signing.PublicKey)
        case p256(P256.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
    }
    let backing: Backing
    /// The key's `kid` (RFC 7517 §4.5); nil when it has none.
    public let kid: String?
    /// The algorithm the key verifies, fixed by its type: `RS256`, `ES256` or `EdDSA`.
    public let algorithm: JWSAlgorithm

    init(backing: Backing, kid: String?) {
        self.backing = backing
        self.kid = kid
        switch backing {
        case .rsa: algorithm = .rs256
        case .p256: algorithm = .es256
        case .ed25519: algorithm = .edDSA
        }
    }

    /// Builds a verification key from a public JWK. RSA keys shorter than 2048 bits are refused.
    public init(jwk: JWK) throws {
        do {
            try self.init(checking: jwk)
        } catch let error as JOSEError {
            throw error
        } catch {
            throw JOSEError.invalidKey("the \(jwk.kty) key is not usable: \(error)")
        }
    }

    private init(checking jwk: JWK) throws {
        func member(_ value: String?, _ name: String) throws -> Data {
            guard let value, let data = Base64URL.decode(value), !data.isEmpty else {
                throw JOSEError.invalidKey("JWK member '\(name)' is missing or not base64url")
            }
            return data
        }
        switch jwk.kty {
        case "RSA":
            if let alg = jwk.alg, alg != "RS256" { throw JOSEError.invalidKey("RSA key with alg \(alg) is not supported") }
            let key = try _RSA.Signing.PublicKey(n: try member(jwk.n, "n"), e: try member(jwk.e, "e"))
            guard key.keySizeInBits >= 2048 else { throw JOSEError.invalidKey("RSA keys must have at least 2048 bits") }
            self.init(backing: .rsa(key), kid: jwk.kid)
        case "EC":
            guard jwk.crv == "P-256" else { throw JOSEError.invalidKey("EC curve \(jwk.crv ?? "none") is not supported (P-256 only)") }
            let x = try member(jwk.x, "x"), y = try member(jwk.y, "y")
            guard x.count == 32, y.count == 32 else { throw JOSEError.invalidKey("P-256 coordinates must be 32 bytes") }
            self.init(backing: .p256(try P256.Signing.PublicKey(rawRepresentation: x + y)), kid: jwk.kid)
        case "OKP":
            guard jwk.crv == "Ed25519" else { throw JOSEError.invalidKey("OKP curve \(jwk.crv ?? "none") is not supported (Ed25519 only)") }
            self.init(backing: .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: try member(jwk.x, "x"))), kid: jwk.kid)
        default:
            throw JOSEError.invalidKey("key type \(jwk.kty) is not supported")
        }
    }

    /// Whether `signature` is valid for `signingInput` under this key.
    public func isValid(signature: Data, for signingInput: Data) -> Bool {
        switch backing {
        case .rsa(let key):
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature),
                                        for: SHA256.hash(data: signingInput), padding: .insecurePKCS1v1_5)
        case .p256(let key):
            guard let sig = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(sig, for: SHA256.hash(data: signingInput))
        case .ed25519(let key):
            return key.isValidSignature(signature, for: signingInput)
        }
    }

    /// The public JWK of this key.
    public var jwk: JWK {
        switch backing {
        case .rsa(let key):
            let primitives = try! key.getKeyPrimitives()
            return JWK(kty: "RSA", kid: kid, use: "sig", alg: algorithm.rawValue,
                       n: Base64URL.encode(primitives.modulus), e: Base64URL.encode(primitives.publicExponent))
        case .p256(let key):
            let raw = key.rawRepresentation
            return JWK(kty: "EC", kid: kid, use: "sig", alg: algorithm.rawValue, crv: "P-256",
                       x: Base64URL.encode(raw.prefix(32)), y: Base64URL.encode(raw.suffix(32)))
        case .ed25519(let key):
            return JWK(kty: "OKP", kid: kid, use: "sig", alg: algorithm.rawValue, crv: "Ed25519",
                       x: Base64URL.encode(key.rawRepresentation))
        }
    }
}

/// Computes a key's JWS signatures with another implementation than swift-crypto's (the
/// server signs RSA through OpenSSL where it is faster). It must produce exactly the bytes
/// the key itself would: RS256 signatures are deterministic, so this can be checked.
public protocol JWSSignatureEngine: Sendable {
    /// The signature of a JWS signing input (RFC 7515 §5.1), byte for byte what the key itself would make.
    func signature(for signingInput: Data) throws -> Data
}

/// A private key that signs JWS, with its `kid`.
public struct JWSSigningKey: Sendable {
    enum Backing: Sendable {
        case rsa(_RSA.Signing.PrivateKey)
        case p256(P256.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
    }
    let backing: Backing
    /// The key's `kid` (RFC 7517 §4.5), put in the header of every JWS it signs.
    public let kid: String
    /// The public half, which verifies its signatures.
    public let publicKey: JWSVerificationKey
    /// Set by ``signing(through:)``; nil signs with swift-crypto.
    public private(set) var engine: (any JWSSignatureEngine)?

    init(backing: Backing, kid: String) {
        self.backing = backing
        self.kid = kid
        switch backing {
        case .rsa(let key): publicKey = JWSVerificationKey(backing: .rsa(key.publicKey), kid: kid)
        case .p256(let key): publicKey = JWSVerificationKey(backing: .p256(key.publicKey), kid: kid)
        case .ed25519(let key): publicKey = JWSVerificationKey(backing: .ed25519(key.publicKey), kid: kid)
        }
    }

    /// The algorithm the key signs with, fixed by its type: `RS256`, `ES256` or `EdDSA`.
    public var algorithm: JWSAlgorithm { publicKey.algorithm }

    /// Generates a new key: RSA 2048, P-256 or Ed25519.
    public static func generate(_ algorithm: JWSAlgorithm, kid: String) throws -> JWSSigningKey {
        switch algorithm {
        case .rs256: JWSSigningKey(backing: .rsa(try _RSA.Signing.PrivateKey(keySize: .bits2048)), kid: kid)
        case .es256: JWSSigningKey(backing: .p256(P256.Signing.PrivateKey()), kid: kid)
        case .edDSA: JWSSigningKey(backing: .ed25519(Curve25519.Signing.PrivateKey()), kid: kid)
        }
    }

    /// The private key in a portable encoding: PKCS#8 DER for RSA and P-256, the 32-byte seed for Ed25519.
    public var privateKeyData: Data {
        switch backing {
        case .rsa(let key): key.pkcs8DERRepresentation
        case .p256(let key): key.derRepresentation
        case .ed25519(let key): key.rawRepresentation
        }
    }

    /// Restores a key written by ``privateKeyData``.
    public init(algorithm: JWSAlgorithm, privateKeyData data: Data, kid: String) throws {
        switch algorithm {
        case .rs256: self.init(backing: .rsa(try _RSA.Signing.PrivateKey(derRepresentation: data)), kid: kid)
        case .es256: self.init(backing: .p256(try P256.Signing.PrivateKey(derRepresentation: data)), kid: kid)
        case .edDSA: self.init(backing: .ed25519(try Curve25519.Signing.PrivateKey(rawRepresentation: data)), kid: kid)
        }
    }

    /// A P-256 key from PEM (PKCS#8 or SEC1): Sign in with Apple's `.p8` key files.
    public init(es256PEM pem: String, kid: String) throws {
        do {
            self.init(backing: .p256(try P256.Signing.PrivateKey(pemRepresentation: pem)), kid: kid)
        } catch {
            throw JOSEError.invalidKey("not a P-256 private key in PEM: \(error)")
        }
    }

    /// This key, with its signatures computed by `engine`.
    public func signing(through engine: any JWSSignatureEngine) -> JWSSigningKey {
        var key = self
        key.engine = engine
        return key
    }

    /// Signs the JWS signing input (RFC 7515 §5.1).
    public func signature(for signingInput: Data) throws -> Data {
        if let engine { return try engine.signature(for: signingInput) }
        return switch backing {
        case .rsa(let key):
            try key.signature(for: SHA256.hash(data: signingInput), padding: .insecurePKCS1v1_5).rawRepresentation
        case .p256(let key):
            try key.signature(for: SHA256.hash(data: signingInput)).rawRepresentation
        case .ed25519(let key):
            try key.signature(for: signingInput)
        }
    }
}

/// Why a JWS, JWT or JWK was refused.
public enum JOSEError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The token is not a compact JWS with a JSON header and payload, or repeats a member or uses `crit`;
    /// with the reason.
    case malformed(String)
    /// A key can't be used: a member missing or malformed, an unsupported type or curve, an RSA key under
    /// 2048 bits; with the reason.
    case invalidKey(String)
    /// The header's `alg` is not a ``JWSAlgorithm``; with its value, `(missing)` when absent.
    case unsupportedAlgorithm(String)
    /// No key of the header's algorithm has its `kid`; with that `kid`, nil when the header has none.
    case unknownKey(String?)
    /// No candidate key verifies the signature.
    case badSignature

    public var description: String {
        switch self {
        case .malformed(let why): "malformed JWT: \(why)"
        case .invalidKey(let why): "invalid key: \(why)"
        case .unsupportedAlgorithm(let alg): "unsupported algorithm \(alg)"
        case .unknownKey(let kid): "no key with kid \(kid ?? "(none)")"
        case .badSignature: "signature does not verify"
        }
    }
}
