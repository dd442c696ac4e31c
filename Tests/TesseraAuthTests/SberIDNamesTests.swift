import Foundation
import Testing
import TesseraAuthCore
import TesseraAuthSberID
import TesseraCore

@Suite("Sber ID's names over the SDK")
struct SberIDNamesTests {
    @Test("clientId, redirectUri and ssoBaseUrl build the request the Tessera names build")
    func requestSpellings() {
        let request = AuthRequest(clientId: "app", redirectUri: "app://cb", state: "s", nonce: "n", codeVerifier: "v",
                                  ssoBaseUrl: "https://sso.example")
        let tessera = AuthRequest(clientID: "app", redirectURI: "app://cb", state: "s", nonce: "n", codeVerifier: "v",
                                  ssoBaseURL: "https://sso.example")
        #expect(request == tessera)
        #expect(request.clientId == "app" && request.redirectUri == "app://cb" && request.ssoBaseUrl == "https://sso.example")
        let chosen = AuthRequest(clientId: "app", scope: "openid", state: "s", nonce: nil, redirectUri: "app://cb",
                                 codeChallenge: "c", codeChallengeMethod: "S256")
        #expect(chosen.codeChallenge == "c" && chosen.codeVerifier == nil && chosen.nonce == nil)
    }

    @Test("AuthUtils forwards to PKCE, SecureRandom and HandoffLink")
    func utilities() {
        let verifier = AuthUtils.createVerifier()
        #expect(verifier.count == 43 && verifier != AuthUtils.createVerifier())
        #expect(AuthUtils.createChallenge(verifier) == PKCE.createChallenge(verifier))
        #expect(AuthUtils.generateState().count >= 43 && AuthUtils.generateState() != AuthUtils.generateNonce())
        let link = URL(string: "com.example.app://start?sberIDRedirect=https%3A%2F%2Fsso.example.net%2Fx&handoff_ticket=t1")
        #expect(AuthUtils.getSSOUrlStringFrom(link) == "https://sso.example.net")
        #expect(AuthUtils.ssoTicket(from: link) == "t1")
        #expect(AuthUtils.getSSOUrlStringFrom(link, parameterNames: ["other"]) == nil)
    }

    @Test("the Sber ID brand names the button in both languages")
    func brand() {
        var button = LoginButton(type: .green, textType: .general)
        button.brand = .sberID
        button.language = .ru
        #expect(button.standardText.contains("Сбер ID"))
        button.language = .en
        #expect(button.standardText.contains("Sber ID"))
    }
}

@Suite("Stored requests")
struct StoredRequestTests {
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
