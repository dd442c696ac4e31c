import Foundation

/// One setting of `tessera serve` and the admin commands, declared once: its name (which
/// is also its config-file key), its flag and environment variable, how its text is read
/// into ``ServerConfiguration``, its default as shown, and its line in the docs. The
/// loader, the command line, `--help` and docs/configuration.md all come from ``all``.
public struct Setting: Sendable {
    /// How a value is written.
    public enum Kind: Sendable, Equatable {
        /// Free text (a URL, an address, a path).
        case text
        /// A whole number.
        case integer
        /// Seconds, or a number with a unit: `90s`, `15m`, `12h`, `30d`.
        case duration
        /// `on`/`off` (`true`/`false`, `yes`/`no`, `1`/`0`), given as `--name on`.
        case boolean
        /// A flag without a value on the command line (`--dev`); a boolean elsewhere.
        case flag
        /// One of a few words.
        case choice([String])
        /// JSON (an array or object in the config file).
        case json
        /// A list: the flag repeats, the environment variable is comma- or space-separated,
        /// the config file has an array of strings.
        case list
    }

    /// The canonical name: `smtp-url`. The config file accepts `smtp_url` too.
    public let name: String
    public let kind: Kind
    /// Whether the command line takes it. Secrets stay off it: `ps` would show them.
    public let hasFlag: Bool
    /// One line for `--help`.
    public let summary: String
    /// What the setting does, for docs/configuration.md (markdown; the summary when empty).
    public let details: String
    /// The default as a person reads it.
    public let defaultText: String
    let apply: @Sendable (inout ServerConfiguration, String) throws -> Void

    /// `--smtp-url`, or nil when the setting has no flag.
    public var flag: String? { hasFlag ? "--" + name : nil }
    /// `TESSERA_SMTP_URL`.
    public var environmentVariable: String { "TESSERA_" + name.uppercased().replacingOccurrences(of: "-", with: "_") }

    /// Reads `value` into `configuration`, or throws a message that names the setting.
    public func read(_ value: String, into configuration: inout ServerConfiguration) throws {
        try apply(&configuration, value)
    }

    /// The setting named `name` (`smtp-url` or `smtp_url`).
    public static func named(_ name: String) -> Setting? {
        let canonical = name.replacingOccurrences(of: "_", with: "-")
        return all.first { $0.name == canonical }
    }
}

// MARK: Building settings from the configuration's properties

extension Setting {
    typealias Path<Value> = any WritableKeyPath<ServerConfiguration, Value> & Sendable

    /// The embedded defaults, which the table shows.
    static let defaults = ServerConfiguration()

    /// Text kept as it is; `--name ''` sets it empty, the same as unset.
    static func text(_ name: String, _ path: Path<String?>, flag: Bool = true, default defaultText: String = "—",
                     _ summary: String, details: String = "") -> Setting {
        Setting(name: name, kind: .text, hasFlag: flag, summary: summary, details: details, defaultText: defaultText) { configuration, value in
            configuration[keyPath: path] = value
        }
    }

    static func integer(_ name: String, _ path: Path<Int>, minimum: Int? = nil, _ summary: String, details: String = "") -> Setting {
        Setting(name: name, kind: .integer, hasFlag: true, summary: summary, details: details,
                defaultText: String(defaults[keyPath: path])) { configuration, value in
            let number = try integer(value, name)
            if let minimum, number < minimum { throw ConfigurationError("\(name) must be at least \(minimum), not \(number)") }
            configuration[keyPath: path] = number
        }
    }

    static func duration(_ name: String, _ path: Path<Int64>, allowsZero: Bool = false, _ summary: String,
                         details: String = "") -> Setting {
        Setting(name: name, kind: .duration, hasFlag: true, summary: summary, details: details,
                defaultText: durationText(defaults[keyPath: path])) { configuration, value in
            configuration[keyPath: path] = allowsZero && ["0", "0s"].contains(value) ? 0 : try duration(value, name)
        }
    }

    static func boolean(_ name: String, _ path: Path<Bool>, kind: Kind = .boolean, _ summary: String, details: String = "") -> Setting {
        Setting(name: name, kind: kind, hasFlag: true, summary: summary, details: details,
                defaultText: defaults[keyPath: path] ? "on" : "off") { configuration, value in
            configuration[keyPath: path] = try boolean(value, name)
        }
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

    /// `7d`, `1h`, `15m`, `90s`: the largest unit that divides the seconds.
    static func durationText(_ seconds: Int64) -> String {
        if seconds == 0 { return "0" }
        for (unit, size) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }
}

// MARK: The reference table

extension Setting {
    /// One line for `--help`: what it does, its default, its variable.
    public var helpLine: String {
        "\(summary) Default: \(defaultText.replacingOccurrences(of: "`", with: "")). Env: \(environmentVariable)."
    }

    /// The settings table of docs/configuration.md, in markdown.
    public static var markdownTable: String {
        var lines = ["| setting | flag | environment | default | meaning |", "|---|---|---|---|---|"]
        for setting in all {
            let list = setting.kind == .list
            let flag = setting.flag.map { "`\($0)`" + (list ? " (repeatable)" : "") } ?? "—"
            let environment = "`\(setting.environmentVariable)`" + (list ? " (comma- or space-separated)" : "")
            let plainDefault = !setting.defaultText.contains("`") && !setting.defaultText.hasPrefix("—")
                && setting.defaultText != "none"
            let defaultText = plainDefault ? "`\(setting.defaultText)`" : setting.defaultText
            var meaning = setting.details
            if meaning.isEmpty {
                meaning = setting.summary.first.map { $0.lowercased() + setting.summary.dropFirst() } ?? ""
                if meaning.hasSuffix(".") { meaning.removeLast() }
            }
            lines.append("| \(setting.name) | \(flag) | \(environment) | \(defaultText) | \(meaning) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
