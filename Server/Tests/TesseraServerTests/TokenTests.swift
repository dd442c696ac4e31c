import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraSQL

extension Browser {
    /// Signs alice in (consenting when asked) and returns the code.
    func code(client: String = "web", scope: String = "openid email offline_access", extra: [(String, String)] = []) async throws -> String {
        var response = try await request(codeRequest(client: client, scope: scope, extra: extra))
        if response.body.text.contains("action=\"/login\"") {
            response = try await login(response, email: "alice@example.com", password: "correct horse")
        }
        if response.body.text.contains("action=\"/consent\"") { response = try await consent(response, allow: true) }
        guard let code = response.redirectParameters["code"] else { throw OAuthError(.serverError, "no code: \(response.status) \(response.location ?? "")") }
        return code
    }

    func token(_ pairs: [(String, String)], client: String = "web", secret: String = testSecret) async throws -> TestResponse {
        try await post("/token", pairs, headers: basic(client, secret))
    }

    func exchange(_ code: String, extra: [(String, String)] = []) async throws -> TestResponse {
        try await token([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", testRedirect)] + extra)
    }
}

@Suite("Token endpoint")
struct TokenTests {
    @Test("a code exchanges for an ID token, a JWT access token and a refresh token")
    func exchange() async throws {
        try await withApp { provider, browser in
            let code = try await browser.code()
            let response = try await browser.exchange(code)
            #expect(response.status == .ok)
            #expect(response.headers[.cacheControl] == "no-store")
            let body = response.json
            #expect(body["token_type"] == "Bearer")
            #expect(body["refresh_token"]?.stringValue != nil)
            let access = try JWT(parsing: body["access_token"]?.stringValue ?? "")
            try provider.keys.verify(access)
            #expect(access.type == "at+jwt")
            #expect(access.claims["client_id"] == "web")
            let id = try JWT(parsing: body["id_token"]?.stringValue ?? "")
            try provider.keys.verify(id)
            #expect(id.audience == ["web"])
            #expect(id.claims["azp"] == "web")
            #expect(id.claims["nonce"] == "n-1")
            #expect(id.claims["email"] == "alice@example.com")
            #expect(id.claims["amr"] == .array(["pwd"]))
            #expect(id.claims["sid"]?.stringValue != nil && id.claims["auth_time"]?.intValue != nil)
            let digest = Array(SHA256.hash(data: Data((body["access_token"]?.stringValue ?? "").utf8)))
            #expect(id.claims["at_hash"]?.stringValue == Base64URL.encode(digest.prefix(16)))
        }
    }

    @Test("no refresh token without offline_access")
    func noOfflineAccess() async throws {
        try await withApp { _, browser in
            let body = try await browser.exchange(try await browser.code(scope: "openid email")).json
            #expect(body["refresh_token"] == nil)
            #expect(body["scope"] == "openid email")
        }
    }

    @Test("a reused code fails and revokes the tokens of its first use")
    func reusedCode() async throws {
        try await withApp { _, browser in
            let code = try await browser.code()
            let first = try await browser.exchange(code).json
            let again = try await browser.exchange(code)
            #expect(again.status == .badRequest)
            #expect(again.json["error"] == "invalid_grant")
            #expect(again.json["access_token"] == nil)
            let access = first["access_token"]?.stringValue ?? ""
            let userinfo = try await browser.request("/userinfo", headers: [.authorization: "Bearer \(access)"])
            #expect(userinfo.status == .unauthorized)
            let refresh = try await browser.token([("grant_type", "refresh_token"), ("refresh_token", first["refresh_token"]?.stringValue ?? "")])
            #expect(refresh.json["error"] == "invalid_grant")
        }
    }

    @Test("PKCE, redirect URI and client must match the authorization request")
    func codeBinding() async throws {
        try await withApp { provider, browser in
            try await provider.addWebClient(id: "other")
            let verifier = PKCE.createVerifier()
            let pkce = [("code_challenge", PKCE.createChallenge(verifier)), ("code_challenge_method", "S256")]
            let cases: [([(String, String)], String, String)] = [
                ([("code_verifier", PKCE.createVerifier())], "web", testRedirect),
                ([], "web", testRedirect),
                ([("code_verifier", verifier)], "web", testRedirect + "/other"),
                ([("code_verifier", verifier)], "other", testRedirect),
            ]
            for (extra, client, redirect) in cases {
                let code = try await browser.code(extra: pkce)
                let response = try await browser.token([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect)] + extra,
                                                       client: client)
                #expect(response.json["error"] == "invalid_grant")
                #expect(response.json["access_token"] == nil)
            }
            let code = try await browser.code(extra: pkce)
            #expect(try await browser.exchange(code, extra: [("code_verifier", verifier)]).status == .ok)
            let plain = try await browser.code()
            #expect(try await browser.exchange(plain, extra: [("code_verifier", verifier)]).json["error"] == "invalid_grant")
        }
    }

    @Test("an expired code is refused")
    func expiredCode() async throws {
        let clock = ManualClock()
        try await withApp(clock: clock) { _, browser in
            let code = try await browser.code()
            clock.advance(by: 121)
            #expect(try await browser.exchange(code).json["error"] == "invalid_grant")
        }
    }

    @Test("client authentication failures are 401 invalid_client with a challenge")
    func clientAuthentication() async throws {
        try await withApp { _, browser in
            let wrong = try await browser.token([("grant_type", "client_credentials")], secret: "wrong-wrong-wrong-wrong-wrong-wrong")
            #expect(wrong.status == .unauthorized)
            #expect(wrong.json["error"] == "invalid_client")
            #expect(wrong.headers[.wwwAuthenticate]?.hasPrefix("Basic") == true)
            let none = try await browser.post("/token", [("grant_type", "client_credentials"), ("client_id", "web")])
            #expect(none.json["error"] == "invalid_client")
            let unknown = try await browser.token([("grant_type", "client_credentials")], client: "ghost")
            #expect(unknown.json["error"] == "invalid_client")
            var headers = basic("web", testSecret)
            headers[.contentType] = "application/x-www-form-urlencoded"
            let twice = try await browser.post("/token", [("grant_type", "client_credentials"), ("client_secret", testSecret)], headers: headers)
            #expect(twice.json["error"] == "invalid_request")
            let posted = try await browser.post("/token", [("grant_type", "authorization_code"), ("code", "x"), ("redirect_uri", testRedirect),
                                                           ("client_id", "web"), ("client_secret", testSecret)])
            #expect(posted.json["error"] == "invalid_grant")
        }
    }

    @Test("grant types: unknown, not allowed, and malformed requests")
    func grantTypes() async throws {
        try await withApp { _, browser in
            #expect(try await browser.token([("grant_type", "password")]).json["error"] == "unsupported_grant_type")
            #expect(try await browser.token([("grant_type", "client_credentials")]).json["error"] == "unauthorized_client")
            #expect(try await browser.token([]).json["error"] == "invalid_request")
            let json = try await browser.request("/token", method: .post, headers: [.contentType: "application/json", .authorization: basic("web", testSecret)[.authorization]!],
                                                 body: ByteBuffer(string: "{}"))
            #expect(json.json["error"] == "invalid_request")
        }
    }

    @Test("refresh tokens rotate; a rotated one revokes the family; scope can only narrow")
    func refreshRotation() async throws {
        try await withApp { _, browser in
            let first = try await browser.exchange(try await browser.code()).json
            let r1 = first["refresh_token"]?.stringValue ?? ""
            let second = try await browser.token([("grant_type", "refresh_token"), ("refresh_token", r1), ("scope", "openid")])
            #expect(second.status == .ok)
            #expect(second.json["scope"] == "openid")
            #expect(second.json["id_token"] != nil)
            let r2 = second.json["refresh_token"]?.stringValue ?? ""
            #expect(r2 != r1 && !r2.isEmpty)
            let wider = try await browser.token([("grant_type", "refresh_token"), ("refresh_token", r2), ("scope", "openid profile")])
            #expect(wider.json["error"] == "invalid_scope")
            let reuse = try await browser.token([("grant_type", "refresh_token"), ("refresh_token", r1)])
            #expect(reuse.json["error"] == "invalid_grant")
            #expect(try await browser.token([("grant_type", "refresh_token"), ("refresh_token", r2)]).json["error"] == "invalid_grant")
        }
    }

    @Test("client_credentials issues an access token only, within the client's scopes")
    func clientCredentials() async throws {
        try await withApp { provider, browser in
            try await provider.addWebClient(id: "svc", grants: ["client_credentials"], scopes: ["api.read", "api.write"])
            let ok = try await browser.token([("grant_type", "client_credentials"), ("scope", "api.read")], client: "svc")
            #expect(ok.status == .ok)
            #expect(ok.json["refresh_token"] == nil && ok.json["id_token"] == nil)
            let token = try JWT(parsing: ok.json["access_token"]?.stringValue ?? "")
            #expect(token.subject == "svc" && token.claims["scope"] == "api.read")
            #expect(try await browser.token([("grant_type", "client_credentials"), ("scope", "admin")], client: "svc").json["error"] == "invalid_scope")
            #expect(try await browser.token([("grant_type", "client_credentials"), ("scope", "openid")], client: "svc").json["error"] == "invalid_scope")
        }
    }

    @Test("private_key_jwt: a signed assertion authenticates once; the Apple client-secret shape too")
    func privateKeyJWT() async throws {
        try await withApp { provider, browser in
            let key = try JWSSigningKey.generate(.es256, kid: "app-key")
            var registration = Provider.ClientRegistration(name: "Signed", redirectURIs: [testRedirect])
            registration.id = "signed"
            registration.jwks = JWKSet(keys: [key.publicKey.jwk])
            registration.assertionIssuer = "TEAM123456"
            registration.assertionLifetime = ClientAuthenticator.maxAssertionLifetime
            registration.grantTypes = ["client_credentials"]
            registration.scopes = ["api"]
            _ = try await provider.registerClient(registration)
            let now = provider.clock.now()
            func assertion(_ claims: [String: JSONValue]) throws -> [(String, String)] {
                [("grant_type", "client_credentials"), ("client_assertion_type", jwtBearerClientAssertionType),
                 ("client_assertion", try JWT.sign(claims, with: key))]
            }
            let claims: [String: JSONValue] = ["iss": "signed", "sub": "signed", "aud": .string(provider.issuer + "/token"),
                                               "exp": .int(now + 60), "iat": .int(now), "jti": "one"]
            let body = try assertion(claims)
            #expect(try await browser.post("/token", body).status == .ok)
            #expect(try await browser.post("/token", body).json["error"] == "invalid_client")
            var wrongAudience = claims
            wrongAudience["aud"] = "https://elsewhere.example"
            wrongAudience["jti"] = "two"
            #expect(try await browser.post("/token", try assertion(wrongAudience)).json["error"] == "invalid_client")
            var expired = claims
            expired["exp"] = .int(now - 120)
            expired["jti"] = "three"
            #expect(try await browser.post("/token", try assertion(expired)).json["error"] == "invalid_client")
            let apple: [String: JSONValue] = ["iss": "TEAM123456", "sub": "signed", "aud": .string(provider.issuer),
                                              "iat": .int(now), "exp": .int(now + 86_400 * 150)]
            #expect(try await browser.post("/token", try assertion(apple)).status == .ok)
            let asSecret = [("grant_type", "client_credentials"), ("client_id", "signed"), ("client_secret", try JWT.sign(apple, with: key))]
            #expect(try await browser.post("/token", asSecret).status == .ok)
            var tooLong = apple
            tooLong["exp"] = .int(now + 86_400 * 200)
            #expect(try await browser.post("/token", try assertion(tooLong)).json["error"] == "invalid_client")
            let stranger = try JWSSigningKey.generate(.es256, kid: "app-key")
            let forged = [("grant_type", "client_credentials"), ("client_assertion_type", jwtBearerClientAssertionType),
                          ("client_assertion", try JWT.sign(apple, with: stranger))]
            #expect(try await browser.post("/token", forged).json["error"] == "invalid_client")
        }
    }

    @Test("pairwise clients see a different, stable subject")
    func pairwise() async throws {
        try await withApp { provider, browser in
            try await provider.addWebClient(id: "pw", pairwise: true)
            let web = try JWT(parsing: try await browser.exchange(try await browser.code()).json["id_token"]?.stringValue ?? "")
            let codeA = try await browser.code(client: "pw")
            let a = try await browser.token([("grant_type", "authorization_code"), ("code", codeA), ("redirect_uri", testRedirect)], client: "pw")
            let codeB = try await browser.code(client: "pw")
            let b = try await browser.token([("grant_type", "authorization_code"), ("code", codeB), ("redirect_uri", testRedirect)], client: "pw")
            let subA = try JWT(parsing: a.json["id_token"]?.stringValue ?? "").subject
            #expect(subA != nil && subA != web.subject)
            #expect(subA == (try JWT(parsing: b.json["id_token"]?.stringValue ?? "").subject))
        }
    }
}

@Suite("Userinfo, introspection, revocation, logout")
struct ResourceEndpointTests {
    @Test("userinfo answers a bearer header or a form body, not both")
    func userinfo() async throws {
        try await withApp { _, browser in
            let access = try await browser.exchange(try await browser.code()).json["access_token"]?.stringValue ?? ""
            let get = try await browser.request("/userinfo", headers: [.authorization: "Bearer \(access)"])
            #expect(get.status == .ok)
            #expect(get.json["email"] == "alice@example.com")
            #expect(get.json["sub"]?.stringValue != nil)
            #expect(get.json["name"] == nil)
            let body = try await browser.post("/userinfo", [("access_token", access)])
            #expect(body.json["email"] == "alice@example.com")
            var headers = formHeaders
            headers[.authorization] = "Bearer \(access)"
            #expect(try await browser.post("/userinfo", [("access_token", access)], headers: headers).json["error"] == "invalid_request")
            let none = try await browser.request("/userinfo")
            #expect(none.status == .unauthorized && none.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
            let bad = try await browser.request("/userinfo", headers: [.authorization: "Bearer abc"])
            #expect(bad.headers[.wwwAuthenticate]?.contains("invalid_token") == true)
        }
    }

