import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TesseraCore
@testable import TesseraServer
@testable import TesseraNode
@testable import TesseraDomain
@testable import TesseraSQL

/// An account set up by a squatter: the victim's address, unverified, with the squatter's
/// password, a browser session, a refresh token and an upstream identity linked on the
/// unverified address.
struct SquattedAccount {
    let user: User
    let sessionHash: String
    let refreshToken: String

    static let password = "squatter's passphrase"

    static func make(_ app: NativeApp, email: String = "victim@example.com") async throws -> SquattedAccount {
        let provider = app.provider
        let user = try await provider.createUser(email: email, password: password, emailVerified: false)
        let now = provider.clock.now()
        let sessionHash = tokenHash("squatter-session")
        try await provider.store.insertSession(tokenHash: sessionHash, BrowserSession(
            sid: "squatter-sid", userID: user.id, authTime: now, amr: ["pwd"], expiresAt: now + 3600), now: now)
        _ = try await provider.store.link(UpstreamIdentity(providerID: "corp", subject: "squatter", userID: user.id, email: email,
                                                           proven: false, createdAt: now, lastUsedAt: now))
        let challenge = try await app.startSignIn(email)
        let signedIn = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(challenge)), ("grant_type", "password"),
                                                                 ("password", password), ("scope", "openid offline_access")])
        return SquattedAccount(user: user, sessionHash: sessionHash, refreshToken: try #require(signedIn.json["refresh_token"]?.stringValue))
    }

    /// Checks that nothing the squatter set up works any more.
    func expectLockedOut(_ app: NativeApp) async throws {
        let provider = app.provider
        let secured = try #require(try await provider.store.user(id: user.id))
        #expect(secured.emailVerified, "the address is verified")
        #expect(secured.passwordHash == nil, "the squatter's password is gone")
        #expect(try await provider.store.session(tokenHash: sessionHash, now: provider.clock.now()) == nil, "the session ended")
        #expect(try await provider.store.identities(userID: user.id).isEmpty, "the identity linked on the unverified address is gone")
        let refreshed = try await app.post("/oauth2/v2.0/token", [("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
        #expect(refreshed.json["error"] == "invalid_grant", "the squatter's refresh token is revoked")
        let again = try await app.startSignIn(user.email)
        let old = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(again)), ("grant_type", "password"),
                                                            ("password", Self.password), ("scope", "openid")])
        #expect(old.json["error_codes"] == .array([50126]), "the squatter's password no longer signs in")
    }
}

