import Foundation
import TesseraCore

/// One setting of a client, declared once: its member in the admin API, its flag on the
/// command line (`tessera clients add` and `update`), its label in the console, its help and
/// docs line, and what it does to a registration and to a change. Every surface reads this
/// table, so a new client setting is one entry here (and its column, and its member of
/// ``AdminClientInfo``; `ClientSettingTests` checks all of them and docs/admin.openapi.json agree).
public struct ClientSetting: Sendable {
    public enum Kind: Sendable, Equatable {
        /// A string.
        case text
        /// A string, or null to clear it (on the command line: an empty value).
        case clearableText
        /// true or false; on the command line a flag, which may be followed by `true` or `false`.
        case toggle
        /// Strings; the flag repeats.
        case list
        /// A space-separated string; the flag repeats.
        case scope
        /// Seconds; the command line also takes `5m`, `12h`, `30d`.
        case duration
        /// A JWK Set; the command line names a file holding a JWK or a JWK Set.
        case keys
        /// `[{package_name, sha256_cert_fingerprints}]`; the flag takes PACKAGE=FINGERPRINT and repeats.
        case androidApps
        /// One of `values`; the command line's flag takes no value and chooses `flagValue`.
        case choice(values: [String], flagValue: String)
    }

    /// The console's label, in English and Russian.
    public struct Label: Sendable {
        public let english: String
        public let russian: String
    }

    public let member: String
    public let flag: String
    public let kind: Kind
    public let help: String
    public let label: Label
    let register: @Sendable (inout ClientRegistration, JSONValue) throws -> Void
    let change: (@Sendable (inout ClientChanges, JSONValue) throws -> Void)?

    /// Whether a registered client's setting can change (else: register a new client).
    public var changeable: Bool { change != nil }

    /// The setting of an admin API member.
    public static func member(_ name: String) -> ClientSetting? { all.first { $0.member == name } }

    /// The setting of a command-line flag (without its dashes).
    public static func flag(_ name: String) -> ClientSetting? { all.first { $0.flag == name } }

