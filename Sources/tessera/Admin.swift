import ArgumentParser
import Foundation
import HTTPTypes
import TesseraAuthCore
import TesseraCore
import TesseraDomain
import TesseraInfrastructure
import TesseraServer
import TesseraNode

/// Where an admin command acts: a running server, through its admin API (`--server`), or the
/// database directly (`--database`, as `serve` would open it). Both run the same operations
/// (``AdminAPI``), so they answer alike.
struct AdminTarget: ParsableArguments {
    @Option(help: ArgumentHelp("A running server's URL (its issuer): act through its admin API.",
                               discussion: "The client credentials come from TESSERA_ADMIN_CLIENT_ID and TESSERA_ADMIN_CLIENT_SECRET: a client allowed the tessera:admin scope (tessera clients add --first-party --grant-type client_credentials --scope tessera:admin)."))
    var server: String?
    @OptionGroup var storage: StorageOptions
    @Flag(help: "Print JSON (the admin API's answer) instead of a table.") var json = false

    static let clientIDVariable = "TESSERA_ADMIN_CLIENT_ID"
    static let clientSecretVariable = "TESSERA_ADMIN_CLIENT_SECRET"

    func validate() throws {
        if server != nil && (storage.database != nil || storage.config != nil) {
            throw ValidationError("give either --server (a running server) or --database/--config (the database), not both")
        }
    }

    /// Runs one call; a problem (a 4xx or 5xx answer) ends the command with its detail.
    @discardableResult
    func perform(_ call: AdminCall) async throws -> AdminResult {
        let result: AdminResult
        do {
            if let server {
                result = try await RemoteAdmin(server: server).perform(call)
            } else {
                result = try await withProvider(storage.flags) { provider in
                    AdminResult(await AdminAPI(services: provider.services).perform(call, by: .operator))
                }
            }
        } catch let error as ConfigurationError { fail(error) } catch let error as DatabaseUnavailable { fail(error) } catch let error as AdminCommandError {
            fail(error)
        }
        if result.status >= 400 {
            let detail = result.object?["detail"]?.stringValue ?? "the server answered \(result.status)"
            FileHandle.standardError.write(Data("tessera: error: \(detail)\n".utf8))
            // A request the rules refuse is the caller's to fix (2, as for bad options); the rest is 1.
            Foundation.exit(result.status == 400 ? 2 : 1)
        }
        return result
    }

    /// Prints the answer: its JSON, or `table` for a person.
    func print(_ result: AdminResult, table: (([String: JSONValue]) -> String)? = nil) throws {
        if json || table == nil {
            if let body = result.body { Swift.print(String(decoding: try CanonicalJSON.encode(body), as: UTF8.self)) }
        } else if let object = result.object, let table {
            Swift.print(table(object), terminator: "")
        }
    }
}

/// An admin API answer as the CLI reads it, from either target.
struct AdminResult {
    var status: Int
    var body: JSONValue?
    var version: String?

    init(status: Int, body: JSONValue?, version: String?) {
        self.status = status
        self.body = body
        self.version = version
    }

    init(_ answer: AdminAnswer) {
        self.init(status: answer.status.code, body: answer.body, version: answer.version.map { "\"\($0)\"" })
    }

    var object: [String: JSONValue]? { body?.objectValue }
}

struct AdminCommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The admin API of a running server, with a token from client credentials.
struct RemoteAdmin {
    let server: String
    let transport = AsyncHTTPClientTransport()

