import ArgumentParser
import Foundation
import TesseraAuthCore
import TesseraCore
import TesseraDomain
import TesseraInfrastructure
import TesseraNode
import TesseraServer

/// Where an admin command acts: a running server, through its admin API (`--server`), or the
/// database directly (`--database`, as `serve` would open it). Both are ``AdminOperations``
/// (``RemoteAdmin`` over HTTP, ``AdminService`` in process), so they answer alike.
struct AdminTarget: ParsableArguments {
    @Option(help: ArgumentHelp("A running server's URL (its issuer): act through its admin API.",
                               discussion: "The client credentials come from TESSERA_ADMIN_CLIENT_ID and TESSERA_ADMIN_CLIENT_SECRET: a client allowed the tessera:admin scope (tessera clients add --first-party --grant-type client_credentials --scope tessera:admin)."))
    var server: String?
    @OptionGroup var storage: StorageOptions
    @Flag(help: "Print JSON (the admin API's answer) instead of text.") var json = false

    static let clientIDVariable = "TESSERA_ADMIN_CLIENT_ID"
    static let clientSecretVariable = "TESSERA_ADMIN_CLIENT_SECRET"

    func validate() throws {
        if server != nil && (storage.database != nil || storage.config != nil) {
            throw ValidationError("give either --server (a running server) or --database/--config (the database), not both")
        }
    }

    /// Runs `body` on the target's operations. A problem ends the command with its detail: a
    /// request the rules refuse (400) is the caller's to fix and exits 2, as for bad options;
    /// the rest exits 1. `settings` adds to the database's (a setting the operation uses).
    func run<T>(settings: [String: String] = [:], _ body: (any AdminOperations) async throws -> T) async throws -> T {
        do {
            if let server {
                return try await body(RemoteAdmin(server: server))
            }
            return try await withProvider(storage.flags.merging(settings) { $1 }) { provider in
                try await body(AdminService(services: provider.services, admin: .operator))
            }
        } catch let problem as AdminProblem {
            FileHandle.standardError.write(Data("tessera: error: \(problem.detail)\n".utf8))
            Foundation.exit(problem.status == 400 ? 2 : 1)
        } catch let error as ConfigurationError { fail(error) } catch let error as DatabaseUnavailable { fail(error) } catch let error as AdminCommandError {
            fail(error)
        }
    }

    /// Prints an answer: its JSON, or `text` for a person.
    func print<Value: Encodable>(_ value: Value, text: (Value) -> String) throws {
        if json {
            Swift.print(String(decoding: try CanonicalJSON.encode(value), as: UTF8.self))
        } else {
            Swift.print(text(value), terminator: "")
        }
    }
}

struct AdminCommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The admin operations of a running server, over its admin API, with a token from client
/// credentials.
struct RemoteAdmin: AdminOperations {
    let server: String
    let transport = AsyncHTTPClientTransport()
    /// One access token for the command's calls (`users update` makes up to four), fetched at the first.
    let tokens = TokenCache()

    actor TokenCache {
        var token: String?

        func token(_ fetch: @Sendable () async throws -> String) async throws -> String {
            if let token { return token }
            let fetched = try await fetch()
            token = fetched
            return fetched
        }
    }

    // MARK: The operations

    func clients(pageToken: String?, limit: Int?) async throws -> AdminClientList {
        try await call("GET", "/clients", query: ["page_token": pageToken, "limit": limit.map(String.init)])
    }

    func client(_ id: String) async throws -> AdminClientInfo {
        try await call("GET", "/clients/\(segment(id))")
    }

    func registerClient(_ settings: AdminClientSettings) async throws -> AdminClientInfo {
        try await call("POST", "/clients", body: settings)
    }

    func updateClient(_ id: String, _ settings: AdminClientSettings, ifVersion version: Int64?) async throws -> AdminClientInfo {
        try await call("PATCH", "/clients/\(segment(id))", body: settings, ifMatch: version.map { "\"\($0)\"" } ?? "*")
    }

    func deleteClient(_ id: String) async throws {
        try await send("DELETE", "/clients/\(segment(id))")
    }

    func rotateSecret(_ id: String, _ rotation: AdminSecretRotation) async throws -> AdminClientInfo {
        try await call("POST", "/clients/\(segment(id))/secret", body: rotation)
    }

    func users(matching query: String?, pageToken: String?, limit: Int?) async throws -> AdminUserList {
        try await call("GET", "/users", query: ["q": query, "page_token": pageToken, "limit": limit.map(String.init)])
    }

    func user(_ reference: String) async throws -> AdminUserDetails {
        try await call("GET", "/users/\(segment(reference))")
    }

    func createUser(_ user: AdminNewUser) async throws -> AdminUserInfo {
        try await call("POST", "/users", body: user)
    }

    func updateUser(_ reference: String, _ changes: AdminUserChanges, ifVersion version: Int64?) async throws -> AdminUserInfo {
        try await call("PATCH", "/users/\(segment(reference))", body: changes, ifMatch: version.map { "\"\($0)\"" } ?? "*")
    }

    func deleteUser(_ reference: String) async throws {
        try await send("DELETE", "/users/\(segment(reference))")
    }