    public static let all: [ClientSetting] = [
        ClientSetting(member: "client_id", flag: "id", kind: .text, help: "Client id (default: generated).",
                      label: Label(english: "Client id", russian: "Id клиента"),
                      register: { $0.id = try $1.text("client_id") }, change: nil),
        ClientSetting(member: "client_name", flag: "name", kind: .text, help: "Display name, shown on the login and consent pages (required).",
                      label: Label(english: "Name", russian: "Название"),
                      register: { $0.name = try $1.text("client_name") }, change: { $0.name = try $1.text("client_name") }),
        ClientSetting(member: "client_secret", flag: "secret", kind: .text,
                      help: "The client secret, at least 32 characters (default: generated; shown once, stored hashed).",
                      label: Label(english: "Secret", russian: "Секрет"),
                      register: { $0.secret = try $1.text("client_secret") }, change: nil),
        ClientSetting(member: "token_endpoint_auth_method", flag: "public",
                      kind: .choice(values: ["client_secret_basic", "client_secret_post", "none", "private_key_jwt"], flagValue: "none"),
                      help: "A public client (native or browser app): no secret, PKCE required. (Default: a secret, or private_key_jwt with --jwks.)",
                      label: Label(english: "Authentication", russian: "Аутентификация"),
                      register: { registration, value in
                          switch try value.text("token_endpoint_auth_method") {
                          case "none": registration.authMethod = ClientAuthMethod.none
                          case "private_key_jwt": registration.authMethod = .privateKeyJWT
                          default: registration.authMethod = nil
                          }
                      }, change: nil),
        ClientSetting(member: "redirect_uris", flag: "redirect-uri", kind: .list, help: "A redirect URI, matched exactly (repeatable).",
                      label: Label(english: "Redirect URIs", russian: "Адреса возврата"),
                      register: { $0.redirectURIs = try $1.strings("redirect_uris") },
                      change: { $0.redirectURIs = try $1.strings("redirect_uris") }),
        ClientSetting(member: "post_logout_redirect_uris", flag: "post-logout-redirect-uri", kind: .list,
                      help: "Where RP-initiated logout may return to (repeatable).",
                      label: Label(english: "Post-logout redirect URIs", russian: "Адреса после выхода"),
                      register: { $0.postLogoutRedirectURIs = try $1.strings("post_logout_redirect_uris") },
                      change: { $0.postLogoutRedirectURIs = try $1.strings("post_logout_redirect_uris") }),
        ClientSetting(member: "grant_types", flag: "grant-type", kind: .list,
                      help: "An allowed grant type (repeatable; default authorization_code refresh_token).",
                      label: Label(english: "Grants", russian: "Гранты"),
                      register: { $0.grantTypes = try $1.strings("grant_types") }, change: { $0.grantTypes = try $1.strings("grant_types") }),
        ClientSetting(member: "scope", flag: "scope", kind: .scope,
                      help: "An allowed scope (repeatable; default openid profile email offline_access).",
                      label: Label(english: "Scopes", russian: "Области доступа"),
                      register: { $0.scopes = ScopeSet(parsing: try $1.text("scope")).values },
                      change: { $0.scopes = ScopeSet(parsing: try $1.text("scope")).values }),
        ClientSetting(member: "first_party", flag: "first-party", kind: .toggle,
                      help: "A first-party client: no consent page; may use the native sign-in API.",
                      label: Label(english: "First party", russian: "Собственный"),
                      register: { $0.firstParty = try $1.bool("first_party") }, change: { $0.firstParty = try $1.bool("first_party") }),
        ClientSetting(member: "subject_type", flag: "pairwise", kind: .choice(values: ["public", "pairwise"], flagValue: "pairwise"),
                      help: "Pairwise subject identifiers for this client.",
                      label: Label(english: "Subject identifiers", russian: "Идентификаторы субъекта"),
                      register: { $0.pairwise = try $1.text("subject_type") == "pairwise" }, change: nil),
        ClientSetting(member: "resource_server", flag: "resource-server", kind: .toggle,
                      help: "An API that receives access tokens: it may introspect the tokens carrying its scope values.",
                      label: Label(english: "Resource server", russian: "Сервер ресурсов"),
                      register: { $0.resourceServer = try $1.bool("resource_server") },
                      change: { $0.resourceServer = try $1.bool("resource_server") }),
        ClientSetting(member: "jwks", flag: "jwks", kind: .keys,
                      help: "A JWK or JWK Set file: the client authenticates with private_key_jwt (on update: its new keys).",
                      label: Label(english: "Keys", russian: "Ключи"),
                      register: { $0.jwks = try $1.keySet("jwks") }, change: { $0.jwks = try $1.keySet("jwks") }),
        ClientSetting(member: "assertion_issuer", flag: "assertion-issuer", kind: .text,
                      help: "An extra iss accepted in its client assertions (Sign in with Apple style: the team id).",
                      label: Label(english: "Assertion issuer", russian: "Издатель утверждений"),
                      register: { $0.assertionIssuer = try $1.text("assertion_issuer") }, change: nil),
        ClientSetting(member: "assertion_lifetime", flag: "assertion-lifetime", kind: .duration,
                      help: "The longest lifetime its client assertions may have (default 5m; up to 182d). Longer lets the client reuse one assertion without jti until it expires, as Sign in with Apple's client secret is used: opt in only for such clients.",
                      label: Label(english: "Assertion lifetime", russian: "Срок утверждений"),
                      register: { $0.assertionLifetime = try $1.seconds("assertion_lifetime") }, change: nil),
        ClientSetting(member: "link_domains", flag: "link-domain", kind: .list,
                      help: "A domain email links may return to as continue_url (repeatable; redirect URI hosts are allowed too).",
                      label: Label(english: "Email-link domains", russian: "Домены ссылок для входа"),
                      register: { $0.appLinks.linkDomains = try $1.strings("link_domains") },
                      change: { $0.linkDomains = try $1.strings("link_domains") }),
        ClientSetting(member: "ios_apps", flag: "ios-app", kind: .list,
                      help: "An iOS app that opens email links (or, for an authenticator, the issuer's links): TEAMID.bundle.id (repeatable).",
                      label: Label(english: "iOS apps", russian: "Приложения iOS"),
                      register: { $0.appLinks.appleAppIDs = try $1.strings("ios_apps") }, change: { $0.appleAppIDs = try $1.strings("ios_apps") }),
        ClientSetting(member: "android_apps", flag: "android-app", kind: .androidApps,
                      help: "An Android app that opens email links: PACKAGE=SHA256_CERT_FINGERPRINT (repeatable).",
                      label: Label(english: "Android apps", russian: "Приложения Android"),
                      register: { $0.appLinks.androidApps = try $1.androidApps("android_apps") },
                      change: { $0.androidApps = try $1.androidApps("android_apps") }),
        ClientSetting(member: "require_pushed_authorization_requests", flag: "require-par", kind: .toggle,
                      help: "Its authorization requests must be pushed first (RFC 9126 require_pushed_authorization_requests).",
                      label: Label(english: "Requests must be pushed (PAR)", russian: "Только предварительно отправленные запросы (PAR)"),
                      register: { $0.requirePushedRequests = try $1.bool("require_pushed_authorization_requests") },
                      change: { $0.requirePushedRequests = try $1.bool("require_pushed_authorization_requests") }),
        ClientSetting(member: "require_mfa", flag: "require-mfa", kind: .toggle,
                      help: "Every sign-in to it needs a second factor (an authenticator app's code, a recovery code or a passkey); people without one set up an authenticator app on the way (docs/passkeys.md).",
                      label: Label(english: "Second factor required", russian: "Нужен второй фактор"),
                      register: { $0.requireMFA = try $1.bool("require_mfa") }, change: { $0.requireMFA = try $1.bool("require_mfa") }),
        ClientSetting(member: "authenticator", flag: "authenticator", kind: .toggle,
                      help: "The operator's own app, which approves other apps' sign-ins for its user (needs --first-party); its --ios-app and --android-app values then claim the issuer's /authorize links (docs/cross-app.md).",
                      label: Label(english: "Authenticator app", russian: "Приложение-аутентификатор"),
                      register: { $0.authenticator = try $1.bool("authenticator") }, change: { $0.authenticator = try $1.bool("authenticator") }),
        ClientSetting(member: "device_sso_group", flag: "device-sso-group", kind: .clearableText,
                      help: "Native SSO: the apps of one vendor that share a device session name the same group (on update, an empty value takes the client out of its group).",
                      label: Label(english: "Native SSO group", russian: "Группа Native SSO"),
                      register: { $0.deviceSSOGroup = try $1.optionalText("device_sso_group") },
                      change: { $0.deviceSSOGroup = .some(try $1.optionalText("device_sso_group")) }),
    ]
}

