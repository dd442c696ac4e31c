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
