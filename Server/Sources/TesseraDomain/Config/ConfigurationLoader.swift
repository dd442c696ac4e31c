import Foundation
import TesseraCore

/// Resolves settings from, in order of precedence: command-line flags, `TESSERA_*`
/// environment variables, a JSON config file, and the embedded defaults.
///
/// Every setting has one name: `issuer` is `--issuer`, `TESSERA_ISSUER` and
/// `"issuer"` in the file (where `smtp_url` and `smtp-url` both work).
public struct ConfigurationLoader {
    var values: [String: String] = [:]

    /// `flags` holds only the flags given on the command line.
    public init(flags: [String: String], environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        var merged: [String: String] = [:]
        let configPath = flags["config"] ?? environment["TESSERA_CONFIG"]
        if let configPath { merged = try Self.readFile(configPath) }
        for setting in Setting.all {
            if let value = environment[setting.environmentVariable] { merged[setting.name] = value }
        }
        for (name, value) in flags { merged[name] = value }
        values = merged
    }

    static func readFile(_ path: String) throws -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else { throw ConfigurationError("cannot read config file \(path)") }
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: data) else {
            throw ConfigurationError("config file \(path) must be a JSON object")
        }
        var result: [String: String] = [:]
        for (key, value) in object {
            guard let setting = Setting.named(key), setting.name != "config" else {
                throw ConfigurationError("config file \(path): unknown setting '\(key)'")
            }
            let name = setting.name
            switch value {
            case .string(let string): result[name] = string
            case .bool(let flag): result[name] = flag ? "true" : "false"
            case .int(let number): result[name] = String(number)
            case .array(let values) where setting.kind == .list:
                guard values.allSatisfy({ $0.stringValue != nil }) else {
                    throw ConfigurationError("config file \(path): '\(key)' must be an array of strings")
                }
                result[name] = values.compactMap(\.stringValue).joined(separator: ",")
            case .array where setting.kind == .json:
                result[name] = String(decoding: try CanonicalJSON.encode(value), as: UTF8.self)
            default: throw ConfigurationError("config file \(path): '\(key)' must be a string, whole number or boolean")
            }
        }
        return result
    }

    public subscript(_ name: String) -> String? { values[name] }

    /// The server configuration these settings describe.
    public func configuration() throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        for setting in Setting.all {
            if let value = self[setting.name] { try setting.read(value, into: &configuration) }
        }
        if configuration.demo { configuration.dev = true }
        try configuration.validate()
        return configuration
    }
}