@Suite("Security: the address was just proven")
struct AddressProofTests {
    @Test("a code sign-in to an unverified account removes the password, unproven identities, sessions and grants")
    func codeSignInSecuresAccount() async throws {
        try await withNativeApp { app in
            let squatted = try await SquattedAccount.make(app)
            let challenge = try await app.startSignIn("victim@example.com", challengeTypes: "oob redirect")
            let owner = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(challenge)), ("grant_type", "oob"),
                                                                  ("oob", try await app.code(for: "victim@example.com")),
                                                                  ("scope", "openid offline_access")])
            #expect(owner.status == .ok, "\(owner.body.text)")
            let ownerRefresh = try #require(owner.json["refresh_token"]?.stringValue)
            try await squatted.expectLockedOut(app)
            // The owner's own tokens, issued after the rule ran, keep working.
            let refreshed = try await app.post("/oauth2/v2.0/token", [("grant_type", "refresh_token"), ("refresh_token", ownerRefresh)])
            #expect(refreshed.status == .ok, "\(refreshed.body.text)")
        }
    }

    @Test("a password reset by code on an unverified account ends the squatter's identities, sessions and grants too")
    func resetSecuresAccount() async throws {
        try await withNativeApp { app in
            let squatted = try await SquattedAccount.make(app)
            let start = try await app.post("/resetpassword/v1.0/start", [("username", "victim@example.com"), ("challenge_type", "oob redirect")])
            let challenge = try await app.post("/resetpassword/v1.0/challenge", [("continuation_token", try token(start))])
            let verified = try await app.post("/resetpassword/v1.0/continue", [("continuation_token", try token(challenge)), ("grant_type", "oob"),
                                                                              ("oob", try await app.code(for: "victim@example.com"))])
            let submitted = try await app.post("/resetpassword/v1.0/submit", [("continuation_token", try token(verified)),
                                                                             ("new_password", "the owner's own passphrase")])
            #expect(submitted.status == .ok, "\(submitted.body.text)")
            let user = try #require(try await app.provider.store.user(id: squatted.user.id))
            #expect(user.emailVerified && user.passwordHash != nil)
            #expect(try await app.provider.store.session(tokenHash: squatted.sessionHash, now: app.provider.clock.now()) == nil)
            #expect(try await app.provider.store.identities(userID: user.id).isEmpty)
            let refreshed = try await app.post("/oauth2/v2.0/token", [("grant_type", "refresh_token"), ("refresh_token", squatted.refreshToken)])
            #expect(refreshed.json["error"] == "invalid_grant")
        }
    }

    @Test("an email link to an unverified account applies the same rule")
    func emailLinkSecuresAccount() async throws {
        try await withNativeApp { app in
            let squatted = try await SquattedAccount.make(app)
            try await app.sendLink("victim@example.com")
            let owner = try await app.complete("victim@example.com", code: try await app.oobCode(for: "victim@example.com"))
            #expect(owner.json["is_new_user"] == false, "\(owner.body.text)")
            try await squatted.expectLockedOut(app)
        }
    }

    @Test("proving the address of a verified account changes nothing: its sessions and grants stay")
    func verifiedAccountUntouched() async throws {
        try await withNativeApp { app in
            let challenged = try await app.startSignIn("alice@example.com")
            let before = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(challenged)), ("grant_type", "password"),
                                                                   ("password", "correct horse battery"), ("scope", "openid offline_access")])
            let refresh = try #require(before.json["refresh_token"]?.stringValue)
            let challenge = try await app.startSignIn("alice@example.com", challengeTypes: "oob redirect")
            let byCode = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(challenge)), ("grant_type", "oob"),
                                                                   ("oob", try await app.code(for: "alice@example.com")), ("scope", "openid")])
            #expect(byCode.status == .ok)
            #expect(try await app.provider.store.user(email: "alice@example.com")?.passwordHash != nil)
            let refreshed = try await app.post("/oauth2/v2.0/token", [("grant_type", "refresh_token"), ("refresh_token", refresh)])
            #expect(refreshed.status == .ok, "a code sign-in on another device signs nobody out")
        }
    }

    @Test("the rule runs in one transaction: when a later step fails, nothing of it stays")
    func ruleIsAtomic() async throws {
        try await withProvider { provider async throws in
            let user = try await provider.createUser(email: "victim@example.com", password: "squatter's passphrase", emailVerified: false)
            struct Abort: Error {}
            await #expect(throws: Abort.self) {
                try await provider.store.transaction { tx in
                    _ = try await AccountRules.addressProven(user, now: 1, in: tx)
                    throw Abort()
                }
            }
            let unchanged = try #require(try await provider.store.user(id: user.id))
            #expect(!unchanged.emailVerified && unchanged.passwordHash != nil)
        }
    }
}

@Suite("Security: token endpoint")
struct TokenEndpointSecurityTests {
    @Test("a used code replayed by another client is refused without revoking the owner's tokens")
    func usedCodeFromStranger() async throws {
        try await withApp { provider, browser in
            try await provider.addWebClient(id: "stranger")
            let code = try await browser.code()
            let first = try await browser.exchange(code)
            let refresh = try #require(first.json["refresh_token"]?.stringValue)
            let stranger = try await browser.token([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", testRedirect)],
                                                   client: "stranger")
            #expect(stranger.json["error"] == "invalid_grant")
            let refreshed = try await browser.token([("grant_type", "refresh_token"), ("refresh_token", refresh)])
            #expect(refreshed.status == .ok, "the owner's tokens survive a stranger's replay: \(refreshed.body.text)")
        }
    }
}

@Suite("Security: client assertions")
struct ClientAssertionTests {
    /// A private_key_jwt client `signed` (and, Sign-in-with-Apple style, `apple`), and a body
    /// that authenticates with an assertion of `claims`.
    static func withSignedClients(_ body: @escaping @Sendable (Provider, Browser, JWSSigningKey) async throws -> Void) async throws {
        try await withApp { provider, browser in
            let key = try JWSSigningKey.generate(.es256, kid: "app-key")
            for (id, lifetime) in [("signed", Int64?.none), ("apple", ClientAuthenticator.maxAssertionLifetime)] {
                var registration = Provider.ClientRegistration(name: id, redirectURIs: [testRedirect])
                registration.id = id
                registration.jwks = JWKSet(keys: [key.publicKey.jwk])
                registration.assertionIssuer = lifetime == nil ? nil : "TEAM123456"
                registration.assertionLifetime = lifetime
                registration.grantTypes = ["client_credentials"]
                registration.scopes = ["api"]
                _ = try await provider.registerClient(registration)
            }
            try await body(provider, browser, key)
        }
    }

