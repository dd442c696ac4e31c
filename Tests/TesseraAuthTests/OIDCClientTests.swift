import Foundation
import Testing
import TesseraAuth
@testable import TesseraAuthCore
import TesseraCore

/// A provider that exists only as canned answers, for the client's edge cases.
final class StubTransport: HTTPTransport {
    let issuer = "https://id.example.com"
    private let answers = Locked<[String: HTTPTransportResponse]>([:])
    private let sent = Locked<[HTTPTransportRequest]>([])

    init() {
        var metadata = ProviderMetadata(issuer: issuer, authorizationEndpoint: issuer + "/authorize", tokenEndpoint: issuer + "/token",
                                        jwksURI: issuer + "/jwks.json", responseTypesSupported: ["code"])
        metadata.userinfoEndpoint = issuer + "/userinfo"
        metadata.revocationEndpoint = issuer + "/revoke"
        metadata.endSessionEndpoint = issuer + "/logout"
        metadata.idTokenSigningAlgValuesSupported = ["ES256"]
        answer("/.well-known/openid-configuration", json: try! CanonicalJSON.encode(metadata))
    }

    func answer(_ path: String, status: Int = 200, json: Data, headers: [String: String] = [:]) {
        answers.withLock { $0[path] = HTTPTransportResponse(status: status, headers: headers, body: json) }
    }

    func answer(_ path: String, status: Int = 200, text: String, headers: [String: String] = [:]) {
        answer(path, status: status, json: Data(text.utf8), headers: headers)
    }

    var requests: [HTTPTransportRequest] { sent.withLock { $0 } }

    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        sent.withLock { $0.append(request) }
        guard let answer = answers.withLock({ $0[request.url.path] }) else { throw AuthError.network("nothing at \(request.url)") }
        return answer
    }

    func client(secret: String? = nil) -> OIDCClient {
        OIDCClient(configuration: .init(issuer: URL(string: issuer)!, clientID: "app:1", clientSecret: secret,
                                        redirectURI: "com.example.app:/cb"), transport: self)
    }
}