    func setPassword(_ reference: String, _ change: AdminPasswordChange?) async throws -> AdminUserInfo {
        if let change { return try await call("PUT", "/users/\(segment(reference))/password", body: change) }
        return try await call("DELETE", "/users/\(segment(reference))/password")
    }

    func markEmailVerified(_ reference: String) async throws -> AdminUserInfo {
        try await call("POST", "/users/\(segment(reference))/verify-email")
    }

    func disableUser(_ reference: String) async throws -> AdminUserInfo {
        try await call("POST", "/users/\(segment(reference))/disable")
    }

    func enableUser(_ reference: String) async throws -> AdminUserInfo {
        try await call("POST", "/users/\(segment(reference))/enable")
    }

    func signOutEverywhere(_ reference: String) async throws {
        try await send("POST", "/users/\(segment(reference))/sign-out")
    }

    func importUsers(_ request: AdminImportRequest) async throws -> AdminImportReport {
        try await call("POST", "/users/import", body: request)
    }

    func keys() async throws -> AdminKeyList {
        try await call("GET", "/keys")
    }

    func rotateKeys() async throws -> AdminKeyList {
        try await call("POST", "/keys/rotate")
    }

    func audit(_ query: AdminAuditQuery) async throws -> AdminAuditEventList {
        try await call("GET", "/audit", query: ["kind": query.kind, "user": query.user, "since": query.since.map(String.init),
                                                "limit": query.limit.map(String.init)])
    }

    // MARK: HTTP

    /// One call whose answer is a `T`.
    func call<T: Decodable>(_ method: String, _ path: String, query: [String: String?] = [:], body: (any Encodable)? = nil,
                            ifMatch: String? = nil) async throws -> T {
        let (url, response) = try await send(method, path, query: query, body: body, ifMatch: ifMatch)
        do { return try JSONDecoder().decode(T.self, from: response.body) } catch {
            throw AdminCommandError("\(url.absoluteString) answered what this version can't read (\(error)): is --server a Tessera server of this version?")
        }
    }

    /// One call; a problem answer is thrown as the problem.
    @discardableResult
    func send(_ method: String, _ path: String, query: [String: String?] = [:], body: (any Encodable)? = nil,
              ifMatch: String? = nil) async throws -> (URL, HTTPTransportResponse) {
        let environment = ProcessInfo.processInfo.environment
        guard let id = environment[AdminTarget.clientIDVariable], let secret = environment[AdminTarget.clientSecretVariable] else {
            throw AdminCommandError("--server needs the admin client's credentials in \(AdminTarget.clientIDVariable) and \(AdminTarget.clientSecretVariable)")
        }
        let base = try Self.base(of: server)
        let token = try await tokens.token { try await self.token(base: base, clientID: id, secret: secret) }
        var components = URLComponents(string: base + "/admin/v1")
        components?.percentEncodedPath += path
        let items = query.compactMap { name, value in value.map { URLQueryItem(name: name, value: $0) } }.sorted { $0.name < $1.name }
        if !items.isEmpty { components?.queryItems = items }
        guard let url = components?.url else { throw AdminCommandError("'\(server)' is not a URL") }
        var headers = ["Authorization": "Bearer \(token)", "Accept": "application/json"]
        var data: Data?
        if let body {
            headers["Content-Type"] = "application/json"
            data = try CanonicalJSON.encode(body)
        }
        if let ifMatch { headers["If-Match"] = ifMatch }
        let response = try await send(HTTPTransportRequest(method: method, url: url, headers: headers, body: data))
        if response.status >= 400 {
            guard let problem = try? JSONDecoder().decode(AdminProblem.self, from: response.body) else {
                throw AdminCommandError("\(url.absoluteString) answered \(response.status): is --server a Tessera server of this version?")
            }
            throw problem
        }
        return (url, response)
    }

    /// A path segment: a client id, or a user's address or id.
    func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? text
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

/// Text for people: columns, and `name  value` lines.
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

    static func time(_ seconds: Int64?) -> String {
        guard let seconds else { return "" }
        return Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)
    }

    static func yesNo(_ value: Bool) -> String { value ? "yes" : "no" }

    /// An answer's members, as its JSON has them.
    static func members(_ value: some Encodable) -> [String: JSONValue] {
        (try? JSONDecoder().decode([String: JSONValue].self, from: CanonicalJSON.encode(value))) ?? [:]
    }

    /// `name  value` lines for the members named, in that order; those absent are left out.
    static func fields(_ object: [String: JSONValue], _ names: [String]) -> String {
        let width = names.map(\.count).max() ?? 0
        return names.compactMap { name -> String? in
            guard let value = object[name], value != .null else { return nil }
            let text: String = switch value {
            case .string(let string): string
            case .array(let items) where items.allSatisfy { $0.stringValue != nil }: items.compactMap(\.stringValue).joined(separator: " ")
            case .int(let number) where name.hasSuffix("_at"): time(number) + " (\(number))"
            default: (try? String(decoding: CanonicalJSON.encode(value), as: UTF8.self)) ?? ""
            }
            return name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + text
        }.joined(separator: "\n") + "\n"
    }
}
