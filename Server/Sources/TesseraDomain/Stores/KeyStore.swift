import Foundation
import TesseraCore

/// Where a signing key is in its life: published first as `next`, then signing as
/// `current`, then `retired` (still published for a grace period so tokens verify).
public enum KeyState: String, Sendable {
    case next, current, retired
}

/// A signing key as stored: the private key is sealed when a master key is configured.
public struct StoredSigningKey: Sendable, Equatable {
    public var kid: String
    public var algorithm: JWSAlgorithm
    public var state: KeyState
    /// Base64 of the private key, or `enc:v1:` + base64 of an AES-GCM box.
    public var privateKey: String
    public var createdAt: Int64
    public var activatedAt: Int64?
    public var retiredAt: Int64?

    package init(kid: String, algorithm: JWSAlgorithm, state: KeyState, privateKey: String, createdAt: Int64,
                 activatedAt: Int64? = nil, retiredAt: Int64? = nil) {
        self.kid = kid
        self.algorithm = algorithm
        self.state = state
        self.privateKey = privateKey
        self.createdAt = createdAt
        self.activatedAt = activatedAt
        self.retiredAt = retiredAt
    }
}

/// Signing keys and server-wide settings.
public protocol KeyStore: Sendable {
    func signingKeys() async throws -> [StoredSigningKey]
    /// Adds keys so that one `current` and one `next` key exist; no-op when they do.
    func ensureKeys(now: Int64, generate: @Sendable () throws -> StoredSigningKey) async throws
    /// Retires the current key, promotes `next`, adds a new `next`. Returns the new current kid.
    func rotateKeys(now: Int64, generate: @Sendable () throws -> StoredSigningKey) async throws -> String
    /// Replaces a key's stored material (`old`, as read) with `new`, the same key sealed;
    /// false when another node changed it first.
    func replacePrivateKey(kid: String, old: String, new: String) async throws -> Bool
    /// Reads a setting, creating it with `make()` the first time.
    func setting(_ name: String, orCreate make: @Sendable () -> String) async throws -> String
    /// Replaces a setting's value (`old`, as read) with `new`; false when another node changed it first.
    func replaceSetting(_ name: String, old: String, new: String) async throws -> Bool
}
