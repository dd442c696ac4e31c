import Foundation
import Logging
import TesseraAuthCore
import TesseraCore

/// One configured upstream provider, ready to use: Tessera is its relying party, through the
/// SDK's OpenID client (discovery or Apple's fixed endpoints, JWKS cached and refetched on an
/// unknown `kid`, ID tokens checked for iss, aud, exp, nonce and at_hash), over AsyncHTTPClient.
package final class Upstream: Sendable {
    package let settings: UpstreamProviderSettings
    /// `{issuer}/federation/{id}/callback`: what the provider must have registered.
    package let redirectURI: String
    /// The web client (the `client_id` of the settings).
    let web: OIDCClient
    /// Sign in with Apple: one client per iOS app, whose bundle id is the identity token's `aud`.
    let native: [String: OIDCClient]
    /// Sign in with Apple: the key that signs the client secret.
    let appleKey: JWSSigningKey?
    let transport: any HTTPTransport
    let clock: WallClock

    /// Where the sign-in button's answer redirects the browser: pages with the button must let
    /// CSP `form-action` reach it (browsers apply it to the redirect after a form too). The
    /// configured or Apple's endpoint, else the issuer's origin (where providers serve it).
    package var authorizationOrigin: String {
        settings.authorizationEndpoint ?? (isApple ? UpstreamProviderSettings.apple.authorize : settings.issuer ?? "")
    }

    package var id: String { settings.id }
    var isApple: Bool { settings.type == .apple }
    var scope: String { (settings.scopes ?? (isApple ? ["name", "email"] : ["openid", "email", "profile"])).joined(separator: " ") }

    init(_ settings: UpstreamProviderSettings, issuer: String, clock: WallClock, transport: any HTTPTransport) throws {
        self.settings = settings
        self.clock = clock
        self.transport = transport
        redirectURI = issuer + "/federation/\(settings.id)/callback"
        var metadata: ProviderMetadata?
        var appleKey: JWSSigningKey?
        if settings.type == .apple {
            let apple = UpstreamProviderSettings.apple
            var fixed = ProviderMetadata(issuer: settings.issuer ?? apple.issuer,
                                         authorizationEndpoint: settings.authorizationEndpoint ?? apple.authorize,
                                         tokenEndpoint: settings.tokenEndpoint ?? apple.token, jwksURI: settings.jwksURI ?? apple.keys,
                                         responseTypesSupported: ["code", "code id_token"])
            fixed.revocationEndpoint = settings.revocationEndpoint ?? apple.revoke
            fixed.idTokenSigningAlgValuesSupported = ["RS256"]
            metadata = fixed
            let path = settings.privateKeyPath ?? ""
            guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ConfigurationError("upstream provider '\(settings.id)': cannot read \(path)")
            }
            do { appleKey = try JWSSigningKey(es256PEM: pem, kid: settings.keyID ?? "") } catch {
                throw ConfigurationError("upstream provider '\(settings.id)': \(path) is not a Sign in with Apple .p8 key (\(error))")
            }
        } else if let authorize = settings.authorizationEndpoint, let token = settings.tokenEndpoint, let jwks = settings.jwksURI,
                  let issuer = settings.issuer {
            metadata = ProviderMetadata(issuer: issuer, authorizationEndpoint: authorize, tokenEndpoint: token, jwksURI: jwks,
                                        responseTypesSupported: ["code"])
        }
        self.appleKey = appleKey
        func client(_ clientID: String) throws -> OIDCClient {
            let issuerString = metadata?.issuer ?? settings.issuer ?? ""
            guard let issuerURL = URL(string: issuerString) else {
                throw ConfigurationError("upstream provider '\(settings.id)': issuer '\(issuerString)' is not a URL")
            }
            var configuration = OIDCClient.Configuration(issuer: issuerURL, clientID: clientID, clientSecret: settings.clientSecret,
                                                         redirectURI: issuer + "/federation/\(settings.id)/callback", scope: "")
            configuration.metadata = metadata
            if let appleKey, let teamID = settings.teamID {
                configuration.secretInBody = true
                configuration.clientSecretProvider = { try Self.appleClientSecret(key: appleKey, teamID: teamID, clientID: clientID, now: clock.now()) }
            }
            return OIDCClient(configuration: configuration, transport: transport, now: { Date(timeIntervalSince1970: TimeInterval(clock.now())) })
        }
        web = try client(settings.clientID)
        native = Dictionary(uniqueKeysWithValues: try settings.nativeClientIDs.map { ($0, try client($0)) })
    }

    /// Sign in with Apple's client secret: an ES256 JWT from the team's key, `iss` the team id,
    /// `sub` the client id, `aud` Apple, valid five minutes (Apple allows up to six months).
    package static func appleClientSecret(key: JWSSigningKey, teamID: String, clientID: String, now: Int64) throws -> String {
        try JWT.sign(["iss": .string(teamID), "iat": .int(now), "exp": .int(now + 300), "aud": "https://appleid.apple.com",
                      "sub": .string(clientID)], with: key)
    }

    /// Where to send the browser, with a fresh state, nonce and (for OpenID providers that
    /// support it) PKCE; Apple answers with a form POST.
    func authorizationRequest() async throws -> AuthRequest {
        var request = web.makeRequest(scope: scope, redirectURI: redirectURI)
        if isApple {
            request.responseMode = "form_post"
            request.codeChallenge = nil
            request.codeChallengeMethod = nil
            request.codeVerifier = nil
        } else if let methods = try await web.discover().codeChallengeMethodsSupported, !methods.contains("S256") {
            request.codeChallenge = nil
            request.codeChallengeMethod = nil
            request.codeVerifier = nil
        }
        return request
    }

    /// Revokes a refresh token at the provider (Apple requires it when an account is deleted).
    func revoke(refreshToken: String, clientID: String?) async throws {
        let client = clientID.flatMap { native[$0] } ?? web
        try await client.revoke(refreshToken, typeHint: .refreshToken)
    }
}

