import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TesseraCore
import TesseraDomain

/// An admin API error as RFC 9457 problem details (`application/problem+json`): `type` names
/// the kind of problem (`urn:tessera:problem:SLUG`, listed in docs/admin-api.md), `detail`
/// says what to do about this one.
struct AdminProblem: Error {
    var status: HTTPResponse.Status
    var slug: String
    var title: String
    var detail: String
    var extra: [String: JSONValue] = [:]

    static func badRequest(_ detail: String) -> AdminProblem {
        AdminProblem(status: .badRequest, slug: "invalid-request", title: "The request is not valid", detail: detail)
    }

    static func unauthorized(_ detail: String) -> AdminProblem {
        AdminProblem(status: .unauthorized, slug: "unauthorized", title: "An admin access token is required", detail: detail)
    }

    static func forbidden(_ detail: String) -> AdminProblem {
        AdminProblem(status: .forbidden, slug: "forbidden", title: "Not allowed", detail: detail)
    }

    var body: [String: JSONValue] {
        var body = extra
        body["type"] = .string("urn:tessera:problem:" + slug)
        body["title"] = .string(title)
        body["status"] = .int(Int64(status.code))
        body["detail"] = .string(detail)
        return body
    }
}

extension AdminProblem {
    /// The problem an error of the rules (or of reading the request) is.
    init(_ error: any Error) {
        switch error {
        case let problem as AdminProblem:
            self = problem
        case AdminError.notFound(let what):
            self.init(status: .notFound, slug: "not-found", title: "Not found", detail: "\(what) was not found.")
        case AdminError.versionMismatch(let current):
            self.init(status: .preconditionFailed, slug: "version-mismatch", title: "Changed since you read it",
                      detail: "\(AdminError.versionMismatch(current: current)).", extra: ["current_version": .int(current)])
        case AdminError.invalid(let message):
            self = .badRequest(message)
        case AdminError.forbidden(let message):
            self = .forbidden(message)
        case AdminError.conflict(let message):
            self.init(status: .conflict, slug: "conflict", title: "Conflicts with what exists", detail: message)
        case let error as ConfigurationError:
            self = .badRequest(error.description)
        case let error as ClaimValidationError:
            self.init(status: .badRequest, slug: "invalid-claim", title: "A profile claim is not valid", detail: "\(error).",
                      extra: ["claim": .string(error.claim)])
        case StoreError.duplicate(let what):
            self.init(status: .conflict, slug: "conflict", title: "Conflicts with what exists", detail: "\(what) exists already.")
        case StoreError.notFound(let what):
            self.init(status: .notFound, slug: "not-found", title: "Not found", detail: "\(what) was not found.")
        case let error as JOSEError:
            self = .badRequest("the keys are not valid: \(error)")
        case is DatabaseUnavailable:
            self.init(status: .serviceUnavailable, slug: "unavailable", title: "Temporarily unavailable",
                      detail: "The server can't reach its database right now; try again in a few seconds.")
        case is PasswordHasher.Busy:
            self.init(status: .serviceUnavailable, slug: "busy", title: "Busy",
                      detail: "The server is busy hashing passwords; try again in a few seconds.")
        default:
            self.init(status: .internalServerError, slug: "server-error", title: "Server error",
                      detail: "The server could not complete the request; its log has the details (find them by the X-Request-Id header).")
        }
    }
}

/// A JSON request body, read member by member with errors that name the member.
struct AdminBody: Sendable {
    let members: [String: JSONValue]

    static let maxSize = 1 << 20
    /// An import carries the whole file: 64 MiB (a Firebase export of some 100,000 users).
    static let maxImportSize = 64 << 20

