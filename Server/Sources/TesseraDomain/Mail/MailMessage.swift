import Foundation

/// One email to one person, as the features that send mail describe it. The
/// ``Mailer`` turns it into an RFC 5322 message.
public struct MailMessage: Sendable, Equatable {
    /// The recipient's address (`alice@example.com`, ASCII only).
    public var to: String
    public var subject: String
    /// The text/plain part.
    public var text: String
    /// The text/html part; without one the message is plain text only.
    public var html: String?
    /// BCP 47 tag of the language the message is written in (`Content-Language`, RFC 3282).
    public var language: String
    /// Log-only facts about the message, such as `purpose: sign-up-code`. Never sent.
    public var metadata: [String: String]
    /// Unix time after which delivering the message is pointless (a one-time code that
    /// expired): it is then marked failed instead of being sent late.
    public var expiresAt: Int64?

    public init(to: String, subject: String, text: String, html: String? = nil, language: String = "en",
                metadata: [String: String] = [:], expiresAt: Int64? = nil) {
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.language = language
        self.metadata = metadata
        self.expiresAt = expiresAt
    }
}

/// A mailbox: an address with an optional display name (`Tessera <no-reply@id.example.com>`).
public struct MailAddress: Sendable, Equatable, CustomStringConvertible {
    public var displayName: String?
    public var address: String

    public init(displayName: String? = nil, address: String) throws {
        guard Self.isValid(address: address) else { throw MailError.invalidAddress(address) }
        if let displayName, displayName.unicodeScalars.contains(where: { $0.value < 32 || $0.value == 127 }) {
            throw MailError.invalidAddress(displayName)
        }
        self.displayName = displayName.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        self.address = address
    }

    /// Parses `addr@domain` or `Display Name <addr@domain>` (the name may be quoted).
    public init(parsing value: String) throws {
        let value = value.trimmingCharacters(in: .whitespaces)
        if value.hasSuffix(">"), let open = value.lastIndex(of: "<") {
            var name = value[..<open].trimmingCharacters(in: .whitespaces)
            if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") {
                name = String(name.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
                    .replacingOccurrences(of: "\\\\", with: "\\")
            }
            try self.init(displayName: name.isEmpty ? nil : name, address: String(value[value.index(after: open)..<value.index(before: value.endIndex)]))
        } else {
            try self.init(address: value)
        }
    }

    /// The default sender: `PRODUCT <no-reply@HOST>` where HOST is the issuer's host.
    public static func defaultSender(issuer: String, product: String = "Tessera") -> MailAddress {
        // Not checked: whatever the issuer's host, the server starts; a relay that dislikes
        // the address says so in its reply, and `--mail-from` fixes it.
        MailAddress(unchecked: (displayName: product, address: "no-reply@" + MailAddress.domain(ofIssuer: issuer)))
    }

    private init(unchecked parts: (displayName: String?, address: String)) {
        displayName = parts.displayName
        address = parts.address
    }

    /// The issuer's host as the right-hand side of an address or Message-ID (RFC 5322
    /// §3.4.1): a domain as is, an IP address as a literal (`[127.0.0.1]`).
    package static func domain(ofIssuer issuer: String) -> String {
        let host = URL(string: issuer)?.host ?? "localhost"
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        if bare.contains(":") { return "[IPv6:\(bare)]" }
        if bare.split(separator: ".").count == 4, bare.split(separator: ".").allSatisfy({ UInt8($0) != nil }) { return "[\(bare)]" }
        return bare
    }

    /// A deliberately plain check: ASCII, one `@`, no spaces, controls or characters that
    /// would let a value escape a header or an SMTP command. Internationalized addresses
    /// (SMTPUTF8, RFC 6531) are not supported.
    package static func isValid(address: String) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, let local = parts.first, let domain = parts.last, !local.isEmpty, !domain.isEmpty,
              address.utf8.count <= 254, local.utf8.count <= 64 else { return false }
        func printable(_ text: Substring) -> Bool { text.unicodeScalars.allSatisfy { $0.value > 32 && $0.value < 127 } }
        guard printable(local), !local.contains(where: { "<>()[],;:\\\"".contains($0) }) else { return false }
        if domain.hasPrefix("["), domain.hasSuffix("]") {
            let literal = domain.dropFirst().dropLast()
            return !literal.isEmpty && printable(literal) && !literal.contains(where: { "[]\\".contains($0) })
        }
        return domain.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) }
            && !domain.hasPrefix(".") && !domain.hasSuffix(".") && !domain.contains("..")
    }

    public var description: String {
        guard let displayName else { return address }
        return "\(displayName) <\(address)>"
    }
}

/// A message that can't be accepted as given.
public struct MailError: Error, Equatable, CustomStringConvertible {
    public let description: String

    static func invalidAddress(_ value: String) -> MailError {
        MailError(description: "'\(value)' is not a usable email address (ASCII addr@domain, no display-name tricks)")
    }

    static func unknownTemplate(_ name: String) -> MailError {
        MailError(description: "no email template named '\(name)'")
    }
}

extension MailAddress {
    /// The form addresses are compared and stored in: without surrounding spaces, lower-case.
    package static func normalise(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// Whether `email` looks like an address mail can be sent to: one `@`, a local part, and a
    /// dotted domain, no spaces, at most 254 characters. The real check is the mail arriving.
    public static func isPlausible(_ email: String) -> Bool {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !parts[1].hasPrefix(".") && !parts[1].hasSuffix(".")
            && !email.contains(where: \.isWhitespace) && email.count <= 254
    }
}
