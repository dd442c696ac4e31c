import Crypto
import Foundation

/// The relying party a ceremony is for: its RP ID (§4 "RP ID", e.g. `login.example.com`, which
/// credentials are scoped to for ever) and the origins whose pages may run its ceremonies
/// (e.g. `https://login.example.com`; §13.5.9 "Validating the origin of a credential").
public struct RelyingParty: Sendable, Equatable {
    public var id: String
    /// Compared exactly, as serialized origins (scheme, host, port when not the default).
    public var origins: Set<String>

    public init(id: String, origins: Set<String>) {
        self.id = id
        self.origins = origins
    }
}

/// A credential that registration accepted: what to store as the credential record (§7.1,
/// "Let credentialRecord be a new credential record").
public struct RegistrationResult: Sendable, Equatable {
    public let credentialID: Data
    /// Store ``CredentialPublicKey/coseBytes``; make the key again with ``CredentialPublicKey/init(cose:)``.
    public let publicKey: CredentialPublicKey
    /// The counter to compare the first assertion's with.
    public let signCount: UInt32
    /// The authenticator model's AAGUID, 16 bytes (all zero when it does not say).
    public let aaguid: Data
    /// The attestation statement format: `none` or `packed`.
    public let attestationFormat: String
    /// `none` (§8.7), `self` (packed without x5c) or `basic` (packed with x5c: the signature
    /// and the attestation certificate's fields are checked, its chain is not, see
    /// ``attestationCertificates``).
    public let attestationType: String
    /// `x5c` as sent, DER, the attestation certificate first; empty unless ``attestationType``
    /// is `basic`. Validate it against the trust anchors your policy accepts (for example the
    /// FIDO Metadata Service's entry for ``aaguid``) before believing it (§7.1 trust steps).
    public let attestationCertificates: [Data]
    public let userVerified: Bool
    /// BE: a synced passkey; fixed for the credential's life (§6.1).
    public let backupEligible: Bool
    /// BS: backed up at registration.
    public let backedUp: Bool
    /// The authenticator's extension outputs, if any; none is acted on.
    public let extensions: [CBORValue: CBORValue]?
}

/// How an assertion's signature counter compares with the stored one (§6.1.1, §7.2).
public enum SignCountCheck: Sendable, Equatable {
    /// The new counter is greater than the stored one: store it.
    case advanced
    /// Both are 0: the authenticator keeps no counter (synced passkeys report 0).
    case notUsed
    /// Not greater, and not both 0: a sign that the credential may have been cloned, or of a
    /// race or a faulty authenticator (§6.1.1). Whether to refuse or suspend is the caller's call.
    case wentBackwards

    /// The comparison of §7.2's sign-count step.
    public init(stored: UInt32, received: UInt32) {
        if stored == 0 && received == 0 {
            self = .notUsed
        } else if received > stored {
            self = .advanced
        } else {
            self = .wentBackwards
        }
    }
}

/// An assertion that verified (§7.2).
public struct AssertionResult: Sendable, Equatable {
    /// The new counter (store it when ``counter`` is `.advanced`).
    public let signCount: UInt32
    public let userVerified: Bool
    /// BE as the authenticator reports it now; §7.2 says to compare it with the stored value.
    public let backupEligible: Bool
    /// BS: update the stored backup state with it.
    public let backedUp: Bool
    public let counter: SignCountCheck
    /// The authenticator's extension outputs, if any; none is acted on.
    public let extensions: [CBORValue: CBORValue]?
}

