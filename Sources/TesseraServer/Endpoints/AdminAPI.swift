import Foundation
import HTTPTypes
import Hummingbird
import TesseraCore
import TesseraDomain

/// The admin API under `/admin/v1/` (docs/admin-api.md, docs/admin.openapi.json): clients,
/// users, keys and the audit trail, over the same rules as the console and the CLI.
/// Authorized by an access token of this provider with the `tessera:admin` scope: a client's
/// (client credentials), or a user's who holds the admin role.
/// One admin API call, however it arrived: over HTTP, or from the CLI on the server's own
/// database (the same table of operations answers both).
public struct AdminCall: Sendable {
    public var method: HTTPRequest.Method
    /// The path below `/admin/v1`, e.g. `/users/alice@example.com/disable` (not percent-encoded).
    public var path: String
    public var query: [String: String]
    /// The JSON body, when one was sent.
    var body: AdminBody?
    /// The `If-Match` header.
    public var ifMatch: String?
    /// The body's members.
    public var bodyMembers: [String: JSONValue]? { body?.members }
    /// The `{id}` segment of the path, once matched.
    var id = ""

    public init(_ method: HTTPRequest.Method, _ path: String, query: [String: String] = [:], body: [String: JSONValue]? = nil,
                ifMatch: String? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.body = body.map(AdminBody.init(members:))
        self.ifMatch = ifMatch
    }

    /// The body, which this operation needs.
    func requiredBody() throws -> AdminBody {
        guard let body else {
            throw AdminProblem(status: .unsupportedMediaType, slug: "unsupported-media-type", title: "Send JSON",
                               detail: "This operation needs a JSON body (Content-Type: application/json).")
        }
        return body
    }
}

/// What an admin API call answers: a status, a JSON body (problem details on failure), and the
/// resource's version (its ETag) and location where they apply.
public struct AdminAnswer: Sendable {
    public var status: HTTPResponse.Status
    public var body: JSONValue?
    public var version: Int64?
    public var location: String?

    init(_ object: [String: JSONValue], status: HTTPResponse.Status = .ok, version: Int64? = nil, location: String? = nil) {
        self.status = status
        self.body = .object(object)
        self.version = version
        self.location = location
    }

    static let noContent = AdminAnswer(status: .noContent, body: nil, version: nil, location: nil)

    private init(status: HTTPResponse.Status, body: JSONValue?, version: Int64?, location: String?) {
        self.status = status
        self.body = body
        self.version = version
        self.location = location
    }

    init(_ problem: AdminProblem) {
        self.init(status: problem.status, body: .object(problem.body), version: nil, location: nil)
    }
}

/// The admin API under `/admin/v1/` (docs/admin.md, docs/admin.openapi.json): clients, users,
/// keys and the audit trail, over the same rules as the console and the CLI. Authorized by an
/// access token of this provider with the `tessera:admin` scope: a client's (client
/// credentials), or a user's who holds the admin role.
public struct AdminAPI: Sendable {
    let services: Services
    static let prefix = "/admin/v1"
    /// The most items a page holds; the default is 50.
    static let maxPageSize = 200

    public init(services: Services) {
        self.services = services
    }

    typealias Operation = @Sendable (AdminAPI, AdminCall, Administrator) async throws -> AdminAnswer

