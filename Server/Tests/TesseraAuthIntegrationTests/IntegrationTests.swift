import Foundation
import Synchronization
import Testing
import TesseraAuth
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain

/// The SDK against the real provider over live loopback HTTP.
@Suite("SDK against the provider")
struct IntegrationTests {
    @Test("discovery: the provider's metadata, fetched once and cached; concurrent callers share the fetch")
    func discovery() async throws {
        try await withLiveProvider { live in
            let client = live.client()
            let metadata = try await client.discover()
            #expect(metadata.issuer == live.issuer.absoluteString)
            #expect(metadata.codeChallengeMethodsSupported == ["S256"])
            #expect(metadata.authorizationResponseIssParameterSupported == true)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<10 { group.addTask { _ = try? await client.discover() } }
            }
            #expect(live.transport.count("GET", "/.well-known/openid-configuration") == 1)
            _ = try await client.discover(forceRefresh: true)
            #expect(live.transport.count("GET", "/.well-known/openid-configuration") == 2)
        }
    }

    @Test("discovery refuses a document naming another issuer (Discovery §4.3)")
    func discoveryIssuerMismatch() async throws {
        try await withLiveProvider { live in
            // Same server, but the client expects the issuer with another spelling.
            let other = URL(string: live.issuer.absoluteString.replacingOccurrences(of: "127.0.0.1", with: "localhost"))!
            let client = OIDCClient(configuration: .init(issuer: other, clientID: "web", redirectURI: webRedirect), transport: live.transport)
            await #expect { try await client.discover() } throws: { ($0 as? AuthError)?.code == .issuerMismatch }
        }
    }

    @Test("the whole code flow with a confidential client: login form, code, tokens, validated ID token")
    func codeFlow() async throws {
        try await withLiveProvider { live in
            let client = live.client()
            let request = client.makeRequest()
            let result = try await client.authorize(request, using: live.browser)
            let idToken = try #require(result.idToken)
            #expect(idToken.nonce == request.nonce)
            #expect(idToken.audience == ["web"])
            #expect(idToken.authenticationMethods == ["pwd"])
            let user = try #require(result.user)
            #expect(user.email == aliceEmail && user.emailVerified && user.name == "Alice Example")
            #expect(result.tokens.refreshToken != nil)
            #expect(result.tokens.issuer == live.issuer.absoluteString && result.tokens.clientID == "web")
            // client_secret_basic, and the PKCE verifier with the code.
            let body = try #require(live.transport.tokenBodies.first)
            #expect(body.contains("code_verifier=\(request.codeVerifier!)"))
            #expect(!body.contains("client_secret"))
        }
    }

    @Test("a public client over the loopback listener, the way tessera login does it (RFC 8252 §7.3)")
    func loopbackFlow() async throws {
        try await withLiveProvider { live in
            let listener = try LoopbackRedirectListener()
            let client = live.client("cli", secret: nil, redirectURI: listener.redirectURI)
            let browser = live.browser
            let agent = LoopbackUserAgent(listener: listener, timeout: .seconds(20)) { url in
                Task {
                    // The browser signs in and follows the final redirect to the listener with a real GET.
                    let callback = try await browser.signIn(at: url, until: listener.redirectURI)
                    _ = try await browser.request(callback)
                }
            }
            let state = AuthState(client: client)
            let user = try await state.signIn(using: agent)
            #expect(user.email == aliceEmail)
            #expect(live.transport.tokenBodies.first?.contains("client_id=cli") == true)
        }
    }

    @Test("consent denied comes back as access_denied")
    func denied() async throws {
        try await withLiveProvider { live in
            let client = live.client("third")
            let browser = HeadlessBrowser(email: aliceEmail, password: alicePassword, allowConsent: false)
            await #expect { try await client.authorize(client.makeRequest(scope: "openid email"), using: browser) } throws: {
                ($0 as? AuthError)?.oauthError?.code == .accessDenied
            }
        }
    }

    @Test("a response replayed into another sign-in fails the state check before any exchange")
    func stateMismatch() async throws {
        try await withLiveProvider { live in
            let client = live.client()
            let first = client.makeRequest()
            let callback = try await live.browser.present(try await client.authorizationURL(for: first), redirectURI: webRedirect)
            await #expect { try await client.exchangeCode(from: callback, request: client.makeRequest()) } throws: {
                ($0 as? AuthError)?.code == .stateMismatch
            }
            #expect(live.transport.count("POST", "/token") == 0)
        }
    }

    @Test("ID tokens failing validation: another nonce, another audience, a tampered payload")
    func idTokenFailures() async throws {
        try await withLiveProvider { live in
            let client = live.client()
            var request = client.makeRequest()
            let callback = try await live.browser.present(try await client.authorizationURL(for: request), redirectURI: webRedirect)
            // Same state and verifier, but the app remembers another nonce: an injected code.
            request.nonce = "not-the-nonce"
            await #expect { try await client.exchangeCode(from: callback, request: request) } throws: {
                ($0 as? AuthError)?.idTokenCheck == .nonce
            }

            let good = client.makeRequest()
            let result = try await client.exchangeCode(from: try await live.browser.present(try await client.authorizationURL(for: good),
                                                                                             redirectURI: webRedirect), request: good)
            let raw = try #require(result.tokens.idToken)
            _ = try await client.validateIDToken(raw, nonce: good.nonce, accessToken: result.tokens.accessToken)

            let otherApp = live.client("third")
            await #expect { try await otherApp.validateIDToken(raw, nonce: good.nonce) } throws: {
                ($0 as? AuthError)?.idTokenCheck == .audience
            }
            await #expect { try await client.validateIDToken(raw, nonce: good.nonce, accessToken: "another-access-token") } throws: {
                ($0 as? AuthError)?.idTokenCheck == .accessTokenHash
            }
            let parts = raw.split(separator: ".").map(String.init)
            var claims = try JSONDecoder().decode([String: JSONValue].self, from: Base64URL.decode(parts[1])!)
            claims["email"] = "mallory@example.com"
            let tampered = [parts[0], Base64URL.encode(try CanonicalJSON.encode(claims)), parts[2]].joined(separator: ".")
            await #expect { try await client.validateIDToken(tampered, nonce: good.nonce) } throws: {
                ($0 as? AuthError)?.idTokenCheck == .signature
            }
        }
    }

    @Test("an ID token signed with a key the cached JWKS lacks makes the client fetch the JWKS once more")
    func keyRotation() async throws {
        try await withLiveProvider { live in
            let client = live.client()
            let state = AuthState(client: client)
            try await state.signIn(using: live.browser)
            #expect(live.transport.count("GET", "/jwks.json") == 1)
            // Twice: the first rotation promotes the already-published next key.
            _ = try await live.provider.keys.rotate()
            _ = try await live.provider.keys.rotate()
            let renewed = try await state.refresh()
            #expect(renewed.idToken != nil)
            #expect(live.transport.count("GET", "/jwks.json") == 2)
            // A token nobody published fails after the one refetch, not in a loop.
            let stranger = try JWSSigningKey.generate(.es256, kid: "nobody")
            let forged = try JWT.sign(["iss": .string(live.issuer.absoluteString), "sub": "x", "aud": "web",
                                       "iat": .int(Int64(Date().timeIntervalSince1970)), "exp": .int(Int64(Date().timeIntervalSince1970) + 60)],
                                      with: stranger)
            await #expect { try await client.validateIDToken(forged, nonce: nil) } throws: { ($0 as? AuthError)?.idTokenCheck == .unknownKey }
            #expect(live.transport.count("GET", "/jwks.json") == 3)
        }
    }

    @Test("userinfo returns the user's claims for the access token; the session's user is completed by it")
    func userInfo() async throws {
        try await withLiveProvider { live in
            let state = AuthState(client: live.client())
            try await state.signIn(using: live.browser)
            let user = try await state.reloadUser()
            #expect(user.givenName == "Alice" && user.familyName == "Example")
            #expect(await state.userInfo?.email == aliceEmail)
            await #expect { try await live.client().userInfo(accessToken: "not-a-token") } throws: {
                ($0 as? AuthError)?.oauthError?.code == .invalidToken
            }
        }
    }

    @Test("twenty concurrent refreshes send the rotated refresh token once, and all get the same new tokens")
    func refreshCoalescing() async throws {
        try await withLiveProvider { live in
            let store = MemoryTokenStore()
            let state = AuthState(client: live.client(), store: store)
            try await state.signIn(using: live.browser)
            let before = try #require(await state.tokens)
            live.transport.tokenDelay.withLock { $0 = .milliseconds(100) }
            let results = try await withThrowingTaskGroup(of: TokenSet.self) { group in
                for _ in 0..<20 { group.addTask { try await state.refresh() } }
                return try await group.reduce(into: [TokenSet]()) { $0.append($1) }
            }
            live.transport.tokenDelay.withLock { $0 = .zero }
            let refreshRequests = live.transport.tokenBodies.filter { $0.contains("grant_type=refresh_token") }
            #expect(refreshRequests.count == 1)
            #expect(results.count == 20)
            #expect(Set(results.map(\.accessToken)).count == 1)
            #expect(Set(results.map(\.refreshToken)).count == 1)
            #expect(results[0].refreshToken != before.refreshToken)
            #expect(try await store.load() == results[0])
            // The provider saw no reuse: the session is alive and refreshes again.
            let again = try await state.refresh()
            #expect(again.refreshToken != results[0].refreshToken)
            // A caller holding the old access token gets the current tokens without a request.
            let count = live.transport.count("POST", "/token")
            #expect(try await state.refresh(staleAccessToken: before.accessToken) == again)
            #expect(live.transport.count("POST", "/token") == count)
        }
    }

    @Test("sending a rotated refresh token twice revokes the session: why AuthState coalesces (RFC 9700 §4.14.2)")
    func reuseIsPunished() async throws {
        try await withLiveProvider { live in
            let client = live.client()
            let signedIn = try await client.authorize(client.makeRequest(), using: live.browser)
            _ = try await client.refresh(signedIn.tokens)
            await #expect { try await client.refresh(signedIn.tokens) } throws: { ($0 as? AuthError)?.isInvalidGrant == true }
            // An AuthState whose refresh token was revoked signs itself out.
            let store = MemoryTokenStore(signedIn.tokens)
            let state = try await AuthState.restore(client: client, store: store)
            await #expect { try await state.refresh() } throws: { ($0 as? AuthError)?.isInvalidGrant == true }
            #expect(await state.isSignedIn == false)
            #expect(try await store.load() == nil)
        }
    }

    @Test("fresh tokens refresh only when the access token is about to expire")
    func freshTokens() async throws {
        try await withLiveProvider { live in
            let offset = ManualOffset()
            let client = live.client(now: { Date().addingTimeInterval(offset.seconds) })
            let state = AuthState(client: client)
            try await state.signIn(using: live.browser)
            let first = try await state.freshTokens()
            #expect(live.transport.count("POST", "/token") == 1)
            offset.seconds = 890   // the provider's access tokens live 900 s
            let second = try await state.freshTokens(minimumValidity: 60)
            #expect(second.accessToken != first.accessToken)
            #expect(live.transport.count("POST", "/token") == 2)
        }
    }

    @Test("sign-out revokes the refresh token, which ends the whole grant, and forgets the stored tokens")
    func signOut() async throws {
        try await withLiveProvider { live in
            let root = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: root) }
            let store = FileTokenStore(fileURL: root.appendingPathComponent("tessera/tokens.json"))
            let client = live.client()
            let state = AuthState(client: client, store: store)
            try await state.signIn(using: live.browser)
            let tokens = try #require(try await store.load())
            #expect(permissions(store.fileURL.path) == 0o600)

            let restored = try await AuthState.restore(client: client, store: store)
            #expect(await restored.currentUser?.email == aliceEmail)
            let logout = try await restored.endSessionURL(postLogoutRedirectURI: "https://app.example.com/bye", state: "bye-1")
            #expect(queryItems(logout)["id_token_hint"] == tokens.idToken)

            try await restored.signOut()
            #expect(live.transport.count("POST", "/revoke") == 1)
            #expect(try await store.load() == nil)
            #expect(await restored.currentUser == nil)
            await #expect { try await client.refresh(tokens) } throws: { ($0 as? AuthError)?.isInvalidGrant == true }
            await #expect { try await client.userInfo(accessToken: tokens.accessToken) } throws: {
                ($0 as? AuthError)?.oauthError?.code == .invalidToken
            }
        }
    }

    @Test("a stored session of another provider or client is not restored")
    func restoreChecksOwner() async throws {
        try await withLiveProvider { live in
            var foreign = sampleTokens
            foreign.issuer = "https://elsewhere.example.com"
            let state = try await AuthState.restore(client: live.client(), store: MemoryTokenStore(foreign))
            #expect(await state.isSignedIn == false)
        }
    }
}

/// A clock offset tests move by hand.
final class ManualOffset: Sendable {
    private let value = Mutex<TimeInterval>(0)
    var seconds: TimeInterval {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
