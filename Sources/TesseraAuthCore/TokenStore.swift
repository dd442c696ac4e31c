import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a session's tokens are kept between launches.
///
/// Refresh tokens are long-lived credentials: keep them where only the user (and only this
/// app) can read them — `KeychainTokenStore` on Apple platforms, ``FileTokenStore`` (mode 0600)
/// on Linux. ``AuthState`` writes after every sign-in and refresh and removes on sign-out.
public protocol TokenStore: Sendable {
    /// The stored tokens, or `nil` when there are none.
    func load() async throws -> TokenSet?
    /// Replaces the stored tokens.
    func save(_ tokens: TokenSet) async throws
    /// Forgets the tokens. Removing nothing is not an error.
    func remove() async throws
}

/// Tokens in memory only: for tests, previews, and apps that must not persist a session.
public final class MemoryTokenStore: TokenStore {
    private let tokens: Locked<TokenSet?>

    /// A store holding `tokens` to begin with.
    public init(_ tokens: TokenSet? = nil) { self.tokens = Locked(tokens) }

    /// The tokens held.
    public func load() async throws -> TokenSet? { tokens.withLock { $0 } }
    /// Holds `tokens` instead.
    public func save(_ tokens: TokenSet) async throws { self.tokens.withLock { $0 = tokens } }
    /// Holds nothing.
    public func remove() async throws { tokens.withLock { $0 = nil } }
}

/// Tokens in a JSON file readable only by its owner: the file is created with mode 0600 and
/// its directory, when this store creates it, with 0700.
///
/// A write goes to a temporary file (0600 from the start, never widened) in the same directory,
/// is flushed, and then renamed over the old file, so a crash leaves either the old tokens or
/// the new ones, and no other user can read them at any moment.
public struct FileTokenStore: TokenStore {
    /// The file.
    public let fileURL: URL

    /// A store writing `fileURL`.
    public init(fileURL: URL) { self.fileURL = fileURL }

    /// `$XDG_CONFIG_HOME/tessera/tokens.json`, or `~/.config/tessera/tokens.json`.
    public static var defaultFileURL: URL {
        let environment = ProcessInfo.processInfo.environment
        let base: URL
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            base = URL(fileURLWithPath: NSHomeDirectory(), isDirectory: true).appendingPathComponent(".config", isDirectory: true)
        }
        return base.appendingPathComponent("tessera", isDirectory: true).appendingPathComponent("tokens.json")
    }

    /// Reads the file; `nil` when there is none.
    public func load() async throws -> TokenSet? {
        let data: Data
        do { data = try Data(contentsOf: fileURL) } catch {
            if !FileManager.default.fileExists(atPath: fileURL.path) { return nil }
            throw AuthError(.storage, "cannot read \(fileURL.path): \(error.localizedDescription)")
        }
        do { return try JSONDecoder().decode(TokenSet.self, from: data) } catch {
            throw AuthError(.storage, "\(fileURL.path) does not hold tokens: \(error)")
        }
    }

    /// Writes the file atomically with mode 0600, creating its directory with 0700.
    public func save(_ tokens: TokenSet) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let data: Data
        do { data = try encoder.encode(tokens) } catch { throw AuthError(.storage, "cannot encode tokens: \(error)") }
        try Self.createDirectory(fileURL.deletingLastPathComponent())
        try Self.writeAtomically(data, to: fileURL)
    }

    /// Deletes the file.
    public func remove() async throws {
        guard unlink(fileURL.path) == 0 || errno == ENOENT else {
            throw AuthError(.storage, "cannot remove \(fileURL.path): \(String(cString: strerror(errno)))")
        }
    }

    /// Creates `directory` (and missing parents) if needed; the directory itself gets 0700.
    static func createDirectory(_ directory: URL) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw AuthError(.storage, "\(directory.path) is not a directory") }
            return
        }
        do {
            try FileManager.default.createDirectory(at: directory.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw AuthError(.storage, "cannot create \(directory.deletingLastPathComponent().path): \(error.localizedDescription)")
        }
        guard mkdir(directory.path, 0o700) == 0 || errno == EEXIST else {
            throw AuthError(.storage, "cannot create \(directory.path): \(String(cString: strerror(errno)))")
        }
    }

    static func writeAtomically(_ data: Data, to url: URL) throws {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp").path
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw AuthError(.storage, "cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var failure: String?
        data.withUnsafeBytes { raw in
            var written = 0
            while written < raw.count {
                let count = write(fd, raw.baseAddress! + written, raw.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = String(cString: strerror(errno))
                    return
                }
                written += count
            }
        }
        if failure == nil && fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        _ = close(fd)
        if failure == nil && rename(temporary, url.path) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            _ = unlink(temporary)
            throw AuthError(.storage, "cannot write \(url.path): \(failure)")
        }
    }
}

#if canImport(Security)
import Security

/// Tokens in the Keychain as one generic-password item (Apple platforms).
///
/// The item is readable after the first unlock following a restart and never leaves the
/// device (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`), so background refreshes work
/// and backups don't carry the refresh token to another device.
public struct KeychainTokenStore: TokenStore {
    /// `kSecAttrService`: typically the app's bundle identifier.
    public let service: String
    /// `kSecAttrAccount`: the session's name, e.g. the issuer and client id.
    public let account: String
    /// `kSecAttrAccessGroup`: a shared keychain group for silent sign-in across the developer's apps.
    public let accessGroup: String?

    /// A store for the item of `service` and `account`, in `accessGroup` when given.
    public init(service: String, account: String = "tessera", accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }

    private var query: [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    /// Reads the item; `nil` when there is none.
    public func load() async throws -> TokenSet? {
        var search = query
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(search as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else {
            throw AuthError(.storage, "the keychain answered \(status) reading the tokens")
        }
        do { return try JSONDecoder().decode(TokenSet.self, from: data) } catch {
            throw AuthError(.storage, "the keychain item does not hold tokens: \(error)")
        }
    }

    /// Updates the item, or adds it.
    public func save(_ tokens: TokenSet) async throws {
        let data: Data
        do { data = try JSONEncoder().encode(tokens) } catch { throw AuthError(.storage, "cannot encode tokens: \(error)") }
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            var item = query
            item.merge(attributes) { _, new in new }
            status = SecItemAdd(item as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw AuthError(.storage, "the keychain answered \(status) saving the tokens") }
    }

    /// Deletes the item.
    public func remove() async throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw AuthError(.storage, "the keychain answered \(status) removing the tokens")
        }
    }
}
#endif
