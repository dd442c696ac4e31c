import Foundation

/// The relay named by `--smtp-url`:
///
/// - `smtp://[user:password@]host[:port]` — port 587 by default; upgrades with STARTTLS
///   (RFC 3207) when the server offers it. `?starttls=required` makes a server that
///   doesn't offer it an error instead of a plaintext session.
/// - `smtps://[user:password@]host[:port]` — implicit TLS (RFC 8314 §3.3), port 465 by default.
/// - `?tls_verify=none` turns certificate verification off. **Unsafe**: anyone on the
///   path can read the mail and the password. For tests and development relays only.
///
/// The user name and password are percent-decoded (`p%40ss` is `p@ss`).
public struct SMTPSettings: Sendable, Equatable, CustomStringConvertible {
    public enum Security: Sendable, Equatable {
        case startTLS(required: Bool)
        case implicitTLS
    }

    public var host: String
    public var port: Int
    public var security: Security
    public var username: String?
    public var password: String?
    public var verifyCertificates = true

    public init(host: String, port: Int, security: Security, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
    }

    /// Parses and checks an SMTP URL; errors name the problem but never repeat the password.
    public init(parsing value: String) throws {
        func problem(_ text: String) -> ConfigurationError { ConfigurationError("smtp-url: \(text)") }
        guard let components = URLComponents(string: value), let scheme = components.scheme?.lowercased() else {
            throw problem("not a URL; expected smtp://user:password@host:port or smtps://host:port "
                          + "(percent-encode special characters in the user name and password)")
        }
        switch scheme {
        case "smtp": security = .startTLS(required: false)
        case "smtps": security = .implicitTLS
        default: throw problem("the scheme must be smtp or smtps, not '\(scheme)'")
        }
        var host = components.host ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw problem("the URL has no host") }
        self.host = host
        port = components.port ?? (scheme == "smtps" ? 465 : 587)
        guard (1...65535).contains(port) else { throw problem("port \(port) is out of range") }
        guard components.path.isEmpty || components.path == "/" else { throw problem("the URL must not have a path") }
        guard components.fragment == nil else { throw problem("the URL must not have a fragment") }
        username = components.user.flatMap { $0.isEmpty ? nil : $0 }
        password = components.password
        if password != nil && username == nil { throw problem("a password needs a user name") }
        if username != nil && password == nil { throw problem("the user name has no password (smtp://user:password@host)") }
        for item in components.queryItems ?? [] {
            switch (item.name, item.value?.lowercased()) {
            case ("starttls", "required"), ("starttls", "auto"):
                guard scheme == "smtp" else { throw problem("starttls applies to smtp:// only (smtps:// is always TLS)") }
                security = .startTLS(required: item.value?.lowercased() == "required")
            case ("tls_verify", "none"):
                verifyCertificates = false
            case ("tls_verify", "full"):
                verifyCertificates = true
            case ("starttls", _), ("tls_verify", _):
                throw problem("unsupported value '\(item.value ?? "")' for \(item.name) (starttls=required|auto, tls_verify=full|none)")
            default:
                throw problem("unknown parameter '\(item.name)' (known: starttls, tls_verify)")
            }
        }
    }

    /// Loopback relays may receive credentials without TLS (a local MTA or test server).
    package var hostIsLoopback: Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" { return true }
        let octets = host.split(separator: ".")
        return octets.count == 4 && octets.allSatisfy { UInt8($0) != nil } && octets.first == "127"
    }

    /// The URL with the password replaced: safe to log.
    public var description: String {
        let scheme = security == .implicitTLS ? "smtps" : "smtp"
        let user = username.map { "\($0):***@" } ?? ""
        let host = host.contains(":") ? "[\(host)]" : host
        var options: [String] = []
        if security == .startTLS(required: true) { options.append("starttls=required") }
        if !verifyCertificates { options.append("tls_verify=none") }
        return "\(scheme)://\(user)\(host):\(port)" + (options.isEmpty ? "" : "?" + options.joined(separator: "&"))
    }
}
