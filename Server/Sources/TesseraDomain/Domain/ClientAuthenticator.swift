import Foundation
import TesseraCore

/// The `Authorization: Basic` pair (RFC 7617), form-decoded and as sent.
public struct BasicCredentials: Sendable {
    public var id: String
    public var secret: String
    public var rawID: String
    public var rawSecret: String

    package init(id: String, secret: String, rawID: String, rawSecret: String) {
        self.id = id
        self.secret = secret
        self.rawID = rawID
        self.rawSecret = rawSecret
    }
}

/// Client authentication at the token, introspection and revocation endpoints
/// (RFC 6749 §2.3, OpenID Connect Core §9, RFC 7523 §2.2).
///
/// A client uses exactly one method per request. Every failure is `invalid_client`
/// (401) without saying which part was wrong.
public struct ClientAuthenticator: Sendable {
    let clients: any ClientStore
    let grants: any GrantStore
    /// What a client assertion's `aud` may be: the issuer or the token endpoint URL, and
    /// nothing else (an assertion made for another server or endpoint is not for us).
    let audiences: Set<String>
    let clock: WallClock

    package init(clients: any ClientStore, grants: any GrantStore, audiences: Set<String>, clock: WallClock) {
        self.clients = clients
        self.grants = grants
        self.audiences = audiences
        self.clock = clock
    }
    /// How long after its `iat` an assertion is accepted: five minutes, unless the client was
    /// registered with a longer window (``Client/assertionLifetime``).
    package static let defaultAssertionLifetime: Int64 = 300
    /// The longest `exp` − `iat` an assertion may claim within a five-minute window: common
    /// client libraries (Authlib, for one) write an hour; the window still bounds its use.
    static let toleratedExpiry: Int64 = 3600
    /// The longest lifetime a client may be registered with: Sign in with Apple's six months.
    package static let maxAssertionLifetime: Int64 = 15_777_000
    static let clockSkew: Int64 = 60

    /// `basic` is the `Authorization: Basic` pair, if the request had one.
    public func authenticate(basic: BasicCredentials?, parameters: RequestParameters) async throws -> Client {
        if let name = parameters.firstDuplicate(among: ["client_id", "client_secret", "client_assertion", "client_assertion_type"]) {
            throw OAuthError.invalidRequest("The \(name) parameter was sent more than once.")
        }
        let assertion = parameters["client_assertion"]
        let postedSecret = parameters["client_secret"]
        let methods = [basic != nil, assertion != nil, postedSecret != nil].filter { $0 }.count
        guard methods <= 1 else {
            throw OAuthError.invalidRequest("Use exactly one client authentication method per request.")
        }

        if let basic {
            if let id = parameters["client_id"], id != basic.id { throw OAuthError.invalidClient(detail: "client_id differs from Basic user") }
            do {
                return try await secretClient(id: basic.id, secret: basic.secret)
            } catch let error as OAuthError where basic.rawID != basic.id || basic.rawSecret != basic.secret {
                // Many clients skip RFC 6749 §2.3.1's form-encoding: accept the pair as sent too.
                guard let client = try? await secretClient(id: basic.rawID, secret: basic.rawSecret) else { throw error }
                return client
            }
        }
        if let assertion {
            guard parameters["client_assertion_type"] == jwtBearerClientAssertionType else {
                throw OAuthError.invalidClient("client_assertion_type must be \(jwtBearerClientAssertionType).")
            }
            return try await assertionClient(assertion, claimedID: parameters["client_id"])
        }
        guard let id = parameters["client_id"] else {
            throw OAuthError.invalidClient("Client authentication is required.")
        }
        if let postedSecret {
            // A private_key_jwt client may send its JWT as client_secret, as Sign in with Apple's clients do.
            if let client = try await clients.client(id: id), client.authMethod == .privateKeyJWT {
                return try await assertionClient(postedSecret, claimedID: id)
            }
            return try await secretClient(id: id, secret: postedSecret)
        }
        guard let client = try await clients.client(id: id), client.isPublic else {
            throw OAuthError.invalidClient(detail: "client \(id) sent no credentials and is not public")
        }
        return client
    }

