import Crypto
import CryptoExtras
import Foundation
import Testing
import TesseraWebAuthn

@Suite("Client data (§5.8.1)")
struct ClientDataTests {
    static func parse(_ json: String) throws(WebAuthnError) -> ClientData {
        try ClientData(json: Data(json.utf8))
    }

    @Test("reads type, challenge, origin, crossOrigin and topOrigin, ignoring other members")
    func members() throws {
        let data = try Self.parse(#"{"type":"webauthn.get","challenge":"AAEC_w","origin":"https://a.example","crossOrigin":true,"topOrigin":"https://b.example","other":{"x":[1,-2.5e3,null]}}"#)
        #expect(data.type == "webauthn.get")
        #expect(data.challenge == Data([0, 1, 2, 255]))
        #expect(data.origin == "https://a.example")
        #expect(data.crossOrigin == true)
        #expect(data.topOrigin == "https://b.example")
        let minimal = try Self.parse(#" { "origin" : "o" , "challenge" : "" , "type" : "t" } "#)
        #expect(minimal.crossOrigin == nil && minimal.topOrigin == nil && minimal.challenge.isEmpty)
    }

    @Test("escapes are resolved, surrogate pairs included; a byte order mark is dropped")
    func escapes() throws {
        let data = try Self.parse(#"{"type":"webauthn.\u0067et","challenge":"AA","origin":"https:\/\/a.example\ud83d\ude00"}"#)
        #expect(data.type == "webauthn.get")
        #expect(data.origin == "https://a.example😀")
        let withBOM = Data([0xEF, 0xBB, 0xBF]) + Data(#"{"type":"t","challenge":"AA","origin":"o"}"#.utf8)
        #expect(try ClientData(json: withBOM).type == "t")
    }

    @Test("a missing or mistyped member is refused", arguments: [
        #"{"challenge":"AA","origin":"o"}"#,
        #"{"type":"t","origin":"o"}"#,
        #"{"type":"t","challenge":"AA"}"#,
        #"{"type":1,"challenge":"AA","origin":"o"}"#,
        #"{"type":"t","challenge":["AA"],"origin":"o"}"#,
        #"{"type":"t","challenge":"AA","origin":null}"#,
        #"{"type":"t","challenge":"AA","origin":"o","crossOrigin":"false"}"#,
        #"{"type":"t","challenge":"AA","origin":"o","topOrigin":true}"#,
        #"["type","t"]"#,
    ])
    func missingMembers(_ json: String) {
        #expect(throws: WebAuthnError.self) { try Self.parse(json) }
    }

    @Test("the challenge must be unpadded, canonical base64url", arguments: ["AA==", "AA=", "+/8", "A", "AB", "AA A", "AAF", "ÿÿ"])
    func challengeEncoding(_ challenge: String) {
        #expect(throws: WebAuthnError.self) { try Self.parse(#"{"type":"t","challenge":"\#(challenge)","origin":"o"}"#) }
    }

    @Test("a member named twice is refused, also when one name is escaped")
    func duplicateMembers() {
        #expect(throws: WebAuthnError.self) { try Self.parse(#"{"type":"webauthn.get","type":"webauthn.create","challenge":"AA","origin":"o"}"#) }
        #expect(throws: WebAuthnError.self) { try Self.parse(#"{"origin":"https://a","challenge":"AA","type":"t","\u006frigin":"https://b"}"#) }
    }

    @Test("text that is not JSON, or not UTF-8, is refused", arguments: [
        "", "{", #"{"type":"t","challenge":"AA","origin":"o"} x"#, #"{"type":"t","challenge":"AA","origin":"o",}"#,
        #"{"type":"t\u12","challenge":"AA","origin":"o"}"#, #"{"type":"\ud800","challenge":"AA","origin":"o"}"#,
        #"{"type":"\udc00\ud800","challenge":"AA","origin":"o"}"#, "{\"type\":\"t\n\",\"challenge\":\"AA\",\"origin\":\"o\"}",
        #"{"type":"t","challenge":"AA","origin":"o","n":01}"#, #"{"type":"t","challenge":"AA","origin":"o","n":1.}"#,
        #"{"type":"t","challenge":"AA","origin":"o","n":tru}"#, #"{"type":"t","challenge":"AA","origin":"o","n":'x'}"#,
    ])
    func notJSON(_ text: String) {
        #expect(throws: WebAuthnError.self) { try Self.parse(text) }
    }

    @Test("bytes that are not UTF-8 are refused")
    func notUTF8() {
        var bytes = Data(#"{"type":"t","challenge":"AA","origin":"o"}"#.utf8)
        bytes[10] = 0xC0
        #expect(throws: WebAuthnError.self) { try ClientData(json: bytes) }
    }

    @Test("nesting deeper than 32 levels is refused")
    func depth() {
        let nested = String(repeating: "[", count: 31) + String(repeating: "]", count: 31)
        #expect((try? Self.parse(#"{"type":"t","challenge":"AA","origin":"o","x":\#(nested)}"#)) != nil)
        let deeper = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect(throws: WebAuthnError.self) { try Self.parse(#"{"type":"t","challenge":"AA","origin":"o","x":\#(deeper)}"#) }
        let absurd = String(repeating: "[", count: 200_000)
        #expect(throws: WebAuthnError.self) { try Self.parse(absurd) }
    }
}

@Suite("Authenticator data (§6.1, §6.5.1)")
struct AuthenticatorDataTests {
    @Test("reads the RP ID hash, flags, counter and attested credential data")
    func fields() throws {
        var authenticator = TestAuthenticator(.p256())
        authenticator.signCount = 0x0102_0304
        authenticator.flags = TestAuthenticator.Flag.up | TestAuthenticator.Flag.be | TestAuthenticator.Flag.bs
        let bytes = authenticator.authenticatorData(attested: true)
        let parsed = try AuthenticatorData(bytes: bytes)
        #expect(parsed.rpIDHash == Data(SHA256.hash(data: Data("login.example.com".utf8))))
        #expect(parsed.signCount == 0x0102_0304)
        #expect(parsed.userPresent && !parsed.userVerified && parsed.backupEligible && parsed.backedUp)
        #expect(parsed.flags.contains(.attestedCredentialData) && !parsed.flags.contains(.extensionData))
        #expect(parsed.attestedCredential?.aaguid == authenticator.aaguid)
        #expect(parsed.attestedCredential?.credentialID == authenticator.credential.id)
        #expect(parsed.attestedCredential?.publicKey.coseBytes == authenticator.credential.coseKey.encoded, "the COSE bytes exactly as read")
        #expect(parsed.bytes == bytes)
    }

    @Test("the extensions map after the credential key is parsed and kept")
    func extensions() throws {
        var authenticator = TestAuthenticator(.ed25519())
        authenticator.extensions = TestCBOR.map([(.text("credProtect"), .int(2)), (.text("hmac-secret"), .bool(true))]).encoded
        for attested in [true, false] {
            let parsed = try AuthenticatorData(bytes: authenticator.authenticatorData(attested: attested))
            #expect(parsed.extensions?[.text("credProtect")] == .unsigned(2))
            #expect(parsed.extensions?[.text("hmac-secret")] == .bool(true))
            #expect((parsed.attestedCredential != nil) == attested)
        }
    }

    @Test("an ED flag without a map after it is refused")
    func extensionsMustBeAMap() {
        var authenticator = TestAuthenticator(.p256())
        authenticator.extensions = TestCBOR.array([.int(1)]).encoded
        #expect(throws: WebAuthnError.self) { try AuthenticatorData(bytes: authenticator.authenticatorData(attested: false)) }
        authenticator.extensions = Data()
        #expect(throws: WebAuthnError.self) { try AuthenticatorData(bytes: authenticator.authenticatorData(attested: false)) }
    }

    @Test("bytes after what the flags announce are refused")
    func trailingBytes() {
        var authenticator = TestAuthenticator(.p256())
        authenticator.trailing = Data([0x00])
        #expect(throws: WebAuthnError.self) { try AuthenticatorData(bytes: authenticator.authenticatorData(attested: true)) }
        #expect(throws: WebAuthnError.self) { try AuthenticatorData(bytes: authenticator.authenticatorData(attested: false)) }
        // An extensions map the ED flag does not announce is trailing bytes too.
        let withoutED = authenticator.authenticatorData(attested: false).dropLast() + TestCBOR.map([]).encoded
        #expect(throws: WebAuthnError.self) { try AuthenticatorData(bytes: withoutED) }
    }

    @Test("a credential ID over 1023 bytes is refused; one of 1023 is read")
    func credentialIDLength() throws {
        var authenticator = TestAuthenticator(TestCredential(.p256(P256.Signing.PrivateKey()), id: Data(repeating: 7, count: 1024)))
        #expect(throws: WebAuthnError.self) { try AuthenticatorData(bytes: authenticator.authenticatorData(attested: true)) }
        authenticator.credential = TestCredential(.p256(P256.Signing.PrivateKey()), id: Data(repeating: 7, count: 1023))
        #expect(try AuthenticatorData(bytes: authenticator.authenticatorData(attested: true)).attestedCredential?.credentialID.count == 1023)
    }

    @Test("authenticator data cut at any byte is refused, never a crash")
    func truncation() {
        var authenticator = TestAuthenticator(.rsa)
        authenticator.extensions = TestCBOR.map([(.text("credProtect"), .int(2))]).encoded
        let bytes = authenticator.authenticatorData(attested: true)
        #expect((try? AuthenticatorData(bytes: bytes)) != nil)
        for length in 0..<bytes.count {
            #expect(throws: WebAuthnError.self, "cut at \(length)") { try AuthenticatorData(bytes: bytes.prefix(length)) }
        }
    }

    @Test("a Data slice with offset indices parses the same as a copy")
    func slicedInput() throws {
        let bytes = TestAuthenticator(.p256()).authenticatorData(attested: true)
        let padded = Data([0xFF, 0xFF, 0xFF]) + bytes
        let slice = padded[3...]
        #expect(try AuthenticatorData(bytes: slice) == AuthenticatorData(bytes: bytes))
    }
}

@Suite("COSE credential public keys (RFC 9052 §7, RFC 9053, RFC 8230)")
struct CredentialPublicKeyTests {
    static let p256 = P256.Signing.PrivateKey()
    static var x: Data { p256.publicKey.x963Representation[1..<33] }
    static var y: Data { p256.publicKey.x963Representation[33..<65] }

    static func key(_ pairs: [(TestCBOR, TestCBOR)]) throws(WebAuthnError) -> CredentialPublicKey {
        try CredentialPublicKey(cose: TestCBOR.map(pairs).encoded)
    }

    static func code(_ pairs: [(TestCBOR, TestCBOR)]) -> WebAuthnError.Code? {
        errorCode { try key(pairs) }
    }

    @Test("each supported key verifies its own signatures and no others", arguments: [TestCredential.p256(), .ed25519(), .rsa])
    func verifies(_ credential: TestCredential) throws {
        let key = try CredentialPublicKey(cose: credential.coseKey.encoded)
        #expect(key.algorithm == credential.algorithm)
        let message = Data("signed data".utf8)
        let signature = credential.sign(message)
        #expect(key.isValidSignature(signature, for: message))
        #expect(!key.isValidSignature(signature, for: Data("other data".utf8)))
        var flipped = signature
        flipped[flipped.startIndex + flipped.count / 2] ^= 0x40
        #expect(!key.isValidSignature(flipped, for: message))
        #expect(!key.isValidSignature(Data(), for: message))
        #expect(!key.isValidSignature(signature + Data([0]), for: message))
    }

    @Test("alg must be present, and match the key type")
    func algorithmMatchesKeyType() {
        #expect(Self.code([(.int(1), .int(2)), (.int(-1), .int(1)), (.int(-2), .bytes(Self.x)), (.int(-3), .bytes(Self.y))]) == .badPublicKey)
        #expect(Self.code([(.int(1), .int(1)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(Self.x)), (.int(-3), .bytes(Self.y))]) == .badPublicKey)
        #expect(Self.code([(.int(1), .int(3)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(Self.x)), (.int(-3), .bytes(Self.y))]) == .badPublicKey)
        #expect(Self.code([(.int(1), .int(2)), (.int(3), .int(-8)), (.int(-1), .int(6)), (.int(-2), .bytes(Self.x))]) == .badPublicKey)
        #expect(Self.code([(.int(1), .int(2)), (.int(3), .int(-257)), (.int(-1), .bytes(Self.x)), (.int(-2), .bytes(Data([1, 0, 1])))]) == .badPublicKey)
        #expect(Self.code([(.int(1), .text("EC2")), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(Self.x)), (.int(-3), .bytes(Self.y))]) == .badPublicKey)
        #expect(Self.code([(.int(1), .int(2)), (.int(3), .text("ES256")), (.int(-1), .int(1)), (.int(-2), .bytes(Self.x)), (.int(-3), .bytes(Self.y))]) == .badPublicKey)
    }

    @Test("algorithms and curves other than ES256, RS256 and Ed25519 are unsupported")
    func unsupported() {
        #expect(Self.code([(.int(1), .int(2)), (.int(3), .int(-35)), (.int(-1), .int(2)), (.int(-2), .bytes(Self.x)), (.int(-3), .bytes(Self.y))]) == .unsupportedAlgorithm)
        #expect(Self.code([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(2)), (.int(-2), .bytes(Self.x)), (.int(-3), .bytes(Self.y))]) == .unsupportedAlgorithm)
        #expect(Self.code([(.int(1), .int(1)), (.int(3), .int(-8)), (.int(-1), .int(7)), (.int(-2), .bytes(Data(count: 57)))]) == .unsupportedAlgorithm)
        #expect(Self.code([(.int(1), .int(3)), (.int(3), .int(-37)), (.int(-1), .bytes(Self.x)), (.int(-2), .bytes(Data([1, 0, 1])))]) == .unsupportedAlgorithm)
        #expect(Self.code([(.int(1), .int(2)), (.int(3), .int(Int64.min)), (.int(-1), .int(1))]) == .unsupportedAlgorithm)
    }

    @Test("coordinates of the wrong length or off the curve are refused")
    func badPoints() {
        #expect(Self.code([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(Self.x.dropLast())), (.int(-3), .bytes(Self.y))]) == .badPublicKey)
        #expect(Self.code([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(Self.x))]) == .badPublicKey)
        var y = Self.y
        y[y.startIndex] ^= 0x01
        #expect(Self.code([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(Self.x)), (.int(-3), .bytes(y))]) == .badPublicKey)
        #expect(Self.code([(.int(1), .int(1)), (.int(3), .int(-8)), (.int(-1), .int(6)), (.int(-2), .bytes(Data(count: 31)))]) == .badPublicKey)
        #expect(Self.code([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .text("x")), (.int(-3), .bytes(Self.y))]) == .badPublicKey)
    }

    @Test("an RSA modulus under 2048 bits is refused")
    func shortRSA() throws {
        let small = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024)).publicKey.getKeyPrimitives()
        #expect(throws: WebAuthnError(.badPublicKey, "the RSA modulus has 1024 bits; 2048 or more are required")) {
            try Self.key([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes(small.modulus)), (.int(-2), .bytes(small.publicExponent))])
        }
        // Leading zero bytes do not make a modulus longer.
        #expect(Self.code([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes(Data(count: 128) + small.modulus)), (.int(-2), .bytes(small.publicExponent))]) == .badPublicKey)
        #expect(Self.code([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes(Data(repeating: 0xFF, count: 256))), (.int(-2), .bytes(Data([2])))]) == .badPublicKey,
                "an even exponent")
    }

    @Test("a parameter a public key must not have is refused (a private key among them)")
    func extraParameters() {
        #expect(Self.code([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(Self.x)), (.int(-3), .bytes(Self.y)),
                           (.int(-4), .bytes(Self.p256.rawRepresentation))]) == .badPublicKey)
        #expect(Self.code([(.int(1), .int(2)), (.int(2), .bytes(Data([1]))), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(Self.x)),
                           (.int(-3), .bytes(Self.y))]) == .badPublicKey)
        #expect(Self.code([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(Self.x)), (.int(-3), .bytes(Self.y)),
                           (.text("note"), .text("x"))]) == .badPublicKey)
    }

    @Test("init(cose:) refuses anything but one CBOR map filling the bytes")
    func wholeInput() throws {
        let bytes = TestCredential.p256().coseKey.encoded
        #expect(try CredentialPublicKey(cose: bytes).coseBytes == bytes)
        #expect(errorCode { try CredentialPublicKey(cose: bytes + Data([0])) } == .malformed)
        #expect(errorCode { try CredentialPublicKey(cose: bytes.dropLast()) } == .malformed)
        #expect(errorCode { try CredentialPublicKey(cose: TestCBOR.array([]).encoded) } == .badPublicKey)
    }
}