    static func form(_ claims: [String: JSONValue], key: JWSSigningKey) throws -> [(String, String)] {
        [("grant_type", "client_credentials"), ("client_assertion_type", jwtBearerClientAssertionType),
         ("client_assertion", try JWT.sign(claims, with: key))]
    }

    @Test("an assertion needs a jti, is accepted once and only within five minutes of its iat")
    func shortLivedAndSingleUse() async throws {
        try await Self.withSignedClients { provider, browser, key in
            let now = provider.clock.now()
            let good: [String: JSONValue] = ["iss": "signed", "sub": "signed", "aud": .string(provider.issuer), "iat": .int(now),
                                             "exp": .int(now + 300), "jti": "j-1"]
            let once = try Self.form(good, key: key)
            #expect(try await browser.post("/token", once).status == .ok)
            let replay = try await browser.post("/token", once)
            #expect(replay.status == .unauthorized && replay.json["error"] == "invalid_client")

            var noJTI = good
            noJTI["jti"] = nil
            let refused = try await browser.post("/token", try Self.form(noJTI, key: key))
            #expect(refused.json["error"] == "invalid_client" && refused.json["error_description"]?.stringValue?.contains("jti") == true)
            // Authlib writes exp an hour after iat: accepted, but only within five minutes of iat.
            var hour = good
            hour["jti"] = "j-2"
            hour["exp"] = .int(now + 3600)
            #expect(try await browser.post("/token", try Self.form(hour, key: key)).status == .ok)
            var long = good
            long["jti"] = "j-3"
            long["exp"] = .int(now + 3601)
            let tooLong = try await browser.post("/token", try Self.form(long, key: key))
            #expect(tooLong.json["error_description"]?.stringValue?.contains("at most 3600 s") == true, "\(tooLong.body.text)")
            var old = good
            old["jti"] = "j-4"
            old["iat"] = .int(now - 361)
            let stale = try await browser.post("/token", try Self.form(old, key: key))
            #expect(stale.json["error_description"]?.stringValue?.contains("too old") == true, "\(stale.body.text)")
            var noIAT = good
            noIAT["jti"] = "j-5"
            noIAT["iat"] = nil
            noIAT["exp"] = .int(now + 86_400 * 180)
            #expect(try await browser.post("/token", try Self.form(noIAT, key: key)).json["error"] == "invalid_client",
                    "without iat the lifetime counts from now")
        }
    }

    @Test("an assertion without iat is remembered until its exp: replaying it later is refused")
    func noIssuedAtRememberedUntilExpiry() async throws {
        let clock = ManualClock()
        try await withApp(clock: clock) { provider, browser in
            let key = try JWSSigningKey.generate(.es256, kid: "app-key")
            var registration = Provider.ClientRegistration(name: "signed", redirectURIs: [testRedirect])
            registration.id = "signed"
            registration.jwks = JWKSet(keys: [key.publicKey.jwk])
            registration.grantTypes = ["client_credentials"]
            registration.scopes = ["api"]
            _ = try await provider.registerClient(registration)
            let now = provider.clock.now()
            let claims: [String: JSONValue] = ["iss": "signed", "sub": "signed", "aud": .string(provider.issuer),
                                               "exp": .int(now + 3000), "jti": "no-iat"]
            let body = try Self.form(claims, key: key)
            #expect(try await browser.post("/token", body).status == .ok)
            clock.advance(by: 1200)  // past the five-minute window, before exp
            let replay = try await browser.post("/token", body)
            #expect(replay.status == .unauthorized && replay.json["error"] == "invalid_client", "\(replay.body.text)")
        }
    }

