/// The JWS signature algorithms Tessera signs and verifies with (RFC 7518 §3, RFC 8037 §3.1).
public enum JWSAlgorithm: String, Sendable, Codable, CaseIterable {
    case rs256 = "RS256"
    case es256 = "ES256"
    case edDSA = "EdDSA"
}
