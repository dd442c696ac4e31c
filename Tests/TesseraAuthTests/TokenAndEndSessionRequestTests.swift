import Foundation
import Testing
import TesseraAuth
@testable import TesseraAuthCore
import TesseraCore

// The token and logout request/response pairs, against StubTransport (OIDCClientTests.swift):
// discovery at https://id.example.com, client "app:1", redirect URI com.example.app:/cb.

/// The form a request to the stub carried.
private func form(_ request: HTTPTransportRequest?) -> String { String(decoding: request?.body ?? Data(), as: UTF8.self) }

extension StubTransport {
    /// The last request to `path` (the JWKS is fetched after the token endpoint's answer).
    func last(to path: String) -> HTTPTransportRequest? { requests.last { $0.url.path == path } }
}

private let verifier = String(repeating: "v", count: 43)

/// A signer whose keys the stub serves at its jwks_uri, and ID tokens for the stub's client.
private struct Keys {
    let signer: TestSigner

    init(serving stub: StubTransport) throws {
        signer = try TestSigner()
        stub.answer("/jwks.json", json: try JSONEncoder().encode(JWKSet(keys: [signer.key.publicKey.jwk])))
    }

    func idToken(nonce: String?, subject: String = "user-1") throws -> String {
        try signer.sign(signer.claims(nonce: nonce, extra: ["aud": "app:1", "azp": "app:1", "sub": .string(subject)]))
    }
}

/// A token endpoint answer: Bearer, 300 seconds, with what is given.
private func tokenAnswer(idToken: String? = nil, refreshToken: String? = nil, scope: String? = nil) throws -> Data {
    try JSONEncoder().encode(TokenResponse(accessToken: "at-2", expiresIn: 300, refreshToken: refreshToken, idToken: idToken, scope: scope))
}

/// A browser that shows nothing: it records what it was asked to open and answers with the
/// redirect `answer` makes of it (by default the redirect URI with the URL's `state`).
private struct HeadlessBrowser: ExternalUserAgent {
    let presented = Locked<[(url: URL, redirectURI: String)]>([])
    var answer: @Sendable (URL, String) throws -> URL = { url, redirectURI in
        let state = queryItems(url)["state"] ?? ""
        return URL(string: redirectURI + "?state=" + FormEncoding.escape(state))!
    }

    func present(_ url: URL, redirectURI: String) async throws -> URL {
        presented.withLock { $0.append((url, redirectURI)) }
        return try answer(url, redirectURI)
    }
}

@Suite("TokenRequest")
struct TokenRequestTests {
    @Test("the authorization-code form is grant_type, code, redirect_uri, code_verifier in that order; the nonce is not sent (RFC 6749 §4.1.3)")
    func codeForm() {
        let request = TokenRequest(code: "c 1", redirectURI: "com.example.app:/cb", codeVerifier: verifier, nonce: "n-1",
                                   requestedScope: "openid")
        #expect(request.parameters.map(\.name) == ["grant_type", "code", "redirect_uri", "code_verifier"])
        #expect(request.parameters.map(\.value) == ["authorization_code", "c 1", "com.example.app:/cb", verifier])
        #expect(request.nonce == "n-1" && request.requestedScope == "openid")
    }