    @Test("introspection reports live tokens to confidential clients; revocation ends them")
    func introspectAndRevoke() async throws {
        try await withApp { _, browser in
            let tokens = try await browser.exchange(try await browser.code()).json
            let access = tokens["access_token"]?.stringValue ?? "", refresh = tokens["refresh_token"]?.stringValue ?? ""
            let live = try await browser.post("/introspect", [("token", access)], headers: basic("web", testSecret)).json
            #expect(live["active"] == true)
            #expect(live["client_id"] == "web")
            let liveRefresh = try await browser.post("/introspect", [("token", refresh)], headers: basic("web", testSecret)).json
            #expect(liveRefresh["active"] == true)
            #expect(try await browser.post("/introspect", [("token", "junk")], headers: basic("web", testSecret)).json == ["active": false])

            let revoke = try await browser.post("/revoke", [("token", access), ("token_type_hint", "access_token")], headers: basic("web", testSecret))
            #expect(revoke.status == .ok)
            #expect(try await browser.post("/introspect", [("token", access)], headers: basic("web", testSecret)).json["active"] == false)
            #expect(try await browser.request("/userinfo", headers: [.authorization: "Bearer \(access)"]).status == .unauthorized)
            // Revoking the refresh token ends the grant.
            #expect(try await browser.post("/revoke", [("token", refresh)], headers: basic("web", testSecret)).status == .ok)
            #expect(try await browser.token([("grant_type", "refresh_token"), ("refresh_token", refresh)]).json["error"] == "invalid_grant")
            #expect(try await browser.post("/revoke", [("token", "unknown")], headers: basic("web", testSecret)).status == .ok)
        }
    }

