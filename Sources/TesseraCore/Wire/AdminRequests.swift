import Foundation

// What the admin API is asked (docs/admin.openapi.json, `components/schemas` and parameters),
// and how it says no: one Codable type for each request, read strictly (a member the request
// doesn't know is refused by name, as is a member of the wrong type), and problem details.

/// An admin API error as RFC 9457 problem details (`Problem`): `type` names the kind of
/// problem (`urn:tessera:problem:SLUG`, listed in docs/admin.md), `detail` says what to do
/// about this one. Thrown by every `AdminOperations` (the server's) implementation, in process or over HTTP.
public struct AdminProblem: Error, Codable, Sendable, Equatable, CustomStringConvertible {
    /// What every problem's `type` starts with.
    public static let typePrefix = "urn:tessera:problem:"

    /// The kind of problem: `urn:tessera:problem:` and a slug such as `not-found` (see `slug`).
    public var type: String
    /// A short summary, the same for every problem of the kind.
    public var title: String
    /// The HTTP status code the problem is answered with.
    public var status: Int
    /// What went wrong with this request, and what to do about it.
    public var detail: String
    /// With `version-mismatch`: the version the resource is at now.
    public var currentVersion: Int64?
    /// With `invalid-claim`: the profile claim that is not valid.
    public var claim: String?

    /// A problem of the kind `slug` (its `type` without the prefix), with its HTTP status and words.
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

    /// A `400` `invalid-request`: a member of the wrong type or unknown, or a change the rules refuse; `detail` says which.
    public static func badRequest(_ detail: String) -> AdminProblem {
        AdminProblem(status: 400, slug: "invalid-request", title: "The request is not valid", detail: detail)
    }

    /// A `404` `not-found`: no such client, user or operation.
    public static func notFound(_ detail: String) -> AdminProblem {
        AdminProblem(status: 404, slug: "not-found", title: "Not found", detail: detail)
    }

    /// A `401` `unauthorized`: no admin access token, or an invalid one.
    public static func unauthorized(_ detail: String) -> AdminProblem {
        AdminProblem(status: 401, slug: "unauthorized", title: "An admin access token is required", detail: detail)
    }

    /// A `403` `forbidden`: the token lacks the `tessera:admin` scope, or its user the admin role.
    public static func forbidden(_ detail: String) -> AdminProblem {
        AdminProblem(status: 403, slug: "forbidden", title: "Not allowed", detail: detail)
    }

    enum CodingKeys: String, CodingKey {
        case type, title, status, detail, currentVersion = "current_version", claim
    }
}

/// A request body: its members are listed, so a misspelt one is refused instead of ignored.
public protocol AdminRequestBody: Codable, Sendable {
    /// The JSON members the body may hold; any other is refused by name.
    static var members: [String] { get }
}

/// Reads admin request bodies strictly, and says what is wrong with one as an `invalid-request` problem.
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
    /// The new account's email address (required).
    public var email: String
    /// Its first password (the password policy applies); nil: the account has none.
    public var password: String?
    /// Whether the address is verified (`email_verified`); nil counts as true.
    public var emailVerified: Bool?
    /// Profile claims of the catalogue (docs/claims.md), by name; nil: none.
    public var profile: [String: JSONValue]?
    /// The roles to give (`admin` is the only one); nil: none.
    public var roles: [String]?

    /// A user to create; only the address is required.
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

    /// The members `NewUser` allows.
    public static let members = CodingKeys.allCases.map(\.stringValue)
}

/// Changing a user (`PATCH /users/{id}`): `profile` is merged (a null removes a claim),
/// `roles` replaces the roles.
public struct AdminUserChanges: AdminRequestBody, Equatable {
    /// Claims to merge into the profile, by name (a null value removes that claim); nil leaves the profile as it is.
    public var profile: [String: JSONValue]?
    /// The user's roles from now on (`admin` is the only one; empty takes them all away); nil leaves them as they are.
    public var roles: [String]?

    /// A change to a user; a nil member changes nothing.
    public init(profile: [String: JSONValue]? = nil, roles: [String]? = nil) {
        self.profile = profile
        self.roles = roles
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case profile, roles
    }

    /// The members a user change allows.
    public static let members = CodingKeys.allCases.map(\.stringValue)
}

/// Setting a user's password (`PUT /users/{id}/password`).
public struct AdminPasswordChange: AdminRequestBody, Equatable {
    /// The new password; the password policy applies.
    public var password: String

    /// A new password for a user.
    public init(password: String) {
        self.password = password
    }

    /// Its one member, `password`.
    public static let members = ["password"]
}

/// Rotating a client's secret (`POST /clients/{id}/secret`): how long, in seconds, the old
/// one keeps working (0: it stops now).
public struct AdminSecretRotation: AdminRequestBody, Equatable {
    /// Seconds the previous secret keeps working (`grace_period`, at most 30 days); nil or 0: it stops at once.
    public var gracePeriod: Int64?

    /// A secret rotation; by default the previous secret stops working at once.
    public init(gracePeriod: Int64? = nil) {
        self.gracePeriod = gracePeriod
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case gracePeriod = "grace_period"
    }

    /// Its one member, `grace_period`.
    public static let members = CodingKeys.allCases.map(\.stringValue)
}

/// Importing users (`POST /users/import`): the whole file in `data`.
public struct AdminImportRequest: AdminRequestBody, Equatable {
    /// `firebase`, `jsonl` or `csv`.
    public var format: String
    /// The file's whole text (at most 64 MiB over HTTP).
    public var data: String
    /// A Firebase project's password hash parameters: the block its console shows, as a
    /// string or as JSON.
    public var hashConfig: JSONValue?
    /// Users written per transaction (`batch_size`, 1 to 5000); nil: 500.
    public var batchSize: Int?
    /// Firebase provider ids to this server's (`{"google.com": "google"}`).
    public var providers: [String: String]?

    /// An import of `data` read as `format`; the other members are optional.
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

    /// The members an import request allows.
    public static let members = CodingKeys.allCases.map(\.stringValue)
}

/// Which audit events (`GET /audit`'s parameters).
public struct AdminAuditQuery: Sendable, Equatable {
    /// An event kind (`sign_in`, `sign_in_failed`, `user_changed`, `client_changed`…).
    public var kind: String?
    /// An account's address or id (a deleted account's id still finds its events).
    public var user: String?
    /// Seconds since 1970.
    public var since: Int64?
    /// The most events to answer, 1 to 200; nil: 50.
    public var limit: Int?

    /// An audit query; a nil filter leaves nothing out, and a nil `limit` means 50.
    public init(kind: String? = nil, user: String? = nil, since: Int64? = nil, limit: Int? = nil) {
        self.kind = kind
        self.user = user
        self.since = since
        self.limit = limit
    }
}