    static func read(_ request: inout Request, upTo limit: Int = maxSize) async throws -> AdminBody {
        let type = request.headers[.contentType]?.lowercased() ?? ""
        guard type.hasPrefix("application/json") || type.hasPrefix("application/merge-patch+json") else {
            throw AdminProblem(status: .unsupportedMediaType, slug: "unsupported-media-type", title: "Send JSON",
                               detail: "The request body must be application/json.")
        }
        let buffer: ByteBuffer
        do { buffer = try await request.collectBody(upTo: limit) } catch {
            throw AdminProblem(status: .contentTooLarge, slug: "too-large", title: "Too large",
                               detail: "The request body is over \(limit >> 20) MiB.")
        }
        guard let object = try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: buffer)), case .object(let members) = object else {
            throw AdminProblem.badRequest("the request body must be a JSON object")
        }
        return AdminBody(members: members)
    }

    /// Refuses members the operation doesn't know: a misspelt one would otherwise be ignored.
    func only(_ known: Set<String>) throws -> AdminBody {
        if let unknown = members.keys.sorted().first(where: { !known.contains($0) }) {
            throw AdminProblem.badRequest("'\(unknown)' is not a member of this request (known: \(known.sorted().joined(separator: ", ")))")
        }
        return self
    }

    func has(_ name: String) -> Bool { members[name] != nil }

    func string(_ name: String) throws -> String? {
        switch members[name] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw AdminProblem.badRequest("'\(name)' must be a string")
        }
    }

    func requiredString(_ name: String) throws -> String {
        guard let value = try string(name), !value.isEmpty else { throw AdminProblem.badRequest("'\(name)' is required") }
        return value
    }

    func bool(_ name: String) throws -> Bool? {
        switch members[name] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        default: throw AdminProblem.badRequest("'\(name)' must be true or false")
        }
    }

    func int(_ name: String) throws -> Int64? {
        switch members[name] {
        case nil, .null?: return nil
        case .int(let value)?: return value
        default: throw AdminProblem.badRequest("'\(name)' must be a whole number")
        }
    }

    func strings(_ name: String) throws -> [String]? {
        switch members[name] {
        case nil, .null?: return nil
        case .array(let items)?:
            return try items.map {
                guard case .string(let value) = $0 else { throw AdminProblem.badRequest("'\(name)' must be an array of strings") }
                return value
            }
        default: throw AdminProblem.badRequest("'\(name)' must be an array of strings")
        }
    }

    func object(_ name: String) throws -> [String: JSONValue]? {
        switch members[name] {
        case nil, .null?: return nil
        case .object(let value)?: return value
        default: throw AdminProblem.badRequest("'\(name)' must be a JSON object")
        }
    }

    /// A member that must be decoded as `T` (a JWK Set), refused with its name when it isn't.
    func decoded<T: Decodable>(_ name: String, as type: T.Type) throws -> T? {
        guard let value = members[name], value != .null else { return nil }
        do { return try JSONDecoder().decode(T.self, from: try CanonicalJSON.encode(value)) } catch {
            throw AdminProblem.badRequest("'\(name)' is not valid: \(error)")
        }
    }
}

/// How the admin API writes clients, users and keys.
enum AdminWire {
    static func client(_ client: Client) -> [String: JSONValue] { object(clientInfo(client)) }

    static func clientInfo(_ client: Client) -> AdminClientInfo {
        var info = AdminClientInfo(
            clientID: client.id, clientName: client.name, redirectURIs: client.redirectURIs,
            postLogoutRedirectURIs: client.postLogoutRedirectURIs, grantTypes: client.grantTypes, scope: client.scopes.description,
            tokenEndpointAuthMethod: client.authMethod.rawValue, firstParty: client.firstParty, subjectType: client.subjectType.rawValue,
            resourceServer: client.resourceServer, linkDomains: client.appLinks.linkDomains, iosApps: client.appLinks.appleAppIDs,
            androidApps: client.appLinks.androidApps.map { AdminAndroidApp(packageName: $0.packageName, sha256CertFingerprints: $0.certificateFingerprints) },
            createdAt: client.createdAt, version: client.version, requirePushedAuthorizationRequests: client.requirePushedRequests,
            authenticator: client.authenticator)
        info.deviceSSOGroup = client.deviceSSOGroup
        info.jwks = client.jwks
        info.assertionIssuer = client.assertionIssuer
        info.assertionLifetime = client.assertionLifetime
        if client.previousSecretHash != nil { info.previousSecretExpiresAt = client.previousSecretExpiresAt }
        return info
    }

