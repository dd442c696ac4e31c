import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraSQL

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