    @Test("a checked response becomes its request's code grant: redirect URI, verifier, nonce and scopes")
    func fromResponse() throws {
        let authRequest = AuthRequest(clientID: "app:1", redirectURI: "com.example.app:/cb", state: "st-1", nonce: "n-1",
                                      codeVerifier: verifier)
        let response = try AuthResponse(url: URL(string: "com.example.app:/cb?code=abc&state=st-1")!, request: authRequest,
                                        expectedIssuer: "https://id.example.com")
        let request = try TokenRequest(exchanging: response, for: authRequest)
        #expect(request == TokenRequest(grantType: "authorization_code", code: "abc", redirectURI: "com.example.app:/cb",
                                        codeVerifier: verifier, nonce: "n-1", requestedScope: AuthRequest.defaultScope))
        #expect(request.scope == nil)
    }

    @Test("a response with an error is the provider's error, even with a code; one without a code is invalid", arguments: [
        ("?error=access_denied&error_description=No&state=st-1", AuthError.Code.oauth),
        ("?code=abc&error=server_error&state=st-1", AuthError.Code.oauth),
        ("?state=st-1", AuthError.Code.invalidResponse),
    ])
    func refusedResponses(query: String, code: AuthError.Code) {
        let authRequest = AuthRequest(clientID: "app:1", redirectURI: "com.example.app:/cb", state: "st-1")
        let response = AuthResponse(url: URL(string: "com.example.app:/cb" + query)!)
        #expect {
            try TokenRequest(exchanging: response, for: authRequest)
        } throws: { error in
            guard let error = error as? AuthError, error.code == code else { return false }
            return code != .oauth || error.oauthError?.code == response.oauthError?.code
        }
    }

    @Test("the refresh form is grant_type, refresh_token, scope; the ID token is kept to check against, not sent (RFC 6749 §6)")
    func refreshForm() throws {
        let tokens = TokenSet(accessToken: "at", refreshToken: "rt", idToken: "a.b.c")
        let request = try TokenRequest(refreshing: tokens, scope: "openid email")
        #expect(request.parameters.map(\.name) == ["grant_type", "refresh_token", "scope"])
        #expect(request.parameters.map(\.value) == ["refresh_token", "rt", "openid email"])
        #expect(request.originalIDToken == "a.b.c" && request.nonce == nil)
        #expect(try TokenRequest(refreshing: tokens).parameters.map(\.name) == ["grant_type", "refresh_token"])
        #expect { try TokenRequest(refreshing: TokenSet(accessToken: "at")) } throws: { ($0 as? AuthError)?.code == .notSignedIn }
    }

    @Test("additional parameters follow by name and can't replace a standard one or the client's authentication")
    func additionalParameters() {
        let request = TokenRequest(code: "c", redirectURI: nil, codeVerifier: nil, nonce: nil, additionalParameters: [
            "resource": "https://api.example.com", "audience": "api", "code": "forged", "grant_type": "password",
            "client_id": "someone-else", "client_secret": "s", "client_assertion": "j", "client_assertion_type": "t",
        ])
        #expect(request.parameters.map(\.name) == ["grant_type", "code", "audience", "resource"])
        #expect(request.parameters.map(\.value) == ["authorization_code", "c", "api", "https://api.example.com"])
    }

    @Test("the general initialiser sends what it is given and nothing else")
    func general() {
        let request = TokenRequest(grantType: GrantType.clientCredentials, scope: "reports")
        #expect(request.parameters.map(\.name) == ["grant_type", "scope"])
        #expect(request.parameters.map(\.value) == ["client_credentials", "reports"])
    }
}

@Suite("OIDCClient.perform and token")
struct TokenEndpointTests {
    let request = TokenRequest(code: "c1", redirectURI: "com.example.app:/cb", codeVerifier: verifier, nonce: nil)