    func perform(_ call: AdminCall) async throws -> AdminResult {
        let environment = ProcessInfo.processInfo.environment
        guard let id = environment[AdminTarget.clientIDVariable], let secret = environment[AdminTarget.clientSecretVariable] else {
            throw AdminCommandError("--server needs the admin client's credentials in \(AdminTarget.clientIDVariable) and \(AdminTarget.clientSecretVariable)")
        }
        let base = try Self.base(of: server)
        let token = try await self.token(base: base, clientID: id, secret: secret)
        var path = call.path.split(separator: "/").map { String($0).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? "" }
            .joined(separator: "/")
        path = "/" + path
        var components = URLComponents(string: base + "/admin/v1" + path)
        if !call.query.isEmpty { components?.queryItems = call.query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) } }
        guard let url = components?.url else { throw AdminCommandError("'\(server)' is not a URL") }
        var headers = ["Authorization": "Bearer \(token)", "Accept": "application/json"]
        var body: Data?
        if let members = call.bodyMembers {
            headers["Content-Type"] = "application/json"
            body = try CanonicalJSON.encode(JSONValue.object(members))
        }
        if let ifMatch = call.ifMatch { headers["If-Match"] = ifMatch }
        let response = try await send(HTTPTransportRequest(method: call.method.rawValue, url: url, headers: headers, body: body))
        let decoded = response.body.isEmpty ? nil : try? JSONDecoder().decode(JSONValue.self, from: response.body)
        if response.status >= 400 && decoded?.objectValue?["detail"] == nil {
            throw AdminCommandError("\(url.absoluteString) answered \(response.status): is --server a Tessera server of this version?")
        }
        return AdminResult(status: response.status, body: decoded, version: response.headers["etag"])
    }

    /// `--server` without its trailing slash, when it is safe to send the admin client's secret
    /// and token to: https, or plain http only to this machine (loopback), where nobody on the
    /// network can read them.
    static func base(of server: String) throws -> String {
        guard let url = URL(string: server), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else {
            throw AdminCommandError("--server '\(server)' is not a URL such as https://id.example.com")
        }
        let loopback = host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
        switch scheme {
        case "https": break
        case "http" where loopback: break
        case "http":
            throw AdminCommandError("--server \(server) is plain http to another machine: the admin client's secret and token would "
                                    + "cross the network in clear text. Use https (plain http is accepted for loopback addresses only)")
        default:
            throw AdminCommandError("--server '\(server)' must be an https URL (or http to a loopback address)")
        }
        return server.hasSuffix("/") ? String(server.dropLast()) : server
    }

    func token(base: String, clientID: String, secret: String) async throws -> String {
        guard let url = URL(string: base + "/token") else { throw AdminCommandError("'\(server)' is not a URL") }
        let credentials = Data("\(formEncoded(clientID)):\(formEncoded(secret))".utf8).base64EncodedString()
        let response = try await send(HTTPTransportRequest(
            method: "POST", url: url,
            headers: ["Authorization": "Basic \(credentials)", "Content-Type": "application/x-www-form-urlencoded"],
            body: Data("grant_type=client_credentials&scope=\(formEncoded(Administrator.scope))".utf8)))
        let answer = try? JSONDecoder().decode([String: JSONValue].self, from: response.body)
        guard response.status == 200, let token = answer?["access_token"]?.stringValue else {
            let reason = answer?["error_description"]?.stringValue ?? answer?["error"]?.stringValue ?? "status \(response.status)"
            throw AdminCommandError("the server refused the admin client's credentials: \(reason)")
        }
        return token
    }

    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        do { return try await transport.send(request) } catch {
            throw AdminCommandError("cannot reach \(server): \(error)")
        }
    }

    func formEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["-", ".", "_", "~"])) ?? text
    }
}

/// Column text for people: names, then values, padded; a long value is cut with an ellipsis.
enum Table {
    static func render(_ header: [String], _ rows: [[String]], maxWidth: Int = 48) -> String {
        let cut = rows.map { $0.map { $0.count > maxWidth ? String($0.prefix(maxWidth - 1)) + "…" : $0 } }
        let widths = header.indices.map { column in ([header] + cut).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) + "\n"
        }
        return line(header) + cut.map(line).joined()
    }

    static func time(_ value: JSONValue?) -> String {
        guard case .int(let seconds)? = value else { return "" }
        return Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)
    }

    static func list(_ value: JSONValue?) -> String {
        value?.arrayValue?.compactMap(\.stringValue).joined(separator: " ") ?? ""
    }

    /// `name: value` lines for one object's members, in the order given.
    static func fields(_ object: [String: JSONValue], _ names: [String]) -> String {
        let width = names.map(\.count).max() ?? 0
        return names.compactMap { name -> String? in
            guard let value = object[name], value != .null else { return nil }
            let text: String = switch value {
            case .string(let string): string
            case .array(let items) where items.allSatisfy { $0.stringValue != nil }: items.compactMap(\.stringValue).joined(separator: " ")
            case .int(let number) where name.hasSuffix("_at"): time(value) + " (\(number))"
            default: (try? String(decoding: CanonicalJSON.encode(value), as: UTF8.self)) ?? ""
            }
            return name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + text
        }.joined(separator: "\n") + "\n"
    }
}

