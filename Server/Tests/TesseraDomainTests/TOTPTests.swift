import Foundation
import Testing
import TesseraDomain

@Suite("TOTP")
struct TOTPTests {
    /// The seeds of RFC 6238 Appendix B: "1234567890" repeated to the hash's output length
    /// (20, 32 and 64 bytes), not one 20-byte key for all three.
    static func rfc6238Secret(_ algorithm: TOTP.Algorithm) -> TOTPSecret {
        let length = switch algorithm {
        case .sha1: 20
        case .sha256: 32
        case .sha512: 64
        }
        return TOTPSecret(bytes: Data(String(repeating: "1234567890", count: 7).utf8.prefix(length)))
    }

    /// RFC 6238 Appendix B, the table of test values: time, then the 8-digit code for
    /// SHA-1, SHA-256 and SHA-512.
    static let rfc6238Vectors: [(time: Int64, codes: [TOTP.Algorithm: String])] = [
        (59, [.sha1: "94287082", .sha256: "46119246", .sha512: "90693936"]),
        (1_111_111_109, [.sha1: "07081804", .sha256: "68084774", .sha512: "25091201"]),
        (1_111_111_111, [.sha1: "14050471", .sha256: "67062674", .sha512: "99943326"]),
        (1_234_567_890, [.sha1: "89005924", .sha256: "91819424", .sha512: "93441116"]),
        (2_000_000_000, [.sha1: "69279037", .sha256: "90698825", .sha512: "38618901"]),
        (20_000_000_000, [.sha1: "65353130", .sha256: "77737706", .sha512: "47863826"]),
    ]

    @Test("codes match RFC 6238 Appendix B for SHA-1, SHA-256 and SHA-512", arguments: TOTP.Algorithm.allCases)
    func rfc6238(algorithm: TOTP.Algorithm) {
        let totp = TOTP(secret: Self.rfc6238Secret(algorithm), digits: 8, algorithm: algorithm)
        for vector in Self.rfc6238Vectors {
            #expect(totp.code(at: vector.time) == vector.codes[algorithm], "T = \(vector.time)")
        }
    }

    @Test("the time step is floor(time / period) (RFC 6238 §4.2)")
    func timeStep() {
        let totp = TOTP(secret: Self.rfc6238Secret(.sha1))
        #expect(totp.step(at: 59) == 1)
        #expect(totp.step(at: 1_111_111_109) == 0x23523EC)
        #expect(totp.step(at: 20_000_000_000) == 0x27BC86AA)
        #expect(totp.step(at: 60) == 2)
        #expect(totp.step(at: -1) == -1)
        #expect(TOTP(secret: Self.rfc6238Secret(.sha1), period: 60).step(at: 119) == 1)
    }

    @Test("HOTP values and truncations match RFC 4226 Appendix D")
    func rfc4226() {
        let totp = TOTP(secret: Self.rfc6238Secret(.sha1), digits: 6)
        let truncated: [UInt32] = [1_284_755_224, 1_094_287_082, 137_359_152, 1_726_969_429, 1_640_338_314,
                                   868_254_676, 1_918_287_922, 82_162_583, 673_399_871, 645_520_489]
        let codes = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        for counter in 0..<10 {
            #expect(totp.truncatedHMAC(forStep: Int64(counter)) == truncated[counter], "count \(counter)")
            #expect(totp.code(forStep: Int64(counter)) == codes[counter], "count \(counter)")
        }
    }

    @Test("codes are zero-padded to the number of digits")
    func zeroPadded() {
        // RFC 6238 Appendix B: 07081804 at 1111111109 with SHA-1.
        let totp = TOTP(secret: Self.rfc6238Secret(.sha1), digits: 8)
        #expect(totp.code(at: 1_111_111_109) == "07081804")
        // RFC 4226 Appendix D: 82162583 truncates to 162583; with 7 digits, 2162583.
        #expect(TOTP(secret: Self.rfc6238Secret(.sha1), digits: 7).code(forStep: 7) == "2162583")
    }