    @Test("perform posts the form to the token endpoint with a public client's client_id last (RFC 6749 §3.2.1)")
    func publicClient() async throws {
        let stub = StubTransport()
        stub.answer("/token", json: try tokenAnswer(refreshToken: "rt-2", scope: "email"))
        let response = try await stub.client().perform(request)
        #expect(response == TokenResponse(accessToken: "at-2", expiresIn: 300, refreshToken: "rt-2", scope: "email"))
        let sent = try #require(stub.requests.last)
        #expect(sent.method == "POST" && sent.url.absoluteString == "https://id.example.com/token")
        #expect(sent.headers["Authorization"] == nil)
        #expect(form(sent) == "grant_type=authorization_code&code=c1&redirect_uri=com.example.app%3A%2Fcb&code_verifier=\(verifier)"
            + "&client_id=app%3A1")
    }

    @Test("a confidential client authenticates with client_secret_basic, or client_secret_post when asked (RFC 6749 §2.3.1)")
    func confidentialClient() async throws {
        let stub = StubTransport()
        stub.answer("/token", json: try tokenAnswer())
        _ = try await stub.client(secret: "s3cret").perform(request)
        #expect(stub.last(to: "/token")?.headers["Authorization"] == "Basic " + Data("app%3A1:s3cret".utf8).base64EncodedString())
        #expect(form(stub.last(to: "/token")) == "grant_type=authorization_code&code=c1&redirect_uri=com.example.app%3A%2Fcb"
            + "&code_verifier=\(verifier)")

        var configuration = stub.client(secret: "s3cret").configuration
        configuration.secretInBody = true
        _ = try await OIDCClient(configuration: configuration, transport: stub).perform(request)
        #expect(stub.last(to: "/token")?.headers["Authorization"] == nil)
        #expect(form(stub.last(to: "/token")).hasSuffix("&code_verifier=\(verifier)&client_id=app%3A1&client_secret=s3cret"))
    }

    @Test("perform refuses a token type other than Bearer and passes the provider's error on (RFC 6749 §5.2)")
    func refusals() async throws {
        let stub = StubTransport()
        stub.answer("/token", text: #"{"access_token":"at","token_type":"mac"}"#)
        await #expect { try await stub.client().perform(request) } throws: { ($0 as? AuthError)?.code == .invalidResponse }
        stub.answer("/token", status: 400, text: #"{"error":"invalid_grant"}"#)
        await #expect { try await stub.client().perform(request) } throws: { ($0 as? AuthError)?.isInvalidGrant == true }
    }

    @Test("token validates the ID token against the request's nonce (OpenID Connect Core §3.1.3.7)")
    func nonce() async throws {
        let stub = StubTransport()
        let keys = try Keys(serving: stub)
        stub.answer("/token", json: try tokenAnswer(idToken: try keys.idToken(nonce: "n-1"), refreshToken: "rt-2"))
        var request = request
        request.nonce = "n-1"
        let result = try await stub.client().token(request)
        #expect(result.idToken?.subject == "user-1" && result.idToken?.nonce == "n-1")
        #expect(result.tokens.accessToken == "at-2" && result.tokens.refreshToken == "rt-2")
        #expect(result.tokens.issuer == "https://id.example.com" && result.tokens.clientID == "app:1")

        request.nonce = "n-2"
        await #expect { try await stub.client().token(request) } throws: { ($0 as? AuthError)?.idTokenCheck == .nonce }
    }

    @Test("a code grant's answer without an ID token is refused when openid was granted or asked for (§3.1.3.3)", arguments: [
        ("openid email", nil, false), (nil, "openid", false), ("openid", "email", true), ("email", nil, true), (nil, nil, true),
    ] as [(String?, String?, Bool)])
    func missingIDToken(requested: String?, granted: String?, accepted: Bool) async throws {
        let stub = StubTransport()
        stub.answer("/token", json: try tokenAnswer(scope: granted))
        var request = request
        request.requestedScope = requested
        if accepted {
            #expect(try await stub.client().token(request).idToken == nil)
        } else {
            await #expect { try await stub.client().token(request) } throws: { ($0 as? AuthError)?.code == .invalidResponse }
        }
    }

    @Test("token checks a refreshed ID token against the original (§12.2); a refresh answer needs none")
    func refreshedIDToken() async throws {
        let stub = StubTransport()
        let keys = try Keys(serving: stub)
        let refreshing = try TokenRequest(refreshing: TokenSet(accessToken: "at", refreshToken: "rt", idToken: try keys.idToken(nonce: "n-1")))
        stub.answer("/token", json: try tokenAnswer(idToken: try keys.idToken(nonce: nil, subject: "user-2")))
        await #expect { try await stub.client().token(refreshing) } throws: { ($0 as? AuthError)?.idTokenCheck == .subject }
        stub.answer("/token", json: try tokenAnswer(idToken: try keys.idToken(nonce: nil)))
        #expect(try await stub.client().token(refreshing).idToken?.subject == "user-1")
        stub.answer("/token", json: try tokenAnswer(scope: "openid"))
        #expect(try await stub.client().token(refreshing).idToken == nil)
    }
}

@Suite("redeemCode, exchangeCode and refresh through TokenRequest")
struct TokenEndpointCompatibilityTests {
    @Test("redeemCode sends the code grant's form as before: no redirect_uri or verifier when it has none")
    func redeemCode() async throws {
        let stub = StubTransport()
        stub.answer("/token", json: try tokenAnswer())
        let client = stub.client()
        _ = try await client.redeemCode("c1", redirectURI: "com.example.app:/cb", codeVerifier: "v1", nonce: nil, scope: "email")
        #expect(form(stub.last(to: "/token")) == "grant_type=authorization_code&code=c1&redirect_uri=com.example.app%3A%2Fcb&code_verifier=v1"
            + "&client_id=app%3A1")
        _ = try await client.redeemCode("c2", redirectURI: nil, codeVerifier: nil, nonce: nil, scope: "")
        #expect(form(stub.last(to: "/token")) == "grant_type=authorization_code&code=c2&client_id=app%3A1")
        await #expect {
            try await client.redeemCode("c3", redirectURI: nil, codeVerifier: nil, nonce: nil, scope: "openid")
        } throws: { ($0 as? AuthError)?.code == .invalidResponse }
    }

    @Test("exchangeCode checks the redirect, sends the request's redirect URI and verifier, and checks the nonce")
    func exchangeCode() async throws {
        let stub = StubTransport()
        let keys = try Keys(serving: stub)
        let client = stub.client()
        let authRequest = AuthRequest(clientID: "app:1", redirectURI: "com.example.app:/cb", state: "st-1", nonce: "n-1",
                                      codeVerifier: verifier)
        stub.answer("/token", json: try tokenAnswer(idToken: try keys.idToken(nonce: "n-1")))
        let result = try await client.exchangeCode(from: URL(string: "com.example.app:/cb?code=abc&state=st-1")!, request: authRequest)
        #expect(result.user?.uid == "user-1")
        #expect(form(stub.last(to: "/token")) == "grant_type=authorization_code&code=abc&redirect_uri=com.example.app%3A%2Fcb"
            + "&code_verifier=\(verifier)&client_id=app%3A1")

        stub.answer("/token", json: try tokenAnswer(idToken: try keys.idToken(nonce: "replayed")))
        await #expect {
            try await client.exchangeCode(from: URL(string: "com.example.app:/cb?code=abc&state=st-1")!, request: authRequest)
        } throws: { ($0 as? AuthError)?.idTokenCheck == .nonce }
        let sent = stub.requests.count
        await #expect {
            try await client.exchangeCode(from: URL(string: "com.example.app:/cb?code=abc&state=st-2")!, request: authRequest)
        } throws: { ($0 as? AuthError)?.code == .stateMismatch }
        #expect(stub.requests.count == sent)
    }

    @Test("refresh sends grant_type, refresh_token and scope as before, keeps what the answer leaves out, checks §12.2")
    func refresh() async throws {
        let stub = StubTransport()
        let keys = try Keys(serving: stub)
        let client = stub.client()
        let original = try keys.idToken(nonce: "n-1")
        let tokens = TokenSet(accessToken: "at", refreshToken: "rt", idToken: original, scope: "openid email")
        stub.answer("/token", json: try tokenAnswer())
        let renewed = try await client.refresh(tokens, scope: "openid")
        #expect(form(stub.last(to: "/token")) == "grant_type=refresh_token&refresh_token=rt&scope=openid&client_id=app%3A1")
        #expect(renewed.accessToken == "at-2" && renewed.refreshToken == "rt" && renewed.idToken == original)
        #expect(renewed.scope == "openid email" && renewed.issuer == "https://id.example.com")

        stub.answer("/token", json: try tokenAnswer(idToken: try keys.idToken(nonce: nil, subject: "user-2"), refreshToken: "rt-2"))
        await #expect { try await client.refresh(tokens) } throws: { ($0 as? AuthError)?.idTokenCheck == .subject }
        #expect(form(stub.last(to: "/token")) == "grant_type=refresh_token&refresh_token=rt&client_id=app%3A1")
    }
}

