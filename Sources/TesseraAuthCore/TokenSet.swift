import Foundation
import TesseraCore

/// The tokens of a signed-in session, as kept by ``AuthState`` and written by a ``TokenStore``.
///
/// Built from a token response (RFC 6749 §5.1) and merged with the previous set on refresh
/// (RFC 6749 §6): a refresh answer without a new refresh token, ID token or scope keeps the
/// previous one. Encoded as JSON with the wire names and `expires_at` in Unix seconds.
public struct TokenSet: Sendable, Equatable, Codable {
    /// `access_token`.
    public var accessToken: String
    /// `token_type`, normally `Bearer` (RFC 6750).
    public var tokenType: String
    /// When the access token expires, from `expires_in` at the time the answer arrived.
    public var expiresAt: Date?
    /// `refresh_token`; rotated on every refresh by Tessera.
    public var refreshToken: String?
    /// `id_token`: the latest validated ID token.
    public var idToken: String?
    /// `scope` granted (RFC 6749 §5.1).
    public var scope: String?
    /// The issuer that issued the tokens, so a store is never used with another provider.
    public var issuer: String?
    /// The client the tokens were issued to.
    public var clientID: String?
    /// OpenID Connect Native SSO: the device session's secret, with ``idToken`` what the vendor's
    /// other apps on the device exchange for their own tokens (``OIDCClient/signIn(deviceSession:scope:)``).
    public var deviceSecret: String?

    /// A token set from its parts.
    public init(accessToken: String, tokenType: String = "Bearer", expiresAt: Date? = nil, refreshToken: String? = nil,
                idToken: String? = nil, scope: String? = nil, issuer: String? = nil, clientID: String? = nil) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scope = scope
        self.issuer = issuer
        self.clientID = clientID
    }

    /// The tokens of `response`, received at `receivedAt`; what it leaves out is taken from `previous` (RFC 6749 §6).
    public init(response: TokenResponse, receivedAt: Date, previous: TokenSet? = nil, issuer: String? = nil, clientID: String? = nil) {
        self.init(accessToken: response.accessToken, tokenType: response.tokenType,
                  expiresAt: response.expiresIn.map { receivedAt.addingTimeInterval(TimeInterval($0)) },
                  refreshToken: response.refreshToken ?? previous?.refreshToken,
                  idToken: response.idToken ?? previous?.idToken,
                  scope: response.scope ?? previous?.scope,
                  issuer: issuer ?? previous?.issuer, clientID: clientID ?? previous?.clientID)
        deviceSecret = response.deviceSecret ?? previous?.deviceSecret
    }

    /// What the vendor's other apps need to sign in (Native SSO): the ID token and the device
    /// secret, without this app's access and refresh tokens. Save it in the store the apps share
    /// (a `KeychainTokenStore` with their keychain access group); nil without a device secret.
    public var deviceSession: TokenSet? {
        guard let deviceSecret, let idToken else { return nil }
        var session = TokenSet(accessToken: "", idToken: idToken, issuer: issuer, clientID: clientID)
        session.deviceSecret = deviceSecret
        return session
    }

    /// Whether the access token is still good for at least `margin` seconds at `now`.
    /// A token without a known expiry counts as valid.
    public func isAccessTokenValid(at now: Date = Date(), margin: TimeInterval = 60) -> Bool {
        guard let expiresAt else { return true }
        return expiresAt.timeIntervalSince(now) >= margin
    }

    /// The `Authorization` header value for a protected resource (RFC 6750 §2.1).
    public var authorizationHeader: String { "Bearer \(accessToken)" }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresAt = "expires_at"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case scope
        case issuer
        case clientID = "client_id"
        case deviceSecret = "device_secret"
    }

    /// Decodes the stored JSON; a missing `token_type` is `Bearer`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try container.decode(String.self, forKey: .accessToken)
        tokenType = try container.decodeIfPresent(String.self, forKey: .tokenType) ?? "Bearer"
        expiresAt = try container.decodeIfPresent(Int64.self, forKey: .expiresAt).map { Date(timeIntervalSince1970: TimeInterval($0)) }
        refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
        idToken = try container.decodeIfPresent(String.self, forKey: .idToken)
        scope = try container.decodeIfPresent(String.self, forKey: .scope)
        issuer = try container.decodeIfPresent(String.self, forKey: .issuer)
        clientID = try container.decodeIfPresent(String.self, forKey: .clientID)
        deviceSecret = try container.decodeIfPresent(String.self, forKey: .deviceSecret)
    }

    /// Encodes with the wire names and `expires_at` in whole Unix seconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(accessToken, forKey: .accessToken)
        try container.encode(tokenType, forKey: .tokenType)
        try container.encodeIfPresent(expiresAt.map { Int64($0.timeIntervalSince1970.rounded(.down)) }, forKey: .expiresAt)
        try container.encodeIfPresent(refreshToken, forKey: .refreshToken)
        try container.encodeIfPresent(idToken, forKey: .idToken)
        try container.encodeIfPresent(scope, forKey: .scope)
        try container.encodeIfPresent(issuer, forKey: .issuer)
        try container.encodeIfPresent(clientID, forKey: .clientID)
        try container.encodeIfPresent(deviceSecret, forKey: .deviceSecret)
    }
}

