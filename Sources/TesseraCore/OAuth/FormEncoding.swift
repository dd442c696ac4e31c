import Foundation

/// `application/x-www-form-urlencoded` (WHATWG URL §5, RFC 6749 Appendix B): the encoding of
/// authorization request and response parameters and of token endpoint bodies.
public enum FormEncoding {
    private static let allowed: CharacterSet = {
        var set = CharacterSet()
        set.insert(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789*-._")
        return set
    }()

    /// Escapes one name or value; a space becomes `+`.
    public static func escape(_ value: String) -> String {
        (value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value).replacingOccurrences(of: "%20", with: "+")
    }

    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    public static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// The pairs of an encoded string, in order, duplicates kept.
    public static func pairs(_ text: String) -> [(String, String)] {
        text.split(separator: "&").map { part in
            let kv = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decode(kv[0]), kv.count > 1 ? decode(kv[1]) : "")
        }
    }

    /// `url` with `pairs` appended to its query, keeping the parameters it already has
    /// (RFC 6749 §3.1: the endpoint URI MAY include a query component, which MUST be retained).
    public static func appending(_ pairs: [(String, String)], to url: URL) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        let encoded = encode(pairs)
        if let existing = components.percentEncodedQuery, !existing.isEmpty {
            components.percentEncodedQuery = existing + "&" + encoded
        } else {
            components.percentEncodedQuery = encoded
        }
        return components.url
    }
}
