import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TesseraCore
import TesseraDomain

/// The admin API under `/admin/v1/` (docs/admin.md, docs/admin.openapi.json): the
/// ``AdminOperations`` over HTTP. Each route reads its request into the operation's typed
/// request, runs it as the caller (``AdminService``) and writes the typed answer, or problem
/// details. Authorized by an access token of this provider with the `tessera:admin` scope: a
/// client's (client credentials), or a user's who holds the admin role.
struct AdminAPI: Sendable {
    let services: Services
    static let prefix = "/admin/v1"

    /// The most a request body may be: 1 MiB; an import carries the whole file: 64 MiB (a
    /// Firebase export of some 100,000 users).
    static let maxBodySize = 1 << 20
    static let maxImportSize = 64 << 20

    /// One request, as an operation reads it.
    struct Call: Sendable {
        /// The `{id}` segment of the path (a client id, or a user's address or id).
        var id: String
        var query: [String: String]
        var body: Data?
        var ifMatch: String?

        /// The body as `T`, which this operation needs.
        func decode<T: AdminRequestBody>(_ type: T.Type) throws -> T {
            try AdminRequestDecoding.decode(T.self, from: try requiredBody())
        }

        func settings() throws -> AdminClientSettings {
            do { return try JSONDecoder().decode(AdminClientSettings.self, from: try requiredBody()) } catch {
                throw AdminProblem(error)
            }
        }

        func requiredBody() throws -> Data {
            guard let body else {
                throw AdminProblem(status: 415, slug: "unsupported-media-type", title: "Send JSON",
                                   detail: "This operation needs a JSON body (Content-Type: application/json).")
            }
            return body
        }

        /// A whole-number query parameter.
        func number(_ name: String) throws -> Int? {
            guard let text = query[name] else { return nil }
            guard let value = Int(text) else { throw AdminProblem.badRequest("'\(name)' must be a whole number") }
            return value
        }