/// An ID token's claims (OpenID Connect Core §2). A value of this type from ``OIDCClient``
/// or ``IDTokenValidator`` has passed validation; ``init(parsing:)`` alone checks nothing.
public struct IDToken: Sendable, Equatable {
    /// The compact JWS as received.
    public let raw: String
    /// The JOSE header.
    public let header: [String: JSONValue]
    /// Every claim.
    public let claims: [String: JSONValue]

    /// Decodes the token without verifying anything.
    public init(parsing raw: String) throws {
        let jwt: JWT
        do { jwt = try JWT(parsing: raw) } catch {
            throw AuthError.idTokenInvalid(.format, "the ID token is not a JWT: \(error)")
        }
        self.raw = raw
        self.header = jwt.header
        self.claims = jwt.claims
    }

    /// `iss`.
    public var issuer: String? { claims["iss"]?.stringValue }
    /// `sub`: the user's identifier at this provider, stable per client.
    public var subject: String? { claims["sub"]?.stringValue }
    /// `aud` as a list.
    public var audience: [String] {
        switch claims["aud"] {
        case .string(let value): [value]
        case .array(let values): values.compactMap(\.stringValue)
        default: []
        }
    }
    /// `azp`.
    public var authorizedParty: String? { claims["azp"]?.stringValue }
    /// `exp`.
    public var expiresAt: Date? { claims["exp"]?.intValue.map { Date(timeIntervalSince1970: TimeInterval($0)) } }
    /// `iat`.
    public var issuedAt: Date? { claims["iat"]?.intValue.map { Date(timeIntervalSince1970: TimeInterval($0)) } }
    /// `auth_time`: when the user authenticated.
    public var authTime: Date? { claims["auth_time"]?.intValue.map { Date(timeIntervalSince1970: TimeInterval($0)) } }
    /// `nonce`.
    public var nonce: String? { claims["nonce"]?.stringValue }
    /// `sid`: the provider's session, for logout.
    public var sessionID: String? { claims["sid"]?.stringValue }
    /// `amr`: how the user authenticated, e.g. `["pwd"]`.
    public var authenticationMethods: [String] { claims["amr"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
    /// `email`.
    public var email: String? { claims["email"]?.stringValue }
    /// `email_verified`.
    public var emailVerified: Bool? { claims["email_verified"]?.boolValue }
    /// `name`.
    public var name: String? { claims["name"]?.stringValue }
    /// The `alg` of the header.
    public var algorithm: String? { header["alg"]?.stringValue }
}

/// The userinfo answer (OpenID Connect Core §5.3.2): the user's claims for the granted scopes.
public struct UserInfo: Sendable, Equatable {
    /// Every claim, as JSON values.
    public let claims: [String: JSONValue]

    /// An answer of `claims`.
    public init(claims: [String: JSONValue]) { self.claims = claims }

    /// `sub`: always present; must equal the ID token's.
    public var subject: String? { claims["sub"]?.stringValue }
    /// `email`.
    public var email: String? { claims["email"]?.stringValue }
    /// `email_verified`.
    public var emailVerified: Bool? { claims["email_verified"]?.boolValue }
    /// `name`.
    public var name: String? { claims["name"]?.stringValue }
    /// `given_name`.
    public var givenName: String? { claims["given_name"]?.stringValue }
    /// `family_name`.
    public var familyName: String? { claims["family_name"]?.stringValue }
    /// A claim by name.
    public subscript(_ claim: String) -> JSONValue? { claims[claim] }
}

/// The signed-in user as an app shows them: the ID token's claims, completed by userinfo.
public struct AuthUser: Sendable, Equatable {
    /// The provider's stable identifier for the user (`sub`).
    public var uid: String
    /// The email address (`email`).
    public var email: String?
    /// Whether the provider verified ``email``.
    public var emailVerified: Bool
    /// `name`, or given and family name joined.
    public var name: String?
    /// `given_name`.
    public var givenName: String?
    /// `family_name`.
    public var familyName: String?
    /// How the user signed in (`amr`), e.g. `pwd`.
    public var authenticationMethods: [String]
    /// How the user can sign in (Firebase's `providerData`): `password`, `email` (codes and
    /// links), and linked providers such as `apple` — the `linked_providers` claim, filled by
    /// ``NativeAuthClient/linkedProviders(accessToken:)`` for first-party apps.
    public var linkedProviders: [String]
    /// Every claim known: the ID token's, overridden by userinfo's.
    public var claims: [String: JSONValue]

    /// The user of an ID token, with `userInfo`'s claims on top when its `sub` is the same.
    public init?(idToken: IDToken?, userInfo: UserInfo? = nil) {
        var claims = idToken?.claims ?? [:]
        if let userInfo, userInfo.subject != nil, idToken == nil || userInfo.subject == idToken?.subject {
            claims.merge(userInfo.claims) { _, new in new }
        }
        guard let uid = claims["sub"]?.stringValue else { return nil }
        self.uid = uid
        email = claims["email"]?.stringValue
        emailVerified = claims["email_verified"]?.boolValue ?? false
        givenName = claims["given_name"]?.stringValue
        familyName = claims["family_name"]?.stringValue
        let joined = [givenName, familyName].compactMap { $0 }.joined(separator: " ")
        name = claims["name"]?.stringValue ?? (joined.isEmpty ? nil : joined)
        authenticationMethods = idToken?.authenticationMethods ?? []
        linkedProviders = claims["linked_providers"]?.arrayValue?.compactMap(\.stringValue) ?? []
        self.claims = claims
    }
}