@Suite("EndSessionRequest")
struct EndSessionRequestTests {
    @Test("the logout URL carries id_token_hint, client_id, post_logout_redirect_uri, state, ui_locales, then the others by name (RP-Initiated Logout §2)")
    func parameters() throws {
        let request = EndSessionRequest(idTokenHint: "a.b.c", postLogoutRedirectURI: "com.example.app:/bye", state: "s1",
                                        uiLocales: "ru en", clientID: "app:1",
                                        additionalParameters: ["logout_hint": "olga", "state": "forged", "client_id": "other"])
        #expect(request.parameters.map(\.name) == ["id_token_hint", "client_id", "post_logout_redirect_uri", "state", "ui_locales",
                                                   "logout_hint"])
        let url = try request.url(endpoint: URL(string: "https://id.example.com/logout")!)
        #expect(url.absoluteString == "https://id.example.com/logout?id_token_hint=a.b.c&client_id=app%3A1"
            + "&post_logout_redirect_uri=com.example.app%3A%2Fbye&state=s1&ui_locales=ru+en&logout_hint=olga")
        #expect(EndSessionRequest(idTokenHint: nil).parameters.isEmpty)
    }

    @Test("a post-logout redirect URI gets a fresh state; without one there is none")
    func state() {
        let first = EndSessionRequest(idTokenHint: nil, postLogoutRedirectURI: "com.example.app:/bye")
        let second = EndSessionRequest(idTokenHint: nil, postLogoutRedirectURI: "com.example.app:/bye")
        #expect(first.state?.count == 43 && first.state != second.state)
        #expect(EndSessionRequest(idTokenHint: "a.b.c").state == nil)
        #expect(EndSessionRequest(idTokenHint: nil, postLogoutRedirectURI: "com.example.app:/bye", state: "mine").state == "mine")
        let made = StubTransport().client().makeEndSessionRequest(idTokenHint: "a.b.c", postLogoutRedirectURI: "com.example.app:/bye",
                                                                  uiLocales: "ru")
        #expect(made.clientID == "app:1" && made.idTokenHint == "a.b.c" && made.uiLocales == "ru" && made.state?.count == 43)
    }

    @Test("the endpoint must be https, or http on a loopback address; its own query is kept", arguments: [
        ("https://id.example.com/logout?tenant=1", true), ("http://127.0.0.1:8080/logout", true), ("http://localhost/logout", true),
        ("http://id.example.com/logout", false), ("id.example.com/logout", false),
    ])
    func endpoint(endpoint: String, accepted: Bool) throws {
        let request = EndSessionRequest(idTokenHint: "a.b.c")
        if accepted {
            #expect(try request.url(endpoint: URL(string: endpoint)!).absoluteString == endpoint + (endpoint.contains("?") ? "&" : "?")
                + "id_token_hint=a.b.c")
        } else {
            #expect { try request.url(endpoint: URL(string: endpoint)!) } throws: { ($0 as? AuthError)?.code == .configuration }
        }
    }

    @Test("the metadata must announce an end_session_endpoint, and discovery's is held to the same rule")
    func metadataEndpoint() async throws {
        var document = ProviderMetadata(issuer: "https://id.example.com", authorizationEndpoint: "https://id.example.com/authorize",
                                        tokenEndpoint: "https://id.example.com/token", jwksURI: "https://id.example.com/jwks.json",
                                        responseTypesSupported: ["code"])
        let request = EndSessionRequest(idTokenHint: "a.b.c")
        #expect { try request.url(metadata: document) } throws: { ($0 as? AuthError)?.code == .discovery }
        document.endSessionEndpoint = "http://id.example.com/logout"
        #expect { try request.url(metadata: document) } throws: { ($0 as? AuthError)?.code == .configuration }

        let stub = StubTransport()
        stub.answer("/.well-known/openid-configuration", json: try CanonicalJSON.encode(document))
        await #expect { try await stub.client().endSessionURL(for: request) } throws: { ($0 as? AuthError)?.code == .configuration }
        await #expect { try await stub.client().endSessionURL(idTokenHint: "a.b.c") } throws: { ($0 as? AuthError)?.code == .configuration }
    }

    @Test("endSessionURL(idTokenHint:…) builds the URL it built before: the client's id, state only when given")
    func legacyURL() async throws {
        let client = StubTransport().client()
        let url = try await client.endSessionURL(idTokenHint: "a.b.c", postLogoutRedirectURI: "https://app.example.com/bye", state: "s1",
                                                 uiLocales: "ru")
        let before = FormEncoding.appending([("id_token_hint", "a.b.c"), ("client_id", "app:1"),
                                             ("post_logout_redirect_uri", "https://app.example.com/bye"), ("state", "s1"),
                                             ("ui_locales", "ru")], to: URL(string: "https://id.example.com/logout")!)
        #expect(url == before)
        let stateless = try await client.endSessionURL(idTokenHint: nil, postLogoutRedirectURI: "https://app.example.com/bye")
        #expect(stateless.absoluteString == "https://id.example.com/logout?client_id=app%3A1"
            + "&post_logout_redirect_uri=https%3A%2F%2Fapp.example.com%2Fbye")
    }
}