        /// The version `If-Match` names: required on updates, so nobody overwrites a change
        /// they have not seen (`*` says the caller means to overwrite whatever is there: nil).
        func requiredVersion() throws -> Int64? {
            guard let header = ifMatch?.trimmingCharacters(in: .whitespaces), !header.isEmpty else {
                throw AdminProblem(status: 428, slug: "precondition-required", title: "If-Match is required",
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

    /// What an operation answers: a status, a typed body, and the resource's version (its
    /// ETag) and location where they apply.
    struct Reply: Sendable {
        var status: HTTPResponse.Status = .ok
        var body: (any Encodable & Sendable)?
        var version: Int64?
        var location: String?

        static let noContent = Reply(status: .noContent)

        static func client(_ client: AdminClientInfo, status: HTTPResponse.Status = .ok) -> Reply {
            Reply(status: status, body: client, version: client.version)
        }

        static func user(_ user: AdminUserInfo, status: HTTPResponse.Status = .ok) -> Reply {
            Reply(status: status, body: user, version: user.version)
        }
    }

    typealias Operation = @Sendable (AdminService, Call, _ issuer: String) async throws -> Reply

    /// Every operation: method, path pattern (`:id` is a segment), handler.
    static let operations: [(HTTPRequest.Method, String, Operation)] = [
        (.get, "/clients", { admin, call, _ in
            Reply(body: try await admin.clients(pageToken: call.query["page_token"], limit: try call.number("limit")))
        }),
        (.post, "/clients", { admin, call, issuer in
            var reply = Reply.client(try await admin.registerClient(try call.settings()), status: .created)
            reply.location = "\(issuer)\(prefix)/clients/\(((reply.body as? AdminClientInfo)?.clientID).map(pathSegment) ?? "")"
            return reply
        }),
        (.get, "/clients/:id", { admin, call, _ in .client(try await admin.client(call.id)) }),
        (.patch, "/clients/:id", { admin, call, _ in
            let version = try call.requiredVersion()
            return .client(try await admin.updateClient(call.id, try call.settings(), ifVersion: version))
        }),
        (.delete, "/clients/:id", { admin, call, _ in
            try await admin.deleteClient(call.id)
            return .noContent
        }),
        (.post, "/clients/:id/secret", { admin, call, _ in
            .client(try await admin.rotateSecret(call.id, call.body == nil ? AdminSecretRotation() : try call.decode(AdminSecretRotation.self)))
        }),
        (.get, "/users", { admin, call, _ in
            Reply(body: try await admin.users(matching: call.query["q"], pageToken: call.query["page_token"], limit: try call.number("limit")))
        }),
        (.post, "/users/import", { admin, call, _ in Reply(body: try await admin.importUsers(try call.decode(AdminImportRequest.self))) }),
        (.post, "/users", { admin, call, issuer in
            let user = try await admin.createUser(try call.decode(AdminNewUser.self))
            var reply = Reply.user(user, status: .created)
            reply.location = "\(issuer)\(prefix)/users/\(user.id)"
            return reply
        }),
        (.get, "/users/:id", { admin, call, _ in
            let details = try await admin.user(call.id)
            return Reply(body: details, version: details.user.version)
        }),
        (.patch, "/users/:id", { admin, call, _ in
            let version = try call.requiredVersion()
            return .user(try await admin.updateUser(call.id, try call.decode(AdminUserChanges.self), ifVersion: version))
        }),
        (.delete, "/users/:id", { admin, call, _ in
            try await admin.deleteUser(call.id)
            return .noContent
        }),
        (.put, "/users/:id/password", { admin, call, _ in .user(try await admin.setPassword(call.id, try call.decode(AdminPasswordChange.self))) }),
        (.delete, "/users/:id/password", { admin, call, _ in .user(try await admin.setPassword(call.id, nil)) }),
        (.post, "/users/:id/verify-email", { admin, call, _ in .user(try await admin.markEmailVerified(call.id)) }),
        (.post, "/users/:id/disable", { admin, call, _ in .user(try await admin.disableUser(call.id)) }),
        (.post, "/users/:id/enable", { admin, call, _ in .user(try await admin.enableUser(call.id)) }),
        (.post, "/users/:id/sign-out", { admin, call, _ in
            try await admin.signOutEverywhere(call.id)
            return .noContent
        }),
        (.get, "/keys", { admin, _, _ in Reply(body: try await admin.keys()) }),
        (.post, "/keys/rotate", { admin, _, _ in Reply(body: try await admin.rotateKeys()) }),
        (.get, "/audit", { admin, call, _ in
            var query = AdminAuditQuery(kind: call.query["kind"], user: call.query["user"], limit: try call.number("limit"))
            if let since = call.query["since"] {
                guard let value = Int64(since) else { throw AdminProblem.badRequest("'since' must be a time in seconds since 1970") }
                query.since = value
            }
            return Reply(body: try await admin.audit(query))
        }),
    ]

    func register(on router: Router<TesseraRequestContext>) {
        router.get(RouterPath(TesseraPath.adminOpenAPI)) { _, _ in
            Responses.json(Data(AdminOpenAPI.document.utf8), cache: true)
        }
        let api = router.group(RouterPath(Self.prefix))
        for (method, pattern, operation) in Self.operations {
            api.on(RouterPath(pattern), method: method) { request, context in
                var request = request
                do {
                    let admin = try await administrator(request)
                    let raw = context.parameters.get("id") ?? ""
                    var call = Call(id: raw.removingPercentEncoding ?? raw, query: request.queryParameters.values, body: nil,
                                    ifMatch: request.headers[.ifMatch])
                    if request.headers[.contentType] != nil || (request.headers[.contentLength].flatMap(Int.init) ?? 0) > 0 {
                        call.body = try await Self.body(&request, upTo: pattern == "/users/import" ? Self.maxImportSize : Self.maxBodySize)
                    }
                    return try response(try await operation(AdminService(services: services, admin: admin), call, services.issuer))
                } catch {
                    return response(AdminProblem(error))
                }
            }
        }
    }

    /// A JSON request body, up to `limit` bytes.
    static func body(_ request: inout Request, upTo limit: Int) async throws -> Data {
        let type = request.headers[.contentType]?.lowercased() ?? ""
        guard type.hasPrefix("application/json") || type.hasPrefix("application/merge-patch+json") else {
            throw AdminProblem(status: 415, slug: "unsupported-media-type", title: "Send JSON", detail: "The request body must be application/json.")
        }
        do { return Data(buffer: try await request.collectBody(upTo: limit)) } catch {
            throw AdminProblem(status: 413, slug: "too-large", title: "Too large", detail: "The request body is over \(limit >> 20) MiB.")
        }
    }

    func response(_ reply: Reply) throws -> Response {
        var headers: HTTPFields = [:]
        Responses.addNoStore(&headers)
        if let version = reply.version { headers[.eTag] = "\"\(version)\"" }
        if let location = reply.location { headers[.location] = location }
        guard let body = reply.body else { return Response(status: reply.status, headers: headers) }
        headers[.contentType] = "application/json"
        return Response(status: reply.status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: try CanonicalJSON.encode(body))))
    }

    func response(_ problem: AdminProblem) -> Response {
        var headers: HTTPFields = [:]
        Responses.addNoStore(&headers)
        switch problem.status {
        case 401: headers[.wwwAuthenticate] = "Bearer realm=\"tessera\", error=\"invalid_token\""
        case 403: headers[.wwwAuthenticate] = "Bearer realm=\"tessera\", error=\"insufficient_scope\", scope=\"\(Administrator.scope)\""
        case 503: headers[.retryAfter] = String(Outage.retryAfter)
        default: break
        }
        headers[.contentType] = "application/problem+json"
        let data = (try? CanonicalJSON.encode(problem)) ?? Data()
        return Response(status: HTTPResponse.Status(code: problem.status), headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
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
        return try await services.userAdministration.administrator(for: validated)
    }

    static func pathSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? text
    }
}
