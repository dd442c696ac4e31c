import Foundation
import Testing
import TesseraAuth
import TesseraCore

@Suite("AuthResponse")
struct AuthResponseTests {
    let request = AuthRequest(clientID: "app", redirectURI: "com.example.app:/callback", state: "st-1", nonce: "n-1")
    let issuer = "https://id.example.com"

    func url(_ query: String, base: String = "com.example.app:/callback") -> URL { URL(string: base + query)! }

    @Test("reading a success: code, state, iss and isSuccess, nothing checked yet")
    func success() {
        let response = AuthResponse(url: url("?code=abc&state=st-1&iss=https%3A%2F%2Fid.example.com&session_state=x"))
        #expect(response.isSuccess)
        #expect(response.authCode == "abc" && response.state == "st-1" && response.iss == issuer)
        #expect(response.additionalParameters == ["session_state": "x"])
        #expect(response.error == nil)
    }

    @Test("reading an error: error, description, isSuccess false (RFC 6749 §4.1.2.1)")
    func error() {
        let response = AuthResponse(url: url("?error=access_denied&error_description=The+user+said+no&state=st-1"))
        #expect(!response.isSuccess)
        #expect(response.error == "access_denied")
        #expect(response.errorDescription == "The user said no")
        #expect(response.oauthError?.code == .accessDenied)
    }

    @Test("the fragment is read for response_mode=fragment")
    func fragment() {
        let response = AuthResponse(url: url("#code=abc&state=st-1"))
        #expect(response.authCode == "abc" && response.state == "st-1")
    }

    @Test("a validated success carries the request's nonce, as the seed's response does")
    func validated() throws {
        let response = try AuthResponse(url: url("?code=abc&state=st-1&iss=https%3A%2F%2Fid.example.com"), request: request,
                                        expectedIssuer: issuer, requireIssuer: true)
        #expect(response.nonce == "n-1")
    }

    @Test("another state is a forged or stale redirect, error or not (RFC 6749 §10.12)", arguments: [
        "?code=abc&state=st-2", "?code=abc", "?error=access_denied&state=other",
    ])
    func stateMismatch(query: String) {
        #expect {
            try AuthResponse(url: url(query), request: request, expectedIssuer: issuer)
        } throws: { ($0 as? AuthError)?.code == .stateMismatch }
    }

    @Test("another iss is a mix-up (RFC 9207 §2.4); a missing one only when the provider promised it")
    func issuerMismatch() throws {
        #expect {
            try AuthResponse(url: url("?code=abc&state=st-1&iss=https%3A%2F%2Fevil.example.com"), request: request, expectedIssuer: issuer)
        } throws: { ($0 as? AuthError)?.code == .issuerMismatch }
        #expect {
            try AuthResponse(url: url("?code=abc&state=st-1"), request: request, expectedIssuer: issuer, requireIssuer: true)
        } throws: { ($0 as? AuthError)?.code == .issuerMismatch }
        _ = try AuthResponse(url: url("?code=abc&state=st-1"), request: request, expectedIssuer: issuer, requireIssuer: false)
    }

    @Test("an error response with the right state throws the provider's error")
    func providerError() {
        #expect {
            try AuthResponse(url: url("?error=access_denied&state=st-1&iss=https%3A%2F%2Fid.example.com"), request: request,
                             expectedIssuer: issuer)
        } throws: { error in
            let error = error as? AuthError
            return error?.code == .oauth && error?.oauthError?.code == .accessDenied && error?.isCancelledOrDenied == true
        }
    }

    @Test("a callback at another address, or with repeated parameters, is refused")
    func wrongPlaceOrDuplicates() {
        #expect(throws: AuthError.self) {
            try AuthResponse(url: url("?code=abc&state=st-1", base: "com.example.app:/other"), request: request, expectedIssuer: nil)
        }
        #expect(throws: AuthError.self) {
            try AuthResponse(url: url("?code=abc&code=def&state=st-1"), request: request, expectedIssuer: nil)
        }
        #expect(throws: AuthError.self) { try AuthResponse(url: url("?state=st-1"), request: request, expectedIssuer: nil) }
    }

    @Test("a loopback redirect URI registered without a port matches any port (RFC 8252 §7.3)")
    func loopbackPort() throws {
        let loopback = AuthRequest(clientID: "cli", redirectURI: "http://127.0.0.1/callback", state: "s")
        _ = try AuthResponse(url: URL(string: "http://127.0.0.1:49152/callback?code=c&state=s")!, request: loopback, expectedIssuer: nil)
        let fixed = AuthRequest(clientID: "cli", redirectURI: "http://127.0.0.1:5000/callback", state: "s")
        #expect(throws: AuthError.self) {
            try AuthResponse(url: URL(string: "http://127.0.0.1:5001/callback?code=c&state=s")!, request: fixed, expectedIssuer: nil)
        }
    }
}