    @Test("logout with a matching id_token_hint ends the session and returns to a registered URI")
    func logout() async throws {
        try await withApp { _, browser in
            let tokens = try await browser.exchange(try await browser.code()).json
            let hint = tokens["id_token"]?.stringValue ?? ""
            let refused = try await browser.request("/logout?" + RequestParameters.encode([
                ("id_token_hint", hint), ("post_logout_redirect_uri", "https://evil.example/")]))
            #expect(refused.status == .badRequest && refused.location == nil)
            let out = try await browser.request("/logout?" + RequestParameters.encode([
                ("id_token_hint", hint), ("post_logout_redirect_uri", "https://app.example.com/bye"), ("state", "z")]))
            #expect(out.status == .seeOther)
            #expect(out.location == "https://app.example.com/bye?state=z")
            #expect(browser.cookies["tessera_session"] == nil)
            let again = try await browser.request(codeRequest(extra: [("prompt", "none")]))
            #expect(again.redirectParameters["error"] == "login_required")
        }
    }

    @Test("logout without a hint asks the user first")
    func logoutConfirmation() async throws {
        try await withApp { _, browser in
            _ = try await browser.code()
            let page = try await browser.request("/logout")
            #expect(page.status == .ok && page.field("csrf_token") != nil)
            #expect(browser.cookies["tessera_session"] != nil)
            let done = try await browser.post("/logout", [("csrf_token", page.field("csrf_token") ?? ""), ("confirm", "yes")])
            #expect(done.status == .ok)
            #expect(browser.cookies["tessera_session"] == nil)
        }
    }

    @Test("discovery names every endpoint under the issuer")
    func discovery() async throws {
        try await withApp { provider, browser in
            for path in ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"] {
                let document = try await browser.request(path).json
                #expect(document["issuer"]?.stringValue == provider.issuer)
                for key in ["authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri", "revocation_endpoint",
                            "introspection_endpoint", "end_session_endpoint"] {
                    #expect(document[key]?.stringValue?.hasPrefix(provider.issuer + "/") == true, "\(key)")
                }
                #expect(document["code_challenge_methods_supported"] == .array(["S256"]))
                #expect(document["authorization_response_iss_parameter_supported"] == true)
            }
            let jwks = try await browser.request("/jwks.json")
            #expect(jwks.headers[.contentType] == "application/jwk-set+json")
            #expect(try JSONDecoder().decode(JWKSet.self, from: Data(jwks.body.text.utf8)).keys.count == 2)
        }
    }
}