    @Test("aud must be the issuer or the token endpoint, and nothing else")
    func audience() async throws {
        try await Self.withSignedClients { provider, browser, key in
            let now = provider.clock.now()
            func attempt(_ aud: JSONValue, _ jti: String) async throws -> TestResponse {
                try await browser.post("/token", try Self.form(["iss": "signed", "sub": "signed", "aud": aud, "iat": .int(now),
                                                                 "exp": .int(now + 60), "jti": .string(jti)], key: key))
            }
            #expect(try await attempt(.string(provider.issuer), "a").status == .ok)
            #expect(try await attempt(.string(provider.issuer + "/token"), "b").status == .ok)
            #expect(try await attempt(.array([.string(provider.issuer)]), "c").status == .ok)
            for (i, aud) in [JSONValue.string(provider.issuer + "/revoke"), .string(provider.issuer + "/introspect"),
                             .array(["https://attacker.example", .string(provider.issuer)]), .array([]),
                             .string("https://attacker.example")].enumerated() {
                let refused = try await attempt(aud, "bad-\(i)")
                #expect(refused.json["error"] == "invalid_client", "aud \(aud) must be refused")
            }
        }
    }

    @Test("a client registered with a long assertion lifetime reuses Apple's client secret without jti, up to that lifetime")
    func appleStyle() async throws {
        try await Self.withSignedClients { provider, browser, key in
            let now = provider.clock.now()
            let secret: [String: JSONValue] = ["iss": "TEAM123456", "sub": "apple", "aud": .string(provider.issuer), "iat": .int(now),
                                               "exp": .int(now + 86_400 * 180)]
            let body = try Self.form(secret, key: key)
            #expect(try await browser.post("/token", body).status == .ok)
            #expect(try await browser.post("/token", body).status == .ok, "reused, as Apple's clients do")
            var tooLong = secret
            tooLong["exp"] = .int(now + ClientAuthenticator.maxAssertionLifetime + 1)
            #expect(try await browser.post("/token", try Self.form(tooLong, key: key)).json["error"] == "invalid_client")
            // The same shape from a client registered without the long lifetime is refused.
            var normal = secret
            normal["iss"] = "signed"
            normal["sub"] = "signed"
            #expect(try await browser.post("/token", try Self.form(normal, key: key)).json["error"] == "invalid_client")
        }
    }

    @Test("a long assertion lifetime is only for key clients, and at most six months")
    func registration() async throws {
        try await withProvider { provider async throws in
            var registration = Provider.ClientRegistration(name: "Secret", redirectURIs: [testRedirect])
            registration.assertionLifetime = 3600
            await #expect(throws: ConfigurationError.self) { try await provider.registerClient(registration) }
            registration.jwks = JWKSet(keys: [try JWSSigningKey.generate(.es256, kid: "k").publicKey.jwk])
            registration.assertionLifetime = ClientAuthenticator.maxAssertionLifetime + 1
            await #expect(throws: ConfigurationError.self) { try await provider.registerClient(registration) }
            registration.assertionLifetime = 3600
            #expect(try await provider.registerClient(registration).client.assertionLifetime == 3600)
        }
    }
}

@Suite("Security: introspection")
struct IntrospectionTests {
    @Test("a client introspects its own tokens, and a resource server those carrying its scopes; nothing else")
    func visibility() async throws {
        try await withApp { provider, browser in
            try await provider.addWebClient(id: "other")
            try await provider.addWebClient(id: "service", grants: ["client_credentials"], scopes: ["api.read", "api.write"])
            var api = Provider.ClientRegistration(name: "Orders API", redirectURIs: [])
            api.id = "orders-api"
            api.secret = testSecret
            api.grantTypes = ["client_credentials"]
            api.scopes = ["api.read"]
            api.resourceServer = true
            _ = try await provider.registerClient(api)

            let userTokens = try await browser.exchange(try await browser.code()).json
            let access = try #require(userTokens["access_token"]?.stringValue), refresh = try #require(userTokens["refresh_token"]?.stringValue)
            let serviceToken = try #require(try await browser.token([("grant_type", "client_credentials"), ("scope", "api.read")],
                                                                    client: "service").json["access_token"]?.stringValue)
            func introspect(_ token: String, as client: String) async throws -> [String: JSONValue] {
                try await browser.post("/introspect", [("token", token)], headers: basic(client, testSecret)).json
            }
            #expect(try await introspect(access, as: "web")["active"] == true)
            #expect(try await introspect(refresh, as: "web")["active"] == true)
            let stranger = try await introspect(access, as: "other")
            #expect(stranger == ["active": false], "another client learns nothing, not even the sub: \(stranger)")
            #expect(try await introspect(refresh, as: "other") == ["active": false])
            #expect(try await introspect(access, as: "orders-api") == ["active": false], "the user's token carries none of the API's scopes")
            let served = try await introspect(serviceToken, as: "orders-api")
            #expect(served["active"] == true && served["client_id"] == "service" && served["scope"] == "api.read")
        }
    }

    @Test("a resource server is confidential and names the scopes it serves")
    func registration() async throws {
        try await withProvider { provider async throws in
            var api = Provider.ClientRegistration(name: "API", redirectURIs: [])
            api.grantTypes = ["client_credentials"]
            api.resourceServer = true
            api.scopes = ["openid", "email"]
            await #expect(throws: ConfigurationError.self) { try await provider.registerClient(api) }
            api.scopes = ["orders"]
            #expect(try await provider.registerClient(api).client.servedScopes == ScopeSet(["orders"]))
        }
    }
}

