import Foundation
import TesseraCore

/// Resolves settings from, in order of precedence: command-line flags, `TESSERA_*`
/// environment variables, a JSON config file, and the embedded defaults.
///
/// Every setting has one name: `issuer` is `--issuer`, `TESSERA_ISSUER` and
/// `"issuer"` in the file (where `smtp_url` and `smtp-url` both work).
public struct ConfigurationLoader {
    /// Settings, by their canonical names.
    public static let names = [
        "host", "port", "issuer", "database", "config", "smtp-url", "mail-from", "dev", "demo", "enumeration-protection",
        "signing-algorithm", "master-key", "master-key-file", "key-grace-period", "access-token-lifetime", "id-token-lifetime",
        "refresh-token-lifetime", "authorization-code-lifetime", "session-lifetime", "reauthenticate-after",
        "login-failures-per-account", "login-failures-per-address", "login-failures-per-account-total",
        "hashing-per-address", "hashing-per-client", "flows-per-address", "flows-per-client", "password-hashing-queue",
        "otp-length", "otp-lifetime", "otp-max-attempts", "otp-resend-interval", "otp-per-email-per-hour", "otp-per-address-per-hour",
        "continuation-token-lifetime", "signup-password", "signup-attributes", "email-link-lifetime", "upstream-providers",
        "idle-timeout", "request-head-timeout", "max-header-bytes", "max-header-count", "trusted-proxy",
    ]

    var values: [String: String] = [:]

    /// `flags` holds only the flags given on the command line.
    public init(flags: [String: String], environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        var merged: [String: String] = [:]
        let configPath = flags["config"] ?? environment["TESSERA_CONFIG"]
        if let configPath { merged = try Self.readFile(configPath) }
        for name in Self.names {
            if let value = environment[Self.environmentName(name)] { merged[name] = value }
        }
        for (name, value) in flags { merged[name] = value }
        values = merged
    }

