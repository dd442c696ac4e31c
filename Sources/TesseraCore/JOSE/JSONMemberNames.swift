import Foundation

/// Finds JSON objects that name a member twice. `JSONDecoder` keeps the first of two such
/// members without a word, while other JOSE libraries keep the last, so a header such as
/// `{"alg":"ES256","alg":"none"}` would mean one thing here and another elsewhere.
/// RFC 7515 §4, RFC 7517 §4 and RFC 7519 §4 let a parser keep the last member or refuse the
/// text; the JOSE parsers refuse it.
enum JSONMemberNames {
    /// Whether an object anywhere in `json` names a member twice, names compared as the keys
    /// of the decoded dictionary are (Swift string equality, after unescaping). Meant for
    /// text `JSONDecoder` has already accepted; a name it cannot read counts as a repeat.
    static func containDuplicates(_ json: Data) -> Bool {
        let bytes = [UInt8](json)
        // The names met so far in each open container, innermost last; nil for an array.
        var open: [Set<String>?] = []
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"):
                open.append([])
            case UInt8(ascii: "["):
                open.append(nil)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = open.popLast()
            case UInt8(ascii: "\""):
                let end = endOfString(bytes, openingQuote: index)
                if (open.last ?? nil) != nil, isFollowedByColon(bytes, from: end) {
                    guard let name = memberName(bytes[index..<end]), open[open.count - 1]!.insert(name).inserted else {
                        return true
                    }
                }
                index = end
                continue
            default:
                break
            }
            index += 1
        }
        return false
    }

    /// The index just past the quote that closes the string opened at `openingQuote`.
    static func endOfString(_ bytes: [UInt8], openingQuote: Int) -> Int {
        var index = openingQuote + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return bytes.count
    }

    /// Whether the next byte after JSON whitespace is a colon: the string before it is a member name.
    static func isFollowedByColon(_ bytes: [UInt8], from start: Int) -> Bool {
        let next = bytes[min(start, bytes.count)...].first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return next == UInt8(ascii: ":")
    }

    /// The name a quoted string token stands for; escapes are left to `JSONDecoder`.
    static func memberName(_ token: ArraySlice<UInt8>) -> String? {
        guard token.contains(UInt8(ascii: "\\")) else {
            return String(decoding: token.dropFirst().dropLast(), as: UTF8.self)
        }
        return try? JSONDecoder().decode(String.self, from: Data(token))
    }
}
