import Crypto
import Foundation
import Testing
@testable import TesseraCore

@Suite("JWS signing and verification")
struct JOSETests {
    @Test("a token signed with each algorithm verifies with its published JWK", arguments: JWSAlgorithm.allCases)
    func roundTrip(algorithm: JWSAlgorithm) throws {
        let key = try JWSSigningKey.generate(algorithm, kid: "k1")
        let token = try JWT.sign(["sub": "alice", "n": 42], with: key, type: "at+jwt")
        let parsed = try JWT(parsing: token)
        #expect(parsed.kid == "k1")
        #expect(parsed.type == "at+jwt")
        #expect(parsed.algorithm == algorithm.rawValue)
        #expect(parsed.subject == "alice")
        let published = try JWSVerificationKey(jwk: key.publicKey.jwk)
        try parsed.verify(with: [published])
    }

    @Test("a stored private key restores to the same key", arguments: JWSAlgorithm.allCases)
    func restore(algorithm: JWSAlgorithm) throws {
        let key = try JWSSigningKey.generate(algorithm, kid: "k")
        let restored = try JWSSigningKey(algorithm: algorithm, privateKeyData: key.privateKeyData, kid: "k")
        #expect(restored.publicKey.jwk == key.publicKey.jwk)
    }

    @Test("a changed payload does not verify")
    func tamperedPayload() throws {
        let key = try JWSSigningKey.generate(.es256, kid: "k")
        let parts = try JWT.sign(["sub": "alice"], with: key).split(separator: ".")
        let forged = parts[0] + "." + Base64URL.encode(Data(#"{"sub":"mallory"}"#.utf8)) + "." + parts[2]
        #expect(throws: JOSEError.badSignature) { try JWT(parsing: String(forged)).verify(with: [key.publicKey]) }
    }

    @Test("alg none and unknown kids are refused")
    func refusals() throws {
        let key = try JWSSigningKey.generate(.rs256, kid: "k")
        let header = Base64URL.encode(Data(#"{"alg":"none","kid":"k"}"#.utf8))
        let unsigned = try JWT(parsing: header + "." + Base64URL.encode(Data(#"{"sub":"x"}"#.utf8)) + ".")
        #expect(throws: JOSEError.unsupportedAlgorithm("none")) { try unsigned.verify(with: [key.publicKey]) }
        let other = try JWSSigningKey.generate(.rs256, kid: "other")
        let token = try JWT(parsing: try JWT.sign(["sub": "x"], with: other))
        #expect(throws: JOSEError.unknownKey("other")) { try token.verify(with: [key.publicKey]) }
    }

    @Test("a key of another algorithm with the same kid does not verify")
    func algorithmConfusion() throws {
        let es = try JWSSigningKey.generate(.es256, kid: "same")
        let ed = try JWSSigningKey.generate(.edDSA, kid: "same")
        let token = try JWT(parsing: try JWT.sign(["sub": "x"], with: es))
        #expect(throws: JOSEError.unknownKey("same")) { try token.verify(with: [ed.publicKey]) }
    }

    @Test("malformed tokens are rejected with a reason")
    func malformed() {
        #expect(throws: JOSEError.self) { try JWT(parsing: "abc") }
        #expect(throws: JOSEError.self) { try JWT(parsing: "a.b.c") }
        #expect(throws: JOSEError.self) { try JWT(parsing: "e30.W10.") } // payload is an array
    }

    @Test("JWK members never include private parts and short RSA keys are refused")
    func jwkHygiene() throws {
        let key = try JWSSigningKey.generate(.rs256, kid: "k")
        let json = String(decoding: try CanonicalJSON.encode(key.publicKey.jwk), as: UTF8.self)
        #expect(!json.contains("\"d\""))
        #expect(!json.contains("\"p\""))
        let short = JWK(kty: "RSA", n: Base64URL.encode([UInt8](repeating: 0xC1, count: 128)), e: "AQAB")
        #expect(throws: JOSEError.self) { try JWSVerificationKey(jwk: short) }
    }

    @Test("audience reads a string or an array")
    func audience() throws {
        let key = try JWSSigningKey.generate(.edDSA, kid: "k")
        #expect(try JWT(parsing: try JWT.sign(["aud": "a"], with: key)).audience == ["a"])
        #expect(try JWT(parsing: try JWT.sign(["aud": .array(["a", "b"])], with: key)).audience == ["a", "b"])
    }
}

@Suite("Base64url")
struct Base64URLTests {
    @Test("round-trips without padding and refuses foreign characters")
    func roundTrip() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(($0 * 37 + 11) & 0xFF) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == Data(bytes))
        }
        #expect(Base64URL.decode("ab+c") == nil)
        #expect(Base64URL.decode("abc=") == nil)
        #expect(Base64URL.decode("a") == nil)
    }
}

@Suite("JSON serialisation")
struct JSONSerialisationTests {
    @Test("serialised JSON reads back as the same value and matches JSONEncoder's canonical form")
    func roundTrip() throws {
        let value: JSONValue = .object([
            "iss": "https://id.example.com/path", "n": 42, "neg": -7, "ok": true, "none": .null, "pi": .double(3.25),
            "text": "quote \" backslash \\ newline \n tab \t bell \u{07} кириллица 🙂",
            "list": .array(["a", 1, .object(["z": 1, "a": 2])]),
        ])
        let data = value.serialized
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
        #expect(data == (try CanonicalJSON.encode(value)))
    }
}