@Suite("Security: browser sessions and headers")
struct BrowserSecurityTests {
    @Test("signing in again ends the browser's previous session: its old cookie opens nothing")
    func signInReplacesSession() async throws {
        try await withApp { provider, browser in
            _ = try await browser.code()
            let first = try #require(browser.cookies[BrowserSessions.cookieName(secure: false)])
            _ = try await browser.code(extra: [("prompt", "login")])
            let second = try #require(browser.cookies[BrowserSessions.cookieName(secure: false)])
            #expect(first != second)
            let now = provider.clock.now()
            #expect(try await provider.store.session(tokenHash: tokenHash(first), now: now) == nil, "the old row is ended")
            #expect(try await provider.store.session(tokenHash: tokenHash(second), now: now) != nil)
        }
    }

    @Test("with an https issuer every response carries HSTS; with http none does")
    func strictTransportSecurity() async throws {
        try await withApp(configure: { $0.issuer = "https://id.example.com" }) { _, browser async throws in
            for path in ["/.well-known/openid-configuration", "/health", "/no-such-page"] {
                #expect(try await browser.request(path).headers[.strictTransportSecurity] == "max-age=31536000", "\(path)")
            }
        }
        try await withApp { _, browser async throws in
            #expect(try await browser.request("/health").headers[.strictTransportSecurity] == nil)
        }
    }
}

@Suite("Security: CSRF")
struct CSRFTests {
    @Test("a planted CSRF cookie is useless: the form token is the server's MAC of it, bound to the session")
    func plantedCookie() async throws {
        try await withApp { _, browser in
            // A sibling subdomain planted a cookie of its choice and forges a form echoing it (plain double-submit).
            browser.cookies["tessera_csrf"] = String(repeating: "p", count: 43)
            let page = try await browser.request(codeRequest())
            let interaction = try #require(page.field("interaction"))
            let forged = try await browser.post("/login", [("interaction", interaction), ("csrf_token", String(repeating: "p", count: 43)),
                                                           ("email", "alice@example.com"), ("password", "correct horse")])
            #expect(forged.status == .badRequest && browser.cookies[BrowserSessions.cookieName(secure: false)] == nil)
            // The page's own token, made by the server for this cookie, works.
            let real = try await browser.login(page, email: "alice@example.com", password: "correct horse")
            #expect(real.status == .ok && real.body.text.contains("action=\"/consent\"") && browser.cookies[BrowserSessions.cookieName(secure: false)] != nil)
        }
    }