// MARK: clients

extension Clients {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the clients, by name.")
        @OptionGroup var target: AdminTarget
        @Option(help: "At most this many (1–200).") var limit = 50
        @Option(help: "Where to go on: the page token the previous page printed.") var pageToken: String?

        func run() async throws {
            var query = ["limit": String(limit)]
            query["page_token"] = pageToken
            let result = try await target.perform(AdminCall(.get, "/clients", query: query))
            try target.print(result) { object in
                let rows = (object["clients"]?.arrayValue ?? []).compactMap(\.objectValue).map { client in
                    [client["client_id"]?.stringValue ?? "", client["client_name"]?.stringValue ?? "",
                     client["token_endpoint_auth_method"]?.stringValue ?? "", Table.list(client["grant_types"]),
                     client["first_party"] == .bool(true) ? "yes" : "no"]
                }
                var text = Table.render(["CLIENT ID", "NAME", "AUTHENTICATION", "GRANTS", "FIRST PARTY"], rows)
                if let next = object["next_page_token"]?.stringValue { text += "more: --page-token \(next)\n" }
                return text
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a client (never its secret).")
        @OptionGroup var target: AdminTarget
        @Argument(help: "The client id.") var clientID: String

        func run() async throws {
            try target.print(try await target.perform(AdminCall(.get, "/clients/\(clientID)")), table: Clients.describe)
        }
    }

    static func describe(_ client: [String: JSONValue]) -> String {
        Table.fields(client, ["client_id", "client_name", "client_secret", "token_endpoint_auth_method", "redirect_uris",
                              "post_logout_redirect_uris", "grant_types", "scope", "first_party", "subject_type", "resource_server",
                              "link_domains", "ios_apps", "android_apps", "jwks", "require_pushed_authorization_requests", "authenticator",
                              "device_sso_group", "created_at", "previous_secret_expires_at", "version"])
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a client's settings.",
            discussion: "Each option given replaces that setting (a repeatable one: all of its values). The change is made only if nobody changed the client since it was read.")
        @OptionGroup var target: AdminTarget
        @Argument(help: "The client id.") var clientID: String
        @Option(help: "Display name.") var name: String?
        @Option(help: "A redirect URI (repeatable; replaces them all).") var redirectURI: [String] = []
        @Option(help: "A post-logout redirect URI (repeatable; replaces them all).") var postLogoutRedirectURI: [String] = []
        @Option(help: "An allowed scope (repeatable; replaces them all).") var scope: [String] = []
        @Option(help: "An allowed grant type (repeatable; replaces them all).") var grantType: [String] = []
        @Option(help: "true or false: a first-party client (no consent page).") var firstParty: Bool?
        @Option(help: "true or false: an API that may introspect tokens carrying its scopes.") var resourceServer: Bool?
        @Option(help: "A domain email links may return to (repeatable; replaces them all).") var linkDomain: [String] = []
        @Option(help: "A JWK Set file: new keys for a private_key_jwt client.") var jwks: String?
        @Option(help: "true or false: its authorization requests must be pushed first (RFC 9126).") var requirePar: Bool?
        @Option(help: "true or false: the operator's app that approves other apps' sign-ins (first-party only).")
        var authenticator: Bool?
        @Option(name: .customLong("device-sso-group"), help: "Native SSO group; an empty value takes the client out of its group.")
        var deviceSSOGroup: String?

        func run() async throws {
            var body: [String: JSONValue] = [:]
            body["require_pushed_authorization_requests"] = requirePar.map(JSONValue.bool)
            body["authenticator"] = authenticator.map(JSONValue.bool)
            if let deviceSSOGroup { body["device_sso_group"] = deviceSSOGroup.isEmpty ? .null : .string(deviceSSOGroup) }
            body["client_name"] = name.map(JSONValue.string)
            if !redirectURI.isEmpty { body["redirect_uris"] = .array(redirectURI.map(JSONValue.string)) }
            if !postLogoutRedirectURI.isEmpty { body["post_logout_redirect_uris"] = .array(postLogoutRedirectURI.map(JSONValue.string)) }
            if !scope.isEmpty { body["scope"] = .string(scope.joined(separator: " ")) }
            if !grantType.isEmpty { body["grant_types"] = .array(grantType.map(JSONValue.string)) }
            body["first_party"] = firstParty.map(JSONValue.bool)
            body["resource_server"] = resourceServer.map(JSONValue.bool)
            if !linkDomain.isEmpty { body["link_domains"] = .array(linkDomain.map(JSONValue.string)) }
            if let jwks {
                guard let data = FileManager.default.contents(atPath: jwks), let keys = try? JSONDecoder().decode(JSONValue.self, from: data) else {
                    fail(ConfigurationError("cannot read a JWK Set from \(jwks)"))
                }
                body["jwks"] = keys
            }
            guard !body.isEmpty else { fail(ConfigurationError("nothing to change: give at least one setting (see --help)")) }
            let current = try await target.perform(AdminCall(.get, "/clients/\(clientID)"))
            let result = try await target.perform(AdminCall(.patch, "/clients/\(clientID)", body: body, ifMatch: current.version))
            try target.print(result, table: Clients.describe)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a client: every token issued to it stops working, and consents given to it go.")
        @OptionGroup var target: AdminTarget
        @Argument(help: "The client id.") var clientID: String

        func run() async throws {
            try await target.perform(AdminCall(.delete, "/clients/\(clientID)"))
            if !target.json { print("client \(clientID) deleted") }
        }
    }

    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-secret",
            abstract: "Give a client a new secret (printed once); the old one works for the grace period.")
        @OptionGroup var target: AdminTarget
        @Argument(help: "The client id.") var clientID: String
        @Option(help: "How long the old secret keeps working, e.g. 1h or 7d (default 0: it stops now; at most 30d).")
        var gracePeriod: String = "0"