    /// Every operation: method, path pattern (`:id` is a segment), handler.
    static let operations: [(HTTPRequest.Method, String, Operation)] = [
        (.get, "/clients", { api, call, _ in try await api.listClients(call) }),
        (.post, "/clients", { api, call, admin in try await api.createClient(call, by: admin) }),
        (.get, "/clients/:id", { api, call, _ in try await api.showClient(call.id) }),
        (.patch, "/clients/:id", { api, call, admin in try await api.updateClient(call, by: admin) }),
        (.delete, "/clients/:id", { api, call, admin in
            try await api.services.clientAdministration.delete(id: call.id, by: admin)
            return .noContent
        }),
        (.post, "/clients/:id/secret", { api, call, admin in try await api.rotateSecret(call, by: admin) }),
        (.get, "/users", { api, call, _ in try await api.listUsers(call) }),
        (.post, "/users/import", { api, call, admin in try await api.importUsers(call, by: admin) }),
        (.post, "/users", { api, call, admin in try await api.createUser(call, by: admin) }),
        (.get, "/users/:id", { api, call, _ in try await api.showUser(call.id) }),
        (.patch, "/users/:id", { api, call, admin in try await api.updateUser(call, by: admin) }),
        (.delete, "/users/:id", { api, call, admin in
            try await api.services.deleteUser(try await api.users.user(call.id), by: admin)
            return .noContent
        }),
        (.put, "/users/:id/password", { api, call, admin in
            let password = try call.requiredBody().only(["password"]).requiredString("password")
            return api.user(try await api.users.setPassword(call.id, to: password, by: admin))
        }),
        (.delete, "/users/:id/password", { api, call, admin in api.user(try await api.users.setPassword(call.id, to: nil, by: admin)) }),
        (.post, "/users/:id/verify-email", { api, call, admin in api.user(try await api.users.markEmailVerified(call.id, by: admin)) }),
        (.post, "/users/:id/disable", { api, call, admin in api.user(try await api.users.disable(call.id, by: admin)) }),
        (.post, "/users/:id/enable", { api, call, admin in api.user(try await api.users.enable(call.id, by: admin)) }),
        (.post, "/users/:id/sign-out", { api, call, admin in
            try await api.users.signOutEverywhere(call.id, by: admin)
            return .noContent
        }),
        (.get, "/keys", { api, _, _ in AdminAnswer(["keys": try await api.keys()]) }),
        (.post, "/keys/rotate", { api, _, admin in
            let kid = try await api.services.rotateKeys(by: admin)
            return AdminAnswer(["current": .string(kid), "keys": try await api.keys()])
        }),
        (.get, "/audit", { api, call, _ in try await api.audit(call) }),
    ]

    var users: UserAdministration { services.userAdministration }

    /// Runs a call as `admin` (the CLI on the database: ``Administrator/operator``); errors are
    /// answered as problem details, as over HTTP.
    public func perform(_ call: AdminCall, by admin: Administrator) async -> AdminAnswer {
        do {
            var call = call
            let segments = call.path.split(separator: "/", omittingEmptySubsequences: true)
            let pathMatches: [(Operation, String)] = Self.operations.compactMap { method, pattern, operation in
                let parts = pattern.split(separator: "/")
                guard parts.count == segments.count else { return nil }
                var id = ""
                for (part, segment) in zip(parts, segments) {
                    if part == ":id" { id = String(segment) } else if part != segment { return nil }
                }
                return method == call.method ? (operation, id) : nil
            }
            guard let (operation, id) = pathMatches.first else {
                throw AdminProblem(status: .notFound, slug: "not-found", title: "Not found", detail: "No admin operation is \(call.method) \(call.path).")
            }
            call.id = id
            return try await operation(self, call, admin)
        } catch {
            let problem = AdminProblem(error)
            if problem.status == .internalServerError {
                services.logger.error("admin API call failed", metadata: ["path": "\(call.path)", "error": "\(error)"])
            }
            return AdminAnswer(problem)
        }
    }

    func register(on router: Router<TesseraRequestContext>) {
        router.get(RouterPath(TesseraPath.adminOpenAPI)) { _, _ in
            Responses.json(Data(AdminOpenAPI.document.utf8), cache: true)
        }
        let api = router.group(RouterPath(Self.prefix))
        for (method, pattern, _) in Self.operations {
            api.on(RouterPath(pattern), method: method) { request, context in
                var request = request
                do {
                    let admin = try await administrator(request)
                    var call = AdminCall(method, String(request.uri.path.dropFirst(Self.prefix.count)).removingPercentEncoding ?? "",
                                         ifMatch: request.headers[.ifMatch])
                    call.query = request.queryParameters.values
                    if request.headers[.contentType] != nil || (request.headers[.contentLength].flatMap(Int.init) ?? 0) > 0 {
                        call.body = try await AdminBody.read(&request, upTo: pattern == "/users/import" ? AdminBody.maxImportSize : AdminBody.maxSize)
                    }
                    return response(await perform(call, by: admin))
                } catch {
                    return response(AdminAnswer(AdminProblem(error)))
                }
            }
        }
    }

