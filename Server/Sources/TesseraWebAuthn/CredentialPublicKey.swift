import Crypto
import CryptoExtras
import Foundation

/// The COSE signature algorithms this library verifies (IANA "COSE Algorithms"; WebAuthn §5.8.5
/// `COSEAlgorithmIdentifier`). The raw value is the number a relying party lists in
/// `pubKeyCredParams` and that a COSE key's `alg` carries.
public enum COSEAlgorithm: Int, Sendable, CaseIterable {
    /// ECDSA with SHA-256 on P-256 (RFC 9053 §2.1); signatures DER-encoded (WebAuthn §6.5.5).
    case es256 = -7
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8230 §2, RFC 8017 §8.2), keys of 2048 bits or more.
    case rs256 = -257
    /// EdDSA (RFC 9053 §2.2), on Ed25519 only.
    case edDSA = -8

    /// The name JOSE and the specifications use: ES256, RS256, EdDSA.
    public var name: String {
        switch self {
        case .es256: "ES256"
        case .rs256: "RS256"
        case .edDSA: "EdDSA"
        }
    }
}

/// A credential public key: a COSE_Key (RFC 9052 §7) as the authenticator gave it in the
/// attested credential data (WebAuthn §6.5.1), parsed into a key that verifies signatures.
///
/// Accepted, each with its `alg` present and matching its key type (§6.5.1: "MUST contain the
/// alg parameter and MUST NOT contain any other OPTIONAL parameters"):
/// - EC2 (kty 2), crv 1 (P-256), alg -7 (ES256), `x` and `y` of 32 bytes (RFC 9053 §7.1.1);
/// - OKP (kty 1), crv 6 (Ed25519), alg -8 (EdDSA), `x` of 32 bytes (RFC 9053 §7.2);
/// - RSA (kty 3), alg -257 (RS256), `n` of 2048 bits or more and `e` (RFC 8230 §4).
///
/// ``coseBytes`` keeps the exact bytes: store those, and make the key again from them with
/// ``init(cose:)`` when the credential signs in.
public struct CredentialPublicKey: Sendable, Equatable {
    /// The COSE algorithm the key is for.
    public let algorithm: COSEAlgorithm
    /// The COSE_Key bytes exactly as read.
    public let coseBytes: Data
    private let key: Key

    private enum Key: Sendable {
        case p256(P256.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
    }

    /// COSE key parameter labels (RFC 9052 §7.1; RFC 9053 §7.1, §7.2; RFC 8230 §4).
    private enum Label {
        static let kty: Int64 = 1
        static let alg: Int64 = 3
        static let crv: Int64 = -1
        static let x: Int64 = -2, n: Int64 = -1
        static let y: Int64 = -3, e: Int64 = -2
    }

    /// Parses a COSE_Key that fills `cose` exactly (as stored from ``coseBytes``).
    public init(cose: Data) throws(WebAuthnError) {
        let value = try CBORDecoder.decode(cose)
        try self.init(parsed: value, bytes: cose)
    }

