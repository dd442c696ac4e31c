import Foundation

/// A JSON Web Key (RFC 7517), public members only unless stated.
///
/// Only the members Tessera reads or publishes are modelled; private members
/// (`d`, `p`, `q`, ...) are never decoded, so a JWK value can't leak one.
public struct JWK: Codable, Sendable, Hashable {
    public var kty: String
    public var kid: String?
    public var use: String?
    public var alg: String?
    // RSA (RFC 7518 §6.3.1)
    public var n: String?
    public var e: String?
    // EC and OKP (RFC 7518 §6.2.1, RFC 8037 §2)
    public var crv: String?
    public var x: String?
    public var y: String?

    public init(kty: String, kid: String? = nil, use: String? = nil, alg: String? = nil,
                n: String? = nil, e: String? = nil, crv: String? = nil, x: String? = nil, y: String? = nil) {
        self.kty = kty; self.kid = kid; self.use = use; self.alg = alg
        self.n = n; self.e = e; self.crv = crv; self.x = x; self.y = y
    }
}

/// A JWK Set (RFC 7517 §5).
public struct JWKSet: Codable, Sendable, Hashable {
    public var keys: [JWK]
    public init(keys: [JWK]) { self.keys = keys }

    /// Decodes either a JWK Set (`{"keys": [...]}`) or a single JWK; a member name that
    /// appears twice in one object is refused (RFC 7517 §4).
    public static func parse(_ data: Data) throws -> JWKSet {
        let set = try (try? JSONDecoder().decode(JWKSet.self, from: data)) ?? JWKSet(keys: [JSONDecoder().decode(JWK.self, from: data)])
        guard !JSONMemberNames.containDuplicates(data) else { throw JOSEError.invalidKey("a member name appears twice in the JWK Set") }
        return set
    }
}
