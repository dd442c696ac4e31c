import Foundation

/// The authenticator data (WebAuthn §6.1): what the authenticator binds into every signature
/// it makes, namely the RP ID it acted for, what it checked of the user, its signature counter, and, at
/// registration, the new credential.
///
/// Layout: `rpIdHash` (32) ‖ `flags` (1) ‖ `signCount` (4, big-endian) ‖ attested credential
/// data (when AT) ‖ extensions (a CBOR map, when ED). Parsing refuses anything left over after
/// the parts the flags announce: the structure describes its own length (§6.1, note).
public struct AuthenticatorData: Sendable, Equatable {
    /// The flags byte (§6.1). RFU bits are kept as sent.
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Bit 0, UP: the authenticator tested that a user was present.
        public static let userPresent = Flags(rawValue: 0x01)
        /// Bit 2, UV: the authenticator verified the user (PIN, biometrics).
        public static let userVerified = Flags(rawValue: 0x04)
        /// Bit 3, BE: the credential may be backed up (a multi-device, synced passkey); fixed at registration.
        public static let backupEligible = Flags(rawValue: 0x08)
        /// Bit 4, BS: the credential is backed up now.
        public static let backedUp = Flags(rawValue: 0x10)
        /// Bit 6, AT: attested credential data follows the counter.
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        /// Bit 7, ED: an extensions map ends the structure.
        public static let extensionData = Flags(rawValue: 0x80)
    }

    /// The attested credential data (§6.5.1): the new credential, present at registration.
    public struct AttestedCredential: Sendable, Equatable {
        /// The authenticator model's AAGUID, 16 bytes (all zero when it does not say).
        public let aaguid: Data
        /// The credential ID, at most 1023 bytes (§6.5.1).
        public let credentialID: Data
        /// The credential public key, with its COSE bytes as read.
        public let publicKey: CredentialPublicKey
    }

    /// The longest credential ID accepted (§6.5.1 "Value MUST be ≤ 1023"; §7.1).
    public static let maximumCredentialIDLength = 1023

    /// The bytes parsed, exactly: the signatures cover them.
    public let bytes: Data
    /// SHA-256 of the RP ID the credential is scoped to.
    public let rpIDHash: Data
    public let flags: Flags
    /// The signature counter (§6.1.1); 0 from authenticators that keep none.
    public let signCount: UInt32
    /// Present exactly when the AT flag is set.
    public let attestedCredential: AttestedCredential?
    /// The extension outputs map, present exactly when the ED flag is set. Parsed so that its
    /// end is known; no extension is acted on (§7.1, §7.2: "MAY ignore any or all extension outputs").
    public let extensions: [CBORValue: CBORValue]?

    public var userPresent: Bool { flags.contains(.userPresent) }
    public var userVerified: Bool { flags.contains(.userVerified) }
    public var backupEligible: Bool { flags.contains(.backupEligible) }
    public var backedUp: Bool { flags.contains(.backedUp) }

    /// Parses authenticator data (§6.1, §6.5.1).
    public init(bytes data: Data) throws(WebAuthnError) {
        let input = [UInt8](data)
        guard input.count >= 37 else {
            throw .malformed("authenticator data: \(input.count) bytes, at least 37 are needed (§6.1)")
        }
        rpIDHash = Data(input[0..<32])
        flags = Flags(rawValue: input[32])
        signCount = UInt32(Bytes.bigEndian(input, at: 33, count: 4))
        var offset = 37

        if flags.contains(.attestedCredentialData) {
            guard input.count - offset >= 18 else {
                throw .malformed("authenticator data: the AT flag is set but the attested credential data is cut short")
            }
            let aaguid = Data(input[offset..<(offset + 16)])
            let idLength = Int(Bytes.bigEndian(input, at: offset + 16, count: 2))
            offset += 18
            guard idLength <= Self.maximumCredentialIDLength else {
                throw .malformed("authenticator data: a credential ID of \(idLength) bytes; at most 1023 are allowed (§6.5.1)")
            }
            guard input.count - offset >= idLength else {
                throw .malformed("authenticator data: the credential ID claims \(idLength) bytes, only \(input.count - offset) remain")
            }
            let credentialID = Data(input[offset..<(offset + idLength)])
            offset += idLength
            let (keyValue, keyEnd) = try Self.readItem(input, at: offset, "credential public key")
            let publicKey = try CredentialPublicKey(parsed: keyValue, bytes: Data(input[offset..<keyEnd]))
            offset = keyEnd
            attestedCredential = AttestedCredential(aaguid: aaguid, credentialID: credentialID, publicKey: publicKey)
        } else {
            attestedCredential = nil
        }

        if flags.contains(.extensionData) {
            let (value, end) = try Self.readItem(input, at: offset, "extensions")
            guard let map = value.mapValue else {
                throw .malformed("authenticator data: the extensions are not a CBOR map")
            }
            offset = end
            extensions = map
        } else {
            extensions = nil
        }

        guard offset == input.count else {
            throw .malformed("authenticator data: \(input.count - offset) bytes left over after the parts the flags announce")
        }
        bytes = Data(input)
    }

    /// The CBOR item at `offset` and the offset after it; a CBOR error names the `part` it was in.
    private static func readItem(_ input: [UInt8], at offset: Int, _ part: String) throws(WebAuthnError) -> (CBORValue, end: Int) {
        var reader = CBORReader(input, from: offset)
        do {
            return (try reader.readItem(), reader.offset)
        } catch {
            throw .malformed("authenticator data: \(part): \(error.detail)")
        }
    }
}
