import Foundation
import Testing
@testable import TesseraAuthCore

@Suite("The spellings of earlier versions")
struct RenamedAPITests {
    @available(*, deprecated, message: "uses the old spellings on purpose")
    @Test("clientId, redirectUri and ssoBaseUrl still build the same request")
    func oldSpellings() {
        let request = AuthRequest(clientId: "app", redirectUri: "app://cb", state: "s", nonce: "n", codeVerifier: "v",
                                  ssoBaseUrl: "https://sso.example")
        #expect(request.clientID == "app" && request.redirectURI == "app://cb" && request.ssoBaseURL == "https://sso.example")
        #expect(request.clientId == request.clientID && request.redirectUri == request.redirectURI)
        let configuration = OIDCClient.Configuration(issuer: URL(string: "https://id.example")!, clientId: "app", redirectUri: "app://cb")
        #expect(configuration.clientID == "app" && configuration.redirectURI == "app://cb")
        #expect(TokenSet(accessToken: "at", clientId: "app").clientID == "app")
    }

    @Test("a request stored by an earlier version decodes, and is stored under the same names")
    func storedRequest() throws {
        let stored = #"{"clientId":"app","scope":"openid","state":"s","nonce":"n","redirectUri":"app://cb","codeVerifier":"v","ssoBaseUrl":"https://sso.example","additionalParameters":{}}"#
        let request = try JSONDecoder().decode(AuthRequest.self, from: Data(stored.utf8))
        #expect(request.clientID == "app" && request.redirectURI == "app://cb" && request.ssoBaseURL == "https://sso.example")
        let encoded = try JSONDecoder().decode([String: JSONValueForTest].self, from: try JSONEncoder().encode(request))
        #expect(encoded["clientId"] != nil && encoded["redirectUri"] != nil && encoded["clientID"] == nil)
    }
}

/// Any JSON value, for looking at member names only.
private struct JSONValueForTest: Decodable, Equatable {
    init(from decoder: any Decoder) throws {}
}

/// A browser agent as an app wrote it against an earlier version.
private struct OldStyleAgent: ExternalUserAgent {
    @available(*, deprecated)
    func present(_ url: URL, redirectUri: String) async throws -> URL {
        URL(string: redirectUri + "?code=c&state=s")!
    }
}

@Suite("Browser agents of earlier versions")
struct OldStyleAgentTests {
    @Test("an agent that implements present(_:redirectUri:) still serves present(_:redirectURI:)")
    func oldAgent() async throws {
        let agent: any ExternalUserAgent = OldStyleAgent()
        let answered = try await agent.present(URL(string: "https://id.example/authorize")!, redirectURI: "app://cb")
        #expect(answered.absoluteString == "app://cb?code=c&state=s")
    }
}
