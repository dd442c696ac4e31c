import Foundation
import TesseraCore

/// Everything an administrator can do, once: the admin API (docs/admin.openapi.json) serves
/// these operations over HTTP, the console and the CLI on the database call them in process,
/// and the CLI with `--server` calls them over HTTP. Each answers the API's typed answer and
/// throws ``AdminProblem`` (problem details), whichever way it went.
public protocol AdminOperations: Sendable {
    // Clients
    func clients(pageToken: String?, limit: Int?) async throws -> AdminClientList
    func client(_ id: String) async throws -> AdminClientInfo
    /// The answer carries `client_secret` when the client has one: shown once.
    func registerClient(_ settings: AdminClientSettings) async throws -> AdminClientInfo
    /// `ifVersion` nil overwrites whatever is there (`If-Match: *`).
    func updateClient(_ id: String, _ settings: AdminClientSettings, ifVersion: Int64?) async throws -> AdminClientInfo
    func deleteClient(_ id: String) async throws
    func rotateSecret(_ id: String, _ rotation: AdminSecretRotation) async throws -> AdminClientInfo

    // Users, by address or id
    func users(matching query: String?, pageToken: String?, limit: Int?) async throws -> AdminUserList
    func user(_ reference: String) async throws -> AdminUserDetails
    func createUser(_ user: AdminNewUser) async throws -> AdminUserInfo
    func updateUser(_ reference: String, _ changes: AdminUserChanges, ifVersion: Int64?) async throws -> AdminUserInfo
    func deleteUser(_ reference: String) async throws
    /// nil removes the password.
    func setPassword(_ reference: String, _ change: AdminPasswordChange?) async throws -> AdminUserInfo
    func markEmailVerified(_ reference: String) async throws -> AdminUserInfo
    func disableUser(_ reference: String) async throws -> AdminUserInfo
    func enableUser(_ reference: String) async throws -> AdminUserInfo
    func signOutEverywhere(_ reference: String) async throws
    func importUsers(_ request: AdminImportRequest) async throws -> AdminImportReport

    // Keys and the audit trail
    func keys() async throws -> AdminKeyList
    func rotateKeys() async throws -> AdminKeyList
    func audit(_ query: AdminAuditQuery) async throws -> AdminAuditEventList
}

public enum AdminPaging {
    /// The most items a page holds; the default is 50.
    public static let maxLimit = 200
    public static let defaultLimit = 50

    public static func limit(_ limit: Int?) throws -> Int {
        guard let limit else { return defaultLimit }
        guard (1...maxLimit).contains(limit) else { throw AdminProblem.badRequest("'limit' must be a whole number from 1 to \(maxLimit)") }
        return limit
    }

    /// A page token: the cursor as base64url JSON (opaque to callers).
    public static func token<C: Encodable>(_ cursor: C?) -> String? {
        guard let cursor, let data = try? JSONEncoder().encode(cursor) else { return nil }
        return Base64URL.encode(data)
    }

    public static func cursor<C: Decodable>(_ token: String?, as type: C.Type) throws -> C? {
        guard let token, !token.isEmpty else { return nil }
        guard let data = Base64URL.decode(token), let cursor = try? JSONDecoder().decode(C.self, from: data) else {
            throw AdminProblem.badRequest("'page_token' is not one this API gave out")
        }
        return cursor
    }
}

extension AdminProblem {
    /// The problem an error of the rules (or of reading the request) is; anything unforeseen
    /// is a `server-error` whose details go to the log, not to the caller.
    public init(_ error: any Error) {
        switch error {
        case let problem as AdminProblem:
            self = problem
        case AdminError.notFound(let what), StoreError.notFound(let what):
            self = .notFound("\(what) was not found.")
        case AdminError.versionMismatch(let current):
            self.init(status: 412, slug: "version-mismatch", title: "Changed since you read it",
                      detail: "\(AdminError.versionMismatch(current: current)).", currentVersion: current)
        case AdminError.invalid(let message):
            self = .badRequest(message)
        case AdminError.forbidden(let message):
            self = .forbidden(message)
        case AdminError.conflict(let message):
            self.init(status: 409, slug: "conflict", title: "Conflicts with what exists", detail: message)
        case let error as ConfigurationError:
            self = .badRequest(error.description)
        case let error as ClaimValidationError:
            self.init(status: 400, slug: "invalid-claim", title: "A profile claim is not valid", detail: "\(error).", claim: error.claim)
        case StoreError.duplicate(let what):
            self.init(status: 409, slug: "conflict", title: "Conflicts with what exists", detail: "\(what) exists already.")
        case let error as JOSEError:
            self = .badRequest("the keys are not valid: \(error)")
        case let error as DecodingError:
            self = AdminRequestDecoding.problem(error)
        case is DatabaseUnavailable:
            self.init(status: 503, slug: "unavailable", title: "Temporarily unavailable",
                      detail: "The server can't reach its database right now; try again in a few seconds.")
        case is PasswordHasher.Busy:
            self.init(status: 503, slug: "busy", title: "Busy", detail: "The server is busy hashing passwords; try again in a few seconds.")
        default:
            self.init(status: 500, slug: "server-error", title: "Server error",
                      detail: "The server could not complete the request; its log has the details (find them by the X-Request-Id header).")
        }
    }
}