/// The relying party's side of WebAuthn Level 3 (https://www.w3.org/TR/webauthn-3/): the
/// checks of §7.1 and §7.2 that need no storage. The caller keeps the challenge (random,
/// single use, §13.5.3), the credential records, and the decisions the specification leaves to
/// policy: trust in attestation certificates, what a counter that went backwards means,
/// whether BE may change.
///
/// Cross-origin iframes are not supported: client data with `crossOrigin: true` or a
/// `topOrigin` is refused. Extensions are parsed and returned, never acted on.
public enum WebAuthn {
    /// §7.1 Registering a New Credential, the steps after the browser answered:
    /// 1. client data: `type` is `webauthn.create`, `challenge` is `expectedChallenge`
    ///    (compared in constant time), `origin` is one of the relying party's, no
    ///    `crossOrigin: true`, no `topOrigin`;
    /// 2. the attestation object decodes (§6.5.4), its authenticator data parses (§6.1) and
    ///    has attested credential data (§6.5.1), with a credential ID of at most 1023 bytes;
    /// 3. `rpIdHash` is SHA-256 of the RP ID; UP is set; UV is set when
    ///    `requireUserVerification`; BS is not set without BE;
    /// 4. the credential key's algorithm is one of `allowedAlgorithms` (`pubKeyCredParams`);
    /// 5. the attestation statement verifies under its format: `none` (§8.7) or `packed`
    ///    (§8.2: self attestation, or x5c with §8.2.1's certificate checks and an
    ///    unverified chain); any other format is refused.
    ///
    /// Whether the credential ID is already registered (§7.1) is for the caller to check.
    public static func verifyRegistration(clientDataJSON: Data, attestationObject: Data, expectedChallenge: Data,
                                          relyingParty: RelyingParty, requireUserVerification: Bool,
                                          allowedAlgorithms: Set<COSEAlgorithm> = [.es256, .rs256, .edDSA]) throws(WebAuthnError) -> RegistrationResult {
        try checkClientData(clientDataJSON, type: "webauthn.create", expectedChallenge: expectedChallenge, relyingParty: relyingParty)
        let clientDataHash = Data(SHA256.hash(data: clientDataJSON))

        let object = try AttestationObject(bytes: attestationObject)
        let authenticatorData = object.authenticatorData
        try checkFlags(authenticatorData, relyingParty: relyingParty, requireUserVerification: requireUserVerification)
        guard let credential = authenticatorData.attestedCredential else {
            throw .malformed("authenticator data: a registration needs attested credential data, the AT flag is clear (§6.1)")
        }
        guard allowedAlgorithms.contains(credential.publicKey.algorithm) else {
            let offered = allowedAlgorithms.map(\.name).sorted().joined(separator: ", ")
            throw WebAuthnError(.algorithmNotAllowed, "the credential key is \(credential.publicKey.algorithm.name); the relying party allows \(offered)")
        }

        let attestation: VerifiedAttestation
        switch object.format {
        case "none":
            attestation = try AttestationFormats.verifyNone(object.statement)
        case "packed":
            attestation = try AttestationFormats.verifyPacked(object.statement, credential: credential,
                                                              signedData: authenticatorData.bytes + clientDataHash)
        default:
            throw WebAuthnError(.unsupportedAttestationFormat, "attestation format \"\(object.format)\" is not supported; none and packed are (ask for attestation \"none\" to get none)")
        }

        return RegistrationResult(credentialID: credential.credentialID, publicKey: credential.publicKey,
                                  signCount: authenticatorData.signCount, aaguid: credential.aaguid,
                                  attestationFormat: object.format, attestationType: attestation.type,
                                  attestationCertificates: attestation.trustPath, userVerified: authenticatorData.userVerified,
                                  backupEligible: authenticatorData.backupEligible, backedUp: authenticatorData.backedUp,
                                  extensions: authenticatorData.extensions)
    }

