/// A space-delimited scope string (RFC 6749 §3.3) as an ordered set.
public struct ScopeSet: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The scope values in first-seen order, without duplicates or empty strings.
    public private(set) var values: [String]

    /// Makes a set from scope values, keeping the first of each and dropping empty strings.
    public init(_ values: some Sequence<String>) {
        var seen = Set<String>()
        self.values = values.filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    /// Parses a space-delimited `scope` string; nil or an empty string makes an empty set.
    public init(parsing string: String?) {
        self.init((string ?? "").split(separator: " ").map(String.init))
    }

    public var description: String { values.joined(separator: " ") }
    /// Whether there are no scope values.
    public var isEmpty: Bool { values.isEmpty }
    /// Whether `scope` is one of the values.
    public func contains(_ scope: String) -> Bool { values.contains(scope) }
    /// Whether every value is also in `other`.
    public func isSubset(of other: ScopeSet) -> Bool { values.allSatisfy(other.contains) }
    /// The values also in `other`, in this set's order.
    public func intersection(_ other: ScopeSet) -> ScopeSet { ScopeSet(values.filter(other.contains)) }
    /// The values not in `other`, in this set's order.
    public func subtracting(_ other: ScopeSet) -> ScopeSet { ScopeSet(values.filter { !other.contains($0) }) }

    public init(from decoder: any Decoder) throws {
        self.init(parsing: try decoder.singleValueContainer().decode(String.self))
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
