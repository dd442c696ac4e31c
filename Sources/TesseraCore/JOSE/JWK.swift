import Foundation

/// A JSON Web Key (RFC 7517), public members only unless stated.
///
/// Only the members Tessera reads or publishes are modelled; private members
/// (`d`, `p`, `q`, ...) are never decoded, so a JWK value can't leak one.
public struct JWK: Codable, Sendable, Hashable {
    /// `kty` (RFC 7517 §4.1): the key type, `RSA`, `EC` or `OKP`.
    public var kty: String
    /// The key's `kid` (RFC 7517 §4.5); nil when it has none.
    public var kid: String?
    /// `use` (RFC 7517 §4.2): `sig` for a signing key; nil when absent.
    public var use: String?
    /// `alg` (RFC 7517 §4.4): the algorithm the key is for, e.g. `RS256`; nil when absent.
    public var alg: String?
    // RSA (RFC 7518 §6.3.1)
    /// `n` (RFC 7518 §6.3.1.1): the RSA modulus, base64url-encoded; nil for other key types.
    public var n: String?
    /// `e` (RFC 7518 §6.3.1.2): the RSA public exponent, base64url-encoded; nil for other key types.
    public var e: String?
    // EC and OKP (RFC 7518 §6.2.1, RFC 8037 §2)
    /// `crv` (RFC 7518 §6.2.1.1, RFC 8037 §2): the curve, `P-256` or `Ed25519`; nil for RSA keys.
    public var crv: String?
    /// `x` (RFC 7518 §6.2.1.2, RFC 8037 §2): the EC x coordinate or the Ed25519 public key, base64url-encoded.
    public var x: String?
    /// `y` (RFC 7518 §6.2.1.3): the EC y coordinate, base64url-encoded; nil for RSA and OKP keys.
    public var y: String?

    /// Makes a JWK from its members.
    public init(kty: String, kid: String? = nil, use: String? = nil, alg: String? = nil,
                n: String? = nil, e: String? = nil, crv: String? = nil, x: String? = nil, y: String? = nil) {
        self.kty = kty; self.kid = kid; self.use = use; self.alg = alg
        self.n = n; self.e = e; self.crv = crv; self.x = x; self.y = y
    }
}

/// A JWK Set (RFC 7517 §5).
public struct JWKSet: Codable, Sendable, Hashable {
    /// `keys` (RFC 7517 §5.1): the keys of the set.
    public var keys: [JWK]
    /// Makes a set of `keys`.
    public init(keys: [JWK]) { self.keys = keys }

    /// Decodes either a JWK Set (`{"keys": [...]}`) or a single JWK; a member name that
    /// appears twice in one object is refused (RFC 7517 §4).
    public static func parse(_ data: Data) throws -> JWKSet {
        do {
            _ = try JSONValue(parsing: data, repeatedNames: .refused)
        } catch let error as JSONParsingError {
            throw JOSEError.invalidKey("the JWK Set: \(error)")
        }
        return try (try? JSONDecoder().decode(JWKSet.self, from: data)) ?? JWKSet(keys: [JSONDecoder().decode(JWK.self, from: data)])
    }
}
