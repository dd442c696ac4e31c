import Foundation
import TesseraCore

/// A passkey: a WebAuthn credential a person registered to sign in with (WebAuthn Level 3
/// §7.1 step 27, "store the credential record").
public struct Passkey: Sendable, Equatable {
    /// The credential id, base64url.
    public var id: String
    public var userID: String
    /// The credential public key exactly as the authenticator gave it (a COSE key).
    public var publicKey: Data
    /// Its COSE algorithm (-7 ES256, -8 EdDSA, -257 RS256).
    public var algorithm: Int
    public var signCount: Int64
    /// How the browser can reach the authenticator (`internal`, `hybrid`, `usb`…), as it said.
    public var transports: [String]
    /// The credential may be synced to the owner's other devices (BE), and is (BS).
    public var backupEligible: Bool
    public var backedUp: Bool
    /// The authenticator model (16 bytes as a UUID string; all zeros when it doesn't say).
    public var aaguid: String
    /// `none` or `packed`.
    public var attestationFormat: String
    /// The owner's name for it ("iPhone", "YubiKey").
    public var name: String
    public var createdAt: Int64
    public var lastUsedAt: Int64?
    /// Set when the authenticator's counter went backwards (a cloned key is the likely cause):
    /// the passkey no longer signs anyone in; the owner can remove it and add another.
    public var suspendedAt: Int64?

    public var isSuspended: Bool { suspendedAt != nil }

    package init(id: String, userID: String, publicKey: Data, algorithm: Int, signCount: Int64, transports: [String],
                 backupEligible: Bool, backedUp: Bool, aaguid: String, attestationFormat: String, name: String, createdAt: Int64,
                 lastUsedAt: Int64? = nil, suspendedAt: Int64? = nil) {
        self.id = id
        self.userID = userID
        self.publicKey = publicKey
        self.algorithm = algorithm
        self.signCount = signCount
        self.transports = transports
        self.backupEligible = backupEligible
        self.backedUp = backedUp
        self.aaguid = aaguid
        self.attestationFormat = attestationFormat
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.suspendedAt = suspendedAt
    }
}

/// A challenge the provider gave a WebAuthn ceremony (§13.4.3): random, single use, short-lived,
/// kept only as its hash.
public struct PasskeyChallenge: Sendable, Equatable {
    public enum Purpose: String, Sendable {
        /// Registering a passkey to `userID`.
        case registration
        /// Signing in with any passkey (discoverable credentials).
        case signIn = "sign-in"
    }

    public var hash: String
    public var purpose: Purpose
    /// The account a registration is for; nil for a sign-in.
    public var userID: String?
    /// What the ceremony belongs to (the login page's interaction), if anything: a challenge
    /// handed to one page is refused on another.
    public var binding: String?
    public var expiresAt: Int64

    package init(hash: String, purpose: Purpose, userID: String?, binding: String?, expiresAt: Int64) {
        self.hash = hash
        self.purpose = purpose
        self.userID = userID
        self.binding = binding
        self.expiresAt = expiresAt
    }
}

/// Passkeys and their ceremonies' challenges.
public protocol PasskeyStore: Sendable {
    /// Stores a new passkey; `StoreError.duplicate` when its credential id is registered already.
    func insertPasskey(_ passkey: Passkey) async throws
    func passkey(id: String) async throws -> Passkey?
    /// The user's passkeys, oldest first.
    func passkeys(userID: String) async throws -> [Passkey]
    /// Records a sign-in with the passkey: its new counter and backup state, when. False when
    /// the counter in the store is no longer `expectedSignCount` (another sign-in came first).
    func recordPasskeyUse(id: String, expectedSignCount: Int64, signCount: Int64, backedUp: Bool, now: Int64) async throws -> Bool
    func suspendPasskey(id: String, now: Int64) async throws
    /// False when the user has no passkey of that id.
    func renamePasskey(id: String, userID: String, name: String) async throws -> Bool
    /// False when the user has no passkey of that id.
    func deletePasskey(id: String, userID: String) async throws -> Bool

    func insertPasskeyChallenge(_ challenge: PasskeyChallenge) async throws
    /// Takes the challenge of this hash out of the store (single use): nil when there is none
    /// or it expired.
    func takePasskeyChallenge(hash: String, now: Int64) async throws -> PasskeyChallenge?
}
