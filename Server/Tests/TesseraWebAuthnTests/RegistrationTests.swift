import Crypto
import Foundation
import Testing
import TesseraWebAuthn

/// §7.1 with the test authenticator: each test breaks one rule of otherwise valid input.
@Suite("Registration (§7.1)")
struct RegistrationTests {
    typealias Flag = TestAuthenticator.Flag

    static func verify(_ response: (Data, Data), challenge: Data = TestAuthenticator.challenge,
                       relyingParty: RelyingParty = TestAuthenticator.relyingParty, requireUserVerification: Bool = false,
                       allowedAlgorithms: Set<COSEAlgorithm> = [.es256, .rs256, .edDSA]) throws(WebAuthnError) -> RegistrationResult {
        try WebAuthn.verifyRegistration(clientDataJSON: response.0, attestationObject: response.1, expectedChallenge: challenge,
                                        relyingParty: relyingParty, requireUserVerification: requireUserVerification,
                                        allowedAlgorithms: allowedAlgorithms)
    }

    static func code(_ response: (Data, Data), requireUserVerification: Bool = false,
                     allowedAlgorithms: Set<COSEAlgorithm> = [.es256, .rs256, .edDSA]) -> WebAuthnError.Code? {
        errorCode { try verify(response, requireUserVerification: requireUserVerification, allowedAlgorithms: allowedAlgorithms) }
    }

    static let create = TestAuthenticator.clientDataJSON(type: "webauthn.create")

    @Test("none and packed self attestation verify for each algorithm", arguments: [TestCredential.p256(), .ed25519(), .rsa])
    func accepted(_ credential: TestCredential) throws {
        var authenticator = TestAuthenticator(credential)
        authenticator.flags = Flag.up | Flag.uv | Flag.be | Flag.bs
        authenticator.signCount = 7
        let none = try Self.verify(authenticator.noneRegistration(), requireUserVerification: true)
        #expect(none.attestationFormat == "none" && none.attestationType == "none")
        #expect(none.publicKey.algorithm == credential.algorithm)
        #expect(none.publicKey.coseBytes == credential.coseKey.encoded)
        #expect(none.credentialID == credential.id)
        #expect(none.aaguid == authenticator.aaguid)
        #expect(none.signCount == 7)
        #expect(none.userVerified && none.backupEligible && none.backedUp)
        let packed = try Self.verify(authenticator.packedSelfRegistration())
        #expect(packed.attestationFormat == "packed" && packed.attestationType == "self")
        #expect(packed.attestationCertificates.isEmpty)
    }

    @Test("packed attestation with an x5c meeting §8.2.1 verifies as basic, the certificate returned")
    func basicAttestation() throws {
        let attestation = try TestAttestation.make()
        let result = try Self.verify(TestAuthenticator(.ed25519()).packedX5CRegistration(attestation))
        #expect(result.attestationType == "basic")
        #expect(result.attestationCertificates == [attestation.certificate])
        // The aaguid extension is optional (§8.2.1).
        #expect(try Self.verify(TestAuthenticator(.p256()).packedX5CRegistration(try TestAttestation.make(aaguid: nil))).attestationType == "basic")
    }

