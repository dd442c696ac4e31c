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
    static func client(_ client: Client) -> [String: JSONValue] {
        var object: [String: JSONValue] = [
            "client_id": .string(client.id), "client_name": .string(client.name),
            "redirect_uris": strings(client.redirectURIs), "post_logout_redirect_uris": strings(client.postLogoutRedirectURIs),
            "grant_types": strings(client.grantTypes), "scope": .string(client.scopes.description),
            "token_endpoint_auth_method": .string(client.authMethod.rawValue), "first_party": .bool(client.firstParty),
            "subject_type": .string(client.subjectType.rawValue), "resource_server": .bool(client.resourceServer),
            "link_domains": strings(client.appLinks.linkDomains), "ios_apps": strings(client.appLinks.appleAppIDs),
            "android_apps": .array(client.appLinks.androidApps.map { app in
                .object(["package_name": .string(app.packageName), "sha256_cert_fingerprints": strings(app.certificateFingerprints)])
            }),
            "created_at": .int(client.createdAt), "version": .int(client.version),
            "require_pushed_authorization_requests": .bool(client.requirePushedRequests), "authenticator": .bool(client.authenticator),
        ]
        if let group = client.deviceSSOGroup { object["device_sso_group"] = .string(group) }
        if let jwks = client.jwks, let value = try? JSONDecoder().decode(JSONValue.self, from: CanonicalJSON.encode(jwks)) {
            object["jwks"] = value
        }
        if let issuer = client.assertionIssuer { object["assertion_issuer"] = .string(issuer) }
        if let lifetime = client.assertionLifetime { object["assertion_lifetime"] = .int(lifetime) }
        if client.previousSecretHash != nil, let expires = client.previousSecretExpiresAt {
            object["previous_secret_expires_at"] = .int(expires)
        }
        return object
    }

    static func user(_ user: User) -> [String: JSONValue] {
        var object: [String: JSONValue] = [
            "id": .string(user.id), "email": .string(user.email), "email_verified": .bool(user.emailVerified),
            "has_password": .bool(user.passwordHash != nil), "disabled": .bool(user.isDisabled),
            "roles": strings(user.roles.sorted()), "profile": .object(user.profile),
            "created_at": .int(user.createdAt), "updated_at": .int(user.updatedAt), "version": .int(user.version),
        ]
        if let disabledAt = user.disabledAt { object["disabled_at"] = .int(disabledAt) }
        return object
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
        var object: [String: JSONValue] = ["kid": .string(key.kid), "alg": .string(key.algorithm.rawValue), "status": .string(key.state.rawValue),
                                           "published": .bool(key.published), "created_at": .int(key.createdAt)]
        if let at = key.activatedAt { object["activated_at"] = .int(at) }
        if let at = key.retiredAt { object["retired_at"] = .int(at) }
        return object
    }

    static func event(_ event: AuditEvent) -> [String: JSONValue] {
        var object: [String: JSONValue] = ["id": .string(event.id), "kind": .string(event.kind.rawValue), "at": .int(event.at),
                                           "actor": .string(event.actor.rawValue)]
        for (name, value) in [("user_id", event.userID), ("client_id", event.clientID), ("email", event.email), ("ip", event.ip),
                              ("detail", event.detail)] {
            if let value { object[name] = .string(value) }
        }
        return object
    }

    static func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }

    static func report(_ report: UserImportReport) -> [String: JSONValue] {
        ["created": .int(Int64(report.created)), "updated": .int(Int64(report.updated)), "refused": .int(Int64(report.failures.count)),
         "failures": .array(report.failures.map { failure in
             .object(["line": .int(Int64(failure.line)), "reference": .string(failure.reference), "reason": .string(failure.reason)])
         })]
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
