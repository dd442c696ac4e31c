import Crypto
import Foundation
import TesseraCore

/// ID-token validation for the code flow (OpenID Connect Core §3.1.3.7 and §3.1.3.8), as a
/// pure function of the token, the provider's keys and the time.
///
/// ``OIDCClient`` runs it with the provider's JWKS and fetches the JWKS again once when the
/// token's `kid` is unknown (a key rotation); use it directly to validate a token you got some
/// other way.
public struct IDTokenValidator: Sendable {
    /// The issuer the token must name (`iss`), exactly.
    public var issuer: String
    /// The client the token must be for (`aud`, and `azp` when present).
    public var clientID: String
    /// Algorithms accepted: the provider's `id_token_signing_alg_values_supported` among the ones
    /// the SDK verifies. `none` and HMAC are never accepted.
    public var allowedAlgorithms: Set<JWSAlgorithm>
    /// Seconds of clock difference tolerated on `exp` and `iat`.
    public var clockSkew: TimeInterval

    /// A validator for tokens of `issuer` to `clientID`, signed with one of `allowedAlgorithms`.
    public init(issuer: String, clientID: String, allowedAlgorithms: Set<JWSAlgorithm> = Set(JWSAlgorithm.allCases),
                clockSkew: TimeInterval = 120) {
        self.issuer = issuer
        self.clientID = clientID
        self.allowedAlgorithms = allowedAlgorithms
        self.clockSkew = clockSkew
    }

    /// Validates `raw` and returns its claims.
    ///
    /// - Parameters:
    ///   - raw: the ID token as received (a compact JWS).
    ///   - keys: the provider's verification keys (its JWKS).
    ///   - nonce: the authorization request's nonce; when given, the token must carry it (§3.1.3.7 item 11).
    ///   - accessToken: the access token issued with the ID token; when given and the token has
    ///     `at_hash`, the hash must match (§3.1.3.8).
    ///   - original: for an ID token from a refresh, the ID token of the sign-in: `sub` and
    ///     `auth_time` must be the same (§12.2).
    ///   - now: the current time.
    /// - Throws: ``AuthError`` with code ``AuthError/Code/idTokenInvalid`` and the failed ``AuthError/IDTokenCheck``.
    public func validate(_ raw: String, keys: [JWSVerificationKey], nonce: String?, accessToken: String? = nil,
                         original: IDToken? = nil, now: Date = Date()) throws -> IDToken {
        let token = try IDToken(parsing: raw)
        let jwt = try JWT(parsing: raw)

        // §3.1.3.7 items 6–8: the signature, with an algorithm the provider announced.
        guard let alg = token.algorithm, let algorithm = JWSAlgorithm(rawValue: alg) else {
            throw AuthError.idTokenInvalid(.algorithm, "the ID token's alg '\(token.algorithm ?? "none")' is not supported")
        }
        guard allowedAlgorithms.contains(algorithm) else {
            throw AuthError.idTokenInvalid(.algorithm, "the ID token is signed with \(alg), which the provider does not announce")
        }
        do {
            try jwt.verify(with: keys)
        } catch JOSEError.unknownKey(let kid) {
            throw AuthError.idTokenInvalid(.unknownKey, "no key in the provider's JWKS has kid '\(kid ?? "(none)")' for \(alg)")
        } catch {
            throw AuthError.idTokenInvalid(.signature, "the ID token's signature does not verify")
        }

        guard let subject = token.subject, !subject.isEmpty else {
            throw AuthError.idTokenInvalid(.format, "the ID token has no sub")
        }
        // Item 2: iss.
        guard token.issuer == issuer else {
            throw AuthError.idTokenInvalid(.issuer, "the ID token's iss '\(token.issuer ?? "")' is not '\(issuer)'")
        }
        // Items 3–5: aud and azp.
        guard token.audience.contains(clientID) else {
            throw AuthError.idTokenInvalid(.audience, "the ID token is for \(token.audience), not the client '\(clientID)'")
        }
        if token.audience.count > 1 && token.authorizedParty == nil {
            throw AuthError.idTokenInvalid(.authorizedParty, "the ID token has several audiences and no azp")
        }
        if let azp = token.authorizedParty, azp != clientID {
            throw AuthError.idTokenInvalid(.authorizedParty, "the ID token's azp '\(azp)' is not the client '\(clientID)'")
        }
        // Items 9–10: exp and iat.
        guard let expiresAt = token.expiresAt, let issuedAt = token.issuedAt else {
            throw AuthError.idTokenInvalid(.format, "the ID token lacks exp or iat")
        }
        guard now.timeIntervalSince(expiresAt) < clockSkew else {
            throw AuthError.idTokenInvalid(.expired, "the ID token expired at \(expiresAt)")
        }
        guard issuedAt.timeIntervalSince(now) <= clockSkew else {
            throw AuthError.idTokenInvalid(.issuedAt, "the ID token is issued in the future (\(issuedAt))")
        }
        // Item 11: nonce.
        if let nonce {
            guard let actual = token.nonce, constantTimeEquals(Array(actual.utf8), Array(nonce.utf8)) else {
                throw AuthError.idTokenInvalid(.nonce, "the ID token's nonce is not the request's: a replayed or injected token")
            }
        }
        // §3.1.3.8: at_hash.
        if let accessToken, let atHash = token.claims["at_hash"]?.stringValue {
            guard atHash == Self.halfHash(accessToken, algorithm: algorithm) else {
                throw AuthError.idTokenInvalid(.accessTokenHash, "the ID token's at_hash does not match the access token")
            }
        }
        // §12.2: a refreshed ID token is about the same authentication.
        if let original {
            guard original.subject == subject, original.issuer == token.issuer else {
                throw AuthError.idTokenInvalid(.subject, "the refreshed ID token is for another user")
            }
            if let before = original.authTime, let after = token.authTime, before != after {
                throw AuthError.idTokenInvalid(.subject, "the refreshed ID token has another auth_time")
            }
        }
        return token
    }

    /// The left half of the hash of `value` with the hash of `algorithm` (§3.1.3.6): SHA-256
    /// for RS256 and ES256, SHA-512 for EdDSA (Ed25519), base64url-encoded.
    public static func halfHash(_ value: String, algorithm: JWSAlgorithm) -> String {
        let data = Data(value.utf8)
        let digest: [UInt8] = switch algorithm {
        case .rs256, .es256: Array(SHA256.hash(data: data))
        case .edDSA: Array(SHA512.hash(data: data))
        }
        return Base64URL.encode(digest.prefix(digest.count / 2))
    }
}
