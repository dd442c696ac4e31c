import Foundation
import Logging
import TesseraCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The key that seals secrets at rest (signing keys, upstream refresh tokens): the
/// `master-key` setting (`TESSERA_MASTER_KEY`) when there is one, else a key file beside
/// the database, generated on first start with mode 0600. An in-memory database, which
/// dies with the process, gets a key that does too.
public struct MasterKey: Sendable {
    public let box: SecretBox
    /// Where the key came from, for messages: "TESSERA_MASTER_KEY", the file's path, or "a key in memory".
    public let source: String

    package init(box: SecretBox, source: String) {
        self.box = box
        self.source = source
    }

    /// The key file for a database when the `master-key-file` setting doesn't name one:
    /// `tessera-data/tessera.sqlite` keeps its key in `tessera-data/tessera.master-key`.
    public static func defaultFile(for database: DatabaseLocation) -> String? {
        guard case .sqliteFile(let path) = database else { return nil }
        return URL(fileURLWithPath: path).deletingPathExtension().path + ".master-key"
    }

    /// Finds, reads or creates the key `configuration` asks for.
    public static func load(_ configuration: ServerConfiguration, logger: Logger) throws -> MasterKey {
        if let value = configuration.masterKey {
            return MasterKey(box: try SecretBox(masterKey: value), source: "TESSERA_MASTER_KEY")
        }
        if configuration.database.isShared, configuration.masterKeyFile == nil {
            // A key made up here would seal the signing keys so that no other node, and no later
            // start of this one, could open them.
            throw ConfigurationError("a PostgreSQL database is shared by every node, and so is the key that seals its secrets: "
                                     + "set TESSERA_MASTER_KEY to the same key on every node (openssl rand -base64 32), "
                                     + "or --master-key-file to a file holding it")
        }
        guard let path = configuration.masterKeyFile ?? defaultFile(for: configuration.database) else {
            return MasterKey(box: try SecretBox(masterKey: Data(SecureRandom.bytes(32)).base64EncodedString()), source: "a key in memory")
        }
        if let text = try read(path) {
            do {
                return MasterKey(box: try SecretBox(masterKey: text), source: path)
            } catch {
                throw ConfigurationError("the master key file \(path) does not hold a key (32 random bytes as base64 or 64 hex digits)")
            }
        }
        let value = Data(SecureRandom.bytes(32)).base64EncodedString()
        guard try create(path, contents: value + "\n") else {
            // Another process created it first (two commands starting together): use theirs.
            guard let text = try read(path) else { throw ConfigurationError("the master key file \(path) vanished while it was created") }
            return MasterKey(box: try SecretBox(masterKey: text), source: path)
        }
        logger.notice("generated a master key: it seals the signing keys and upstream tokens in the database; back it up with the database",
                      metadata: ["file": "\(path)"])
        return MasterKey(box: try SecretBox(masterKey: value), source: path)
    }

    /// The file's text, or nil when there is no file. Refuses a file other users may read.
    static func read(_ path: String) throws -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw ConfigurationError("the master key file \(path) can't be read: \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw ConfigurationError("the master key file \(path) is not a regular file") }
        guard info.st_mode & 0o077 == 0 else {
            throw ConfigurationError("the master key file \(path) may be read by other users (mode \(String(info.st_mode & 0o777, radix: 8))): "
                                     + "run chmod 600 \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("the master key file \(path) can't be read by this user")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Creates the file with mode 0600 and writes `contents`; false when it exists already.
    static func create(_ path: String, contents: String) throws -> Bool {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { return false }
            throw ConfigurationError("the master key file \(path) can't be created: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let bytes = Array(contents.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else {
            unlink(path)
            throw ConfigurationError("the master key file \(path) can't be written: \(String(cString: strerror(errno)))")
        }
        return true
    }
}