/// Client settings by admin API member: what registering a client asks for (`NewClient`), or
/// what a change sets (`ClientChanges`). Decoded by the table, so an unknown member or a value
/// of the wrong shape is refused by name; encoded as the members given.
public struct AdminClientSettings: Codable, Sendable, Equatable {
    public private(set) var values: [String: JSONValue]

    public init() {
        values = [:]
    }

    /// `values`, checked against the table.
    public init(_ values: [String: JSONValue]) throws {
        try AdminRequestDecoding.refuseUnknown(values.keys, known: ClientSetting.all.map(\.member))
        for (member, value) in values {
            try ClientSetting.member(member)?.check(value)
        }
        self.values = values
    }

    public init(from decoder: any Decoder) throws {
        let values: [String: JSONValue]
        do { values = try [String: JSONValue](from: decoder) } catch {
            throw AdminProblem.badRequest("the request body must be a JSON object")
        }
        do { try self.init(values) } catch let error as AdminError {
            throw AdminProblem.badRequest(error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try values.encode(to: encoder)
    }

    public subscript(member: String) -> JSONValue? {
        values[member]
    }

    public var isEmpty: Bool { values.isEmpty }

    /// Sets a member (nil: leaves it out), checked by its setting.
    public mutating func set(_ member: String, _ value: JSONValue?) throws {
        guard let setting = ClientSetting.member(member) else { throw AdminError.invalid("'\(member)' is not a client setting") }
        guard let value else { values[member] = nil; return }
        try setting.check(value)
        values[member] = value
    }

    /// The registration these settings ask for; `client_name` is required.
    public func registration() throws -> ClientRegistration {
        guard case .string(let name)? = values["client_name"], !name.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw AdminError.invalid("'client_name' is required")
        }
        var registration = ClientRegistration(name: name, redirectURIs: [])
        for setting in ClientSetting.all {
            if let value = values[setting.member], value != .null || setting.kind == .clearableText { try setting.register(&registration, value) }
        }
        return registration
    }

    /// The change these settings make; a setting fixed at registration is refused.
    public func changes() throws -> ClientChanges {
        var changes = ClientChanges()
        for setting in ClientSetting.all {
            guard let value = values[setting.member] else { continue }
            guard let change = setting.change else {
                throw AdminError.invalid("'\(setting.member)' is fixed when a client is registered: register a new client to change it")
            }
            if value == .null && setting.kind != .clearableText { continue }
            try change(&changes, value)
        }
        return changes
    }
}

extension ClientSetting {
    /// Refuses a value of the wrong shape for this setting (null is "not given", except where
    /// it clears the setting).
    func check(_ value: JSONValue) throws {
        if value == .null { return }
        switch kind {
        case .text, .clearableText, .scope: _ = try value.text(member)
        case .toggle: _ = try value.bool(member)
        case .list: _ = try value.strings(member)
        case .duration: _ = try value.seconds(member)
        case .keys: _ = try value.keySet(member)
        case .androidApps: _ = try value.androidApps(member)
        case .choice(let allowed, _):
            let text = try value.text(member)
            guard allowed.contains(text) else { throw AdminError.invalid("'\(text)' is not a \(member) (\(allowed.joined(separator: ", ")))") }
        }
    }

