/// The JWS signature algorithms Tessera signs and verifies with (RFC 7518 §3, RFC 8037 §3.1).
public enum JWSAlgorithm: String, Sendable, Codable, CaseIterable {
    /// `RS256` (RFC 7518 §3.3): RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"
    /// `ES256` (RFC 7518 §3.4): ECDSA on P-256 with SHA-256.
    case es256 = "ES256"
    /// `EdDSA` (RFC 8037 §3.1), with Ed25519 keys.
    case edDSA = "EdDSA"
}
