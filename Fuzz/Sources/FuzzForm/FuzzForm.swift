import Foundation
import FuzzSupport
import TesseraCore

/// libFuzzer entry point. The whole input is a form body or query; its first line is also
/// tried as a redirect URI that the decoded pairs are appended to, as the provider does when
/// it answers an authorization request.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: fuzzInput(start, count), as: UTF8.self)
    let pairs = FormEncoding.pairs(text)
    checkPairsRoundTrip(pairs)
    checkEscape(text)
    checkDecode(text[...])
    if let newline = text.firstIndex(of: "\n") {
        checkAppending(pairs: FormEncoding.pairs(String(text[text.index(after: newline)...])), to: String(text[..<newline]))
    }
    return 0
}

/// Whether two lists of pairs hold the same bytes in the same order.
func samePairs(_ lhs: [(String, String)], _ rhs: [(String, String)]) -> Bool {
    lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { sameBytes($0.0, $1.0) && sameBytes($0.1, $1.1) }
}

/// What the decoder produced, encoded again, decodes to the same pairs, byte for byte.
func checkPairsRoundTrip(_ pairs: [(String, String)]) {
    let encoded = FormEncoding.encode(pairs)
    require(samePairs(FormEncoding.pairs(encoded), pairs), "pairs(encode(pairs(text))) == pairs(text), via \(encoded)")
}

/// Bytes `escape` may leave as they are: the unreserved set, `+` for a space and `%` escapes.
func isFormSafe(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
    case UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "+"), UInt8(ascii: "%"): true
    default: false
    }
}

/// Escaping any string yields only safe bytes (no `&`, `=`, `#`, controls) and decodes back to it.
func checkEscape(_ text: String) {
    let escaped = FormEncoding.escape(text)
    require(escaped.utf8.allSatisfy(isFormSafe), "escape leaves only unreserved bytes, + and %: \(escaped)")
    require(sameBytes(FormEncoding.decode(escaped[...]), text), "decode(escape(text)) == text")
}

/// Decoding never grows the text (an escape is three bytes, a replacement character as
/// many) and leaves text without `%` or `+` unchanged.
func checkDecode(_ text: Substring) {
    let decoded = FormEncoding.decode(text)
    require(decoded.utf8.count <= text.utf8.count, "decode never grows the text")
    if !text.utf8.contains(UInt8(ascii: "%")) && !text.utf8.contains(UInt8(ascii: "+")) {
        require(sameBytes(decoded, text), "text without % or + decodes to itself")
    }
}

/// Appending parameters to a redirect URI (always absolute, RFC 6749 §3.1.2) changes only its
/// query: scheme, authority, path and fragment stay (an open redirect otherwise), the query it
/// had is kept, and the new pairs come back in order at its end.
func checkAppending(pairs: [(String, String)], to uri: String) {
    guard let url = URL(string: uri), url.scheme != nil, let result = FormEncoding.appending(pairs, to: url) else { return }
    guard let before = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return }
    let after = URLComponents(url: result, resolvingAgainstBaseURL: false)
    require(after != nil, "the result is a URL with components")
    require(after!.scheme == before.scheme && after!.percentEncodedUser == before.percentEncodedUser
            && after!.percentEncodedHost == before.percentEncodedHost && after!.port == before.port,
            "scheme and authority are kept: \(uri) → \(result.absoluteString)")
    require(after!.percentEncodedPath == before.percentEncodedPath, "the path is kept: \(uri) → \(result.absoluteString)")
    require(after!.percentEncodedFragment == before.percentEncodedFragment, "the fragment is kept: \(uri) → \(result.absoluteString)")
    let query = after!.percentEncodedQuery ?? ""
    if let existing = before.percentEncodedQuery, !existing.isEmpty {
        require(query.hasPrefix(existing + "&"), "the query it had is kept: \(uri) → \(result.absoluteString)")
    }
    require(samePairs(Array(FormEncoding.pairs(query).suffix(pairs.count)), pairs), "the pairs come back at the end: \(result.absoluteString)")
}
