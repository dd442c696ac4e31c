import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TesseraAuth
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain

/// Apple's token and keys endpoints, small: it signs RS256 tokens for one Apple ID, checks the
/// ES256 client secret Tessera makes, and hands out codes for the app (e2e has the full stand-in).
final class MiniApple: Sendable {
    let key = try! JWSSigningKey.generate(.rs256, kid: "apple-1")
    let team = P256.Signing.PrivateKey()
    /// Known once the server listens (HummingbirdTesting's live mode picks the port).
    let issuerBox = Mutex("")
    var issuer: String { issuerBox.withLock { $0 } }
    let subject = "001234.5678abcd"
    let redeemed = Mutex<[String]>([])

    func identityToken(audience: String = "com.example.app", nonce: String?, expiresIn: Int64 = 600) throws -> String {
        let now = Int64(Date().timeIntervalSince1970)
        var claims: [String: JSONValue] = ["iss": .string(issuer), "sub": .string(subject), "aud": .string(audience), "iat": .int(now),
                                           "exp": .int(now + expiresIn), "email": "anna@privaterelay.appleid.com",
                                           "email_verified": true, "is_private_email": true]
        if let nonce { claims["nonce"] = .string(nonce) }
        return try JWT.sign(claims, with: key)
    }

    var router: Router<BasicRequestContext> {
        let router = Router()
        router.get("/auth/keys") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"],
                     body: .init(byteBuffer: ByteBuffer(data: try CanonicalJSON.encode(JWKSet(keys: [self.key.publicKey.jwk])))))
        }
        router.post("/auth/token") { request, _ in
            let body = try await request.body.collect(upTo: 65536)
            let form = Dictionary(FormEncoding.pairs(String(buffer: body)), uniquingKeysWith: { _, last in last })
            // The client secret: an ES256 JWT of the team's key, for this client.
            guard let secret = form["client_secret"], let jwt = try? JWT(parsing: secret),
                  (try? jwt.verify(with: [JWSVerificationKey(jwk: JWK(p256: self.team.publicKey, kid: "KEY1234567"))])) != nil,
                  jwt.issuer == "ABCDE12345", jwt.subject == form["client_id"], jwt.audience == ["https://appleid.apple.com"],
                  let code = form["code"], code.hasPrefix("code-"), form["redirect_uri"] == nil else {
                return Response(status: .badRequest, headers: [.contentType: "application/json"],
                                body: .init(byteBuffer: ByteBuffer(string: #"{"error":"invalid_client"}"#)))
            }
            let nonce = String(code.dropFirst(5))
            self.redeemed.withLock { $0.append(code) }
            let answer: [String: JSONValue] = ["access_token": "apple-at", "token_type": "Bearer", "expires_in": 3600,
                                               "refresh_token": .string("apple-rt-\(code)"),
                                               "id_token": .string(try self.identityToken(audience: form["client_id"] ?? "", nonce: nonce))]
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(data: try CanonicalJSON.encode(answer))))
        }
        return router
    }
}

extension JWK {
    init(p256 key: P256.Signing.PublicKey, kid: String) throws {
        let raw = key.rawRepresentation
        self = try JWKSet.parse(Data("""
            {"keys": [{"kty": "EC", "crv": "P-256", "kid": "\(kid)", "x": "\(Base64URL.encode(raw.prefix(32)))", \
            "y": "\(Base64URL.encode(raw.suffix(32)))"}]}
            """.utf8)).keys[0]
    }
}