        func run() async throws {
            let seconds = gracePeriod == "0" ? 0 : (try? Setting.duration(gracePeriod, "--grace-period")) ?? {
                fail(ConfigurationError("--grace-period must be a duration such as 0, 3600, 1h or 7d, not '\(gracePeriod)'"))
            }()
            let result = try await target.perform(AdminCall(.post, "/clients/\(clientID)/secret", body: ["grace_period": .int(seconds)]))
            try target.print(result) { client in
                var text = "client_id: \(clientID)\nclient_secret: \(client["client_secret"]?.stringValue ?? "")   (shown once; stored hashed)\n"
                if let until = client["previous_secret_expires_at"] { text += "the previous secret works until \(Table.time(until))\n" }
                return text
            }
        }
    }
}

// MARK: users

extension Users {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List or search the users, by email address.")
        @OptionGroup var target: AdminTarget
        @Option(help: "Part of an address or of a profile value (a name, a phone number), or an id.") var query: String?
        @Option(help: "At most this many (1–200).") var limit = 50
        @Option(help: "Where to go on: the page token the previous page printed.") var pageToken: String?

        func run() async throws {
            var parameters = ["limit": String(limit)]
            parameters["q"] = query
            parameters["page_token"] = pageToken
            let result = try await target.perform(AdminCall(.get, "/users", query: parameters))
            try target.print(result) { object in
                let rows = (object["users"]?.arrayValue ?? []).compactMap(\.objectValue).map { user in
                    [user["id"]?.stringValue ?? "", user["email"]?.stringValue ?? "",
                     user["profile"]?.objectValue?["name"]?.stringValue ?? "",
                     user["email_verified"] == .bool(true) ? "yes" : "no", user["disabled"] == .bool(true) ? "disabled" : "",
                     Table.list(user["roles"])]
                }
                var text = Table.render(["ID", "EMAIL", "NAME", "VERIFIED", "STATE", "ROLES"], rows)
                if let next = object["next_page_token"]?.stringValue { text += "more: --page-token \(next)\n" }
                return text
            }
        }
    }

    /// The user's page for people: fields, then identities, sessions and consents.
    static func describe(_ user: [String: JSONValue]) -> String {
        var text = Table.fields(user, ["id", "email", "email_verified", "has_password", "disabled", "disabled_at", "roles", "created_at",
                                       "updated_at", "version"])
        if let profile = user["profile"]?.objectValue, !profile.isEmpty {
            text += "profile:\n" + Table.fields(profile, profile.keys.sorted()).split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
        }
        if let last = user["last_sign_in"]?.objectValue {
            text += "last sign-in: \(Table.time(last["at"])) \(last["method"]?.stringValue ?? "") from \(last["ip"]?.stringValue ?? "?")\n"
        }
        for identity in user["identities"]?.arrayValue?.compactMap(\.objectValue) ?? [] {
            text += "identity: \(identity["provider"]?.stringValue ?? "") \(identity["subject"]?.stringValue ?? "")\n"
        }
        for session in user["sessions"]?.arrayValue?.compactMap(\.objectValue) ?? [] {
            text += "session: signed in \(Table.time(session["signed_in_at"])) by \(Table.list(session["methods"])), until \(Table.time(session["expires_at"]))\n"
        }
        for consent in user["consents"]?.arrayValue?.compactMap(\.objectValue) ?? [] {
            text += "consent: \(consent["client_name"]?.stringValue ?? "") (\(consent["client_id"]?.stringValue ?? "")): \(consent["scope"]?.stringValue ?? "")\n"
        }
        return text
    }

    /// One user action of the admin API (`disable`, `enable`, `sign-out`), by email or id.
    struct Action: ParsableArguments {
        @OptionGroup var target: AdminTarget
        @Argument(help: "The user's email address or id.") var user: String
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disable a user: sessions end, tokens stop working, and no sign-in works until enabled.")
        @OptionGroup var action: Action

        func run() async throws {
            let result = try await action.target.perform(AdminCall(.post, "/users/\(action.user)/disable"))
            try action.target.print(result) { "user \($0["id"]?.stringValue ?? "") <\($0["email"]?.stringValue ?? "")> disabled\n" }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled user again.")
        @OptionGroup var action: Action

        func run() async throws {
            let result = try await action.target.perform(AdminCall(.post, "/users/\(action.user)/enable"))
            try action.target.print(result) { "user \($0["id"]?.stringValue ?? "") <\($0["email"]?.stringValue ?? "")> enabled\n" }
        }
    }

    struct SignOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-out", abstract: "Sign a user out everywhere: every session ends and every token stops working.")
        @OptionGroup var action: Action

        func run() async throws {
            try await action.target.perform(AdminCall(.post, "/users/\(action.user)/sign-out"))
            if !action.target.json { print("\(action.user) signed out everywhere") }
        }
    }
}