@Suite("EndSessionResponse")
struct EndSessionResponseTests {
    let request = EndSessionRequest(idTokenHint: "a.b.c", postLogoutRedirectURI: "com.example.app:/bye", state: "s1")

    @Test("the redirect to the post-logout redirect URI with the request's state is the response (RP-Initiated Logout §3)")
    func matching() throws {
        let response = try EndSessionResponse(url: URL(string: "com.example.app:/bye?state=s1&lang=ru")!, request: request)
        #expect(response.state == "s1" && response.additionalParameters == ["lang": "ru"])
        var stateless = request
        stateless.state = nil
        #expect(try EndSessionResponse(url: URL(string: "com.example.app:/bye")!, request: stateless).state == nil)
    }

    @Test("another state, none, or one where none was sent is a forged or stale redirect", arguments: [
        ("?state=s2", "s1"), ("", "s1"), ("?state=", "s1"), ("?state=s1", nil), ("?state=s1x", "s1"),
    ] as [(String, String?)])
    func mismatch(query: String, sent: String?) {
        var request = request
        request.state = sent
        #expect {
            try EndSessionResponse(url: URL(string: "com.example.app:/bye" + query)!, request: request)
        } throws: { ($0 as? AuthError)?.code == .stateMismatch }
    }

    @Test("a redirect elsewhere, a repeated parameter, or a request without a post-logout redirect URI is refused")
    func refusals() {
        #expect {
            try EndSessionResponse(url: URL(string: "com.evil.app:/bye?state=s1")!, request: request)
        } throws: { ($0 as? AuthError)?.code == .configuration }
        #expect {
            try EndSessionResponse(url: URL(string: "com.example.app:/bye?state=s1&state=s1")!, request: request)
        } throws: { ($0 as? AuthError)?.code == .invalidResponse }
        #expect {
            try EndSessionResponse(url: URL(string: "com.example.app:/bye?state=s1")!, request: EndSessionRequest(idTokenHint: "a.b.c"))
        } throws: { ($0 as? AuthError)?.code == .configuration }
    }
}

