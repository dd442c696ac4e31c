import Foundation
import Testing
@testable import TesseraCore

/// Inputs found by `scripts/fuzz` (Fuzz/README.md), kept as the rules they broke.
@Suite("Fuzzing regressions")
struct FuzzRegressionTests {
    /// A compact JWS with these header and payload texts and a dummy signature.
    static func token(header: String, payload: String) -> String {
        Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(payload.utf8)) + "." + Base64URL.encode(Data([1, 2, 3]))
    }

    @Test("a JWT whose header or claims name a member twice is refused (RFC 7515 §4, RFC 7519 §4)")
    func duplicateJWTMembers() {
        let claims = #"{"sub":"alice","aud":"app"}"#
        let repeated = [
            (#"{"alg":"ES256","alg":"none"}"#, claims),
            (#"{"alg":"ES256","kid":"a"}"#, #"{"sub":"alice","sub":"mallory"}"#),
            (#"{"alg":"ES256"}"#, #"{"sub":"alice","\u0073ub":"mallory"}"#),
            (#"{"alg":"ES256"}"#, #"{"address":{"country":"RU","country":"FR"}}"#),
            (#"{"alg":"ES256"}"#, "{\"n\u{E9}\":1,\"ne\u{301}\":2}"),
        ]
        for (header, payload) in repeated {
            #expect(throws: JOSEError.self, "\(header) \(payload)") { try JWT(parsing: Self.token(header: header, payload: payload)) }
        }
    }

    @Test("the same name in different objects, or as a string value, is not a repeat")
    func distinctJWTMembers() throws {
        let payload = #"{"a":{"x":1},"b":{"x":[{"x":2}]},"sub":"sub","aud":["aud","aud"],"s":"\"sub\":"}"#
        let jwt = try JWT(parsing: Self.token(header: #"{ "alg" : "ES256" , "kid" : "alg" }"#, payload: payload))
        #expect(jwt.subject == "sub" && jwt.kid == "alg" && jwt.audience == ["aud", "aud"])
    }

    @Test("a JWK Set whose key names a member twice is refused (RFC 7517 §4)")
    func duplicateJWKMembers() {
        let set = #"{"keys":[{"kty":"OKP","crv":"Ed25519","kty":"EC","x":"6A3be5YRsBrR8AGteyVfaJALY7vA08omGSu0to5InmQ"}]}"#
        #expect(throws: JOSEError.self) { try JWKSet.parse(Data(set.utf8)) }
        let single = #"{"kty":"OKP","crv":"Ed25519","x":"6A3be5YRsBrR8AGteyVfaJALY7vA08omGSu0to5InmQ","x":"AAAA"}"#
        #expect(throws: JOSEError.self) { try JWKSet.parse(Data(single.utf8)) }
        let valid = #"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"6A3be5YRsBrR8AGteyVfaJALY7vA08omGSu0to5InmQ"}]}"#
        #expect((try? JWKSet.parse(Data(valid.utf8)))?.keys.count == 1)
    }

    @Test("a decoded whole number is an integer however it is written, so a stored claims request reads back unchanged")
    func wholeNumbersDecodeAsIntegers() throws {
        for (text, value) in [("1.0", JSONValue.int(1)), ("1e2", .int(100)), ("-0.0", .int(0)),
                              ("-922337203685477580.08", .int(-922_337_203_685_477_632)), ("0.5", .double(0.5)),
                              ("18446744073709551616", .double(18_446_744_073_709_551_616))] {
            #expect(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) == value, "\(text)")
        }
        let request = try ClaimsRequest(parsing: #"{"userinfo":{"x":{"values":[-922337203685477580.08,1.5e300,0.1]}}}"#)
        let stored = String(decoding: try CanonicalJSON.encode(request), as: UTF8.self)
        #expect(try ClaimsRequest(parsing: stored) == request)
    }
}