    /// Makes the key from the decoded COSE_Key `value`, whose encoding is `bytes`.
    init(parsed value: CBORValue, bytes: Data) throws(WebAuthnError) {
        guard let parameters = value.mapValue else { throw .badPublicKey("the COSE key is not a CBOR map") }
        guard let algorithmNumber = parameters[.integer(Label.alg)]?.integerValue else {
            throw .badPublicKey("the COSE key has no integer alg (label 3)")
        }
        guard let algorithm = Int(exactly: algorithmNumber).flatMap(COSEAlgorithm.init(rawValue:)) else {
            throw .unsupportedAlgorithm(algorithmNumber)
        }
        guard let keyType = parameters[.integer(Label.kty)]?.integerValue else {
            throw .badPublicKey("the COSE key has no integer kty (label 1)")
        }
        func byteString(_ label: Int64, _ name: String) throws(WebAuthnError) -> Data {
            guard let value = parameters[.integer(label)]?.bytesValue else {
                throw .badPublicKey("the \(algorithm.name) key has no byte string \(name) (label \(label))")
            }
            return value
        }
        func requireOnly(_ labels: Set<Int64>) throws(WebAuthnError) {
            for label in parameters.keys where !labels.contains(label.integerValue ?? .min) {
                throw .badPublicKey("the \(algorithm.name) key has a parameter it must not have (\(label))")
            }
        }
        func requireCurve(_ expected: Int64, _ name: String) throws(WebAuthnError) {
            guard let curve = parameters[.integer(Label.crv)]?.integerValue else {
                throw .badPublicKey("the \(algorithm.name) key has no integer crv (label -1)")
            }
            guard curve == expected else { throw .unsupportedAlgorithm(algorithmNumber, "on COSE curve \(curve); only \(expected), \(name), is") }
        }

        switch algorithm {
        case .es256:
            guard keyType == 2 else { throw .badPublicKey("alg -7 (ES256) needs kty 2 (EC2), the key has kty \(keyType)") }
            try requireCurve(1, "P-256")
            try requireOnly([Label.kty, Label.alg, Label.crv, Label.x, Label.y])
            let x = try byteString(Label.x, "x"), y = try byteString(Label.y, "y")
            guard x.count == 32, y.count == 32 else {
                throw .badPublicKey("P-256 coordinates are 32 bytes each, the key has \(x.count) and \(y.count)")
            }
            do {
                key = .p256(try P256.Signing.PublicKey(x963Representation: Data([0x04]) + x + y))
            } catch {
                throw .badPublicKey("the ES256 key's point is not on P-256")
            }
        case .edDSA:
            guard keyType == 1 else { throw .badPublicKey("alg -8 (EdDSA) needs kty 1 (OKP), the key has kty \(keyType)") }
            try requireCurve(6, "Ed25519")
            try requireOnly([Label.kty, Label.alg, Label.crv, Label.x])
            let x = try byteString(Label.x, "x")
            guard x.count == 32 else { throw .badPublicKey("an Ed25519 key is 32 bytes, the key has \(x.count)") }
            do {
                key = .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: x))
            } catch {
                throw .badPublicKey("the Ed25519 key is not usable")
            }
        case .rs256:
            guard keyType == 3 else { throw .badPublicKey("alg -257 (RS256) needs kty 3 (RSA), the key has kty \(keyType)") }
            try requireOnly([Label.kty, Label.alg, Label.n, Label.e])
            let n = try byteString(Label.n, "n"), e = try byteString(Label.e, "e")
            let significant = n.drop { $0 == 0 }
            let bits = significant.first.map { significant.count * 8 - $0.leadingZeroBitCount } ?? 0
            guard bits >= 2048 else { throw .badPublicKey("the RSA modulus has \(bits) bits; 2048 or more are required") }
            // BoringSSL's own ceiling (OPENSSL_RSA_MAX_MODULUS_BITS); checked here so the reason is ours.
            guard bits <= 16384 else { throw .badPublicKey("the RSA modulus has \(bits) bits; 16384 at most are accepted") }
            do {
                key = .rsa(try _RSA.Signing.PublicKey(n: n, e: e))
            } catch {
                throw .badPublicKey("the RSA key is not usable (its exponent or modulus is refused)")
            }
        }
        self.algorithm = algorithm
        self.coseBytes = bytes
    }

    /// Whether `signature` is this key's signature of `data` under ``algorithm`` (WebAuthn
    /// §6.5.5): DER-encoded ECDSA for ES256, PKCS #1 v1.5 for RS256, the 64-byte EdDSA
    /// signature for Ed25519. Any other length or encoding is simply not valid.
    public func isValidSignature(_ signature: Data, for data: Data) -> Bool {
        switch key {
        case .p256(let publicKey):
            guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return publicKey.isValidSignature(parsed, for: data)
        case .rsa(let publicKey):
            let parsed = _RSA.Signing.RSASignature(rawRepresentation: signature)
            return publicKey.isValidSignature(parsed, for: data, padding: .insecurePKCS1v1_5)
        case .ed25519(let publicKey):
            return publicKey.isValidSignature(signature, for: data)
        }
    }

    /// Two keys are equal when their COSE bytes are.
    public static func == (lhs: CredentialPublicKey, rhs: CredentialPublicKey) -> Bool {
        lhs.coseBytes == rhs.coseBytes
    }
}
