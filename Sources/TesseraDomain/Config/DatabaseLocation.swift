import Foundation

/// Where the data lives: a SQLite file (the default) or, later, a PostgreSQL server.
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    case sqliteFile(String)
    case sqliteMemory

    /// Parses `--database`: a path, `sqlite:PATH`, `sqlite://PATH`, or `sqlite::memory:`.
    public init(parsing value: String) throws {
        if value == "sqlite::memory:" || value == ":memory:" {
            self = .sqliteMemory
        } else if value.hasPrefix("sqlite://") {
            self = .sqliteFile(String(value.dropFirst("sqlite://".count)))
        } else if value.hasPrefix("sqlite:") {
            self = .sqliteFile(String(value.dropFirst("sqlite:".count)))
        } else if value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") {
            throw ConfigurationError("PostgreSQL is not available in this version of Tessera yet; use a SQLite path")
        } else if value.contains("://") {
            throw ConfigurationError("unsupported database URL '\(value)': give a file path or a sqlite: URL")
        } else {
            self = .sqliteFile(value)
        }
    }

    public var description: String {
        switch self {
        case .sqliteFile(let path): "sqlite:\(path)"
        case .sqliteMemory: "sqlite::memory:"
        }
    }
}