/// What an upstream said about the user.
package struct UpstreamClaims: Sendable, Equatable {
    package var subject: String
    package var email: String?
    package var emailVerified: Bool
    package var profile: [String: JSONValue]

    /// From a validated ID token (and userinfo), plus Apple's one-time `user` JSON.
    package init(idToken: IDToken, userInfo: [String: JSONValue] = [:], appleUser: String? = nil) {
        var claims = userInfo
        for (name, value) in idToken.claims { claims[name] = value }
        subject = idToken.subject ?? ""
        email = claims["email"]?.stringValue.map(MailAddress.normalise)
        // Apple sends `email_verified` as a string in some tokens.
        emailVerified = claims["email_verified"]?.boolValue ?? (claims["email_verified"]?.stringValue == "true")
        var profile: [String: JSONValue] = [:]
        for name in ["name", "given_name", "family_name", "middle_name", "nickname", "picture", "locale", "birthdate"] {
            if let value = claims[name], value != .null { profile[name] = value }
        }
        if let appleUser, let data = appleUser.data(using: .utf8),
           let user = try? JSONDecoder().decode([String: JSONValue].self, from: data), let name = user["name"]?.objectValue {
            let given = name["firstName"]?.stringValue?.trimmingCharacters(in: .whitespaces) ?? ""
            let family = name["lastName"]?.stringValue?.trimmingCharacters(in: .whitespaces) ?? ""
            if !given.isEmpty { profile["given_name"] = .string(given) }
            if !family.isEmpty { profile["family_name"] = .string(family) }
            let full = [given, family].filter { !$0.isEmpty }.joined(separator: " ")
            if !full.isEmpty { profile["name"] = .string(full) }
        }
        self.profile = profile.filter { name, value in ScopeCatalogue.claim(name)?.shape.problem(with: value) == nil }
    }
}