@Suite("Native Sign in with Apple through the SDK")
struct SignInWithAppleTests {
    func withApple(_ body: @Sendable @escaping (MiniApple, LiveProvider) async throws -> Void) async throws {
        let apple = MiniApple()
        let app = Application(router: apple.router)
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("AuthKey-\(UUID().uuidString).p8")
        try apple.team.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        try await app.test(.live) { client in
            apple.issuerBox.withLock { $0 = "http://127.0.0.1:\(client.port ?? 0)" }
            try await withLiveProvider(configure: { configuration in
                configuration.upstreamProviders = try! UpstreamProviderSettings.parse("""
                    [{"id": "apple", "type": "apple", "client_id": "com.example.web", "team_id": "ABCDE12345", "key_id": "KEY1234567",
                      "private_key_path": "\(keyFile.path)", "native_client_ids": ["com.example.app"], "issuer": "\(apple.issuer)",
                      "authorization_endpoint": "\(apple.issuer)/auth/authorize", "token_endpoint": "\(apple.issuer)/auth/token",
                      "jwks_uri": "\(apple.issuer)/auth/keys", "revocation_endpoint": "\(apple.issuer)/auth/revoke"}]
                    """)
            }) { live in try await body(apple, live) }
        }
    }

    @Test("an app's Apple credential becomes Tessera's tokens; the same Apple ID returns to the same account")
    func signIn() async throws {
        try await withApple { apple, live in
            let client = live.nativeClient()
            let nonce = AppleSignInNonce()
            let credential = AppleIDCredential(identityToken: try apple.identityToken(nonce: nonce.hashed), authorizationCode: "code-\(nonce.hashed)",
                                               rawNonce: nonce.raw, givenName: "Анна", familyName: "Иванова",
                                               email: "anna@privaterelay.appleid.com")
            let first = try await client.signInWithApple(credential)
            #expect(first.isNewUser && first.user?.email == "anna@privaterelay.appleid.com" && first.user?.emailVerified == true)
            #expect(first.user?.name == "Анна Иванова" && first.idToken?.authenticationMethods == ["fed"])
            #expect(apple.redeemed.withLock { $0 } == ["code-\(nonce.hashed)"], "Tessera redeemed Apple's code with a valid client secret")
            #expect(try await client.linkedProviders(accessToken: first.tokens.accessToken) == ["email", "apple"])

            let again = AppleSignInNonce()
            let second = try await client.signInWithApple(AppleIDCredential(identityToken: try apple.identityToken(nonce: again.hashed),
                                                                             authorizationCode: nil, rawNonce: again.raw))
            #expect(!second.isNewUser && second.user?.uid == first.user?.uid)
        }
    }