    public static func environmentName(_ name: String) -> String {
        "TESSERA_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    static func readFile(_ path: String) throws -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else { throw ConfigurationError("cannot read config file \(path)") }
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: data) else {
            throw ConfigurationError("config file \(path) must be a JSON object")
        }
        var result: [String: String] = [:]
        for (key, value) in object {
            let name = key.replacingOccurrences(of: "_", with: "-")
            guard names.contains(name), name != "config" else { throw ConfigurationError("config file \(path): unknown setting '\(key)'") }
            switch value {
            case .string(let string): result[name] = string
            case .bool(let flag): result[name] = flag ? "true" : "false"
            case .int(let number): result[name] = String(number)
            case .array(let values) where name == "trusted-proxy":
                guard values.allSatisfy({ $0.stringValue != nil }) else {
                    throw ConfigurationError("config file \(path): '\(key)' must be an array of strings")
                }
                result[name] = values.compactMap(\.stringValue).joined(separator: ",")
            case .array where name == "signup-attributes" || name == "upstream-providers":
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
        if let host = self["host"] { configuration.host = host }
        if let port = self["port"] { configuration.port = try Self.integer(port, "port") }
        configuration.issuer = self["issuer"]
        if let database = self["database"] { configuration.database = try DatabaseLocation(parsing: database) }
        configuration.smtpURL = self["smtp-url"]
        configuration.mailFrom = self["mail-from"]
        if let dev = self["dev"] { configuration.dev = try Self.boolean(dev, "dev") }
        if let demo = self["demo"] { configuration.demo = try Self.boolean(demo, "demo") }
        if configuration.demo { configuration.dev = true }
        if let value = self["enumeration-protection"] { configuration.enumerationProtection = try Self.boolean(value, "enumeration-protection") }
        if let alg = self["signing-algorithm"] {
            guard let algorithm = JWSAlgorithm(rawValue: alg) else {
                throw ConfigurationError("signing-algorithm must be RS256, ES256 or EdDSA, not '\(alg)'")
            }
            configuration.signingAlgorithm = algorithm
        }
        configuration.masterKey = self["master-key"]
        configuration.masterKeyFile = self["master-key-file"]
        if let value = self["key-grace-period"] { configuration.keyGracePeriod = try Self.duration(value, "key-grace-period") }
        if let value = self["access-token-lifetime"] { configuration.accessTokenLifetime = try Self.duration(value, "access-token-lifetime") }
        if let value = self["id-token-lifetime"] { configuration.idTokenLifetime = try Self.duration(value, "id-token-lifetime") }
        if let value = self["refresh-token-lifetime"] { configuration.refreshTokenLifetime = try Self.duration(value, "refresh-token-lifetime") }
        if let value = self["authorization-code-lifetime"] {
            configuration.authorizationCodeLifetime = try Self.duration(value, "authorization-code-lifetime")
        }
        if let value = self["login-failures-per-account"] {
            configuration.loginLimits.perAccountAndAddress = try Self.integer(value, "login-failures-per-account")
        }
        if let value = self["login-failures-per-address"] {
            configuration.loginLimits.perAddress = try Self.integer(value, "login-failures-per-address")
        }
        if let value = self["login-failures-per-account-total"] {
            configuration.loginLimits.perAccount = try Self.integer(value, "login-failures-per-account-total")
        }
        try readWorkLimits(into: &configuration.workLimits)
        if let value = self["reauthenticate-after"] {
            configuration.reauthenticateAfter = try Self.duration(value, "reauthenticate-after")
        }
        if let value = self["session-lifetime"] { configuration.sessionLifetime = try Self.duration(value, "session-lifetime") }
        try readNativeAuth(into: &configuration.nativeAuth)
        if let value = self["idle-timeout"] { configuration.connectionLimits.idleTimeout = try Self.duration(value, "idle-timeout") }
        if let value = self["request-head-timeout"] {
            configuration.connectionLimits.requestHeadTimeout = try Self.duration(value, "request-head-timeout")
        }
        if let value = self["max-header-bytes"] { configuration.connectionLimits.maxHeaderBytes = try Self.integer(value, "max-header-bytes") }
        if let value = self["trusted-proxy"] { configuration.trustedProxies = try TrustedProxies(parsing: value) }
        if let value = self["max-header-count"] { configuration.connectionLimits.maxHeaderCount = try Self.integer(value, "max-header-count") }
        if let value = self["upstream-providers"] { configuration.upstreamProviders = try UpstreamProviderSettings.parse(value) }
        if let value = self["email-link-lifetime"] { configuration.emailLinkLifetime = try Self.duration(value, "email-link-lifetime") }
        try configuration.validate()
        return configuration
    }

    func readWorkLimits(into limits: inout WorkLimitSettings) throws {
        let settings: [(String, WritableKeyPath<WorkLimitSettings, Int>)] = [
            ("hashing-per-address", \.hashingPerAddress), ("hashing-per-client", \.hashingPerClient),
            ("flows-per-address", \.flowsPerAddress), ("flows-per-client", \.flowsPerClient),
            ("password-hashing-queue", \.hashingQueue),
        ]
        for (name, path) in settings {
            guard let value = self[name] else { continue }
            let number = try Self.integer(value, name)
            guard number >= 1 else { throw ConfigurationError("\(name) must be at least 1, not \(number)") }
            limits[keyPath: path] = number
        }
    }

    func readNativeAuth(into settings: inout NativeAuthSettings) throws {
        if let value = self["otp-length"] { settings.codeLength = try Self.integer(value, "otp-length") }
        if let value = self["otp-lifetime"] { settings.codeLifetime = try Self.duration(value, "otp-lifetime") }
        if let value = self["otp-max-attempts"] { settings.maxCodeAttempts = try Self.integer(value, "otp-max-attempts") }
        if let value = self["otp-resend-interval"] { settings.resendInterval = try Self.duration(value, "otp-resend-interval") }
        if let value = self["otp-per-email-per-hour"] { settings.codesPerEmailPerHour = try Self.integer(value, "otp-per-email-per-hour") }
        if let value = self["otp-per-address-per-hour"] {
            settings.codesPerAddressPerHour = try Self.integer(value, "otp-per-address-per-hour")
        }
        if let value = self["continuation-token-lifetime"] {
            settings.continuationTokenLifetime = try Self.duration(value, "continuation-token-lifetime")
        }
        if let value = self["signup-password"] {
            switch value.lowercased() {
            case "required": settings.signUpPasswordRequired = true
            case "optional": settings.signUpPasswordRequired = false
            default: throw ConfigurationError("signup-password must be required or optional, not '\(value)'")
            }
        }
        if let value = self["signup-attributes"] { settings.signUpAttributes = try SignUpAttributes(json: value) }
    }

    static func integer(_ value: String, _ name: String) throws -> Int {
        guard let number = Int(value) else { throw ConfigurationError("\(name) must be a whole number, not '\(value)'") }
        return number
    }

    /// `on`/`off`, `true`/`false`, `yes`/`no`, `1`/`0`.
    static func boolean(_ value: String, _ name: String) throws -> Bool {
        switch value.lowercased() {
        case "on", "true", "yes", "1": return true
        case "off", "false", "no", "0": return false
        default: throw ConfigurationError("\(name) must be on or off, not '\(value)'")
        }
    }

    /// Seconds, or a number with a unit: `90s`, `15m`, `12h`, `30d`.
    public static func duration(_ value: String, _ name: String) throws -> Int64 {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        if let last = value.last, let unit = units[last], let number = Int64(value.dropLast()), number > 0 { return number * unit }
        if let number = Int64(value), number > 0 { return number }
        throw ConfigurationError("\(name) must be a positive duration such as 900, 15m, 12h or 30d, not '\(value)'")
    }
}