    /// §7.2 Verifying an Authentication Assertion, the steps after the caller found the
    /// credential record (by credential ID, and user handle for discoverable credentials):
    /// 1. client data: `type` is `webauthn.get`, the challenge, the origin, no cross-origin use;
    /// 2. the authenticator data parses (§6.1) and carries no attested credential data (§6.1:
    ///    AT "MUST NOT be set" for assertions);
    /// 3. `rpIdHash`, UP, UV when `requireUserVerification`, no BS without BE;
    /// 4. `signature` verifies with `credentialPublicKey` over authenticatorData ‖
    ///    SHA-256(clientDataJSON);
    /// 5. the counter is compared with `storedSignCount` (§6.1.1): reported in
    ///    ``AssertionResult/counter``, never thrown.
    public static func verifyAssertion(clientDataJSON: Data, authenticatorData: Data, signature: Data, expectedChallenge: Data,
                                       relyingParty: RelyingParty, credentialPublicKey: CredentialPublicKey, storedSignCount: UInt32,
                                       requireUserVerification: Bool) throws(WebAuthnError) -> AssertionResult {
        try checkClientData(clientDataJSON, type: "webauthn.get", expectedChallenge: expectedChallenge, relyingParty: relyingParty)
        let parsed = try AuthenticatorData(bytes: authenticatorData)
        guard parsed.attestedCredential == nil else {
            throw .malformed("authenticator data: an assertion must not carry attested credential data, the AT flag is set (§6.1)")
        }
        try checkFlags(parsed, relyingParty: relyingParty, requireUserVerification: requireUserVerification)
        let clientDataHash = Data(SHA256.hash(data: clientDataJSON))
        guard credentialPublicKey.isValidSignature(signature, for: parsed.bytes + clientDataHash) else {
            throw WebAuthnError(.badSignature, "the assertion signature does not verify with the stored \(credentialPublicKey.algorithm.name) credential key (§7.2)")
        }
        return AssertionResult(signCount: parsed.signCount, userVerified: parsed.userVerified, backupEligible: parsed.backupEligible,
                               backedUp: parsed.backedUp, counter: SignCountCheck(stored: storedSignCount, received: parsed.signCount),
                               extensions: parsed.extensions)
    }

    /// The client-data steps of §7.1 and §7.2: type, challenge, origin, crossOrigin, topOrigin.
    static func checkClientData(_ json: Data, type: String, expectedChallenge: Data, relyingParty: RelyingParty) throws(WebAuthnError) {
        let clientData = try ClientData(json: json)
        guard clientData.type == type else {
            throw WebAuthnError(.wrongType, "the client data's type is \"\(clientData.type)\", this ceremony needs \"\(type)\"")
        }
        guard Bytes.constantTimeEqual([UInt8](clientData.challenge), [UInt8](expectedChallenge)) else {
            throw WebAuthnError(.challengeMismatch, "the client data's challenge is not the one issued for this ceremony")
        }
        guard relyingParty.origins.contains(clientData.origin) else {
            throw WebAuthnError(.originNotAllowed, "\(clientData.origin) is not an origin of the relying party \(relyingParty.id)")
        }
        if clientData.crossOrigin == true {
            throw WebAuthnError(.crossOrigin, "the ceremony ran in a cross-origin iframe (crossOrigin: true), which is not accepted")
        }
        if let topOrigin = clientData.topOrigin {
            throw WebAuthnError(.crossOrigin, "the ceremony ran in an iframe under \(topOrigin) (topOrigin), which is not accepted")
        }
    }

    /// The authenticator-data steps shared by §7.1 and §7.2: rpIdHash, UP, UV, BE/BS.
    static func checkFlags(_ authenticatorData: AuthenticatorData, relyingParty: RelyingParty, requireUserVerification: Bool) throws(WebAuthnError) {
        let expectedHash = Data(SHA256.hash(data: Data(relyingParty.id.utf8)))
        guard authenticatorData.rpIDHash == expectedHash else {
            throw WebAuthnError(.rpIDMismatch, "the authenticator data's rpIdHash is not SHA-256 of \"\(relyingParty.id)\": the credential belongs to another RP ID")
        }
        guard authenticatorData.userPresent else {
            throw WebAuthnError(.userNotPresent, "the UP flag is clear: the authenticator did not test for user presence")
        }
        if requireUserVerification && !authenticatorData.userVerified {
            throw WebAuthnError(.userNotVerified, "the UV flag is clear, and this relying party requires user verification")
        }
        if authenticatorData.backedUp && !authenticatorData.backupEligible {
            throw WebAuthnError(.inconsistentBackupFlags, "the BS (backed up) flag is set without BE (backup eligible)")
        }
    }
}