    @Test("a person with two-step verification: the exchange answers mfa_required, and the SDK gives the second factor at the native API")
    func secondFactor() async throws {
        try await withApple { apple, live in
            let client = live.nativeClient()
            let nonce = AppleSignInNonce()
            let first = try await client.signInWithApple(AppleIDCredential(identityToken: try apple.identityToken(nonce: nonce.hashed),
                                                                            authorizationCode: nil, rawNonce: nonce.raw))
            let user = try #require(try await live.provider.store.user(email: "anna@privaterelay.appleid.com"))
            #expect(first.user?.uid != nil)
            let enrolment = try await live.provider.secondFactors.startTOTP(for: user)
            let app = TOTP(secret: try #require(TOTPSecret(base32: enrolment.secret)))
            let now = Int64(Date().timeIntervalSince1970)
            _ = try await live.provider.secondFactors.confirmTOTP(for: user, code: app.code(forStep: app.step(at: now)))

            let again = AppleSignInNonce()
            do {
                _ = try await client.signInWithApple(AppleIDCredential(identityToken: try apple.identityToken(nonce: again.hashed),
                                                                       authorizationCode: nil, rawNonce: again.raw))
                Issue.record("the exchange must ask for the second factor")
            } catch {
                let failure = try #require(error as? AuthError)
                #expect(failure.serverError == "invalid_grant" && failure.suberror == "mfa_required")
                let state = try #require(client.mfaRequired(by: error))
                guard case .completed(let result) = await state.submitChallenge(app.code(forStep: app.step(at: now) + 1)) else {
                    Issue.record("the app's code must sign in"); return
                }
                #expect(result.idToken?.authenticationMethods == ["fed", "otp", "mfa"] && result.user?.uid == first.user?.uid)
            }
        }
    }

    @Test("a replayed token and nonce, a token without nonce, a wrong nonce, another app's token or an expired one is refused")
    func refused() async throws {
        try await withApple { apple, live in
            let client = live.nativeClient()
            let nonce = AppleSignInNonce()
            // The stand-in is reachable and a good token works, so the refusals below are about the tokens.
            let good = try apple.identityToken(nonce: nonce.hashed)
            _ = try await client.signInWithApple(AppleIDCredential(identityToken: good, authorizationCode: nil, rawNonce: nonce.raw))
            // Also refused: the same token and nonce again (a replay), and a token without a nonce.
            for token in [good, try apple.identityToken(nonce: nil),
                          try apple.identityToken(nonce: AppleSignInNonce().hashed), try apple.identityToken(audience: "com.other.app", nonce: nonce.hashed),
                          try apple.identityToken(nonce: nonce.hashed, expiresIn: -600)] {
                do {
                    _ = try await client.signInWithApple(AppleIDCredential(identityToken: token, authorizationCode: nil, rawNonce: nonce.raw))
                    Issue.record("a bad identity token was accepted")
                } catch let failure as AuthError {
                    #expect(failure.serverError == "invalid_grant" && !failure.reason.contains("network"), "\(failure)")
                }
            }
        }
    }

    @Test("an Apple notification is applied once, and only while it is recent")
    func notifications() async throws {
        try await withApple { apple, live in
            let nonce = AppleSignInNonce()
            let signedIn = try await live.nativeClient().signInWithApple(
                AppleIDCredential(identityToken: try apple.identityToken(nonce: nonce.hashed), authorizationCode: nil, rawNonce: nonce.raw))
            let refresh = try #require(signedIn.tokens.refreshToken)
            func notify(_ type: String, issuedAt: Int64) async throws -> HTTPTransportResponse {
                let event = String(decoding: try CanonicalJSON.encode(["type": JSONValue.string(type), "sub": .string(apple.subject)]), as: UTF8.self)
                let payload = try JWT.sign(["iss": .string(apple.issuer), "aud": "com.example.web", "iat": .int(issuedAt),
                                            "exp": .int(issuedAt + 86_400), "jti": .string(UUID().uuidString), "events": .string(event)],
                                           with: apple.key)
                return try await notifySend(payload)
            }
            func notifySend(_ payload: String) async throws -> HTTPTransportResponse {
                try await live.transport.send(HTTPTransportRequest(
                    method: "POST", url: live.issuer.appendingPathComponent("federation/apple/notifications"),
                    headers: ["Content-Type": "application/json"], body: try CanonicalJSON.encode(["payload": JSONValue.string(payload)])))
            }
            /// Whether the refresh token still works (it is rotated each time).
            let current = Mutex(refresh)
            func refreshes() async throws -> Bool {
                let answer = try await live.transport.send(HTTPTransportRequest(
                    method: "POST", url: live.issuer.appendingPathComponent("oauth2/v2.0/token"),
                    headers: ["Content-Type": "application/x-www-form-urlencoded"],
                    body: Data(FormEncoding.encode([("client_id", "cli"), ("grant_type", "refresh_token"),
                                                    ("refresh_token", current.withLock { $0 })]).utf8)))
                guard answer.status == 200, let body = try? JSONDecoder().decode([String: JSONValue].self, from: answer.body),
                      let next = body["refresh_token"]?.stringValue else { return false }
                current.withLock { $0 = next }
                return true
            }
            let now = Int64(Date().timeIntervalSince1970)
            #expect(try await notify("consent-revoked", issuedAt: now - 3600).status == 400, "an hour-old notification is refused")
            #expect(try await refreshes(), "and changed nothing")
            let event = String(decoding: try CanonicalJSON.encode(["type": JSONValue.string("email-disabled"), "sub": .string(apple.subject)]),
                               as: UTF8.self)
            let payload = try JWT.sign(["iss": .string(apple.issuer), "aud": "com.example.web", "iat": .int(now), "exp": .int(now + 86_400),
                                        "events": .string(event)], with: apple.key)
            #expect(try await notifySend(payload).status == 200)
            #expect(try await notifySend(payload).status == 400, "the same notification again is a replay")
            #expect(try await notify("consent-revoked", issuedAt: now).status == 200)
            #expect(try await !refreshes(), "consent-revoked signed out")
        }
    }
}