    @Test("a token made for one session doesn't work in another")
    func boundToSession() async throws {
        try await withApp { provider, browser in
            let csrf = provider.csrf
            let cookie = String(repeating: "c", count: 43)
            #expect(csrf.formToken(cookie, session: "session-a") != csrf.formToken(cookie, session: "session-b"))
            #expect(csrf.formToken(cookie, session: nil) != csrf.formToken(cookie, session: "session-a"))
            _ = try await browser.code()
            // The attacker's token for the victim's cookie but the attacker's own session.
            let stolen = csrf.formToken(try #require(browser.cookies["tessera_csrf"]), session: "the attacker's session")
            let revoke = try await browser.post("/account/consents/revoke", [("csrf_token", stolen), ("client_id", "web")])
            #expect(revoke.status == .badRequest)
        }
    }

    @Test("a form token made for a crafted CSRF cookie is not a device cookie's signature (each has its own key)")
    func keysAreSeparate() async throws {
        try await withApp { provider, _ in
            let user = try #require(try await provider.store.user(email: "alice@example.com"))
            // An attacker sets their own CSRF cookie to the device cookie's signed text and
            // their session cookie to anything; the page then shows them the MAC of it.
            let session = "the attacker's own session cookie"
            let planted = "device-cookie|\(user.id)"
            let head = HTTPRequest(method: .get, scheme: "http", authority: "x", path: "/",
                                   headerFields: [.cookie: "tessera_csrf=\(planted); \(BrowserSessions.cookieName(secure: false))=\(session)"])
            let (token, _) = provider.csrf.token(for: Request(head: head, body: .init(buffer: ByteBuffer())))
            let forged = "\(user.id).\(tokenHash(session)).\(token)"
            let deviceRequest = Request(head: .init(method: .get, scheme: "http", authority: "x", path: "/",
                                                    headerFields: [.cookie: "tessera_device=\(forged)"]),
                                        body: .init(buffer: ByteBuffer()))
            #expect(provider.deviceCookies.device(in: deviceRequest) == nil, "a forged device cookie proves nothing")
        }
    }

    @Test("with an https issuer the CSRF cookie is __Host- prefixed and Secure")
    func hostPrefix() async throws {
        try await withApp(configure: { $0.issuer = "https://id.example.com" }) { _, browser async throws in
            let page = try await browser.request(codeRequest())
            let cookie = try #require(page.headers[values: .setCookie].first { $0.hasPrefix("__Host-tessera_csrf=") })
            #expect(cookie.contains("Secure") && cookie.contains("Path=/") && !cookie.contains("Domain"))
            // A cookie without the prefix (which a sibling could have set) doesn't count.
            browser.cookies["tessera_csrf"] = browser.cookies["__Host-tessera_csrf"]
            browser.cookies["__Host-tessera_csrf"] = nil
            let forged = try await browser.login(page, email: "alice@example.com", password: "correct horse")
            #expect(forged.status == .badRequest)
        }
    }
}

@Suite("Security: hostile values found by schemathesis")
struct HostileValueTests {
    @Test("an assertion whose exp, iat or nbf is out of any time's range is invalid_client, not a crash")
    func timeClaimsOutOfRange() async throws {
        try await ClientAssertionTests.withSignedClients { provider, browser, key in
            let now = provider.clock.now()
            for (i, (claim, value)) in [("exp", Int64.max), ("iat", Int64.min), ("nbf", Int64.min), ("exp", -1), ("iat", Int64.max)].enumerated() {
                var claims: [String: JSONValue] = ["iss": "signed", "sub": "signed", "aud": .string(provider.issuer), "iat": .int(now),
                                                   "exp": .int(now + 60), "jti": .string("range-\(i)")]
                claims[claim] = .int(value)
                let answer = try await browser.post("/token", try ClientAssertionTests.form(claims, key: key))
                #expect(answer.status == .unauthorized && answer.json["error"] == "invalid_client", "\(claim)=\(value): \(answer.body.text)")
            }
            #expect(try await browser.request("/health").status == .ok, "the server is still up")
        }
    }

    @Test("NumericDates outside year 0...9999 read as absent, and mark the token's times invalid")
    func numericDates() throws {
        let key = try JWSSigningKey.generate(.es256, kid: "k")
        let odd = try JWT(parsing: try JWT.sign(["exp": .int(Int64.max), "iat": .int(-5), "nbf": .int(1_800_000_000)], with: key))
        #expect(odd.expiresAt == nil && odd.issuedAt == nil && odd.notBefore == 1_800_000_000 && !odd.hasValidTimeClaims)
        let fine = try JWT(parsing: try JWT.sign(["exp": .int(1_800_000_000)], with: key))
        #expect(fine.hasValidTimeClaims && fine.expiresAt == 1_800_000_000)
    }

