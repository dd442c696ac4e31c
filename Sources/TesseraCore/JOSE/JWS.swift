import Foundation

/// A JWS in compact serialization (RFC 7515 §7.1) whose payload is a JSON claim set.
public struct JWT: Sendable {
    /// The JOSE header's members (RFC 7515 §4).
    public let header: [String: JSONValue]
    /// The claim set: the payload's members (RFC 7519 §4).
    public let claims: [String: JSONValue]
    /// The JWS signing input (RFC 7515 §5.1): the encoded header, a dot and the encoded payload, as received.
    public let signingInput: Data
    /// The signature, decoded from base64url.
    public let signature: Data

    /// The header's `alg` (RFC 7515 §4.1.1); nil when absent or not a string.
    public var algorithm: String? { header["alg"]?.stringValue }
    /// The header's `kid` (RFC 7515 §4.1.4); nil when absent or not a string.
    public var kid: String? { header["kid"]?.stringValue }
    /// The header's `typ` (RFC 7515 §4.1.9), e.g. `JWT`; nil when absent or not a string.
    public var type: String? { header["typ"]?.stringValue }

    /// Signs `claims` with `key`, putting `alg`, `kid` and `typ` in the header.
    public static func sign(_ claims: [String: JSONValue], with key: JWSSigningKey, type: String = "JWT") throws -> String {
        let header: [String: JSONValue] = ["alg": .string(key.algorithm.rawValue), "kid": .string(key.kid), "typ": .string(type)]
        let input = Base64URL.encode(JSONValue.object(header).serialized) + "." + Base64URL.encode(JSONValue.object(claims).serialized)
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature)
    }

    /// Parses a compact JWS without verifying it.
    public init(parsing token: String) throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw JOSEError.malformed("expected three dot-separated parts") }
        guard let headerData = Base64URL.decode(parts[0]), let payloadData = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2]) else {
            throw JOSEError.malformed("a part is not base64url")
        }
        let header = try Self.object(headerData, "header")
        let claims = try Self.object(payloadData, "payload")
        if header["crit"] != nil { throw JOSEError.malformed("critical header parameters are not supported") }
        self.header = header
        self.claims = claims
        self.signingInput = Data((parts[0] + "." + parts[1]).utf8)
        self.signature = signature
    }

    /// A JOSE header or a JWT's claims: a JSON object in which no member is named twice (RFC
    /// 7515 §4, RFC 7519 §4: another JOSE library may keep the last of them where
    /// `JSONDecoder` keeps the first, so `{"alg":"ES256","alg":"none"}` would say two things).
    static func object(_ data: Data, _ part: String) throws -> [String: JSONValue] {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: data, repeatedNames: .refused)
        } catch let error as JSONParsingError {
            throw JOSEError.malformed("the \(part): \(error)")
        }
        guard case .object(let members) = value else { throw JOSEError.malformed("the \(part) is not a JSON object") }
        return members
    }

    /// Verifies the signature with the key whose `kid` matches (or the only candidate when
    /// the header has no `kid`). The header's `alg` must be the key's algorithm; `none` never verifies.
    public func verify(with keys: [JWSVerificationKey]) throws {
        guard let alg = algorithm, let algorithm = JWSAlgorithm(rawValue: alg) else {
            throw JOSEError.unsupportedAlgorithm(algorithm ?? "(missing)")
        }
        let candidates = keys.filter { $0.algorithm == algorithm && (kid == nil || $0.kid == kid) }
        guard !candidates.isEmpty else { throw JOSEError.unknownKey(kid) }
        guard candidates.contains(where: { $0.isValid(signature: signature, for: signingInput) }) else {
            throw JOSEError.badSignature
        }
    }

    // Registered claims (RFC 7519 §4.1).
    /// `iss` (RFC 7519 §4.1.1); nil when absent or not a string.
    public var issuer: String? { claims["iss"]?.stringValue }
    /// `sub` (RFC 7519 §4.1.2); nil when absent or not a string.
    public var subject: String? { claims["sub"]?.stringValue }
    /// `exp`, `iat`, `nbf` (RFC 7519 §2 NumericDate), each nil when absent or outside
    /// ``numericDates`` — so arithmetic on them can't overflow; check ``hasValidTimeClaims``
    /// to refuse a token whose times are present but out of range.
    public var expiresAt: Int64? { Self.numericDate(claims["exp"]) }
    /// `iat` (RFC 7519 §4.1.6), in seconds since 1970; nil when absent or out of range.
    public var issuedAt: Int64? { Self.numericDate(claims["iat"]) }
    /// `nbf` (RFC 7519 §4.1.5), in seconds since 1970; nil when absent or out of range.
    public var notBefore: Int64? { Self.numericDate(claims["nbf"]) }

    /// Seconds from 1970 to the end of year 9999: any real time fits, and sums of two stay far from overflow.
    public static let numericDates: ClosedRange<Int64> = 0...253_402_300_799

    /// Whether every time claim present is a NumericDate within ``numericDates``.
    public var hasValidTimeClaims: Bool {
        ["exp", "iat", "nbf"].allSatisfy { claims[$0] == nil || Self.numericDate(claims[$0]) != nil }
    }

    static func numericDate(_ value: JSONValue?) -> Int64? {
        guard let seconds = value?.intValue, numericDates.contains(seconds) else { return nil }
        return seconds
    }
    /// `jti` (RFC 7519 §4.1.7); nil when absent or not a string.
    public var jwtID: String? { claims["jti"]?.stringValue }
    /// `aud` as a list, whether it was a string or an array.
    public var audience: [String] {
        switch claims["aud"] {
        case .string(let value): [value]
        case .array(let values): values.compactMap(\.stringValue)
        default: []
        }
    }
}
