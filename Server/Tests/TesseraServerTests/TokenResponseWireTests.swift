import Foundation
import Testing
import TesseraCore
import TesseraServer

/// The token endpoint writes its answers without `JSONEncoder` (`TokenResponse.serialized`): the
/// bytes must be the ones the Codable encoding makes, member for member.
@Suite("Token response wire")
struct TokenResponseWireTests {
    /// Every member set; the strings carry what JSON escapes or leaves alone (a quote, a
    /// backslash, a slash, a newline, a tab, non-ASCII).
    static var full: TokenResponse {
        var response = TokenResponse(accessToken: "eyJhbGciOiJSUzI1NiJ9.e30.c2ln", expiresIn: 3600, refreshToken: "r/t+\"q\"\\",
                                     idToken: "eyJ0eXAiOiJKV1QifQ.e30.c2ln", scope: "openid offline_access")
        response.issuedTokenType = "urn:ietf:params:oauth:token-type:access_token"
        response.isNewUser = false
        response.email = "Zoë <zoe@example.com>\n\t"
        response.deviceSecret = "ds_9f8e"
        return response
    }

    @Test("every member of the full answer is set (a member added to TokenResponse must be added to its bytes)")
    func sampleSetsEveryMember() {
        for child in Mirror(reflecting: Self.full).children {
            #expect(!"\(child.value)".hasPrefix("nil"), "TokenResponse.\(child.label ?? "?") is not set in the sample")
        }
    }

    @Test("the bytes are CanonicalJSON's", arguments: [
        full,
        TokenResponse(accessToken: "a"),
        TokenResponse(accessToken: "a", tokenType: "N_A", expiresIn: 0, refreshToken: nil, idToken: nil, scope: ""),
    ])
    func sameBytes(_ response: TokenResponse) throws {
        let written = response.serialized
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: try CanonicalJSON.encode(response), as: UTF8.self))
        #expect(try JSONDecoder().decode(TokenResponse.self, from: written) == response)
    }
}