    static func user(_ user: User) -> [String: JSONValue] { object(userInfo(user)) }

    static func userInfo(_ user: User) -> AdminUserInfo {
        AdminUserInfo(id: user.id, email: user.email, emailVerified: user.emailVerified, hasPassword: user.passwordHash != nil,
                      disabled: user.isDisabled, disabledAt: user.disabledAt, roles: user.roles.sorted(), profile: user.profile,
                      createdAt: user.createdAt, updatedAt: user.updatedAt, version: user.version)
    }

    /// A typed answer as the members of a JSON object.
    static func object<Value: Encodable>(_ value: Value) -> [String: JSONValue] {
        guard let data = try? JSONEncoder().encode(value), case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: data) else {
            return [:]
        }
        return members
    }

    static func details(_ details: UserDetails) -> [String: JSONValue] {
        var object = user(details.user)
        object["identities"] = .array(details.identities.map { identity in
            var item: [String: JSONValue] = ["provider": .string(identity.providerID), "subject": .string(identity.subject),
                                             "proven": .bool(identity.proven)]
            if let email = identity.email { item["email"] = .string(email) }
            return .object(item)
        })
        object["sessions"] = .array(details.sessions.map { session in
            .object(["sid": .string(session.sid), "signed_in_at": .int(session.authTime), "methods": strings(session.amr),
                     "expires_at": .int(session.expiresAt)])
        })
        object["consents"] = .array(details.consents.map { consent, name in
            .object(["client_id": .string(consent.clientID), "client_name": .string(name), "scope": .string(consent.scopes.description),
                     "granted_at": .int(consent.grantedAt)])
        })
        if let event = details.lastSignIn {
            var item: [String: JSONValue] = ["at": .int(event.at)]
            if let ip = event.ip { item["ip"] = .string(ip) }
            if let client = event.clientID { item["client_id"] = .string(client) }
            if let method = event.detail { item["method"] = .string(method) }
            object["last_sign_in"] = .object(item)
        }
        return object
    }

    static func key(_ key: SigningKeyInfo) -> [String: JSONValue] {
        object(AdminKeyInfo(kid: key.kid, alg: key.algorithm.rawValue, status: key.state.rawValue, published: key.published,
                            createdAt: key.createdAt, activatedAt: key.activatedAt, retiredAt: key.retiredAt))
    }

    static func event(_ event: AuditEvent) -> [String: JSONValue] {
        object(AdminAuditEventInfo(id: event.id, kind: event.kind.rawValue, at: event.at, actor: event.actor.rawValue, userID: event.userID,
                                   clientID: event.clientID, email: event.email, ip: event.ip, detail: event.detail))
    }

    static func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }

    static func report(_ report: UserImportReport) -> [String: JSONValue] {
        object(AdminImportReport(created: report.created, updated: report.updated, refused: report.failures.count,
                                 failures: report.failures.map { AdminImportReport.Failure(line: $0.line, reference: $0.reference, reason: $0.reason) }))
    }

    /// A page token: the cursor as base64url JSON (opaque to callers).
    static func pageToken<C: Encodable>(_ cursor: C?) -> JSONValue {
        guard let cursor, let data = try? JSONEncoder().encode(cursor) else { return .null }
        return .string(Base64URL.encode(data))
    }

    static func cursor<C: Decodable>(_ token: String?, as type: C.Type) throws -> C? {
        guard let token, !token.isEmpty else { return nil }
        guard let data = Base64URL.decode(token), let cursor = try? JSONDecoder().decode(C.self, from: data) else {
            throw AdminProblem.badRequest("'page_token' is not one this API gave out")
        }
        return cursor
    }
}

extension UserImportReport {
    /// As the admin API answers an import (the CLI prints the same on the database).
    public var adminJSON: [String: JSONValue] { AdminWire.report(self) }
}
