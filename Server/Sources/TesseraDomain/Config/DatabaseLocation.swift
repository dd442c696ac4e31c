import Foundation

/// Where the data lives: a SQLite file (the default), in memory (tests), or a PostgreSQL server.
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    case sqliteFile(String)
    case sqliteMemory
    case postgres(PostgresLocation)

    /// Parses `--database`: a path, `sqlite:PATH`, `sqlite://PATH`, `sqlite::memory:`, or
    /// `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=…` (`postgresql://` too).
    public init(parsing value: String) throws {
        if value == "sqlite::memory:" || value == ":memory:" {
            self = .sqliteMemory
        } else if value.hasPrefix("sqlite://") {
            self = .sqliteFile(String(value.dropFirst("sqlite://".count)))
        } else if value.hasPrefix("sqlite:") {
            self = .sqliteFile(String(value.dropFirst("sqlite:".count)))
        } else if value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") {
            self = .postgres(try PostgresLocation(parsing: value))
        } else if value.contains("://") {
            throw ConfigurationError("unsupported database URL '\(PostgresLocation.redacted(value))': give a file path, a sqlite: URL "
                                     + "or a postgres:// URL")
        } else {
            self = .sqliteFile(value)
        }
    }

    /// The location for messages and logs: a PostgreSQL password never appears.
    public var description: String {
        switch self {
        case .sqliteFile(let path): "sqlite:\(path)"
        case .sqliteMemory: "sqlite::memory:"
        case .postgres(let location): location.description
        }
    }

    /// Whether several processes (nodes) can share this database.
    public var isShared: Bool {
        if case .postgres = self { true } else { false }
    }
}

/// A PostgreSQL server, as a libpq-style URL names it:
/// `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE&sslrootcert=FILE&host=SOCKET-DIR&options=-csearch_path%3DSCHEMA`.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    /// How the connection is protected, with libpq's names and meanings.
    public enum SSLMode: String, Sendable, CaseIterable {
        /// No TLS.
        case disable
        /// TLS when the server offers it, without checking its certificate (libpq's default).
        case prefer
        /// TLS or no connection; the certificate is not checked.
        case require
        /// TLS, and the certificate must chain to a trusted root (the host name is not checked).
        case verifyCA = "verify-ca"
        /// TLS, the certificate must chain to a trusted root and name the host.
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    /// A directory holding the server's Unix socket (`?host=/var/run/postgresql`): used instead of TCP.
    public var socketDirectory: String?
    public var user: String
    public var password: String?
    public var database: String
    public var sslMode: SSLMode
    /// Trusted roots for `verify-ca` / `verify-full` (PEM); the system's when absent.
    public var sslRootCertificate: String?
    /// Run-time parameters sent at connection start (`options=-c name=value …`), e.g. `search_path`.
    public var parameters: [String: String]

    public init(parsing text: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
              ["postgres", "postgresql"].contains(scheme) else {
            throw ConfigurationError("the database URL '\(Self.redacted(text))' is not a postgres:// URL")
        }
        func decoded(_ value: String?) -> String? { value?.removingPercentEncoding ?? value }
        guard let user = decoded(components.percentEncodedUser), !user.isEmpty else {
            throw ConfigurationError("the database URL '\(Self.redacted(text))' names no user: postgres://USER:PASSWORD@HOST/DATABASE")
        }
        self.user = user
        password = decoded(components.percentEncodedPassword)
        host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "localhost"
        port = components.port ?? 5432
        let name = decoded(String(components.percentEncodedPath.drop { $0 == "/" })) ?? ""
        guard !name.isEmpty, !name.contains("/") else {
            throw ConfigurationError("the database URL '\(Self.redacted(text))' names no database: postgres://USER:PASSWORD@HOST/DATABASE")
        }
        database = name
        sslMode = .prefer
        parameters = [:]
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                // libpq's `allow` tries without TLS first; nothing here does that, so it is taken as `prefer`.
                guard let mode = SSLMode(rawValue: value == "allow" ? "prefer" : value) else {
                    throw ConfigurationError("sslmode must be one of disable, prefer, require, verify-ca, verify-full, not '\(value)'")
                }
                sslMode = mode
            case "sslrootcert":
                sslRootCertificate = value
            case "host":
                guard value.hasPrefix("/") else { throw ConfigurationError("the database URL's host= must be a socket directory (an absolute path)") }
                socketDirectory = value
            case "options":
                parameters = try Self.options(value)
            case "application_name":
                parameters["application_name"] = value
            default:
                throw ConfigurationError("the database URL has an unknown parameter '\(item.name)' (known: sslmode, sslrootcert, host, "
                                         + "options, application_name)")
            }
        }
        if sslRootCertificate != nil, ![.verifyCA, .verifyFull].contains(sslMode) {
            throw ConfigurationError("sslrootcert is used with sslmode=verify-ca or verify-full only")
        }
    }

    /// `-c name=value -c other=value` (and `--name=value`), as libpq's `options`.
    static func options(_ text: String) throws -> [String: String] {
        var result: [String: String] = [:]
        var words = text.split(separator: " ").map(String.init)[...]
        while let word = words.popFirst() {
            let assignment: String
            if word == "-c", let next = words.popFirst() {
                assignment = next
            } else if word.hasPrefix("-c") {
                assignment = String(word.dropFirst(2))
            } else if word.hasPrefix("--") {
                assignment = String(word.dropFirst(2))
            } else {
                throw ConfigurationError("the database URL's options must be '-c name=value' settings, not '\(word)'")
            }
            let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty else {
                throw ConfigurationError("the database URL's options must be '-c name=value' settings, not '\(assignment)'")
            }
            result[parts[0]] = parts[1]
        }
        return result
    }

    /// The URL with its password replaced by `***`.
    public var description: String {
        var text = "postgres://\(user)\(password == nil ? "" : ":***")@\(host):\(port)/\(database)"
        var query = ["sslmode=\(sslMode.rawValue)"]
        if let socketDirectory { query.append("host=\(socketDirectory)") }
        if let sslRootCertificate { query.append("sslrootcert=\(sslRootCertificate)") }
        for (name, value) in parameters.sorted(by: { $0.key < $1.key }) { query.append("\(name)=\(value)") }
        text += "?" + query.joined(separator: "&")
        return text
    }

    /// `text` with anything between `://USER:` and `@` hidden, for messages about a URL that did not parse.
    static func redacted(_ text: String) -> String {
        guard let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].lastIndex(of: "@") else { return text }
        let credentials = text[scheme.upperBound..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(text[at...])
    }
}
