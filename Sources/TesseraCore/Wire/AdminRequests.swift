import Foundation

// What the admin API is asked (docs/admin.openapi.json, `components/schemas` and parameters),
// and how it says no: one Codable type for each request, read strictly (a member the request
// doesn't know is refused by name, as is a member of the wrong type), and problem details.

/// An admin API error as RFC 9457 problem details (`Problem`): `type` names the kind of
/// problem (`urn:tessera:problem:SLUG`, listed in docs/admin.md), `detail` says what to do
/// about this one. Thrown by every `AdminOperations` (the server's) implementation, in process or over HTTP.
public struct AdminProblem: Error, Codable, Sendable, Equatable, CustomStringConvertible {
    public static let typePrefix = "urn:tessera:problem:"

    public var type: String
    public var title: String
    public var status: Int
    public var detail: String
    /// With `version-mismatch`: the version the resource is at now.
    public var currentVersion: Int64?
    /// With `invalid-claim`: the profile claim that is not valid.
    public var claim: String?

    public init(status: Int, slug: String, title: String, detail: String, currentVersion: Int64? = nil, claim: String? = nil) {
        self.type = Self.typePrefix + slug
        self.title = title
        self.status = status
        self.detail = detail
        self.currentVersion = currentVersion
        self.claim = claim
    }

    /// The kind, without the URN's prefix: `not-found`, `invalid-request`, `version-mismatch`…
    public var slug: String { type.hasPrefix(Self.typePrefix) ? String(type.dropFirst(Self.typePrefix.count)) : type }

    public var description: String { detail }

    public static func badRequest(_ detail: String) -> AdminProblem {
        AdminProblem(status: 400, slug: "invalid-request", title: "The request is not valid", detail: detail)
    }

    public static func notFound(_ detail: String) -> AdminProblem {
        AdminProblem(status: 404, slug: "not-found", title: "Not found", detail: detail)
    }

    public static func unauthorized(_ detail: String) -> AdminProblem {
        AdminProblem(status: 401, slug: "unauthorized", title: "An admin access token is required", detail: detail)
    }

    public static func forbidden(_ detail: String) -> AdminProblem {
        AdminProblem(status: 403, slug: "forbidden", title: "Not allowed", detail: detail)
    }

    enum CodingKeys: String, CodingKey {
        case type, title, status, detail, currentVersion = "current_version", claim
    }
}

/// A request body: its members are listed, so a misspelt one is refused instead of ignored.
public protocol AdminRequestBody: Codable, Sendable {
    static var members: [String] { get }
}

public enum AdminRequestDecoding {
    /// Reads `data` as `T`: a JSON object, no member `T` doesn't know, every member of its
    /// type. The problem names the member and what it must be.
    public static func decode<T: AdminRequestBody>(_ type: T.Type, from data: Data) throws -> T {
        guard case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: data) else {
            throw AdminProblem.badRequest("the request body must be a JSON object")
        }
        try refuseUnknown(members.keys, known: T.members)
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw problem(error)
        }
    }

    /// Refuses the first member (in name order) not in `known`.
    public static func refuseUnknown(_ names: some Collection<String>, known: [String]) throws {
        if let unknown = names.sorted().first(where: { !known.contains($0) }) {
            throw AdminProblem.badRequest("'\(unknown)' is not a member of this request (known: \(known.sorted().joined(separator: ", ")))")
        }
    }

    /// A decoding error as a person reads it: which member, and what it must be.
    public static func problem(_ error: DecodingError) -> AdminProblem {
        func member(_ path: [any CodingKey]) -> String {
            path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().drop { $0 == "." }.description
        }
        func shape(_ type: Any.Type) -> String {
            let name = String(describing: type)
            if type == Bool.self { return "true or false" }
            if type == String.self { return "a string" }
            if [Int.self, Int64.self, Int32.self].contains(where: { $0 == type }) { return "a whole number" }
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") || name == "JSONValue" { return "a JSON object" }
            return "a \(name)"
        }
        switch error {
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return .badRequest("'\(member(context.codingPath))' must be \(shape(type))")
        case .keyNotFound(let key, let context):
            return .badRequest("'\(member(context.codingPath + [key]))' is required")
        case .dataCorrupted(let context):
            return .badRequest(context.codingPath.isEmpty ? "the request body is not valid JSON"
                : "'\(member(context.codingPath))' is not valid: \(context.debugDescription)")
        @unknown default:
            return .badRequest("the request body is not valid: \(error)")
        }
    }
}