    @Test("introspection, revocation and userinfo refuse a parameter sent twice")
    func duplicateParameters() async throws {
        try await withApp { _, browser in
            let tokens = try await browser.exchange(try await browser.code()).json
            let access = try #require(tokens["access_token"]?.stringValue)
            for path in ["/introspect", "/revoke"] {
                let answer = try await browser.post(path, [("token", access), ("token", "second")], headers: basic("web", testSecret))
                #expect(answer.status == .badRequest && answer.json["error"] == "invalid_request", "\(path): \(answer.body.text)")
            }
            let userinfo = try await browser.post("/userinfo", [("access_token", access), ("access_token", "second")])
            #expect(userinfo.status == .badRequest && userinfo.json["error"] == "invalid_request", "\(userinfo.body.text)")
            #expect(try await browser.post("/introspect", [("token", access)], headers: basic("web", testSecret)).json["active"] == true,
                    "the token was not revoked by the refused request")
        }
    }
}

@Suite("Security: lockout is not a weapon")
struct LockoutTests {
    func attempt(_ provider: Provider, _ password: String, from address: String, device: KnownDevice? = nil) async throws
        -> Result<User, PasswordSignIn.Failure> {
        try await provider.passwordSignIn.signIn(email: "alice@example.com", password: password,
                                                 from: .init(address: address, device: device))
    }

    @Test("five wrong passwords from one address lock that address out of the account, not the owner elsewhere")
    func perAccountAndAddress() async throws {
        try await withApp { provider, _ in
            for _ in 0..<5 { _ = try await attempt(provider, "wrong guess", from: "198.51.100.1") }
            #expect(try await attempt(provider, "correct horse", from: "198.51.100.1") == .failure(.throttled))
            #expect(try await attempt(provider, "correct horse", from: "203.0.113.7").isSuccess, "the owner, from their own address")
        }
    }

    @Test("guesses from many addresses lock strangers out of the account, but not a browser the owner signed in from")
    func knownDevice() async throws {
        try await withApp(configure: { $0.loginLimits.perAccount = 10 }) { provider, _ in
            let user = try #require(try await provider.store.user(email: "alice@example.com"))
            let device = KnownDevice(userID: user.id, id: "owners-laptop")
            for i in 0..<10 { _ = try await attempt(provider, "wrong guess", from: "198.51.100.\(i)") }
            #expect(try await attempt(provider, "correct horse", from: "203.0.113.7") == .failure(.throttled),
                    "an unknown browser is refused the account's locked state")
            #expect(try await attempt(provider, "correct horse", from: "203.0.113.7", device: device).isSuccess)
            // A device cookie for another account counts for nothing here; its own guesses are limited too.
            let stolen = KnownDevice(userID: "someone-else", id: "x")
            #expect(try await attempt(provider, "correct horse", from: "203.0.113.8", device: stolen) == .failure(.throttled))
            for _ in 0..<5 { _ = try await attempt(provider, "typo", from: "203.0.113.7", device: device) }
            #expect(try await attempt(provider, "correct horse", from: "203.0.113.7", device: device) == .failure(.throttled))
        }
    }

    @Test("credential stuffing from one address is stopped over all accounts")
    func perAddress() async throws {
        try await withApp(configure: { $0.loginLimits.perAddress = 4 }) { provider, _ in
            for i in 0..<4 {
                _ = try await provider.passwordSignIn.signIn(email: "user\(i)@example.com", password: "guess", from: .init(address: "192.0.2.9"))
            }
            #expect(try await attempt(provider, "correct horse", from: "192.0.2.9") == .failure(.throttled))
            #expect(try await attempt(provider, "correct horse", from: "192.0.2.10").isSuccess)
        }
    }

    @Test("a password sign-in sets a signed device cookie; a forged or altered one proves nothing")
    func deviceCookie() async throws {
        try await withApp { provider, browser in
            _ = try await browser.code()
            let value = try #require(browser.cookies["tessera_device"])
            let user = try #require(try await provider.store.user(email: "alice@example.com"))
            func device(_ cookie: String) -> KnownDevice? {
                provider.deviceCookies.device(in: Request(head: .init(method: .get, scheme: "http", authority: "x", path: "/",
                                                                      headerFields: [.cookie: "tessera_device=\(cookie)"]),
                                                          body: .init(buffer: ByteBuffer())))
            }
            #expect(device(value)?.userID == user.id)
            let parts = value.split(separator: ".")
            #expect(device("someone-else.\(parts[1]).\(parts[2])") == nil)
            #expect(device("\(parts[0]).another-id.\(parts[2])") == nil)
            #expect(device("garbage") == nil)
        }
    }
}

extension Result {
    var isSuccess: Bool { if case .success = self { true } else { false } }
}

