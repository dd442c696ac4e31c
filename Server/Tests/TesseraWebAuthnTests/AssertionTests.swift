import Crypto
import Foundation
import Testing
import TesseraWebAuthn

/// §7.2 with the test authenticator: each test breaks one rule of otherwise valid input.
@Suite("Assertion (§7.2)")
struct AssertionTests {
    typealias Flag = TestAuthenticator.Flag

    static func verify(_ response: (Data, Data, Data), key: CredentialPublicKey, storedSignCount: UInt32 = 0,
                       challenge: Data = TestAuthenticator.challenge, relyingParty: RelyingParty = TestAuthenticator.relyingParty,
                       requireUserVerification: Bool = false) throws(WebAuthnError) -> AssertionResult {
        try WebAuthn.verifyAssertion(clientDataJSON: response.0, authenticatorData: response.1, signature: response.2,
                                     expectedChallenge: challenge, relyingParty: relyingParty, credentialPublicKey: key,
                                     storedSignCount: storedSignCount, requireUserVerification: requireUserVerification)
    }

    static func code(_ authenticator: TestAuthenticator, _ response: (Data, Data, Data)? = nil, requireUserVerification: Bool = false) -> WebAuthnError.Code? {
        errorCode { try verify(response ?? authenticator.assertion(), key: authenticator.storedKey, requireUserVerification: requireUserVerification) }
    }

    @Test("an assertion verifies with the registered key, for each algorithm", arguments: [TestCredential.p256(), .ed25519(), .rsa])
    func accepted(_ credential: TestCredential) throws {
        var authenticator = TestAuthenticator(credential)
        authenticator.flags = Flag.up | Flag.uv | Flag.be
        authenticator.signCount = 42
        let registered = try RegistrationTests.verify(authenticator.noneRegistration())
        authenticator.signCount = 43
        let result = try Self.verify(authenticator.assertion(), key: registered.publicKey, storedSignCount: registered.signCount,
                                     requireUserVerification: true)
        #expect(result.signCount == 43)
        #expect(result.counter == .advanced)
        #expect(result.userVerified && result.backupEligible && !result.backedUp)
        #expect(result.extensions == nil)
    }

