import Crypto
import Foundation
import TesseraCore

/// What AuthenticationServices gives an app after Sign in with Apple
/// (`ASAuthorizationAppleIDCredential`), as Tessera needs it.
public struct AppleIDCredential: Sendable, Equatable {
    /// `identityToken`, as a string.
    public var identityToken: String
    /// `authorizationCode`, as a string: Tessera redeems it and keeps Apple's refresh token.
    public var authorizationCode: String?
    /// The nonce the app generated, before hashing it into the request (see ``AppleSignInNonce``).
    public var rawNonce: String
    /// `fullName.givenName`: Apple gives the name and the address only on the first authorization.
    public var givenName: String?
    /// `fullName.familyName` (first authorization only).
    public var familyName: String?
    /// `email` (first authorization only; a private relay address when the person hid theirs).
    public var email: String?

    /// The credential of one Sign in with Apple.
    public init(identityToken: String, authorizationCode: String?, rawNonce: String, givenName: String? = nil,
                familyName: String? = nil, email: String? = nil) {
        self.identityToken = identityToken
        self.authorizationCode = authorizationCode
        self.rawNonce = rawNonce
        self.givenName = givenName
        self.familyName = familyName
        self.email = email
    }

    /// Apple's `user` JSON (`{"name": {"firstName", "lastName"}, "email"}`), when there is a name or email.
    var userJSON: String? {
        var name: [String: JSONValue] = [:]
        if let givenName { name["firstName"] = .string(givenName) }
        if let familyName { name["lastName"] = .string(familyName) }
        var user: [String: JSONValue] = [:]
        if !name.isEmpty { user["name"] = .object(name) }
        if let email { user["email"] = .string(email) }
        guard !user.isEmpty, let data = try? CanonicalJSON.encode(user) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}

/// The nonce of a Sign in with Apple request: the app keeps `raw` and puts `hashed` (SHA-256,
/// hex) in `ASAuthorizationAppleIDRequest.nonce`, as Apple recommends; Tessera checks the
/// identity token's `nonce` against the hash of `raw`.
public struct AppleSignInNonce: Sendable, Equatable {
    /// The nonce itself: kept by the app, sent to Tessera with the identity token.
    public let raw: String
    /// SHA-256 of ``raw``, hex: what goes in Apple's request.
    public let hashed: String

    /// A fresh random nonce.
    public init() { self.init(raw: SecureRandom.token()) }

    /// The nonce of a given raw value.
    public init(raw: String) {
        self.raw = raw
        hashed = Base64URL.hex(SHA256.hash(data: Data(raw.utf8)))
    }
}

extension NativeAuthClient {
    /// Exchanges a native Sign in with Apple result for Tessera's tokens (an RFC 8693 token
    /// exchange at the token endpoint; docs/federation.md). With `linkingTo` (the access token of
    /// the signed-in user) the Apple ID is connected to that account instead — what the app does
    /// after the server answered `account_exists` and the user signed in to the existing account.
    ///
    /// - Returns: the validated tokens and user; ``AuthorizationResult/isNewUser`` says whether
    ///   the account was created now.
    public func signInWithApple(_ credential: AppleIDCredential, provider: String = "apple", scopes: [String]? = nil,
                                linkingTo accessToken: String? = nil) async throws -> AuthorizationResult {
        let metadata = try await oidc.discover()
        guard let url = URL(string: metadata.tokenEndpoint) else { throw AuthError.invalidResponse("the token endpoint is not a URL") }
        var scope = scopes ?? configuration.scopes
        if !scope.contains("openid") { scope.insert("openid", at: 0) }
        var parameters = [("grant_type", GrantType.tokenExchange), ("subject_token", credential.identityToken),
                          ("subject_token_type", "urn:ietf:params:oauth:token-type:id_token"), ("upstream_provider", provider),
                          ("nonce", credential.rawNonce), ("scope", scope.joined(separator: " "))]
        if let code = credential.authorizationCode { parameters.append(("authorization_code", code)) }
        if let user = credential.userJSON { parameters.append(("user", user)) }
        if let accessToken { parameters.append(("link_token", accessToken)) }
        let receivedAt = oidc.now()
        let answer = try await post(to: url, name: "token endpoint", parameters)
        let response = try answer.decode(TokenResponse.self, "token response")
        return try await authorizationResult(from: response, receivedAt: receivedAt)
    }
}

extension NativeAuthClient {
    /// How the signed-in user can sign in (`password`, `email`, `apple`, ...), from the
    /// provider's `account_providers_endpoint`; first-party apps only.
    public func linkedProviders(accessToken: String) async throws -> [String] {
        guard let endpoint = try await oidc.discover().accountProvidersEndpoint, let url = URL(string: endpoint) else {
            throw AuthError.invalidResponse("the provider has no account_providers_endpoint")
        }
        let response = try await transport.send(HTTPTransportRequest(url: url, headers: ["Authorization": "Bearer " + accessToken,
                                                                                          "Accept": "application/json"]))
        guard response.status == 200, let answer = try? JSONDecoder().decode(LinkedProvidersAnswer.self, from: response.body) else {
            throw AuthError.invalidResponse("the providers endpoint answered HTTP \(response.status)")
        }
        return answer.linkedProviders
    }
}
