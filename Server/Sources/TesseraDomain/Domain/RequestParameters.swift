import Foundation
import TesseraCore

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
        self.init(FormEncoding.pairs(String(text)))
    }

    public subscript(_ name: String) -> String? { values[name] }

    /// These parameters with `name` set to `value` (one that was absent).
    package func adding(_ name: String, _ value: String) -> RequestParameters {
        var copy = self
        copy.values[name] = value
        return copy
    }

    /// RFC 6749 §3.1 (and RFC 7009, 7662, 6750): request parameters must not be included
    /// more than once; `invalid_request` naming the first one that was.
    public func requireSingleValues() throws {
        if let name = duplicates.sorted().first { throw OAuthError.invalidRequest("The \(name) parameter was sent more than once.") }
    }

    /// The first of `names` sent more than once, if any.
    public func firstDuplicate(among names: [String]) -> String? {
        names.first { duplicates.contains($0) }
    }

    package static func decode(_ text: Substring) -> String { FormEncoding.decode(text) }

    /// `uri` with `parameters` appended to its query, or as its fragment.
    public static func appending(_ parameters: [(String, String)], to uri: String, inFragment: Bool) -> String {
        let encoded = encode(parameters)
        if inFragment { return uri + "#" + encoded }
        return uri + (uri.contains("?") ? "&" : "?") + encoded
    }

    /// `application/x-www-form-urlencoded` serialisation.
    public static func encode(_ pairs: [(String, String)]) -> String { FormEncoding.encode(pairs) }
}