@Suite("Logging out in the browser")
struct EndSessionTests {
    @Test("endSession opens the logout URL and waits for the post-logout redirect, whose state it checks")
    func endSession() async throws {
        let client = StubTransport().client()
        let browser = HeadlessBrowser()
        let request = client.makeEndSessionRequest(idTokenHint: "a.b.c", postLogoutRedirectURI: "com.example.app:/bye")
        let response = try await client.endSession(request, using: browser)
        #expect(response.state == request.state)
        let presented = try #require(browser.presented.withLock { $0.first })
        #expect(presented.redirectURI == "com.example.app:/bye")
        #expect(presented.url == (try await client.endSessionURL(for: request)))
        #expect(queryItems(presented.url)["state"] == request.state && queryItems(presented.url)["id_token_hint"] == "a.b.c")
    }

    @Test("a logout redirect with another state is refused")
    func forged() async throws {
        let client = StubTransport().client()
        var browser = HeadlessBrowser()
        browser.answer = { _, redirectURI in URL(string: redirectURI + "?state=forged")! }
        await #expect {
            try await client.endSession(client.makeEndSessionRequest(idTokenHint: "a.b.c", postLogoutRedirectURI: "com.example.app:/bye"),
                                        using: browser)
        } throws: { ($0 as? AuthError)?.code == .stateMismatch }
    }

    @Test("without a post-logout redirect URI nothing is opened: nothing would come back")
    func noRedirect() async throws {
        let client = StubTransport().client()
        let browser = HeadlessBrowser()
        await #expect {
            try await client.endSession(client.makeEndSessionRequest(idTokenHint: "a.b.c"), using: browser)
        } throws: { ($0 as? AuthError)?.code == .configuration }
        #expect(browser.presented.withLock { $0.isEmpty })
    }

    @Test("AuthState.signOut(using:) revokes, forgets the tokens, and ends the provider's session with the ID token as hint")
    func signOutInBrowser() async throws {
        let stub = StubTransport()
        stub.answer("/revoke", text: "")
        let store = MemoryTokenStore(TokenSet(accessToken: "at", refreshToken: "rt", idToken: "a.b.c", issuer: stub.issuer,
                                              clientID: "app:1"))
        let state = try await AuthState.restore(client: stub.client(), store: store)
        let browser = HeadlessBrowser()
        let response = try await state.signOut(using: browser, postLogoutRedirectURI: "com.example.app:/bye", uiLocales: "ru")
        #expect(await state.tokens == nil)
        #expect(try await store.load() == nil)
        #expect(form(stub.last(to: "/revoke")) == "token=rt&token_type_hint=refresh_token&client_id=app%3A1")
        let presented = try #require(browser.presented.withLock { $0.first?.url })
        let items = queryItems(presented)
        #expect(items["id_token_hint"] == "a.b.c" && items["client_id"] == "app:1" && items["ui_locales"] == "ru")
        #expect(items["post_logout_redirect_uri"] == "com.example.app:/bye")
        #expect(items["state"] != nil && response.state == items["state"])
    }

    @Test("AuthState.signOut(using:) signs out here even when the browser is closed, then says so")
    func signOutCancelled() async throws {
        let stub = StubTransport()
        stub.answer("/revoke", text: "")
        let state = AuthState(client: stub.client(), tokens: TokenSet(accessToken: "at", refreshToken: "rt", idToken: "a.b.c"))
        var browser = HeadlessBrowser()
        browser.answer = { _, _ in throw AuthError(.cancelled, "closed") }
        await #expect {
            try await state.signOut(using: browser, postLogoutRedirectURI: "com.example.app:/bye")
        } throws: { ($0 as? AuthError)?.code == .cancelled }
        #expect(await state.tokens == nil)
        #expect(stub.requests.contains { $0.url.path == "/revoke" })
    }
}
