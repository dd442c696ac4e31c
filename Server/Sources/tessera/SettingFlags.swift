import ArgumentParser
import TesseraDomain

/// The settings' command-line flags, read from ``Setting/all`` rather than declared one by
/// one: `--name VALUE` or `--name=VALUE`; `--dev`-style flags take no value; a list setting
/// repeats.
enum SettingFlags {
    /// The flags in `arguments`, by setting name.
    static func parse(_ arguments: [String]) throws -> [String: String] {
        var flags: [String: String] = [:]
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw ValidationError("Unexpected argument '\(argument)': settings are given as --name value.")
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            var value = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
            guard let setting = Setting.named(name), setting.name == name, setting.hasFlag else {
                let hint = Setting.named(name).map { "\($0.name) is read from \($0.environmentVariable) or the --config file only" }
                    ?? "'tessera serve --help' lists the settings"
                throw ValidationError("Unknown option '--\(name)': \(hint).")
            }
            if setting.kind == .flag {
                value = value ?? "true"
            } else if value == nil {
                guard let next = rest.popFirst() else { throw ValidationError("Missing value for '--\(name)'.") }
                value = next
            }
            guard let value else { continue }
            if setting.kind == .list, let earlier = flags[name] {
                flags[name] = earlier + "," + value
            } else {
                flags[name] = value
            }
        }
        return flags
    }

    /// The settings for `--help`: each flag, then what it does, its default and its variable.
    static var help: String {
        Setting.all.map { setting in
            let flag = setting.flag.map { setting.kind == .flag ? $0 : "\($0) <value>" }
                ?? "\(setting.environmentVariable) (no flag: environment or --config file)"
            return "  \(flag)\n      \(setting.helpLine)"
        }.joined(separator: "\n")
    }
}