    @Test("a code one step early or late is accepted, and the step it belongs to returned")
    func windowOfOne() {
        let totp = TOTP(secret: Self.rfc6238Secret(.sha1))
        let now: Int64 = 1_800_000_015, step = totp.step(at: now)
        #expect(totp.matchingStep(totp.code(forStep: step), at: now) == step)
        #expect(totp.matchingStep(totp.code(forStep: step - 1), at: now) == step - 1)
        #expect(totp.matchingStep(totp.code(forStep: step + 1), at: now) == step + 1)
    }

    @Test("a code two steps early or late is refused")
    func outsideWindow() {
        let totp = TOTP(secret: Self.rfc6238Secret(.sha1))
        let now: Int64 = 1_800_000_015, step = totp.step(at: now)
        let near = Set((-1...1).map { totp.code(forStep: step + $0) })
        for offset: Int64 in [-2, 2] where !near.contains(totp.code(forStep: step + offset)) {
            #expect(totp.matchingStep(totp.code(forStep: step + offset), at: now) == nil)
            #expect(totp.matchingStep(totp.code(forStep: step + offset), at: now, window: 2) == step + offset)
        }
        #expect(totp.matchingStep(totp.code(forStep: step - 1), at: now, window: 0) == nil)
    }

    @Test("a code at or before the last accepted step is refused, so no code is accepted twice")
    func replay() throws {
        let totp = TOTP(secret: Self.rfc6238Secret(.sha1))
        let now: Int64 = 1_800_000_015
        let code = totp.code(at: now)
        let accepted = try #require(totp.matchingStep(code, at: now))
        #expect(totp.matchingStep(code, at: now, after: accepted) == nil)
        #expect(totp.matchingStep(code, at: now + 30, after: accepted) == nil)
        #expect(totp.matchingStep(totp.code(at: now + 30), at: now + 30, after: accepted) == accepted + 1)
        #expect(totp.matchingStep(totp.code(at: now - 30), at: now, after: accepted) == nil)
    }

    @Test("anything but exactly the right number of ASCII digits is refused",
          arguments: ["", "28708", "2870822", "28708a", " 287082", "287082 ", "287 082", "+28708", "-28708",
                      "２８７０８２", "٢٨٧٠٨٢"])
    func malformed(code: String) {
        // RFC 4226 Appendix D's count 1 is 287082; it stays in the window at step 2.
        let totp = TOTP(secret: Self.rfc6238Secret(.sha1))
        #expect(totp.matchingStep("287082", at: 60) == 1)
        #expect(totp.matchingStep(code, at: 60) == nil)
    }

    @Test("base32 follows RFC 4648 §10, without padding")
    func base32Vectors() {
        let vectors = ["": "", "f": "MY", "fo": "MZXQ", "foo": "MZXW6", "foob": "MZXW6YQ", "fooba": "MZXW6YTB",
                       "foobar": "MZXW6YTBOI"]
        for (plain, encoded) in vectors {
            #expect(Base32.encode(Data(plain.utf8)) == encoded)
            #expect(Base32.decode(encoded) == Data(plain.utf8))
        }
        // The padded forms of §10.
        let padded = ["MY======": "f", "MZXQ====": "fo", "MZXW6===": "foo", "MZXW6YQ=": "foob", "MZXW6YTBOI======": "foobar"]
        for (encoded, plain) in padded {
            #expect(TOTPSecret(base32: encoded)?.bytes == Data(plain.utf8))
        }
    }