    /// What the command line's value means for the admin API: `value` is the flag's argument
    /// (nil for a flag given without one). `earlier` is what the flag said before, for the
    /// settings that repeat. A file is read here (`--jwks`).
    public func argument(_ value: String?, after earlier: JSONValue?) throws -> JSONValue {
        let option = "--" + flag
        func required() throws -> String {
            guard let value else { throw ConfigurationError("\(option) needs a value") }
            return value
        }
        switch kind {
        case .text: return .string(try required())
        case .clearableText: return try required().isEmpty ? .null : .string(try required())
        case .toggle:
            switch value {
            case nil, "true"?: return .bool(true)
            case "false"?: return .bool(false)
            case let other?: throw ConfigurationError("\(option) takes true or false, not '\(other)'")
            }
        case .list:
            return .array((earlier?.arrayValue ?? []) + [.string(try required())])
        case .scope:
            let words = (earlier?.stringValue.map { [$0] } ?? []) + [try required()]
            return .string(words.joined(separator: " "))
        case .duration:
            return .int(try Setting.duration(try required(), option))
        case .keys:
            let path = try required()
            guard let data = FileManager.default.contents(atPath: path) else { throw ConfigurationError("cannot read \(path)") }
            let keys: JWKSet
            do { keys = try JWKSet.parse(data) } catch { throw ConfigurationError("\(path) is not a JWK or a JWK Set: \(error)") }
            return try JSONDecoder().decode(JSONValue.self, from: try CanonicalJSON.encode(keys))
        case .androidApps:
            let entry = try required()
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                throw ConfigurationError("\(option) takes PACKAGE=SHA256_CERT_FINGERPRINT, not '\(entry)'")
            }
            let package = String(entry[..<equals]), fingerprint = String(entry[entry.index(after: equals)...]).uppercased()
            var apps = earlier?.arrayValue?.compactMap(\.objectValue) ?? []
            if let index = apps.firstIndex(where: { $0["package_name"] == .string(package) }) {
                apps[index]["sha256_cert_fingerprints"] = .array((apps[index]["sha256_cert_fingerprints"]?.arrayValue ?? []) + [.string(fingerprint)])
            } else {
                apps.append(["package_name": .string(package), "sha256_cert_fingerprints": .array([.string(fingerprint)])])
            }
            return .array(apps.map(JSONValue.object))
        case .choice(_, let flagValue):
            if let value { throw ConfigurationError("\(option) takes no value (got '\(value)')") }
            return .string(flagValue)
        }
    }

    /// Whether the flag reads a value: every kind but a toggle (whose value is optional) and a choice.
    public var takesValue: Bool {
        switch kind {
        case .toggle, .choice: false
        default: true
        }
    }

    /// The line `--help` and docs/admin.md give this setting.
    public var helpLine: String {
        let form: String = switch kind {
        case .toggle: "--\(flag) [true|false]"
        case .choice: "--\(flag)"
        case .keys: "--\(flag) <file>"
        case .duration: "--\(flag) <duration>"
        default: "--\(flag) <value>"
        }
        return "\(form)\n      \(help)\(changeable ? "" : " Fixed at registration.") (admin API: \(member))"
    }
}