// MARK: keys

extension Keys {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the signing keys: current, next and retired.")
        @OptionGroup var target: AdminTarget

        func run() async throws {
            let result = try await target.perform(AdminCall(.get, "/keys"))
            try target.print(result) { object in
                Table.render(["KID", "ALG", "STATUS", "PUBLISHED", "CREATED", "RETIRED"], (object["keys"]?.arrayValue ?? []).compactMap(\.objectValue).map { key in
                    [key["kid"]?.stringValue ?? "", key["alg"]?.stringValue ?? "", key["status"]?.stringValue ?? "",
                     key["published"] == .bool(true) ? "yes" : "no", Table.time(key["created_at"]), Table.time(key["retired_at"])]
                })
            }
        }
    }
}

extension Users {
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import users from a Firebase Auth export, JSON Lines or CSV; they keep their passwords.",
            discussion: """
                A Firebase export (firebase auth:export users.json --format=json) needs the project's password hash \
                parameters (--hash-config: a file with the hash_config block the Firebase console shows, or its JSON). \
                JSON Lines and CSV take email, id, email_verified, password_hash (bcrypt, argon2, scrypt, PBKDF2 in \
                PHC form), name, created_at, disabled and profile claims. A user is found by id, then by address, and \
                updated, or else created: importing again changes nothing twice. Rows that can't be imported are listed \
                (never with their hash) and the others go on. Passwords are checked against the imported hash at the \
                first sign-in, then hashed again by Tessera. See docs/admin.md.
                """)

        @OptionGroup var target: AdminTarget
        @Argument(help: "The file to import.") var file: String
        @Option(help: "firebase, jsonl or csv (default: from the file's name and content).") var format: String?
        @Option(help: "Firebase: the project's hash parameters (base64_signer_key, base64_salt_separator, rounds, mem_cost).")
        var hashConfig: String?
        @Option(help: "Users written per transaction.") var batchSize = UserImport.defaultBatchSize
        @Option(help: ArgumentHelp("Firebase: link this provider's identities, FIREBASE_ID=ID (repeatable), e.g. google.com=google.",
                                   discussion: "ID is the upstream provider's id in this server's configuration; identities of providers not named are not linked."))
        var provider: [String] = []

        var providerMap: [String: String] {
            var map: [String: String] = [:]
            for entry in provider {
                let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                    fail(ConfigurationError("--provider takes FIREBASE_PROVIDER_ID=PROVIDER_ID (e.g. google.com=google), not '\(entry)'"))
                }
                map[parts[0]] = parts[1]
            }
            return map
        }

        func run() async throws {
            guard let data = FileManager.default.contents(atPath: file) else { fail(ConfigurationError("cannot read \(file)")) }
            let text = String(decoding: data, as: UTF8.self)
            let chosen: UserImportFile.Format
            if let format {
                guard let parsed = UserImportFile.Format(rawValue: format) else {
                    fail(ConfigurationError("--format must be firebase, jsonl or csv, not '\(format)'"))
                }
                chosen = parsed
            } else {
                chosen = UserImportFile.guess(path: file, text: text)
            }
            var configText: String?
            if let hashConfig {
                guard let config = FileManager.default.contents(atPath: hashConfig) else { fail(ConfigurationError("cannot read \(hashConfig)")) }
                configText = String(decoding: config, as: UTF8.self)
            }
            let report: [String: JSONValue]
            if target.server != nil {
                var body: [String: JSONValue] = ["format": .string(chosen.rawValue), "data": .string(text), "batch_size": .int(Int64(batchSize))]
                body["hash_config"] = configText.map(JSONValue.string)
                if !providerMap.isEmpty { body["providers"] = .object(providerMap.mapValues(JSONValue.string)) }
                FileHandle.standardError.write(Data("sending \(data.count) bytes to \(target.server ?? "")…\n".utf8))
                report = try await target.perform(AdminCall(.post, "/users/import", body: body)).object ?? [:]
            } else {
                report = try await importHere(text, format: chosen, configText: configText)
            }
            if target.json {
                print(String(decoding: try CanonicalJSON.encode(JSONValue.object(report)), as: UTF8.self))
            } else {
                for failure in report["failures"]?.arrayValue?.compactMap(\.objectValue) ?? [] {
                    let line = failure["line"].map { "\($0.intValue ?? 0)" } ?? "?"
                    let reference = failure["reference"]?.stringValue.map { $0.isEmpty ? "" : " (\($0))" } ?? ""
                    FileHandle.standardError.write(Data("refused: \(chosen == .firebase ? "user" : "line") \(line)\(reference): \(failure["reason"]?.stringValue ?? "")\n".utf8))
                }
                print("imported: \(report["created"]?.intValue ?? 0) created, \(report["updated"]?.intValue ?? 0) updated, \(report["refused"]?.intValue ?? 0) refused")
            }
            if (report["refused"]?.intValue ?? 0) > 0 { Foundation.exit(1) }
        }

        /// On the database, with progress on a terminal.
        func importHere(_ text: String, format: UserImportFile.Format, configText: String?) async throws -> [String: JSONValue] {
            do {
                let config = try configText.map { try FirebaseHashConfig(parsing: $0) }
                let rows = try UserImportFile.rows(text, format: format, hashConfig: config, providers: providerMap)
                let terminal = isatty(STDERR_FILENO) == 1, total = rows.count
                let report = try await withProvider(target.storage.flags) { provider in
                    try await provider.userImport.run(rows, batchSize: batchSize, by: .operator) { done in
                        if terminal { FileHandle.standardError.write(Data("\rimporting: \(done)/\(total)".utf8)) }
                    }
                }
                if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
                return report.adminJSON
            } catch let error as ImportedHashError {
                fail(ConfigurationError("--hash-config: \(error.message)"))
            } catch let error as UserImportFile.ImportFileError {
                fail(ConfigurationError("\(file): \(error.description)"))
            } catch let error as ConfigurationError { fail(error) } catch let error as DatabaseUnavailable { fail(error) }
        }
    }
}
