import Foundation

/// The client data a browser collected and the authenticator's signature covers through its
/// hash (WebAuthn §5.8.1 `CollectedClientData`): which ceremony, for which challenge, on
/// which page.
///
/// Parsing checks the members' types only; whether their values are the expected ones is
/// for ``WebAuthn/verifyRegistration(clientDataJSON:attestationObject:expectedChallenge:relyingParty:requireUserVerification:allowedAlgorithms:)``
/// and ``WebAuthn/verifyAssertion(clientDataJSON:authenticatorData:signature:expectedChallenge:relyingParty:credentialPublicKey:storedSignCount:requireUserVerification:)``.
/// Members WebAuthn may add later are ignored (§5.8.1: "tolerant of unknown keys"); a member
/// named twice is refused.
public struct ClientData: Sendable, Equatable {
    /// `webauthn.create` or `webauthn.get` (§5.8.1 `type`), as sent.
    public let type: String
    /// The challenge the relying party gave, decoded from its base64url form.
    public let challenge: Data
    /// The page's origin (RFC 6454 serialization), e.g. `https://login.example.com`.
    public let origin: String
    /// True when the ceremony ran in an iframe not same-origin with its ancestors; nil when absent.
    public let crossOrigin: Bool?
    /// The top-level page's origin, present only with `crossOrigin: true`.
    public let topOrigin: String?

    /// Parses clientDataJSON (§5.8.1, §7.1 steps "JSONtext" and "C"): a UTF-8 JSON object
    /// with the string members `type`, `challenge` (unpadded base64url) and `origin`, and
    /// optionally the boolean `crossOrigin` and the string `topOrigin`.
    public init(json: Data) throws(WebAuthnError) {
        guard case .object(let members) = try JSONReader.parse(json) else {
            throw .malformed("client data: not a JSON object")
        }
        func string(_ name: String) throws(WebAuthnError) -> String? {
            switch members[name] {
            case nil: return nil
            case .string(let value)?: return value
            default: throw .malformed("client data: \(name) is not a string")
            }
        }
        guard let type = try string("type") else { throw .malformed("client data: no type") }
        guard let challengeText = try string("challenge") else { throw .malformed("client data: no challenge") }
        guard let origin = try string("origin") else { throw .malformed("client data: no origin") }
        guard let challenge = Base64URL.decode(challengeText) else {
            throw .malformed("client data: the challenge is not unpadded base64url")
        }
        switch members["crossOrigin"] {
        case nil: crossOrigin = nil
        case .bool(let value)?: crossOrigin = value
        default: throw .malformed("client data: crossOrigin is not a boolean")
        }
        self.type = type
        self.challenge = challenge
        self.origin = origin
        self.topOrigin = try string("topOrigin")
    }
}
