import Crypto
import Foundation

/// Proof Key for Code Exchange (RFC 7636).
public enum PKCE {
    /// A new high-entropy `code_verifier` (43 characters, RFC 7636 §4.1).
    public static func createVerifier() -> String {
        Base64URL.encode(SecureRandom.bytes(32))
    }

    /// The S256 `code_challenge` for a verifier: BASE64URL(SHA256(ASCII(verifier))) (RFC 7636 §4.2).
    public static func createChallenge(_ verifier: String) -> String {
        Base64URL.encode(SHA256.hash(data: Data(verifier.utf8)))
    }

    /// Whether a string is a syntactically valid verifier: 43–128 unreserved characters (RFC 7636 §4.1).
    public static func isValidVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count) && verifier.utf8.allSatisfy(isUnreserved)
    }

    /// Whether a string is a syntactically valid S256 challenge (43 base64url characters).
    public static func isValidChallenge(_ challenge: String) -> Bool {
        challenge.utf8.count == 43 && challenge.utf8.allSatisfy(isUnreserved)
    }

    static func isUnreserved(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39)
            || c == 0x2D || c == 0x2E || c == 0x5F || c == 0x7E
    }
}

/// Cryptographically secure random values.
public enum SecureRandom {
    /// `count` bytes from swift-crypto's key generation: the system's generator, eight bytes a draw
    /// (on Linux a `getrandom` call per eight bytes: four for a 32-byte token, about a dozen for a
    /// refresh grant, under half a percent of its time; drawing a byte at a time made it one per byte).
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        return SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Array($0) }
    }

    /// A random token: `bytes` random bytes, base64url-encoded.
    public static func token(bytes: Int = 32) -> String {
        Base64URL.encode(Self.bytes(bytes))
    }
}

/// Comparison whose duration doesn't depend on where the inputs first differ. Inlinable, so
/// that each caller gets it for its own collection types: called across modules as a generic,
/// the loop went through witness tables at every byte (a 43-byte secret hash took 2 % of a
/// client_credentials request's time).
@inlinable
public func constantTimeEquals<A: Collection, B: Collection>(_ a: A, _ b: B) -> Bool where A.Element == UInt8, B.Element == UInt8 {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for (x, y) in zip(a, b) { difference |= x ^ y }
    return difference == 0
}
