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

    /// Encodes the pairs in order as `name=value`, joined by `&`, each side escaped with ``escape(_:)``.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    /// Decodes one name or value: `+` is a space, `%XX` a byte; a `%` not followed by two
    /// hex digits stays as it is. Works on bytes: every form request goes through it.
    public static func decode(_ text: Substring) -> String {
        let input = Array(text.utf8)
        var output = [UInt8]()
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "+") {
                output.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), index + 2 < input.count,
                      let high = hexValue(input[index + 1]), let low = hexValue(input[index + 2]) {
                output.append(high << 4 | low)
                index += 2
            } else {
                output.append(byte)
            }
            index += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
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