@Suite("Security: sensitive changes need a recent sign-in")
struct RecentSignInTests {
    /// Signs `browser` in on the account page.
    static func signIn(_ browser: Browser, password: String = "correct horse") async throws {
        let page = try await browser.request("/account")
        let signedIn = try await browser.post("/account/login", [("csrf_token", try #require(page.field("csrf_token"))),
                                                                 ("email", "alice@example.com"), ("password", password)])
        #expect(signedIn.status == .seeOther)
    }

    static func delete(_ browser: Browser) async throws -> TestResponse {
        let account = try await browser.request("/account")
        return try await browser.post("/account/delete", [("csrf_token", try #require(account.field("csrf_token"))), ("confirm", "DELETE")])
    }

    @Test("deleting the account ten minutes after signing in asks for the password again; then it works")
    func deleteNeedsRecentSignIn() async throws {
        let clock = ManualClock()
        try await withApp(clock: clock) { provider, browser in
            try await Self.signIn(browser)
            clock.advance(by: 601)
            let asked = try await Self.delete(browser)
            #expect(asked.status == .ok && asked.body.text.contains("action=\"/account/reauth\""))
            #expect(asked.body.text.contains("sign in again") && asked.body.text.contains("readonly"))
            #expect(try await provider.store.user(email: "alice@example.com") != nil, "nothing was deleted")
            let csrf = try #require(asked.field("csrf_token"))
            let wrong = try await browser.post("/account/reauth", [("csrf_token", csrf), ("email", "alice@example.com"), ("password", "nope")])
            #expect(wrong.status == .unauthorized && wrong.body.text.contains("action=\"/account/reauth\""))
            // The form's address is ignored: the session's account is the one confirmed.
            let confirmed = try await browser.post("/account/reauth", [("csrf_token", csrf), ("email", "mallory@example.com"),
                                                                       ("password", "correct horse")])
            #expect(confirmed.status == .seeOther && confirmed.location == "/account")
            let deleted = try await Self.delete(browser)
            #expect(deleted.status == .ok && !deleted.body.text.contains("/account/reauth"))
            #expect(try await provider.store.user(email: "alice@example.com") == nil)
        }
    }

    @Test("within ten minutes of the sign-in nothing more is asked")
    func recentSignInIsEnough() async throws {
        let clock = ManualClock()
        try await withApp(clock: clock) { provider, browser in
            try await Self.signIn(browser)
            clock.advance(by: 590)
            #expect(try await Self.delete(browser).status == .ok)
            #expect(try await provider.store.user(email: "alice@example.com") == nil)
        }
    }

    @Test("without a password, a sign-in link to the account's address confirms it and comes back to the account page")
    func confirmByLink() async throws {
        let clock = ManualClock()
        try await withApp(clock: clock) { provider, browser in
            try await Self.signIn(browser)
            let user = try #require(try await provider.store.user(email: "alice@example.com"))
            try await provider.store.removePassword(userID: user.id, now: provider.clock.now())
            clock.advance(by: 3600)
            let asked = try await Self.delete(browser)
            let sent = try await browser.post("/account/reauth/link", [("csrf_token", try #require(asked.field("csrf_token"))),
                                                                       ("email", "someone-else@example.com")])
            #expect(sent.status == .ok)
            let mail = try #require(try await provider.store.outboxMessages(recipient: "alice@example.com", limit: 1).first)
            #expect(try await provider.store.outboxMessages(recipient: "someone-else@example.com", limit: 1).isEmpty)
            let link = try #require(mail.text.firstMatch(of: /https?:\/\/\S+emaillink\/v1.0\/signin\S+/)).output
            let components = try #require(URLComponents(string: String(link)))
            let opened = try await browser.request(components.path + "?" + (components.percentEncodedQuery ?? ""))
            #expect(opened.status == .ok)
            let code = try #require(components.queryItems?.first { $0.name == "oob_code" }?.value)
            let confirmed = try await browser.post("/emaillink/v1.0/signin", [("csrf_token", try #require(opened.field("csrf_token"))),
                                                                              ("oob_code", code)])
            #expect(confirmed.status == .seeOther && confirmed.location?.hasSuffix("/account") == true, "\(confirmed.status)")
            #expect(try await Self.delete(browser).status == .ok)
            #expect(try await provider.store.user(email: "alice@example.com") == nil)
        }
    }
}