extension AdminClientSettings {
    /// The settings a command line gives (`--name "Shop" --redirect-uri … --first-party`),
    /// read by the table: a flag the table doesn't have is refused, a repeatable one collects.
    public init(arguments: [String]) throws {
        self.init()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw ConfigurationError("unexpected argument '\(argument)': client settings are given as --name value")
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            var value = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
            guard let setting = ClientSetting.flag(name) else {
                throw ConfigurationError("unknown option '--\(name)' (--help lists the client settings)")
            }
            if value == nil {
                if setting.takesValue {
                    guard let next = rest.popFirst() else { throw ConfigurationError("--\(name) needs a value") }
                    value = next
                } else if setting.kind == .toggle, let next = rest.first, next == "true" || next == "false" {
                    value = rest.popFirst()
                }
            }
            values[setting.member] = try setting.argument(value, after: values[setting.member])
        }
    }

    /// Every setting's help line, for `--help`.
    public static func help(changeableOnly: Bool) -> String {
        ClientSetting.all.filter { !changeableOnly || $0.changeable }.map { "  " + $0.helpLine }.joined(separator: "\n")
    }
}

extension JSONValue {
    func text(_ member: String) throws -> String {
        guard case .string(let text) = self else { throw AdminError.invalid("'\(member)' must be a string") }
        return text
    }

    func optionalText(_ member: String) throws -> String? {
        self == .null ? nil : try text(member)
    }

    func bool(_ member: String) throws -> Bool {
        guard case .bool(let value) = self else { throw AdminError.invalid("'\(member)' must be true or false") }
        return value
    }

    func strings(_ member: String) throws -> [String] {
        let strings = arrayValue?.compactMap(\.stringValue)
        guard let strings, strings.count == arrayValue?.count else { throw AdminError.invalid("'\(member)' must be an array of strings") }
        return strings
    }

    func seconds(_ member: String) throws -> Int64 {
        guard case .int(let value) = self else { throw AdminError.invalid("'\(member)' must be a whole number of seconds") }
        return value
    }

    func keySet(_ member: String) throws -> JWKSet {
        guard case .object = self else { throw AdminError.invalid("'\(member)' must be a JWK Set ({\"keys\": [...]})") }
        do { return try JSONDecoder().decode(JWKSet.self, from: try CanonicalJSON.encode(self)) } catch {
            throw AdminError.invalid("'\(member)' is not a valid JWK Set: \(error)")
        }
    }

    func androidApps(_ member: String) throws -> [ClientAppLinks.AndroidApp] {
        let shape = AdminError.invalid("'\(member)' must be an array of {package_name, sha256_cert_fingerprints}")
        guard case .array(let items) = self else { throw shape }
        return try items.map { item in
            guard case .object(let app) = item, case .string(let package)? = app["package_name"], !package.isEmpty else { throw shape }
            let fingerprints = try (app["sha256_cert_fingerprints"] ?? .array([])).strings("\(member)[].sha256_cert_fingerprints")
            return .init(packageName: package, certificateFingerprints: fingerprints.map { $0.uppercased() })
        }
    }
}

extension ClientSetting {
    /// The table of client settings in docs/admin.md (`tessera settings --clients --markdown`).
    public static var markdownTable: String {
        var lines = ["| admin API member | `clients add` / `update` flag | value | changes later | meaning |", "|---|---|---|---|---|"]
        for setting in all {
            let flag: String = switch setting.kind {
            case .toggle: "`--\(setting.flag)` [`true`\\|`false`]"
            case .choice(_, let value): "`--\(setting.flag)` (\(setting.member) \(value))"
            case .list, .androidApps, .scope: "`--\(setting.flag)` (repeatable)"
            case .keys: "`--\(setting.flag) FILE`"
            default: "`--\(setting.flag)`"
            }
            let value: String = switch setting.kind {
            case .text: "string"
            case .clearableText: "string, or null to clear"
            case .toggle: "boolean"
            case .list: "array of strings"
            case .scope: "space-separated string"
            case .duration: "seconds"
            case .keys: "JWK Set"
            case .androidApps: "array of `{package_name, sha256_cert_fingerprints}`"
            case .choice(let values, _): values.map { "`\($0)`" }.joined(separator: ", ")
            }
            let meaning = setting.help.replacingOccurrences(of: "|", with: "\\|")
            lines.append("| `\(setting.member)` | \(flag) | \(value) | \(setting.changeable ? "yes" : "no") | \(meaning) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