@Suite("OIDCClient")
struct OIDCClientTests {
    @Test("a confidential client authenticates with client_secret_basic, form-encoding id and secret (RFC 6749 §2.3.1)")
    func basicAuthentication() async throws {
        let stub = StubTransport()
        stub.answer("/token", text: #"{"access_token":"at","token_type":"bearer","expires_in":60}"#)
        let tokens = try await stub.client(secret: "p@ss word").refresh(TokenSet(accessToken: "old", refreshToken: "rt"))
        #expect(tokens.accessToken == "at" && tokens.refreshToken == "rt")
        let request = try #require(stub.requests.last)
        #expect(request.method == "POST")
        #expect(request.headers["Authorization"] == "Basic " + Data("app%3A1:p%40ss+word".utf8).base64EncodedString())
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        let body = String(decoding: request.body ?? Data(), as: UTF8.self)
        #expect(body == "grant_type=refresh_token&refresh_token=rt")
    }

    @Test("a public client sends its client_id in the body and no secret")
    func publicClient() async throws {
        let stub = StubTransport()
        stub.answer("/token", text: #"{"access_token":"at","token_type":"Bearer"}"#)
        _ = try await stub.client().refresh(TokenSet(accessToken: "old", refreshToken: "rt"))
        let request = try #require(stub.requests.last)
        #expect(request.headers["Authorization"] == nil)
        #expect(String(decoding: request.body ?? Data(), as: UTF8.self).hasSuffix("&client_id=app%3A1"))
    }

    @Test("the token endpoint's error JSON becomes the provider's OAuthError (RFC 6749 §5.2)")
    func tokenError() async throws {
        let stub = StubTransport()
        stub.answer("/token", status: 400, text: #"{"error":"invalid_grant","error_description":"The refresh token was already used."}"#)
        await #expect {
            try await stub.client().refresh(TokenSet(accessToken: "old", refreshToken: "rt"))
        } throws: { error in
            guard let error = error as? AuthError else { return false }
            return error.code == .oauth && error.isInvalidGrant && error.httpStatus == 400
                && error.oauthError?.errorDescription == "The refresh token was already used."
                && error.description == "oauth: invalid_grant: The refresh token was already used."
        }
    }

    @Test("answers outside the protocol are invalid responses", arguments: [
        (500, "<html>oops</html>"), (200, "not json"), (200, #"{"access_token":"at","token_type":"mac"}"#),
    ])
    func invalidAnswers(status: Int, body: String) async throws {
        let stub = StubTransport()
        stub.answer("/token", status: status, text: body)
        await #expect {
            try await stub.client().refresh(TokenSet(accessToken: "old", refreshToken: "rt"))
        } throws: { ($0 as? AuthError)?.code == .invalidResponse }
    }

    @Test("a bearer challenge without a JSON body still names the error (RFC 6750 §3)")
    func bearerChallenge() async throws {
        let stub = StubTransport()
        stub.answer("/userinfo", status: 401, text: "", headers: ["WWW-Authenticate": #"Bearer realm="x", error="invalid_token""#])
        await #expect { try await stub.client().userInfo(accessToken: "at") } throws: { ($0 as? AuthError)?.oauthError?.code == .invalidToken }
    }

    @Test("userinfo for another user than the ID token's is refused (OpenID Connect Core §5.3.2)")
    func userInfoSubject() async throws {
        let stub = StubTransport()
        stub.answer("/userinfo", text: #"{"sub":"someone-else","email":"x@example.com"}"#)
        await #expect { try await stub.client().userInfo(accessToken: "at", expectedSubject: "user-1") } throws: {
            ($0 as? AuthError)?.code == .userInfoInvalid
        }
        stub.answer("/userinfo", text: #"{"email":"x@example.com"}"#)
        await #expect { try await stub.client().userInfo(accessToken: "at") } throws: { ($0 as? AuthError)?.code == .userInfoInvalid }
    }

    @Test("no refresh token, no refresh; no connection is a network error")
    func notSignedInAndNetwork() async throws {
        let stub = StubTransport()
        await #expect { try await stub.client().refresh(TokenSet(accessToken: "at")) } throws: { ($0 as? AuthError)?.code == .notSignedIn }
        await #expect { try await stub.client().revoke("rt", typeHint: .refreshToken) } throws: { ($0 as? AuthError)?.code == .network }
        #expect(stub.requests.last.map { String(decoding: $0.body ?? Data(), as: UTF8.self) } == "token=rt&token_type_hint=refresh_token&client_id=app%3A1")
    }

    @Test("an HTTP endpoint off loopback is refused, whatever discovery says")
    func insecureEndpoint() async throws {
        let stub = StubTransport()
        var metadata = ProviderMetadata(issuer: stub.issuer, authorizationEndpoint: "http://id.example.com/authorize",
                                        tokenEndpoint: "http://id.example.com/token", jwksURI: stub.issuer + "/jwks.json",
                                        responseTypesSupported: ["code"])
        metadata.idTokenSigningAlgValuesSupported = ["ES256"]
        stub.answer("/.well-known/openid-configuration", json: try CanonicalJSON.encode(metadata))
        let client = stub.client()
        await #expect { try await client.authorizationURL(for: client.makeRequest()) } throws: { ($0 as? AuthError)?.code == .configuration }
        await #expect { try await client.refresh(TokenSet(accessToken: "a", refreshToken: "r")) } throws: { ($0 as? AuthError)?.code == .configuration }
    }

    @Test("the logout URL carries the hint, the client, the redirect and the state (RP-Initiated Logout §2)")
    func endSession() async throws {
        let url = try await StubTransport().client().endSessionURL(idTokenHint: "id.tok.en", postLogoutRedirectURI: "https://app.example.com/bye",
                                                                   state: "s1")
        let items = queryItems(url)
        #expect(url.absoluteString.hasPrefix("https://id.example.com/logout?"))
        #expect(items["id_token_hint"] == "id.tok.en" && items["client_id"] == "app:1")
        #expect(items["post_logout_redirect_uri"] == "https://app.example.com/bye" && items["state"] == "s1")
    }

    @Test("the discovered issuer must be the configured one")
    func issuerMismatch() async throws {
        let stub = StubTransport()
        let metadata = ProviderMetadata(issuer: "https://other.example.com", authorizationEndpoint: stub.issuer + "/authorize",
                                        tokenEndpoint: stub.issuer + "/token", jwksURI: stub.issuer + "/jwks.json",
                                        responseTypesSupported: ["code"])
        stub.answer("/.well-known/openid-configuration", json: try CanonicalJSON.encode(metadata))
        await #expect { try await stub.client().discover() } throws: { ($0 as? AuthError)?.code == .issuerMismatch }
    }
}

@Suite("AuthError")
struct AuthErrorTests {
    @Test("codes compare, describe themselves and carry their context")
    func codes() {
        #expect(AuthError.Code.stateMismatch == .stateMismatch)
        #expect(AuthError.Code.stateMismatch != .issuerMismatch)
        #expect(AuthError(.timeout, "no answer").description == "timeout: no answer")
        let invalid = AuthError.idTokenInvalid(.nonce, "replayed")
        #expect(invalid.code == .idTokenInvalid && invalid.idTokenCheck == .nonce)
        #expect(invalid.description == "idTokenInvalid (nonce): replayed")
        #expect(AuthError.oauth(OAuthError(.accessDenied)).isCancelledOrDenied)
        #expect(AuthError(.cancelled, "closed").isCancelledOrDenied)
        #expect(!AuthError.network("down").isInvalidGrant)
    }
}
