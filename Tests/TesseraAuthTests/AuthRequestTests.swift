import Foundation
import Testing
import TesseraAuth
import TesseraCore

func queryItems(_ url: URL) -> [String: String] {
    var items: [String: String] = [:]
    for item in URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? [] {
        items[item.name] = item.value?.replacingOccurrences(of: "+", with: " ")
    }
    return items
}

func metadata(issuer: String = "https://id.example.com", authorize: String = "https://id.example.com/authorize") -> ProviderMetadata {
    ProviderMetadata(issuer: issuer, authorizationEndpoint: authorize, tokenEndpoint: issuer + "/token",
                     jwksURI: issuer + "/jwks.json", responseTypesSupported: ["code"])
}

@Suite("PKCE helpers")
struct PKCETests {
    @Test("a verifier is 43 unreserved characters and fresh every time (RFC 7636 §4.1)")
    func verifier() {
        let first = PKCE.createVerifier(), second = PKCE.createVerifier()
        #expect(first.count == 43)
        #expect(PKCE.isValidVerifier(first))
        #expect(first != second)
    }

    @Test("the S256 challenge is BASE64URL(SHA256(verifier)): RFC 7636 Appendix B")
    func challenge() {
        #expect(PKCE.createChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test("state and nonce are unguessable and distinct")
    func stateAndNonce() {
        #expect(SecureRandom.token().count >= 43)
        #expect(SecureRandom.token() != SecureRandom.token())
        #expect(SecureRandom.token() != SecureRandom.token())
    }
}

@Suite("AuthRequest")
struct AuthRequestTests {
    @Test("defaults: generated state, nonce and an S256 challenge of the kept verifier")
    func defaults() throws {
        let request = AuthRequest(clientID: "app", redirectURI: "com.example.app:/callback")
        #expect(request.scope == "openid profile email offline_access")
        #expect(request.codeChallengeMethod == "S256")
        #expect(request.codeChallengeMethod == AuthRequest.challengeMethod)
        let verifier = try #require(request.codeVerifier)
        #expect(request.codeChallenge == PKCE.createChallenge(verifier))
        #expect(request.state != AuthRequest(clientID: "app", redirectURI: "com.example.app:/callback").state)
        #expect(request.nonce != nil)
    }