    func response(_ answer: AdminAnswer) -> Response {
        var headers: HTTPFields = [:]
        Responses.addNoStore(&headers)
        if let version = answer.version { headers[.eTag] = "\"\(version)\"" }
        if let location = answer.location { headers[.location] = location }
        switch answer.status {
        case .unauthorized: headers[.wwwAuthenticate] = "Bearer realm=\"tessera\", error=\"invalid_token\""
        case .forbidden: headers[.wwwAuthenticate] = "Bearer realm=\"tessera\", error=\"insufficient_scope\", scope=\"\(Administrator.scope)\""
        case .serviceUnavailable: headers[.retryAfter] = String(Outage.retryAfter)
        default: break
        }
        guard let body = answer.body, let data = try? CanonicalJSON.encode(body) else { return Response(status: answer.status, headers: headers) }
        headers[.contentType] = answer.status.code >= 400 ? "application/problem+json" : "application/json"
        return Response(status: answer.status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
    }

    /// Who the request's bearer token speaks for, when it may administer.
    func administrator(_ request: Request) async throws -> Administrator {
        guard let token = request.bearerToken else {
            throw AdminProblem.unauthorized("Send an access token with the \(Administrator.scope) scope as Authorization: Bearer.")
        }
        let validated: AccessTokenValidator.Validated
        do { validated = try await services.accessTokens.validate(token) } catch let outage as DatabaseUnavailable {
            throw outage
        } catch {
            throw AdminProblem.unauthorized("The access token is invalid, expired or revoked.")
        }
        return try await users.administrator(for: validated)
    }

    func keys() async throws -> JSONValue {
        .array(try await services.keys.list().map { .object(AdminWire.key($0)) })
    }

    // MARK: Clients

    func listClients(_ call: AdminCall) async throws -> AdminAnswer {
        let page = try await services.clientAdministration.list(after: try AdminWire.cursor(call.query["page_token"], as: ClientCursor.self),
                                                                limit: try limit(call.query["limit"]))
        return AdminAnswer(["clients": .array(page.items.map { .object(AdminWire.client($0)) }), "next_page_token": AdminWire.pageToken(page.next)])
    }

    func showClient(_ id: String) async throws -> AdminAnswer {
        let client = try await services.clientAdministration.client(id: id)
        return AdminAnswer(AdminWire.client(client), version: client.version)
    }

    static let clientMembers: Set<String> = ["client_name", "redirect_uris", "post_logout_redirect_uris", "scope", "grant_types",
                                             "first_party", "resource_server", "link_domains", "ios_apps", "android_apps", "jwks",
                                             "require_pushed_authorization_requests", "authenticator", "device_sso_group"]

    func createClient(_ call: AdminCall, by admin: Administrator) async throws -> AdminAnswer {
        let body = try call.requiredBody()
            .only(Self.clientMembers.union(["client_id", "client_secret", "token_endpoint_auth_method", "subject_type",
                                             "assertion_issuer", "assertion_lifetime"]))
        var registration = ClientRegistration(name: try body.requiredString("client_name"), redirectURIs: try body.strings("redirect_uris") ?? [])
        registration.id = try body.string("client_id")
        registration.secret = try body.string("client_secret")
        registration.postLogoutRedirectURIs = try body.strings("post_logout_redirect_uris") ?? []
        if let scope = try body.string("scope") { registration.scopes = ScopeSet(parsing: scope).values }
        if let grants = try body.strings("grant_types") { registration.grantTypes = grants }
        registration.firstParty = try body.bool("first_party") ?? false
        registration.resourceServer = try body.bool("resource_server") ?? false
        registration.requirePushedRequests = try body.bool("require_pushed_authorization_requests") ?? false
        registration.authenticator = try body.bool("authenticator") ?? false
        registration.deviceSSOGroup = try body.string("device_sso_group")
        registration.jwks = try body.decoded("jwks", as: JWKSet.self)
        registration.assertionIssuer = try body.string("assertion_issuer")
        registration.assertionLifetime = try body.int("assertion_lifetime")
        registration.appLinks = try appLinks(body, default: ClientAppLinks())
        switch try body.string("token_endpoint_auth_method") {
        case nil, "client_secret_basic", "client_secret_post": registration.authMethod = nil
        case "none": registration.authMethod = ClientAuthMethod.none
        case "private_key_jwt": registration.authMethod = .privateKeyJWT
        case let other?: throw AdminProblem.badRequest("'\(other)' is not a token_endpoint_auth_method (client_secret_basic, none, private_key_jwt)")
        }
        switch try body.string("subject_type") {
        case nil, "public": registration.pairwise = false
        case "pairwise": registration.pairwise = true
        case let other?: throw AdminProblem.badRequest("'\(other)' is not a subject_type (public, pairwise)")
        }
        let (client, secret) = try await services.clientAdministration.register(registration, by: admin)
        var object = AdminWire.client(client)
        if let secret { object["client_secret"] = .string(secret) }
        return AdminAnswer(object, status: .created, version: client.version, location: "\(services.issuer)\(Self.prefix)/clients/\(client.id)")
    }

    func updateClient(_ call: AdminCall, by admin: Administrator) async throws -> AdminAnswer {
        let version = try requiredVersion(call.ifMatch)
        let body = try call.requiredBody().only(Self.clientMembers)
        var changes = ClientChanges()
        changes.name = try body.string("client_name")
        changes.redirectURIs = try body.strings("redirect_uris")
        changes.postLogoutRedirectURIs = try body.strings("post_logout_redirect_uris")
        changes.scopes = try body.string("scope").map { ScopeSet(parsing: $0).values }
        changes.grantTypes = try body.strings("grant_types")
        changes.firstParty = try body.bool("first_party")
        changes.resourceServer = try body.bool("resource_server")
        changes.requirePushedRequests = try body.bool("require_pushed_authorization_requests")
        changes.authenticator = try body.bool("authenticator")
        if body.has("device_sso_group") { changes.deviceSSOGroup = .some(try body.string("device_sso_group")) }
        changes.jwks = try body.decoded("jwks", as: JWKSet.self)
        if ["link_domains", "ios_apps", "android_apps"].contains(where: body.has) {
            changes.appLinks = try appLinks(body, default: try await services.clientAdministration.client(id: call.id).appLinks)
        }
        let client = try await services.clientAdministration.update(id: call.id, changes, ifVersion: version, by: admin)
        return AdminAnswer(AdminWire.client(client), version: client.version)
    }

    func rotateSecret(_ call: AdminCall, by admin: Administrator) async throws -> AdminAnswer {
        let grace = try (call.body ?? AdminBody(members: [:])).only(["grace_period"]).int("grace_period") ?? 0
        let (client, secret) = try await services.clientAdministration.rotateSecret(id: call.id, gracePeriod: grace, by: admin)
        var object = AdminWire.client(client)
        object["client_secret"] = .string(secret)
        return AdminAnswer(object, version: client.version)
    }

    /// The app-link members of a body, each replacing its part of `current` when present.
    func appLinks(_ body: AdminBody, default current: ClientAppLinks) throws -> ClientAppLinks {
        var links = current
        links.linkDomains = try body.strings("link_domains") ?? links.linkDomains
        links.appleAppIDs = try body.strings("ios_apps") ?? links.appleAppIDs
        if body.has("android_apps") {
            let shape = AdminProblem.badRequest("'android_apps' must be an array of {package_name, sha256_cert_fingerprints}")
            guard case .array(let items)? = body.members["android_apps"] else { throw shape }
            links.androidApps = try items.map { item in
                guard case .object(let app) = item else { throw shape }
                let member = AdminBody(members: app)
                return .init(packageName: try member.requiredString("package_name"),
                             certificateFingerprints: (try member.strings("sha256_cert_fingerprints") ?? []).map { $0.uppercased() })
            }
        }
        return links
    }

    // MARK: Users

    func listUsers(_ call: AdminCall) async throws -> AdminAnswer {
        let page = try await users.list(matching: call.query["q"], after: try AdminWire.cursor(call.query["page_token"], as: String.self),
                                        limit: try limit(call.query["limit"]))
        return AdminAnswer(["users": .array(page.items.map { .object(AdminWire.user($0)) }), "next_page_token": AdminWire.pageToken(page.next)])
    }

    func showUser(_ id: String) async throws -> AdminAnswer {
        let details = try await users.details(of: id)
        return AdminAnswer(AdminWire.details(details), version: details.user.version)
    }

    func createUser(_ call: AdminCall, by admin: Administrator) async throws -> AdminAnswer {
        let body = try call.requiredBody().only(["email", "password", "email_verified", "profile", "roles"])
        let created = try await users.create(
            email: try body.requiredString("email"), password: try body.string("password"), profile: try body.object("profile") ?? [:],
            emailVerified: try body.bool("email_verified") ?? true, roles: Set(try body.strings("roles") ?? []), by: admin)
        return AdminAnswer(AdminWire.user(created), status: .created, version: created.version,
                           location: "\(services.issuer)\(Self.prefix)/users/\(created.id)")
    }

    func updateUser(_ call: AdminCall, by admin: Administrator) async throws -> AdminAnswer {
        let version = try requiredVersion(call.ifMatch)
        let body = try call.requiredBody().only(["profile", "roles"])
        let updated = try await users.update(call.id, profile: try body.object("profile") ?? [:],
                                             roles: try body.strings("roles").map(Set.init), ifVersion: version, by: admin)
        return AdminAnswer(AdminWire.user(updated), version: updated.version)
    }

    func user(_ user: User) -> AdminAnswer {
        AdminAnswer(AdminWire.user(user), version: user.version)
    }

    /// `{"format": "firebase"|"jsonl"|"csv", "data": "<the file>", "hash_config": …, "providers": {"google.com": "google"}, "batch_size": 500}`.
    func importUsers(_ call: AdminCall, by admin: Administrator) async throws -> AdminAnswer {
        let body = try call.requiredBody().only(["format", "data", "hash_config", "batch_size", "providers"])
        var providers: [String: String] = [:]
        for (firebaseID, value) in try body.object("providers") ?? [:] {
            guard let providerID = value.stringValue, !providerID.isEmpty else {
                throw AdminProblem.badRequest("'providers' maps Firebase provider ids to this server's provider ids, e.g. {\"google.com\": \"google\"}")
            }
            providers[firebaseID] = providerID
        }
        guard let format = UserImportFile.Format(rawValue: try body.requiredString("format")) else {
            throw AdminProblem.badRequest("'format' must be one of \(UserImportFile.Format.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let hashConfig: FirebaseHashConfig?
        do {
            switch body.members["hash_config"] {
            case nil, .null?: hashConfig = nil
            case .string(let text)?: hashConfig = try FirebaseHashConfig(parsing: text)
            case let value?: hashConfig = try FirebaseHashConfig(parsing: String(decoding: try CanonicalJSON.encode(value), as: UTF8.self))
            }
        } catch let error as ImportedHashError {
            throw AdminProblem.badRequest("'hash_config': \(error.message)")
        }
        let rows: [Result<UserImportRow, UserImportFailure>]
        do { rows = try UserImportFile.rows(try body.requiredString("data"), format: format, hashConfig: hashConfig, providers: providers) } catch let error as UserImportFile.ImportFileError {
            throw AdminProblem.badRequest(error.description)
        }
        let batch = Int(try body.int("batch_size") ?? Int64(UserImport.defaultBatchSize))
        guard (1...5000).contains(batch) else { throw AdminProblem.badRequest("'batch_size' must be 1 to 5000") }
        let report = try await services.userImport.run(rows, batchSize: batch, by: admin)
        return AdminAnswer(AdminWire.report(report))
    }

    // MARK: Audit

    func audit(_ call: AdminCall) async throws -> AdminAnswer {
        var filter = AuditFilter()
        if let kind = call.query["kind"], !kind.isEmpty {
            guard let parsed = AuditEvent.Kind(rawValue: kind) else {
                throw AdminProblem.badRequest("'\(kind)' is not an event kind (\(AuditEvent.Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            filter.kind = parsed
        }
        if let user = call.query["user"], !user.isEmpty {
            filter.userID = (try? await users.user(user))?.id ?? user
        }
        if let since = call.query["since"] {
            guard let value = Int64(since) else { throw AdminProblem.badRequest("'since' must be a time in seconds since 1970") }
            filter.since = value
        }
        let events = try await services.audit.events(filter, limit: try limit(call.query["limit"]))
        return AdminAnswer(["events": .array(events.map { .object(AdminWire.event($0)) })])
    }

    // MARK: Reading

    func limit(_ text: String?) throws -> Int {
        guard let text else { return 50 }
        guard let value = Int(text), (1...Self.maxPageSize).contains(value) else {
            throw AdminProblem.badRequest("'limit' must be a whole number from 1 to \(Self.maxPageSize)")
        }
        return value
    }

    /// The version `If-Match` names: required on updates, so nobody overwrites a change they
    /// have not seen (`*` says the caller means to overwrite whatever is there).
    func requiredVersion(_ header: String?) throws -> Int64? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else {
            throw AdminProblem(status: .preconditionRequired, slug: "precondition-required", title: "If-Match is required",
                               detail: "Send the ETag you read (GET) as If-Match, so a change made meanwhile is not overwritten; If-Match: * overwrites.")
        }
        if header == "*" { return nil }
        let tag = header.hasPrefix("W/") ? String(header.dropFirst(2)) : header
        guard tag.count >= 3, tag.first == "\"", tag.last == "\"", let version = Int64(tag.dropFirst().dropLast()) else {
            throw AdminProblem.badRequest("If-Match must be an ETag this API gave out, such as \"3\"")
        }
        return version
    }
}