    func secretClient(id: String, secret: String) async throws -> Client {
        guard let client = try await clients.client(id: id), let stored = client.secretHash else {
            _ = ClientSecretHash.verify(secret, against: "sha256$decoy$decoy")
            throw OAuthError.invalidClient(detail: "no secret-holding client \(id)")
        }
        // During a rotation's grace period the previous secret works too, so that the client's
        // deployments can change over one at a time.
        let previous = client.previousSecretHash.flatMap { hash in
            (client.previousSecretExpiresAt ?? 0) > clock.now() ? hash : nil
        }
        guard ClientSecretHash.verify(secret, against: stored) || previous.map({ ClientSecretHash.verify(secret, against: $0) }) == true else {
            throw OAuthError.invalidClient(detail: "wrong secret for \(id)")
        }
        return client
    }

    func assertionClient(_ assertion: String, claimedID: String?) async throws -> Client {
        let jwt: JWT
        do { jwt = try JWT(parsing: assertion) } catch {
            throw OAuthError.invalidClient("The client assertion is not a valid JWT.", detail: "\(error)")
        }
        guard let subject = jwt.subject else { throw OAuthError.invalidClient("The client assertion has no sub.") }
        if let claimedID, claimedID != subject { throw OAuthError.invalidClient(detail: "client_id differs from assertion sub") }
        guard let client = try await clients.client(id: subject), client.authMethod == .privateKeyJWT, let jwks = client.jwks else {
            throw OAuthError.invalidClient(detail: "no private_key_jwt client \(subject)")
        }
        do {
            try jwt.verify(with: jwks.keys.compactMap { try? JWSVerificationKey(jwk: $0) })
        } catch {
            throw OAuthError.invalidClient("The client assertion signature does not verify.", detail: "\(error)")
        }
        guard let issuer = jwt.issuer, issuer == client.id || issuer == client.assertionIssuer else {
            throw OAuthError.invalidClient("The client assertion has the wrong iss.")
        }
        guard !jwt.audience.isEmpty, jwt.audience.allSatisfy(audiences.contains) else {
            throw OAuthError.invalidClient("The client assertion's aud must be this provider's issuer or token endpoint URL, and nothing else.")
        }
        let now = clock.now()
        guard jwt.hasValidTimeClaims else {
            throw OAuthError.invalidClient("The client assertion's exp, iat and nbf must be NumericDates (seconds since 1970).")
        }
        guard let expiry = jwt.expiresAt, expiry + Self.clockSkew > now else {
            throw OAuthError.invalidClient("The client assertion has expired.")
        }
        if let notBefore = jwt.notBefore, notBefore - Self.clockSkew > now {
            throw OAuthError.invalidClient("The client assertion is not valid yet.")
        }
        if let issuedAt = jwt.issuedAt, issuedAt - Self.clockSkew > now {
            throw OAuthError.invalidClient("The client assertion was issued in the future.")
        }
        // RFC 7523 §3: an assertion is short-lived and used once. It is accepted only within
        // the client's window after iat (five minutes by default). A client registered with a
        // longer window (Sign in with Apple's client secret) may reuse one without jti.
        let window = client.assertionLifetime ?? Self.defaultAssertionLifetime
        let issuedAt = jwt.issuedAt ?? now
        guard expiry - issuedAt <= max(window, Self.toleratedExpiry) else {
            throw OAuthError.invalidClient("The client assertion lives too long: exp may be at most \(max(window, Self.toleratedExpiry)) s after iat.")
        }
        guard now - issuedAt <= window + Self.clockSkew else {
            throw OAuthError.invalidClient("The client assertion is too old: it is accepted for \(window) s after its iat; make a new one for each request.")
        }
        if let jti = jwt.jwtID {
            // Remembered until the assertion can't be used any more: its window after iat, or
            // its exp when it has no iat (then every later request counts its window from then).
            let useless = (jwt.issuedAt.map { min(expiry, $0 + window) } ?? expiry) + Self.clockSkew
            guard try await grants.recordAssertion(clientID: client.id, jti: jti, expiresAt: useless, now: now) else {
                throw OAuthError.invalidClient("The client assertion was used before.")
            }
        } else if window <= Self.defaultAssertionLifetime {
            throw OAuthError.invalidClient("The client assertion has no jti: each assertion must carry a unique jti and is accepted once.")
        } else if jwt.issuedAt == nil {
            throw OAuthError.invalidClient("A reusable client assertion (without jti) needs iat.")
        }
        return client
    }
}
