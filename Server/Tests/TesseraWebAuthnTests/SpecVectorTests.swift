import Crypto
import Foundation
import Testing
import TesseraWebAuthn

/// The ceremonies of WebAuthn Level 3 §16 "Test Vectors", verified as a relying party would:
/// RP ID `example.org`, origin `https://example.org`, the challenges the vectors give.
@Suite("WebAuthn L3 §16 test vectors")
struct SpecVectorTests {
    static let relyingParty = RelyingParty(id: "example.org", origins: ["https://example.org"])

    static func register(_ vector: SpecVector, relyingParty: RelyingParty = relyingParty,
                         challenge: Data? = nil, requireUserVerification: Bool = false) throws(WebAuthnError) -> RegistrationResult {
        try WebAuthn.verifyRegistration(clientDataJSON: Data(hex: vector.registrationClientDataJSON),
                                        attestationObject: Data(hex: vector.attestationObject),
                                        expectedChallenge: challenge ?? Data(hex: vector.registrationChallenge),
                                        relyingParty: relyingParty, requireUserVerification: requireUserVerification)
    }

    static func authenticate(_ vector: SpecVector, key: CredentialPublicKey, relyingParty: RelyingParty = relyingParty,
                             challenge: Data? = nil, signature: Data? = nil, authenticatorData: Data? = nil,
                             storedSignCount: UInt32 = 0) throws(WebAuthnError) -> AssertionResult {
        try WebAuthn.verifyAssertion(clientDataJSON: Data(hex: vector.authenticationClientDataJSON),
                                     authenticatorData: authenticatorData ?? Data(hex: vector.authenticatorData),
                                     signature: signature ?? Data(hex: vector.signature),
                                     expectedChallenge: challenge ?? Data(hex: vector.authenticationChallenge),
                                     relyingParty: relyingParty, credentialPublicKey: key, storedSignCount: storedSignCount,
                                     requireUserVerification: false)
    }

    /// The credential key inside a vector's attestation object, read without the ceremony's checks.
    static func credentialKey(_ vector: SpecVector) throws -> CredentialPublicKey {
        let object = try CBORDecoder.decode(Data(hex: vector.attestationObject))
        let authData = try #require(object["authData"]?.bytesValue)
        return try #require(try AuthenticatorData(bytes: authData).attestedCredential?.publicKey)
    }

    static let accepted: [(SpecVector, format: String, type: String, algorithm: COSEAlgorithm)] = [
        (SpecVectors.noneES256, "none", "none", .es256),
        (SpecVectors.packedSelfES256, "packed", "self", .es256),
        (SpecVectors.noneES256LongCredentialID, "none", "none", .es256),
        (SpecVectors.packedES256, "packed", "basic", .es256),
        (SpecVectors.packedRS256, "packed", "basic", .rs256),
        (SpecVectors.packedEd25519, "packed", "basic", .edDSA),
    ]

    @Test("registrations of §16.2, .3, .6, .7, .10, .11 verify, then their assertions verify with the registered key",
          arguments: accepted)
    func registrationThenAssertion(_ vector: SpecVector, format: String, type: String, algorithm: COSEAlgorithm) throws {
        let registration = try Self.register(vector)
        #expect(registration.attestationFormat == format)
        #expect(registration.attestationType == type)
        #expect(registration.publicKey.algorithm == algorithm)
        #expect(registration.credentialID == Data(hex: vector.credentialID))
        #expect(registration.aaguid == Data(hex: vector.aaguid))
        #expect(registration.attestationCertificates.count == (type == "basic" ? 1 : 0))

        // The relying party stores the COSE bytes and makes the key again from them.
        let stored = try CredentialPublicKey(cose: registration.publicKey.coseBytes)
        let assertion = try Self.authenticate(vector, key: stored, storedSignCount: registration.signCount)
        #expect(assertion.counter == .notUsed, "the vectors' authenticators keep no counter")
    }

    @Test("an assertion of §16.2 fails with a wrong challenge, origin, RP ID, signature or authenticator data")
    func tamperedAssertion() throws {
        let vector = SpecVectors.noneES256
        let key = try Self.register(vector).publicKey
        #expect(errorCode { try Self.authenticate(vector, key: key, challenge: Data(hex: vector.registrationChallenge)) } == .challengeMismatch)
        #expect(errorCode { try Self.authenticate(vector, key: key, relyingParty: RelyingParty(id: "example.org", origins: ["https://example.com"])) } == .originNotAllowed)
        #expect(errorCode { try Self.authenticate(vector, key: key, relyingParty: RelyingParty(id: "example.com", origins: ["https://example.org"])) } == .rpIDMismatch)
        var signature = Data(hex: vector.signature)
        signature[signature.count - 1] ^= 0x01
        #expect(errorCode { try Self.authenticate(vector, key: key, signature: signature) } == .badSignature)
        var authData = Data(hex: vector.authenticatorData)
        authData[authData.count - 1] ^= 0x01  // the counter: still well-formed, no longer signed
        #expect(errorCode { try Self.authenticate(vector, key: key, authenticatorData: authData) } == .badSignature)
        let otherKey = try Self.register(SpecVectors.packedSelfES256).publicKey
        #expect(errorCode { try Self.authenticate(vector, key: otherKey) } == .badSignature)
    }

