import Foundation
import Logging
import TesseraCore

/// A server-wide secret kept in `settings` sealed under the master key, as the signing keys
/// are: a database copied without its master key (a leaked backup) doesn't hold it. Made at the
/// first start, by whichever node writes first; bound to its setting's name, so one setting's
/// sealed value can't be moved into another's.
public struct SealedSetting: Sendable {
    public let name: String

    public init(_ name: String) {
        self.name = name
    }

    /// The secret's value: read and opened, or made, sealed and stored the first time. A value
    /// kept in clear (written before the setting was sealed) is sealed in place and used as it is.
    public func value(store: any KeyStore, masterKey: MasterKey, logger: Logger?,
                      make: @Sendable () -> String = { SecureRandom.token(bytes: 32) }) async throws -> String {
        let context = "setting:" + name
        let box = masterKey.box
        let proposed = try box.seal(Data(make().utf8), context: context)
        let stored = try await store.setting(name) { proposed }
        guard SecretBox.isSealed(stored) else {
            if try await store.replaceSetting(name, old: stored, new: try box.seal(Data(stored.utf8), context: context)) {
                logger?.notice("sealed a setting stored in clear", metadata: ["setting": "\(name)", "master_key": "\(masterKey.source)"])
            }
            return stored
        }
        guard let opened = try? box.open(stored, context: context), let value = String(data: opened, encoding: .utf8) else {
            throw ConfigurationError("the setting \(name) does not open with the master key from \(masterKey.source): "
                                     + "set TESSERA_MASTER_KEY (or master-key-file) to the key it was sealed with")
        }
        return value
    }
}
