import Foundation

/// Parameters of a query string or an `application/x-www-form-urlencoded` body.
///
/// RFC 6749 §3.1: a parameter sent without a value is treated as omitted, and a
/// parameter must not be sent more than once, so duplicates are kept aside for the
/// endpoint to refuse.
public struct RequestParameters: Sendable, Equatable {
    public private(set) var values: [String: String] = [:]
    public private(set) var duplicates: Set<String> = []

    public init(_ pairs: [(String, String)] = []) {
        for (name, value) in pairs where !value.isEmpty {
            if values[name] != nil { duplicates.insert(name) }
            values[name] = value
        }
    }

    /// Parses `a=1&b=2` with `+` as space and percent-decoding.
    public init(urlEncoded text: Substring) {
        let pairs: [(String, String)] = text.split(separator: "&").map { part in
            let kv = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (Self.decode(kv[0]), kv.count > 1 ? Self.decode(kv[1]) : "")
        }
        self.init(pairs)
    }

    public subscript(_ name: String) -> String? { values[name] }

    /// The first of `names` sent more than once, if any.
    public func firstDuplicate(among names: [String]) -> String? {
        names.first { duplicates.contains($0) }
    }

    static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// `application/x-www-form-urlencoded` serialisation (WHATWG URL §5.2).
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(formEscape($0.0))=\(formEscape($0.1))" }.joined(separator: "&")
    }

    static let formAllowed: CharacterSet = {
        var set = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        set.insert(charactersIn: "*-._")
        return set
    }()

    static func formEscape(_ value: String) -> String {
        (value.addingPercentEncoding(withAllowedCharacters: formAllowed) ?? value).replacingOccurrences(of: "%20", with: "+")
    }
}