    @Test("the client data must be a webauthn.create for the expected challenge, from an allowed origin, not cross-origin")
    func clientDataRules() {
        let authenticator = TestAuthenticator(.p256())
        #expect(Self.code(authenticator.noneRegistration(clientDataJSON: TestAuthenticator.clientDataJSON(type: "webauthn.get"))) == .wrongType)
        #expect(Self.code(authenticator.noneRegistration(clientDataJSON: TestAuthenticator.clientDataJSON(type: "webauthn.create",
                                                                                                           challenge: Data(repeating: 1, count: 32)))) == .challengeMismatch)
        #expect(Self.code(authenticator.noneRegistration(clientDataJSON: TestAuthenticator.clientDataJSON(type: "webauthn.create",
                                                                                                           challenge: TestAuthenticator.challenge.dropLast()))) == .challengeMismatch)
        #expect(Self.code(authenticator.noneRegistration(clientDataJSON: TestAuthenticator.clientDataJSON(type: "webauthn.create",
                                                                                                           origin: "https://login.example.com.evil.example"))) == .originNotAllowed)
        #expect(Self.code(authenticator.noneRegistration(clientDataJSON: TestAuthenticator.clientDataJSON(type: "webauthn.create",
                                                                                                           origin: "http://login.example.com"))) == .originNotAllowed)
        let crossOrigin = Data(TestAuthenticator.clientDataJSON(type: "webauthn.create").dropLast()) + Data(#","crossOrigin":true}"#.utf8)
        #expect(Self.code(authenticator.noneRegistration(clientDataJSON: crossOrigin)) == .malformed, "crossOrigin named twice")
        let crossOriginOnly = Data(#"{"type":"webauthn.create","challenge":"\#(TestAuthenticator.challenge.base64URL)","origin":"\#(TestAuthenticator.origin)","crossOrigin":true}"#.utf8)
        #expect(Self.code(authenticator.noneRegistration(clientDataJSON: crossOriginOnly)) == .crossOrigin)
        let topOrigin = TestAuthenticator.clientDataJSON(type: "webauthn.create", extra: #","topOrigin":"https://embedder.example""#)
        #expect(Self.code(authenticator.noneRegistration(clientDataJSON: topOrigin)) == .crossOrigin)
        let unknownMember = TestAuthenticator.clientDataJSON(type: "webauthn.create", extra: #","other_keys_can_be_added_here":"do not compare clientDataJSON against a template. See https://goo.gl/yabPex""#)
        #expect((try? Self.verify(authenticator.noneRegistration(clientDataJSON: unknownMember))) != nil, "unknown members are ignored")
    }

    @Test("rpIdHash must be SHA-256 of the RP ID")
    func rpIDHash() {
        var authenticator = TestAuthenticator(.p256())
        authenticator.rpID = "example.com"
        #expect(Self.code(authenticator.noneRegistration()) == .rpIDMismatch)
        authenticator.rpID = "LOGIN.example.com"
        #expect(Self.code(authenticator.noneRegistration()) == .rpIDMismatch)
    }

    @Test("UP is required, UV when asked, and BS never without BE")
    func flags() {
        var authenticator = TestAuthenticator(.p256())
        authenticator.flags = Flag.uv
        #expect(Self.code(authenticator.noneRegistration()) == .userNotPresent)
        authenticator.flags = Flag.up
        #expect((try? Self.verify(authenticator.noneRegistration())) != nil)
        #expect(Self.code(authenticator.noneRegistration(), requireUserVerification: true) == .userNotVerified)
        authenticator.flags = Flag.up | Flag.uv | Flag.bs
        #expect(Self.code(authenticator.noneRegistration()) == .inconsistentBackupFlags)
        authenticator.flags = Flag.up | Flag.be
        #expect((try? Self.verify(authenticator.noneRegistration()))?.backupEligible == true)
    }

    @Test("a registration needs attested credential data")
    func attestedCredentialDataRequired() {
        let authenticator = TestAuthenticator(.p256())
        let object = TestAuthenticator.attestationObject(format: "none", statement: .map([]), authData: authenticator.authenticatorData(attested: false))
        #expect(Self.code((Self.create, object)) == .malformed)
    }

    @Test("the credential's algorithm must be supported and among those the relying party allows")
    func algorithms() {
        var authenticator = TestAuthenticator(.p256())
        let point = P384.Signing.PrivateKey().publicKey.x963Representation
        authenticator.coseKey = TestCBOR.map([(.int(1), .int(2)), (.int(3), .int(-35)), (.int(-1), .int(2)),
                                              (.int(-2), .bytes(point[1..<49])), (.int(-3), .bytes(point[49..<97]))]).encoded
        #expect(Self.code(authenticator.noneRegistration()) == .unsupportedAlgorithm)
        #expect(Self.code(TestAuthenticator(.p256()).noneRegistration(), allowedAlgorithms: [.rs256, .edDSA]) == .algorithmNotAllowed)
        #expect(Self.code(TestAuthenticator(.ed25519()).noneRegistration(), allowedAlgorithms: [.es256]) == .algorithmNotAllowed)
    }

    @Test("none attestation must have an empty attStmt map; packed a map")
    func statementShapes() {
        let authData = TestAuthenticator(.p256()).authenticatorData(attested: true)
        func code(_ format: String, _ statement: TestCBOR) -> WebAuthnError.Code? {
            Self.code((Self.create, TestAuthenticator.attestationObject(format: format, statement: statement, authData: authData)))
        }
        #expect(code("none", .map([(.text("alg"), .int(-7))])) == .badAttestation)
        #expect(code("none", .array([])) == .badAttestation)
        #expect(code("packed", .array([.int(-7)])) == .badAttestation)
        // An array statement is allowed by §6.5.4's template: a format using one is unsupported, not malformed.
        #expect(code("future-format", .array([])) == .unsupportedAttestationFormat)
    }

    @Test("formats other than none and packed are unsupported; fmt is matched case-sensitively")
    func otherFormats() {
        let authData = TestAuthenticator(.p256()).authenticatorData(attested: true)
        for format in ["fido-u2f", "tpm", "android-safetynet", "None", "PACKED", ""] {
            let object = TestAuthenticator.attestationObject(format: format, statement: .map([]), authData: authData)
            #expect(Self.code((Self.create, object)) == .unsupportedAttestationFormat, "\(format)")
        }
    }

    @Test("packed self attestation: alg must be the credential key's, the signature must verify")
    func packedSelf() {
        let authenticator = TestAuthenticator(.p256())
        #expect(Self.code(authenticator.packedSelfRegistration(alg: -257)) == .badAttestation)
        #expect(Self.code(authenticator.packedSelfRegistration(alg: -8)) == .badAttestation)
        #expect(Self.code(authenticator.packedSelfRegistration(alg: -36)) == .unsupportedAlgorithm)
        // Signed over another client data than the one sent.
        let (_, object) = authenticator.packedSelfRegistration(clientDataJSON: TestAuthenticator.clientDataJSON(type: "webauthn.create", extra: #","x":1"#))
        #expect(Self.code((Self.create, object)) == .badSignature)
        // Signed by another key than the credential's.
        var other = authenticator
        other.credential = TestCredential.p256()
        let (_, otherObject) = other.packedSelfRegistration()
        let (_, ownObject) = authenticator.noneRegistration()
        #expect(Self.code((Self.create, Self.replaceAuthData(in: otherObject, with: Self.authData(of: ownObject)))) == .badSignature)
    }

    @Test("a change to the signed authenticator data breaks the attestation signature")
    func tamperedAuthenticatorData() {
        let authenticator = TestAuthenticator(.ed25519())
        let (clientData, object) = authenticator.packedSelfRegistration()
        var authData = Self.authData(of: object)
        authData[40] ^= 0x01  // inside the AAGUID: still well-formed
        #expect(Self.code((clientData, Self.replaceAuthData(in: object, with: authData))) == .badSignature)
        var counter = Self.authData(of: object)
        counter[36] ^= 0x01
        #expect(Self.code((clientData, Self.replaceAuthData(in: object, with: counter))) == .badSignature)
    }

    @Test("packed statements with missing, mistyped or extra members are refused")
    func packedSyntax() throws {
        let authenticator = TestAuthenticator(.p256())
        let authData = authenticator.authenticatorData(attested: true)
        let signature = authenticator.credential.sign(authData + Data(SHA256.hash(data: Self.create)))
        let statements: [TestCBOR] = [
            .map([(.text("sig"), .bytes(signature))]),
            .map([(.text("alg"), .int(-7))]),
            .map([(.text("alg"), .text("ES256")), (.text("sig"), .bytes(signature))]),
            .map([(.text("alg"), .int(-7)), (.text("sig"), .text("sig"))]),
            .map([(.text("alg"), .int(-7)), (.text("sig"), .bytes(signature)), (.text("ecdaaKeyId"), .bytes(Data([1])))]),
            .map([(.text("alg"), .int(-7)), (.text("sig"), .bytes(signature)), (.text("x5c"), .array([]))]),
            .map([(.text("alg"), .int(-7)), (.text("sig"), .bytes(signature)), (.text("x5c"), .bytes(Data([0x30])))]),
            .map([(.text("alg"), .int(-7)), (.text("sig"), .bytes(signature)), (.text("x5c"), .array([.bytes(Data([0x30, 0x00]))]))]),
            .map([(.text("alg"), .int(-7)), (.text("sig"), .bytes(signature)), (.text("x5c"), .array([.text("MIIB")]))]),
        ]
        for statement in statements {
            let object = TestAuthenticator.attestationObject(format: "packed", statement: statement, authData: authData)
            #expect(Self.code((Self.create, object)) == .badAttestation, "\(statement)")
        }
        // The same signature in a well-formed statement verifies: the refusals above are for the syntax.
        let valid = TestAuthenticator.attestationObject(format: "packed", statement: .map([(.text("alg"), .int(-7)), (.text("sig"), .bytes(signature))]),
                                                        authData: authData)
        #expect(try Self.verify((Self.create, valid)).attestationType == "self")
    }

    @Test("x5c: the signature must verify with the attestation certificate's key")
    func x5cSignature() throws {
        let authenticator = TestAuthenticator(.p256())
        let attestation = try TestAttestation.make()
        let impostor = TestAttestation(key: P256.Signing.PrivateKey(), certificate: attestation.certificate)
        #expect(Self.code(authenticator.packedX5CRegistration(impostor)) == .badSignature)
        // An alg that the certificate's key cannot have made.
        let authData = authenticator.authenticatorData(attested: true)
        let signature = try attestation.key.signature(for: authData + Data(SHA256.hash(data: Self.create))).derRepresentation
        for alg: Int64 in [-8, -257] {
            let statement = TestCBOR.map([(.text("alg"), .int(alg)), (.text("sig"), .bytes(signature)), (.text("x5c"), .array([.bytes(attestation.certificate)]))])
            #expect(Self.code((Self.create, TestAuthenticator.attestationObject(format: "packed", statement: statement, authData: authData))) == .badSignature)
        }
    }

    /// One way for an attestation certificate to break §8.2.1.
    enum BadCertificate: String, CaseIterable, Sendable {
        case certificateAuthority = "a CA certificate (Basic Constraints CA true)"
        case wrongOrganizationalUnit = "OU other than Authenticator Attestation"
        case noCountry = "no C in the subject"
        case noBasicConstraints = "no Basic Constraints extension"
        case otherAAGUID = "an id-fido-gen-ce-aaguid for another AAGUID"
        case criticalAAGUID = "a critical id-fido-gen-ce-aaguid"

        func make() throws -> TestAttestation {
            switch self {
            case .certificateAuthority: try TestAttestation.make(isCA: true)
            case .wrongOrganizationalUnit: try TestAttestation.make(organizationalUnit: "Authenticator")
            case .noCountry: try TestAttestation.make(country: nil)
            case .noBasicConstraints: try TestAttestation.make(basicConstraints: false)
            case .otherAAGUID: try TestAttestation.make(aaguid: Data(repeating: 0xBB, count: 16))
            case .criticalAAGUID: try TestAttestation.make(aaguidCritical: true)
            }
        }
    }

    @Test("x5c: the attestation certificate must meet §8.2.1", arguments: BadCertificate.allCases)
    func certificateRequirements(_ rule: BadCertificate) throws {
        #expect(Self.code(TestAuthenticator(.p256()).packedX5CRegistration(try rule.make())) == .badAttestation, "\(rule.rawValue)")
    }

    @Test("the attestation object is one CBOR map with text fmt, map attStmt and byte authData")
    func attestationObjectSyntax() {
        let authData = TestAuthenticator(.p256()).authenticatorData(attested: true)
        let objects: [Data] = [
            TestCBOR.map([(.text("attStmt"), .map([])), (.text("authData"), .bytes(authData))]).encoded,
            TestCBOR.map([(.text("fmt"), .text("none")), (.text("authData"), .bytes(authData))]).encoded,
            TestCBOR.map([(.text("fmt"), .text("none")), (.text("attStmt"), .map([]))]).encoded,
            TestCBOR.map([(.text("fmt"), .bytes(Data("none".utf8))), (.text("attStmt"), .map([])), (.text("authData"), .bytes(authData))]).encoded,
            TestCBOR.map([(.text("fmt"), .text("none")), (.text("attStmt"), .text("{}")), (.text("authData"), .bytes(authData))]).encoded,
            TestCBOR.map([(.text("fmt"), .text("none")), (.text("attStmt"), .map([])), (.text("authData"), .text("x"))]).encoded,
            TestCBOR.array([.text("none"), .map([]), .bytes(authData)]).encoded,
            // fmt named twice: one reader could take "none", another "packed".
            TestCBOR.map([(.text("fmt"), .text("none")), (.text("fmt"), .text("packed")), (.text("attStmt"), .map([])), (.text("authData"), .bytes(authData))]).encoded,
            TestAuthenticator.attestationObject(format: "none", statement: .map([]), authData: authData) + Data([0]),
        ]
        for object in objects {
            #expect(Self.code((Self.create, object)) == .malformed)
        }
    }

    @Test("bytes after the authenticator data's parts are refused")
    func trailingAuthenticatorData() {
        var authenticator = TestAuthenticator(.p256())
        authenticator.trailing = Data([0xA0])
        #expect(Self.code(authenticator.noneRegistration()) == .malformed)
    }

    @Test("an attestation object cut at any byte is refused, never a crash", arguments: [TestCredential.p256(), .rsa])
    func truncation(_ credential: TestCredential) throws {
        var authenticator = TestAuthenticator(credential)
        authenticator.extensions = TestCBOR.map([(.text("credProtect"), .int(2))]).encoded
        let (clientData, object) = authenticator.packedX5CRegistration(try TestAttestation.make())
        #expect((try? Self.verify((clientData, object))) != nil)
        for length in 0..<object.count {
            #expect(throws: WebAuthnError.self, "cut at \(length)") { try Self.verify((clientData, object.prefix(length))) }
        }
    }

    @Test("every single-bit flip of a packed attestation object is refused")
    func bitFlips() throws {
        let (clientData, object) = TestAuthenticator(.p256()).packedSelfRegistration()
        #expect((try? Self.verify((clientData, object))) != nil)
        for index in object.indices {
            for bit in 0..<8 {
                var flipped = object
                flipped[index] ^= 1 << bit
                #expect(throws: WebAuthnError.self, "byte \(index) bit \(bit)") { try Self.verify((clientData, flipped)) }
            }
        }
    }

    // MARK: Helpers

    static func authData(of object: Data) -> Data {
        (try? CBORDecoder.decode(object))?["authData"]?.bytesValue ?? Data()
    }

    static func replaceAuthData(in object: Data, with authData: Data) -> Data {
        guard let value = try? CBORDecoder.decode(object), let format = value["fmt"]?.textValue,
              let statement = value["attStmt"] else { return Data() }
        return TestAuthenticator.attestationObject(format: format, statement: testCBOR(statement), authData: authData)
    }

    /// A decoded value as an encodable one (key order is lost, which CBOR maps do not carry).
    static func testCBOR(_ value: CBORValue) -> TestCBOR {
        switch value {
        case .unsigned(let number): .int(Int64(number))
        case .negative(let number): .int(-1 - Int64(number))
        case .bytes(let bytes): .bytes(bytes)
        case .text(let text): .text(text)
        case .array(let items): .array(items.map(testCBOR))
        case .map(let pairs): .map(pairs.map { (testCBOR($0.key), testCBOR($0.value)) })
        case .bool(let bool): .bool(bool)
        case .null: .null
        }
    }
}
