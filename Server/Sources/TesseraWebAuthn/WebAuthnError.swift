/// Why a registration or an assertion was refused, or why bytes from a client did not parse.
///
/// Match on ``code``; new codes may be added, so keep a `default` branch. ``detail`` names
/// the specific thing (the field that is malformed, the origin that is not allowed, the
/// algorithm number), for logs and for the developer wiring a client: it may repeat what the
/// client sent, so show it to the user only through your own wording.
///
/// ```swift
/// do {
///     let result = try WebAuthn.verifyAssertion(...)
/// } catch let error where error.code == .badSignature {
///     // not made with the stored credential: refuse the sign-in
/// }
/// ```
public struct WebAuthnError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. A struct over a private enum so that cases can be added
    /// without breaking anyone's `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case malformed, wrongType, challengeMismatch, originNotAllowed, crossOrigin, rpIDMismatch, userNotPresent,
                 userNotVerified, inconsistentBackupFlags, unsupportedAlgorithm, algorithmNotAllowed, badPublicKey,
                 unsupportedAttestationFormat, badAttestation, badSignature
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Bytes that do not have the structure the specification gives them: CBOR (RFC 8949),
        /// JSON, authenticator data (§6.1), attested credential data (§6.5.1), the attestation
        /// object (§6.5.4) or base64url. ``WebAuthnError/detail`` says which and where.
        public static let malformed = Code(.malformed)
        /// The client data's `type` is not `webauthn.create` (registration, §7.1) or
        /// `webauthn.get` (assertion, §7.2): a response of one ceremony replayed to the other.
        public static let wrongType = Code(.wrongType)
        /// The client data's `challenge` is not the one the server issued for this ceremony
        /// (§7.1, §7.2, §13.5.3): a replay or a response to another session's options.
        public static let challengeMismatch = Code(.challengeMismatch)
        /// The client data's `origin` is not one of the relying party's origins (§7.1, §7.2,
        /// §13.5.9): a phishing page relaying the ceremony, or a missing entry in the configuration.
        public static let originNotAllowed = Code(.originNotAllowed)
        /// The ceremony ran in a cross-origin iframe (`crossOrigin: true` or a `topOrigin` in
        /// the client data, §5.8.1), which this relying party does not expect.
        public static let crossOrigin = Code(.crossOrigin)
        /// The authenticator data's `rpIdHash` is not SHA-256 of the relying party's ID (§6.1):
        /// the credential is scoped to another RP ID.
        public static let rpIDMismatch = Code(.rpIDMismatch)
        /// The UP flag is clear (§6.1): the authenticator did not test that a user was present.
        public static let userNotPresent = Code(.userNotPresent)
        /// The UV flag is clear although the relying party required user verification (§6.1, §7.1, §7.2).
        public static let userNotVerified = Code(.userNotVerified)
        /// The BS (backed up) flag is set without BE (backup eligible), which §6.1 rules out.
        public static let inconsistentBackupFlags = Code(.inconsistentBackupFlags)
        /// A COSE algorithm (or curve) this library does not implement: it verifies ES256,
        /// RS256 and EdDSA over Ed25519 (RFC 9053 §2, RFC 8230 §2).
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// The credential's algorithm is implemented but not among those the relying party
        /// offered in `pubKeyCredParams` (§7.1).
        public static let algorithmNotAllowed = Code(.algorithmNotAllowed)
        /// A COSE_Key that does not describe a usable public key of its algorithm (RFC 9052 §7,
        /// RFC 9053 §7, RFC 8230 §4, WebAuthn §6.5.1): wrong key type, length or curve, a point
        /// off the curve, an RSA modulus under 2048 bits, a parameter it must not have.
        public static let badPublicKey = Code(.badPublicKey)
        /// An attestation statement format other than `none` (§8.7) and `packed` (§8.2).
        public static let unsupportedAttestationFormat = Code(.unsupportedAttestationFormat)
        /// The attestation statement breaks its format's rules (§8.2, §8.2.1, §8.7).
        public static let badAttestation = Code(.badAttestation)
        /// A signature that does not verify: the assertion's (§7.2) or the attestation's (§8.2).
        public static let badSignature = Code(.badSignature)

        /// The code's name, e.g. `challengeMismatch`.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// The specific thing that failed, e.g. `authenticator data: 5 bytes after the extensions`
    /// or `https://evil.example`.
    public let detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `code: detail`, e.g. `originNotAllowed: https://evil.example is not an origin of the relying party`.
    public var description: String { "\(code): \(detail)" }
}

extension WebAuthnError {
    static func malformed(_ what: String) -> WebAuthnError { WebAuthnError(.malformed, what) }
    static func badPublicKey(_ why: String) -> WebAuthnError { WebAuthnError(.badPublicKey, why) }
    static func badAttestation(_ why: String) -> WebAuthnError { WebAuthnError(.badAttestation, why) }
    static func unsupportedAlgorithm(_ algorithm: Int64, _ context: String = "") -> WebAuthnError {
        let suffix = context.isEmpty ? "" : " (\(context))"
        return WebAuthnError(.unsupportedAlgorithm, "COSE algorithm \(algorithm)\(suffix) is not supported; ES256 (-7), RS256 (-257) and EdDSA (-8, Ed25519) are")
    }
}