    @Test("a secret round-trips through base32, read in any case, with spaces and padding")
    func base32RoundTrip() throws {
        for _ in 0..<20 {
            let secret = TOTPSecret()
            #expect(secret.bytes.count == 20)
            #expect(secret.base32.count == 32)
            #expect(secret.base32.allSatisfy { $0.isUppercase || ("2"..."7").contains($0) })
            #expect(TOTPSecret(base32: secret.base32)?.bytes == secret.bytes)
            let spaced = secret.base32.lowercased().enumerated().map { $0.offset % 4 == 3 ? "\($0.element) " : "\($0.element)" }.joined()
            #expect(try #require(TOTPSecret(base32: spaced)).bytes == secret.bytes)
        }
        // RFC 6238's SHA-1 seed, as authenticator apps are given it.
        #expect(Self.rfc6238Secret(.sha1).base32 == "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        #expect(TOTPSecret(base32: "gezd gnbv gy3t qojq gezd gnbv gy3t qojq")?.bytes == Self.rfc6238Secret(.sha1).bytes)
    }

    @Test("base32 that no encoder produces is refused",
          arguments: ["", "====", "M", "MZX", "MZXW6Y", "MZ0W6", "MZ1W6", "MZ8W6", "MZ=XW6", "MZXW6YTB!", "MZ", "MZXR", "MZXW7"])
    func base32Invalid(text: String) {
        // "MZ", "MZXR" and "MZXW7" have bits set past the last byte (RFC 4648 §3.5).
        #expect(TOTPSecret(base32: text) == nil)
    }

    @Test("new secrets differ")
    func randomSecrets() {
        let secrets = Set((0..<100).map { _ in TOTPSecret().bytes })
        #expect(secrets.count == 100)
    }

    @Test("a secret's description does not show the key")
    func redacted() {
        let secret = Self.rfc6238Secret(.sha1)
        #expect("\(secret)" == "TOTPSecret(20 bytes)")
        #expect(!String(reflecting: secret).contains(secret.base32))
    }

    @Test("the provisioning URI follows the Key Uri Format and parses back")
    func provisioningURI() throws {
        let totp = TOTP(secret: Self.rfc6238Secret(.sha1))
        let uri = totp.provisioningURI(issuer: "Example Co", account: "alice@example.com")
        #expect(uri == "otpauth://totp/Example%20Co:alice@example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
            + "&issuer=Example%20Co&algorithm=SHA1&digits=6&period=30")

        let components = try #require(URLComponents(string: uri))
        #expect(components.scheme == "otpauth")
        #expect(components.host == "totp")
        #expect(components.path == "/Example Co:alice@example.com")
        let query = Dictionary(uniqueKeysWithValues: try #require(components.queryItems).map { ($0.name, $0.value ?? "") })
        #expect(query == ["secret": totp.secret.base32, "issuer": "Example Co", "algorithm": "SHA1", "digits": "6", "period": "30"])
        #expect(TOTPSecret(base32: query["secret"] ?? "")?.bytes == totp.secret.bytes)
    }

    @Test("labels and issuer are percent-encoded, non-ASCII as UTF-8")
    func provisioningURIEncoding() throws {
        let totp = TOTP(secret: Self.rfc6238Secret(.sha512), digits: 8, period: 60, algorithm: .sha512)
        let uri = totp.provisioningURI(issuer: "Åsa & Co?", account: "bob+1/x#y:z")
        #expect(uri.hasPrefix("otpauth://totp/%C3%85sa%20%26%20Co%3F:bob%2B1%2Fx%23y%3Az?"))
        let components = try #require(URLComponents(string: uri))
        #expect(components.path == "/Åsa & Co?:bob+1/x#y:z")
        let query = Dictionary(uniqueKeysWithValues: try #require(components.queryItems).map { ($0.name, $0.value ?? "") })
        #expect(query["issuer"] == "Åsa & Co?")
        #expect(query["algorithm"] == "SHA512")
        #expect(query["digits"] == "8")
        #expect(query["period"] == "60")
    }

    @Test("without an issuer, the label is the account alone and there is no issuer parameter")
    func provisioningURIWithoutIssuer() throws {
        let uri = TOTP(secret: Self.rfc6238Secret(.sha1)).provisioningURI(issuer: "", account: "alice")
        let components = try #require(URLComponents(string: uri))
        #expect(components.path == "/alice")
        #expect(components.queryItems?.contains { $0.name == "issuer" } == false)
    }
}