    @Test("the URL carries every parameter, form-encoded, and never the verifier")
    func url() throws {
        var request = AuthRequest(clientID: "app id", scope: "openid email", redirectURI: "com.example.app:/cb?x=1",
                                  state: "s t&", nonce: "n/1", codeVerifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        request.prompt = "login"
        request.loginHint = "anna@example.com"
        request.uiLocales = "ru en"
        request.maxAge = 300
        request.additionalParameters = ["acr_values": "pwd", "state": "ignored"]
        let url = try request.authorizationURL(endpoint: URL(string: "https://id.example.com/authorize?tenant=7")!)
        let items = queryItems(url)
        #expect(items["tenant"] == "7")
        #expect(items["response_type"] == "code")
        #expect(items["client_id"] == "app id")
        #expect(items["redirect_uri"] == "com.example.app:/cb?x=1")
        #expect(items["scope"] == "openid email")
        #expect(items["state"] == "s t&")
        #expect(items["nonce"] == "n/1")
        #expect(items["code_challenge"] == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(items["code_challenge_method"] == "S256")
        #expect(items["prompt"] == "login" && items["login_hint"] == "anna@example.com" && items["ui_locales"] == "ru en")
        #expect(items["max_age"] == "300" && items["acr_values"] == "pwd")
        #expect(items["code_verifier"] == nil)
        #expect(!url.absoluteString.contains("dBjftJeZ4CVP"))
    }

    @Test("the claims parameter is sent as JSON (OpenID Connect Core §5.5)")
    func claimsParameter() throws {
        var request = AuthRequest(clientID: "app", redirectURI: "com.example.app:/cb")
        request.claims = ClaimsRequest(userinfo: ["inn": ClaimsRequest.Entry(essential: true)])
        let items = queryItems(try request.authorizationURL(endpoint: URL(string: "https://id.example.com/authorize")!))
        let decoded = try ClaimsRequest(parsing: try #require(items["claims"]))
        #expect(decoded.essentialClaims == ["inn"])
    }

    @Test("the seed-style initialiser keeps the app's own values")
    func seedStyle() throws {
        let verifier = PKCE.createVerifier()
        let request = AuthRequest(clientID: "client-ID", scope: "openid name", state: "random_state", nonce: "random_nonce",
                                  ssoBaseURL: nil, redirectURI: "com.example.app:/cb", codeChallenge: PKCE.createChallenge(verifier),
                                  codeChallengeMethod: AuthRequest.challengeMethod)
        #expect(request.codeVerifier == nil)
        let items = queryItems(try request.authorizationURL(metadata: metadata()))
        #expect(items["state"] == "random_state" && items["nonce"] == "random_nonce")
        #expect(items["code_challenge"] == PKCE.createChallenge(verifier))
    }

    @Test("plain PKCE and non-https endpoints are refused")
    func refusals() {
        let plain = AuthRequest(clientID: "a", scope: "openid", state: "s", nonce: nil, redirectURI: "com.example.app:/cb",
                                codeChallenge: "x", codeChallengeMethod: "plain")
        #expect(throws: AuthError.self) { try plain.authorizationURL(endpoint: URL(string: "https://id.example.com/authorize")!) }
        let request = AuthRequest(clientID: "a", redirectURI: "com.example.app:/cb")
        #expect(throws: AuthError.self) { try request.authorizationURL(endpoint: URL(string: "http://id.example.com/authorize")!) }
        #expect(throws: Never.self) { try request.authorizationURL(endpoint: URL(string: "http://127.0.0.1:8080/authorize")!) }
    }

    @Test("an SSO base URL replaces the endpoint's origin, keeping its path")
    func ssoBase() throws {
        var request = AuthRequest(clientID: "a", redirectURI: "com.example.app:/cb")
        request.ssoBaseURL = "https://sso.example.net/region"
        let url = try request.authorizationURL(metadata: metadata(), trustedSSOHosts: ["sso.example.net"])
        #expect(url.absoluteString.hasPrefix("https://sso.example.net/region/authorize?response_type=code"))
        request.ssoBaseURL = "https://id.example.com:8443"
        #expect(try request.authorizationURL(metadata: metadata()).absoluteString.hasPrefix("https://id.example.com:8443/authorize?"))
    }

    @Test("an SSO base URL on an untrusted host is refused: a deep link can't redirect the sign-in")
    func untrustedSSOBase() {
        var request = AuthRequest(clientID: "a", redirectURI: "com.example.app:/cb")
        request.ssoBaseURL = "https://phish.example.org"
        #expect {
            try request.authorizationURL(metadata: metadata())
        } throws: { ($0 as? AuthError)?.code == .configuration }
    }

    @Test("a request survives being stored while the browser is open (Codable)")
    func codable() throws {
        let request = AuthRequest(clientID: "a", redirectURI: "com.example.app:/cb", ssoBaseURL: "https://sso.example.net")
        let decoded = try JSONDecoder().decode(AuthRequest.self, from: try JSONEncoder().encode(request))
        #expect(decoded == request)
    }
}

@Suite("SSO URL from a deep link")
struct SSOURLTests {
    @Test("the scheme, host and port of the link's SSO parameter", arguments: [
        ("com.example.app://start?ssoBaseUrl=https%3A%2F%2Fsso.example.net%2Fsome%2Fpath%3Fq%3D1", "https://sso.example.net"),
        ("com.example.app://start?x=1&sso_base_url=https://SSO.example.net:8443/", "https://sso.example.net:8443"),
        ("com.example.app://start?sberIDRedirect=https%3A%2F%2Fonline.example.ru%2Fsso", "https://online.example.ru"),
        ("https://app.example.com/open#ssoBaseUrl=https%3A%2F%2Fsso.example.net", "https://sso.example.net"),
        ("com.example.app://start?ssoBaseUrl=http%3A%2F%2F127.0.0.1%3A9000", "http://127.0.0.1:9000"),
    ])
    func extracts(link: String, expected: String) {
        #expect(HandoffLink.ssoBaseURL(in: URL(string: link)) == expected)
    }

    @Test("nothing for a link without one, or with an insecure or relative one", arguments: [
        "com.example.app://start?other=1",
        "com.example.app://start?ssoBaseUrl=http%3A%2F%2Fsso.example.net",
        "com.example.app://start?ssoBaseUrl=javascript%3Aalert(1)",
        "com.example.app://start?ssoBaseUrl=%2Frelative",
    ])
    func rejects(link: String) {
        #expect(HandoffLink.ssoBaseURL(in: URL(string: link)) == nil)
        #expect(HandoffLink.ssoBaseURL(in: nil) == nil)
    }
}