/// Creating a user (`NewUser`): verified unless `email_verified` is false.
public struct AdminNewUser: AdminRequestBody, Equatable {
    public var email: String
    public var password: String?
    public var emailVerified: Bool?
    public var profile: [String: JSONValue]?
    public var roles: [String]?

    public init(email: String, password: String? = nil, emailVerified: Bool? = nil, profile: [String: JSONValue]? = nil, roles: [String]? = nil) {
        self.email = email
        self.password = password
        self.emailVerified = emailVerified
        self.profile = profile
        self.roles = roles
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case email, password, emailVerified = "email_verified", profile, roles
    }

    public static let members = CodingKeys.allCases.map(\.stringValue)
}

/// Changing a user (`PATCH /users/{id}`): `profile` is merged (a null removes a claim),
/// `roles` replaces the roles.
public struct AdminUserChanges: AdminRequestBody, Equatable {
    public var profile: [String: JSONValue]?
    public var roles: [String]?

    public init(profile: [String: JSONValue]? = nil, roles: [String]? = nil) {
        self.profile = profile
        self.roles = roles
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case profile, roles
    }

    public static let members = CodingKeys.allCases.map(\.stringValue)
}

/// Setting a user's password (`PUT /users/{id}/password`).
public struct AdminPasswordChange: AdminRequestBody, Equatable {
    public var password: String

    public init(password: String) {
        self.password = password
    }

    public static let members = ["password"]
}

/// Rotating a client's secret (`POST /clients/{id}/secret`): how long, in seconds, the old
/// one keeps working (0: it stops now).
public struct AdminSecretRotation: AdminRequestBody, Equatable {
    public var gracePeriod: Int64?

    public init(gracePeriod: Int64? = nil) {
        self.gracePeriod = gracePeriod
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case gracePeriod = "grace_period"
    }

    public static let members = CodingKeys.allCases.map(\.stringValue)
}

/// Importing users (`POST /users/import`): the whole file in `data`.
public struct AdminImportRequest: AdminRequestBody, Equatable {
    /// `firebase`, `jsonl` or `csv`.
    public var format: String
    public var data: String
    /// A Firebase project's password hash parameters: the block its console shows, as a
    /// string or as JSON.
    public var hashConfig: JSONValue?
    public var batchSize: Int?
    /// Firebase provider ids to this server's (`{"google.com": "google"}`).
    public var providers: [String: String]?

    public init(format: String, data: String, hashConfig: JSONValue? = nil, batchSize: Int? = nil, providers: [String: String]? = nil) {
        self.format = format
        self.data = data
        self.hashConfig = hashConfig
        self.batchSize = batchSize
        self.providers = providers
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case format, data, hashConfig = "hash_config", batchSize = "batch_size", providers
    }

    public static let members = CodingKeys.allCases.map(\.stringValue)
}

/// Which audit events (`GET /audit`'s parameters).
public struct AdminAuditQuery: Sendable, Equatable {
    /// An event kind (`sign_in`, `admin_change`…).
    public var kind: String?
    /// An account's address or id (a deleted account's id still finds its events).
    public var user: String?
    /// Seconds since 1970.
    public var since: Int64?
    public var limit: Int?

    public init(kind: String? = nil, user: String? = nil, since: Int64? = nil, limit: Int? = nil) {
        self.kind = kind
        self.user = user
        self.since = since
        self.limit = limit
    }
}
