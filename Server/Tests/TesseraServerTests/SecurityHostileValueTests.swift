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