    @Test("the client data must be a webauthn.get for the expected challenge, from an allowed origin, not cross-origin")
    func clientDataRules() {
        let authenticator = TestAuthenticator(.p256())
        func code(_ clientData: Data) -> WebAuthnError.Code? { Self.code(authenticator, authenticator.assertion(clientDataJSON: clientData)) }
        #expect(code(TestAuthenticator.clientDataJSON(type: "webauthn.create")) == .wrongType)
        #expect(code(TestAuthenticator.clientDataJSON(type: "payment.get")) == .wrongType)
        #expect(code(TestAuthenticator.clientDataJSON(type: "webauthn.get", challenge: Data(count: 32))) == .challengeMismatch)
        #expect(code(TestAuthenticator.clientDataJSON(type: "webauthn.get", origin: "https://evil.example")) == .originNotAllowed)
        #expect(code(TestAuthenticator.clientDataJSON(type: "webauthn.get", origin: "https://login.example.com:443")) == .originNotAllowed)
        let crossOrigin = Data(#"{"type":"webauthn.get","challenge":"\#(TestAuthenticator.challenge.base64URL)","origin":"\#(TestAuthenticator.origin)","crossOrigin":true}"#.utf8)
        #expect(code(crossOrigin) == .crossOrigin)
        #expect(code(TestAuthenticator.clientDataJSON(type: "webauthn.get", extra: #","topOrigin":"https://embedder.example""#)) == .crossOrigin)
        let noCrossOrigin = Data(#"{"type":"webauthn.get","challenge":"\#(TestAuthenticator.challenge.base64URL)","origin":"\#(TestAuthenticator.origin)"}"#.utf8)
        #expect((try? Self.verify(authenticator.assertion(clientDataJSON: noCrossOrigin), key: authenticator.storedKey)) != nil,
                "crossOrigin may be absent (Level 1 clients)")
    }

    @Test("rpIdHash, UP, UV when asked, no BS without BE")
    func authenticatorDataRules() {
        var authenticator = TestAuthenticator(.ed25519())
        authenticator.rpID = "example.com"
        #expect(Self.code(authenticator) == .rpIDMismatch)
        authenticator.rpID = TestAuthenticator.rpID
        authenticator.flags = Flag.uv
        #expect(Self.code(authenticator) == .userNotPresent)
        authenticator.flags = Flag.up
        #expect(Self.code(authenticator, requireUserVerification: true) == .userNotVerified)
        authenticator.flags = Flag.up | Flag.uv | Flag.bs
        #expect(Self.code(authenticator) == .inconsistentBackupFlags)
    }

    @Test("an assertion's authenticator data must not carry attested credential data")
    func noAttestedCredentialData() {
        let authenticator = TestAuthenticator(.p256())
        let clientData = TestAuthenticator.clientDataJSON(type: "webauthn.get")
        let authData = authenticator.authenticatorData(attested: true)
        let signature = authenticator.credential.sign(authData + Data(SHA256.hash(data: clientData)))
        #expect(Self.code(authenticator, (clientData, authData, signature)) == .malformed)
    }

    @Test("the signature must be the credential key's, over this authenticator data and this client data")
    func signature() {
        let authenticator = TestAuthenticator(.p256())
        let (clientData, authData, signature) = authenticator.assertion()
        var tampered = signature
        tampered[tampered.count - 3] ^= 0x10
        #expect(Self.code(authenticator, (clientData, authData, tampered)) == .badSignature)
        #expect(Self.code(authenticator, (clientData, authData, Data())) == .badSignature)
        var flags = authData
        flags[32] |= Flag.be  // claims backup eligibility after signing
        #expect(Self.code(authenticator, (clientData, flags, signature)) == .badSignature)
        var counter = authData
        counter[36] = 9
        #expect(Self.code(authenticator, (clientData, counter, signature)) == .badSignature)
        let otherClientData = TestAuthenticator.clientDataJSON(type: "webauthn.get", extra: #","extra":"x""#)
        #expect(Self.code(authenticator, (otherClientData, authData, signature)) == .badSignature)
        var other = authenticator
        other.credential = TestCredential.p256()
        #expect(Self.code(authenticator, other.assertion()) == .badSignature)
        #expect(Self.code(authenticator, TestAuthenticator(.ed25519()).assertion()) == .badSignature)
    }

    @Test("extension outputs are parsed and returned, and covered by the signature")
    func extensions() throws {
        var authenticator = TestAuthenticator(.p256())
        authenticator.extensions = TestCBOR.map([(.text("devicePubKey"), .bytes(Data([1, 2, 3])))]).encoded
        let result = try Self.verify(authenticator.assertion(), key: authenticator.storedKey)
        #expect(result.extensions?[.text("devicePubKey")] == .bytes(Data([1, 2, 3])))
        let (clientData, authData, signature) = authenticator.assertion()
        var changed = authData
        changed[changed.count - 1] ^= 0x01
        #expect(Self.code(authenticator, (clientData, changed, signature)) == .badSignature)
    }

    @Test("bytes after the authenticator data's parts are refused, even when signed")
    func trailingBytes() {
        var authenticator = TestAuthenticator(.p256())
        authenticator.trailing = Data([0x00])
        #expect(Self.code(authenticator) == .malformed)
    }

    @Test("authenticator data or a signature cut at any byte is refused, never a crash")
    func truncation() {
        var authenticator = TestAuthenticator(.rsa)
        authenticator.extensions = TestCBOR.map([(.text("credProtect"), .int(2))]).encoded
        let (clientData, authData, signature) = authenticator.assertion()
        let key = authenticator.storedKey
        #expect((try? Self.verify((clientData, authData, signature), key: key)) != nil)
        for length in 0..<authData.count {
            #expect(throws: WebAuthnError.self) { try Self.verify((clientData, authData.prefix(length), signature), key: key) }
        }
        for length in 0..<signature.count {
            #expect(throws: WebAuthnError.self) { try Self.verify((clientData, authData, signature.prefix(length)), key: key) }
        }
        for length in 0..<clientData.count {
            #expect(throws: WebAuthnError.self) { try Self.verify((clientData.prefix(length), authData, signature), key: key) }
        }
    }

    @Test("sign count (§6.1.1): advanced when greater, notUsed when both 0, wentBackwards otherwise; never thrown",
          arguments: [(UInt32(0), UInt32(0), SignCountCheck.notUsed), (0, 1, .advanced), (5, 6, .advanced), (5, 5, .wentBackwards),
                      (5, 4, .wentBackwards), (5, 0, .wentBackwards), (UInt32.max - 1, UInt32.max, .advanced), (UInt32.max, 0, .wentBackwards)])
    func signCount(stored: UInt32, received: UInt32, expected: SignCountCheck) throws {
        var authenticator = TestAuthenticator(.p256())
        authenticator.signCount = received
        let result = try Self.verify(authenticator.assertion(), key: authenticator.storedKey, storedSignCount: stored)
        #expect(result.counter == expected)
        #expect(result.signCount == received)
        #expect(SignCountCheck(stored: stored, received: received) == expected)
    }
}