    @Test("a registration of §16.7 fails with the challenge of its assertion")
    func registrationChallenge() throws {
        let vector = SpecVectors.packedES256
        #expect(errorCode { try Self.register(vector, challenge: Data(hex: vector.authenticationChallenge)) } == .challengeMismatch)
    }

    @Test("a registration's client data is refused for an assertion, and the reverse")
    func ceremonyTypes() throws {
        let vector = SpecVectors.noneES256
        let key = try Self.register(vector).publicKey
        #expect(errorCode {
            try WebAuthn.verifyAssertion(clientDataJSON: Data(hex: vector.registrationClientDataJSON), authenticatorData: Data(hex: vector.authenticatorData),
                                         signature: Data(hex: vector.signature), expectedChallenge: Data(hex: vector.registrationChallenge),
                                         relyingParty: Self.relyingParty, credentialPublicKey: key, storedSignCount: 0, requireUserVerification: false)
        } == .wrongType)
        #expect(errorCode {
            try WebAuthn.verifyRegistration(clientDataJSON: Data(hex: vector.authenticationClientDataJSON), attestationObject: Data(hex: vector.attestationObject),
                                            expectedChallenge: Data(hex: vector.authenticationChallenge), relyingParty: Self.relyingParty,
                                            requireUserVerification: false)
        } == .wrongType)
    }

    @Test("§16.4 (crossOrigin: true) and §16.5 (topOrigin) are refused in both ceremonies",
          arguments: [SpecVectors.noneES256CrossOrigin, SpecVectors.noneES256TopOrigin])
    func crossOriginVectors(_ vector: SpecVector) throws {
        #expect(errorCode { try Self.register(vector) } == .crossOrigin)
        #expect(errorCode { try Self.authenticate(vector, key: try Self.credentialKey(vector)) } == .crossOrigin)
    }

    @Test("§16.8 ES384, §16.9 ES512 and §16.12 Ed448 credentials are refused as unsupported algorithms",
          arguments: [SpecVectors.packedES384, SpecVectors.packedES512, SpecVectors.packedEd448])
    func unsupportedAlgorithms(_ vector: SpecVector) throws {
        #expect(errorCode { try Self.register(vector) } == .unsupportedAlgorithm)
    }

    @Test("§16.13 tpm, §16.14 android-key, §16.15 apple and §16.16 fido-u2f are unsupported formats, their assertions still verify",
          arguments: [(SpecVectors.tpmES256, "tpm"), (SpecVectors.androidKeyES256, "android-key"), (SpecVectors.appleES256, "apple"),
                      (SpecVectors.fidoU2FES256, "fido-u2f")])
    func unsupportedFormats(_ vector: SpecVector, format: String) throws {
        #expect(throws: WebAuthnError(.unsupportedAttestationFormat,
                                      "attestation format \"\(format)\" is not supported; none and packed are (ask for attestation \"none\" to get none)")) {
            try Self.register(vector)
        }
        let assertion = try Self.authenticate(vector, key: try Self.credentialKey(vector))
        #expect(assertion.counter == .notUsed)
    }

    @Test("§16.6's 1023-byte credential ID is the longest accepted")
    func longestCredentialID() throws {
        let registration = try Self.register(SpecVectors.noneES256LongCredentialID)
        #expect(registration.credentialID.count == AuthenticatorData.maximumCredentialIDLength)
    }

    @Test("a vector whose UV flag is clear fails when user verification is required")
    func userVerificationRequired() throws {
        // §16.11's registration flags are 0x41: UP and AT, no UV.
        let vector = SpecVectors.packedEd25519
        #expect(try Self.register(vector).userVerified == false)
        #expect(errorCode { try Self.register(vector, requireUserVerification: true) } == .userNotVerified)
    }
}

/// The code of the `WebAuthnError` that `body` throws, or nil (recording an issue) when it
/// throws nothing or another error.
func errorCode<T>(_ body: () throws -> T, sourceLocation: SourceLocation = #_sourceLocation) -> WebAuthnError.Code? {
    do {
        _ = try body()
        Issue.record("expected a WebAuthnError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as WebAuthnError {
        return error.code
    } catch {
        Issue.record("expected a WebAuthnError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
