/// A scope value and the claims it releases (OpenID Connect Core §5.4).
public struct ScopeDefinition: Sendable, Hashable {
    public let name: String
    public let claims: [String]
    public init(name: String, claims: [String]) {
        self.name = name
        self.claims = claims
    }
}

/// The scopes Tessera knows, in one table shared by the server and the SDK.
public enum ScopeCatalogue {
    public static let openid = "openid"
    public static let offlineAccess = "offline_access"

    /// OpenID Connect Core §5.4.
    public static let standard: [ScopeDefinition] = [
        ScopeDefinition(name: "openid", claims: ["sub"]),
        ScopeDefinition(name: "profile", claims: [
            "name", "family_name", "given_name", "middle_name", "nickname", "preferred_username",
            "profile", "picture", "website", "gender", "birthdate", "zoneinfo", "locale", "updated_at",
        ]),
        ScopeDefinition(name: "email", claims: ["email", "email_verified"]),
        ScopeDefinition(name: "address", claims: ["address"]),
        ScopeDefinition(name: "phone", claims: ["phone_number", "phone_number_verified"]),
        ScopeDefinition(name: "offline_access", claims: []),
    ]

    public static let all: [ScopeDefinition] = standard
    static let byName: [String: ScopeDefinition] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    public static func definition(_ name: String) -> ScopeDefinition? { byName[name] }

    /// Every claim any scope can release, in table order.
    public static var claimsSupported: [String] {
        var seen = Set<String>()
        return all.flatMap(\.claims).filter { seen.insert($0).inserted }
    }

    /// The claims released by a set of scopes.
    public static func claims(for scopes: some Sequence<String>) -> Set<String> {
        Set(scopes.compactMap { byName[$0] }.flatMap(\.claims))
    }
}

/// A space-delimited scope string (RFC 6749 §3.3) as an ordered set.
public struct ScopeSet: Sendable, Hashable, Codable, CustomStringConvertible {
    public private(set) var values: [String]

    public init(_ values: some Sequence<String>) {
        var seen = Set<String>()
        self.values = values.filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    public init(parsing string: String?) {
        self.init((string ?? "").split(separator: " ").map(String.init))
    }

    public var description: String { values.joined(separator: " ") }
    public var isEmpty: Bool { values.isEmpty }
    public func contains(_ scope: String) -> Bool { values.contains(scope) }
    public func isSubset(of other: ScopeSet) -> Bool { values.allSatisfy(other.contains) }
    public func intersection(_ other: ScopeSet) -> ScopeSet { ScopeSet(values.filter(other.contains)) }
    public func subtracting(_ other: ScopeSet) -> ScopeSet { ScopeSet(values.filter { !other.contains($0) }) }

    public init(from decoder: any Decoder) throws {
        self.init(parsing: try decoder.singleValueContainer().decode(String.self))
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
