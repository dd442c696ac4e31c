import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Remembers, on this device, the address a sign-in link was sent to — seed 004's advice:
/// when the user opens the link on the device that asked for it, the app completes the
/// sign-in without asking for the address again; on another device it must ask.
///
/// Give one to ``EmailLinkClient``: it saves the address when a link is sent and forgets it
/// after a sign-in with it. `UserDefaultsPendingEmailStore` on Apple platforms (what the seed
/// does by hand), ``FilePendingEmailStore`` on Linux, ``MemoryPendingEmailStore`` in tests.
public protocol PendingEmailStore: Sendable {
    /// The remembered address, or `nil`.
    func load() async throws -> String?
    /// Remembers `email` instead of any earlier one.
    func save(_ email: String) async throws
    /// Forgets the address. Removing nothing is not an error.
    func remove() async throws
}

/// The pending address in memory only.
public final class MemoryPendingEmailStore: PendingEmailStore {
    private let email: Locked<String?>

    /// A store holding `email` to begin with.
    public init(_ email: String? = nil) { self.email = Locked(email) }

    /// The address held.
    public func load() async throws -> String? { email.withLock { $0 } }
    /// Holds `email` instead.
    public func save(_ email: String) async throws { self.email.withLock { $0 = email } }
    /// Holds nothing.
    public func remove() async throws { email.withLock { $0 = nil } }
}

/// The pending address in a file readable only by its owner (0600, written atomically, its
/// directory created 0700), as ``FileTokenStore`` keeps tokens.
public struct FilePendingEmailStore: PendingEmailStore {
    /// The file.
    public let fileURL: URL

    /// A store writing `fileURL`.
    public init(fileURL: URL) { self.fileURL = fileURL }

    /// `pending-email` next to ``FileTokenStore/defaultFileURL``
    /// (`$XDG_CONFIG_HOME/tessera/pending-email` or `~/.config/tessera/pending-email`).
    public static var defaultFileURL: URL {
        FileTokenStore.defaultFileURL.deletingLastPathComponent().appendingPathComponent("pending-email")
    }

    /// The address in the file; `nil` when there is no file or it is empty.
    public func load() async throws -> String? {
        let data: Data
        do { data = try Data(contentsOf: fileURL) } catch {
            if !FileManager.default.fileExists(atPath: fileURL.path) { return nil }
            throw AuthError(.storage, "cannot read \(fileURL.path): \(error.localizedDescription)")
        }
        let email = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return email.isEmpty ? nil : email
    }

    /// Writes the address (and a newline) atomically with mode 0600.
    public func save(_ email: String) async throws {
        try FileTokenStore.createDirectory(fileURL.deletingLastPathComponent())
        try FileTokenStore.writeAtomically(Data((email + "\n").utf8), to: fileURL)
    }

    /// Deletes the file.
    public func remove() async throws {
        guard unlink(fileURL.path) == 0 || errno == ENOENT else {
            throw AuthError(.storage, "cannot remove \(fileURL.path): \(String(cString: strerror(errno)))")
        }
    }
}

#if canImport(Darwin)
/// The pending address in `UserDefaults`, as seed 004 keeps it (`UserDefaults.standard`,
/// key `Email` there). An address is not a secret, but it is personal: it lives in the app's
/// container and is removed after the sign-in.
public struct UserDefaultsPendingEmailStore: PendingEmailStore {
    /// The defaults suite; `nil` for `UserDefaults.standard`.
    public let suiteName: String?
    /// The key the address is kept under.
    public let key: String

    /// A store under `key` in the suite `suiteName` (the standard defaults when `nil`).
    public init(suiteName: String? = nil, key: String = "TesseraPendingEmail") {
        self.suiteName = suiteName
        self.key = key
    }

    private var defaults: UserDefaults {
        get throws {
            guard let suiteName else { return .standard }
            guard let defaults = UserDefaults(suiteName: suiteName) else {
                throw AuthError(.storage, "cannot open the user defaults suite '\(suiteName)'")
            }
            return defaults
        }
    }

    /// The address under ``key``.
    public func load() async throws -> String? { try defaults.string(forKey: key) }
    /// Sets ``key`` to `email`.
    public func save(_ email: String) async throws { try defaults.set(email, forKey: key) }
    /// Removes ``key``.
    public func remove() async throws { try defaults.removeObject(forKey: key) }
}
#endif
