import TesseraCore

/// A store-level failure the caller can act on.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    case duplicate(String)
    case notFound(String)

    public var description: String {
        switch self {
        case .duplicate(let what): "\(what) already exists"
        case .notFound(let what): "\(what) not found"
        }
    }
}

/// A value as the canonical JSON text a store keeps in a column.
package func jsonText<T: Encodable>(_ value: T) throws -> String {
    String(decoding: try CanonicalJSON.encode(value), as: UTF8.self)
}

/// The database can't be reached or refused the connection, or no connection came within the
/// node's `database-timeout`; says where and why, never the password. Nothing was done: a
/// request that meets it is answered `503` with `Retry-After` (docs/deployment.md, "Database outages").
public struct DatabaseUnavailable: Error, CustomStringConvertible, Equatable, Sendable {
    public let location: String
    public let reason: String

    public init(location: String, reason: String) {
        self.location = location
        self.reason = reason
    }

    public var description: String { "the database \(location) can't be used: \(reason)" }
}
