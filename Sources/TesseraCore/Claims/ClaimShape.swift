import Foundation

/// The JSON shape a claim value must have. Values are checked when they are written,
/// so what the provider releases always has the documented shape.
public indirect enum ClaimShape: Sendable, Equatable {
    /// A non-empty string.
    case string
    /// An absolute http(s) URL.
    case url
    /// An email address: one `@`, a dot after it, no whitespace.
    case email
    /// E.164-ish: digits, spaces, `+`, `-`, `(`, `)`.
    case phone
    /// `YYYY-MM-DD`, a real calendar date.
    case date
    /// `true` or `false`.
    case boolean
    /// One of the listed integers (seed 000's gender: 1 male, 2 female).
    case integerEnum([Int64])
    /// Any whole number that fits `Int64`.
    case integer
    /// An object with these members, each optional but of its shape; no others.
    case object([String: ClaimShape])

    /// Why `value` doesn't fit, or nil when it does.
    public func problem(with value: JSONValue) -> String? {
        switch (self, value) {
        case (.string, .string(let text)):
            return text.isEmpty ? "must not be empty" : nil
        case (.url, .string(let text)):
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                return "must be an absolute http or https URL"
            }
            return nil
        case (.email, .string(let text)):
            let parts = text.split(separator: "@", omittingEmptySubsequences: false)
            return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !text.contains(where: \.isWhitespace)
                ? nil : "must be an email address"
        case (.phone, .string(let text)):
            let digits = text.filter(\.isNumber).count
            let allowed = text.allSatisfy { $0.isNumber || " +-()".contains($0) }
            return allowed && (5...20).contains(digits) ? nil : "must be a phone number such as +7 (912) 345-67-89"
        case (.date, .string(let text)):
            return Self.isCalendarDate(text) ? nil : "must be a date as YYYY-MM-DD"
        case (.boolean, .bool):
            return nil
        case (.integer, .int):
            return nil
        case (.integerEnum(let allowed), .int(let number)):
            return allowed.contains(number) ? nil : "must be one of \(allowed.map(String.init).joined(separator: ", "))"
        case (.object(let members), .object(let object)):
            if object.isEmpty { return "must not be empty" }
            for (key, member) in object.sorted(by: { $0.key < $1.key }) {
                guard let shape = members[key] else { return "has an unknown member '\(key)'" }
                if let problem = shape.problem(with: member) { return "member '\(key)' \(problem)" }
            }
            return nil
        default:
            return "must be \(expected)"
        }
    }

    var expected: String {
        switch self {
        case .string, .url, .email, .phone, .date: "a string"
        case .boolean: "true or false"
        case .integer, .integerEnum: "a whole number"
        case .object: "a JSON object"
        }
    }

    static func isCalendarDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              year >= 1, (1...12).contains(month), day >= 1 else { return false }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= days[month - 1]
    }
}
