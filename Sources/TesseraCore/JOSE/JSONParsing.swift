import Foundation

/// Why a text is not JSON, and where it stops being JSON.
public struct JSONParsingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. `an unescaped control character in a string`.
    public let reason: String
    /// The offset of the byte where the text stops being JSON.
    public let offset: Int

    /// Makes the error of a text that stops being JSON at byte `offset`, for `reason`.
    public init(reason: String, offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// The reason, and the byte: `a comma or the closing bracket must follow (byte 3)`.
    public var description: String { "\(reason) (byte \(offset))" }
}

extension JSONValue {
    /// What a parse makes of an object that names a member twice (RFC 8259 §4: names SHOULD
    /// be unique, and readers differ on the others).
    public enum RepeatedNames: Sendable {
        /// The first member counts, as Foundation's decoding has it; the others must be JSON.
        case firstCounts
        /// Refused. For a text another reader may read too, where a member could then mean one
        /// thing here and another there (`{"alg":"ES256","alg":"none"}`): RFC 7515 §4, RFC 7517
        /// §4 and RFC 7519 §4 let JOSE's parsers refuse it. Names are compared as a
        /// dictionary's keys are: after their escapes, by Swift's string equality.
        case refused
    }

    /// The value of a JSON text (RFC 8259), as `JSONDecoder` decodes a `JSONValue` from it but
    /// without it: a number is `.int` when it is whole and fits `Int64`, however it is written,
    /// and `.double` otherwise; of an object's members with the same name the first counts
    /// unless `repeatedNames` is `.refused`. Refused as Foundation refuses them: invalid UTF-8,
    /// lone surrogates, numbers beyond `Double`'s range, nesting deeper than 512 arrays and
    /// objects, anything but whitespace after the value. Stricter than Foundation, as RFC 8259
    /// has it: a comma before a closing bracket is refused, the text must be UTF-8 (Foundation
    /// also reads UTF-16 and UTF-32), and a member named twice must be JSON in both places
    /// (Foundation never reads the second). Numbers written with a fraction or an exponent whose
    /// magnitude is 2^53 or more can differ: here a whole one is exact (`92233720368547758e2` is
    /// `.int(9223372036854775800)`) and another is its nearest `Double` (`1592233744073716162.5`
    /// is `.int(1592233744073716224)`, RFC 8259 §6's binary64 reading); Foundation reads the
    /// first as `.double(9.223372036854776e18)`, the second as the digits before its point
    /// (…162), and `9007199254740993.5` as …993 but `9007199254740993.9999999999999999999999999999`,
    /// the same `Double`, as …994.
    ///
    /// WebAuthn's client data is read by a stricter reader of TesseraWebAuthn's own (nesting
    /// bounded at 32, a byte order mark dropped): that target depends on no module of ours.
    ///
    /// - Throws: ``JSONParsingError``, with the offset where the text stops being JSON, or of
    ///   the name given twice.
    public init(parsing text: Data, repeatedNames: RepeatedNames = .firstCounts) throws {
        self = try text.withUnsafeBytes { bytes in
            var parser = JSONParser(bytes: bytes.bindMemory(to: UInt8.self), repeatedNames: repeatedNames)
            return try parser.document()
        }
    }

    /// The value of a JSON text held in a string, read as the `Data` variant reads its bytes.
    ///
    /// - Throws: ``JSONParsingError``, with the offset (in UTF-8 bytes) where the text stops being JSON.
    public init(parsing text: String, repeatedNames: RepeatedNames = .firstCounts) throws {
        var text = text
        self = try text.withUTF8 { bytes in
            var parser = JSONParser(bytes: bytes, repeatedNames: repeatedNames)
            return try parser.document()
        }
    }
}

/// A recursive-descent parser over the text's bytes.
private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    var depth = 0
    let repeatedNames: JSONValue.RepeatedNames
    static let maximumDepth = 512

    init(bytes: UnsafeBufferPointer<UInt8>, repeatedNames: JSONValue.RepeatedNames) {
        self.bytes = bytes
        self.repeatedNames = repeatedNames
    }

    mutating func document() throws -> JSONValue {
        let value = try self.value()
        skipWhitespace()
        guard position == bytes.count else { throw failure("more after the value") }
        return value
    }

    func failure(_ reason: String) -> JSONParsingError { JSONParsingError(reason: reason, offset: position) }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func value() throws -> JSONValue {
        skipWhitespace()
        guard position < bytes.count else { throw failure("the text ends where a value should be") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return .object(try object())
        case UInt8(ascii: "["): return .array(try array())
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("no value starts here")
        }
    }

    mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count,
              memcmp(bytes.baseAddress! + position, word.utf8Start, count) == 0 else { throw failure("not \(word)") }
        position += count
    }

    mutating func nested<T>(_ body: (inout JSONParser) throws -> T) throws -> T {
        depth += 1
        guard depth <= Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth) levels") }
        defer { depth -= 1 }
        return try body(&self)
    }

    mutating func object() throws -> [String: JSONValue] {
        try nested { parser in
            parser.position += 1
            var members: [String: JSONValue] = [:]
            parser.skipWhitespace()
            if parser.position < parser.bytes.count, parser.bytes[parser.position] == UInt8(ascii: "}") {
                parser.position += 1
                return members
            }
            while true {
                parser.skipWhitespace()
                guard parser.position < parser.bytes.count, parser.bytes[parser.position] == UInt8(ascii: "\"") else {
                    throw parser.failure("a member's name must be a string")
                }
                let nameOffset = parser.position
                let name = try parser.string()
                parser.skipWhitespace()
                guard parser.position < parser.bytes.count, parser.bytes[parser.position] == UInt8(ascii: ":") else {
                    throw parser.failure("a colon must follow a member's name")
                }
                parser.position += 1
                let value = try parser.value()
                if members[name] == nil {
                    members[name] = value
                } else if parser.repeatedNames == .refused {
                    throw JSONParsingError(reason: "the member \(String(decoding: JSONValue.string(name).serialized, as: UTF8.self)) is named a second time", offset: nameOffset)
                }
                guard try parser.another(closing: UInt8(ascii: "}")) else { return members }
            }
        }
    }

    mutating func array() throws -> [JSONValue] {
        try nested { parser in
            parser.position += 1
            var elements: [JSONValue] = []
            parser.skipWhitespace()
            if parser.position < parser.bytes.count, parser.bytes[parser.position] == UInt8(ascii: "]") {
                parser.position += 1
                return elements
            }
            while true {
                elements.append(try parser.value())
                guard try parser.another(closing: UInt8(ascii: "]")) else { return elements }
            }
        }
    }

    /// After a member or an element: true at a comma, false at the closing bracket (both taken).
    mutating func another(closing: UInt8) throws -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw failure("the text ends inside an object or array") }
        switch bytes[position] {
        case UInt8(ascii: ","): position += 1; return true
        case closing: position += 1; return false
        default: throw failure("a comma or the closing bracket must follow")
        }
    }

    /// A string, its opening quote at `position`.
    mutating func string() throws -> String {
        position += 1
        let start = position
        // Most strings have no escape: their bytes are the string's UTF-8.
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "\""):
                defer { position += 1 }
                return try utf8(start..<position)
            case UInt8(ascii: "\\"):
                return try escapedString(from: start)
            case 0..<0x20:
                throw failure("an unescaped control character in a string")
            default:
                position += 1
            }
        }
        throw failure("the text ends inside a string")
    }

    func utf8(_ range: Range<Int>) throws -> String {
        guard let text = String(validating: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) else {
            throw JSONParsingError(reason: "a string that is not UTF-8", offset: range.lowerBound)
        }
        return text
    }

    mutating func escapedString(from start: Int) throws -> String {
        var text = try utf8(start..<position)
        var run = position
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "\""):
                text += try utf8(run..<position)
                position += 1
                return text
            case UInt8(ascii: "\\"):
                text += try utf8(run..<position)
                position += 1
                guard position < bytes.count else { break }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): text += "\""
                case UInt8(ascii: "\\"): text += "\\"
                case UInt8(ascii: "/"): text += "/"
                case UInt8(ascii: "b"): text += "\u{08}"
                case UInt8(ascii: "f"): text += "\u{0C}"
                case UInt8(ascii: "n"): text += "\n"
                case UInt8(ascii: "r"): text += "\r"
                case UInt8(ascii: "t"): text += "\t"
                case UInt8(ascii: "u"): text.unicodeScalars.append(try unicodeEscape())
                default: position -= 1; throw failure("an unknown escape")
                }
                run = position
            case 0..<0x20:
                throw failure("an unescaped control character in a string")
            default:
                position += 1
            }
        }
        throw failure("the text ends inside a string")
    }

    /// The scalar of `\uXXXX` (its `\u` taken), a surrogate pair's second half included.
    mutating func unicodeEscape() throws -> Unicode.Scalar {
        let first = try hexQuad()
        switch first {
        case 0xD800...0xDBFF:
            guard bytes.count - position >= 6, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                throw failure("a high surrogate without its low one")
            }
            position += 2
            let second = try hexQuad()
            guard (0xDC00...0xDFFF).contains(second) else { throw failure("a high surrogate without its low one") }
            return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
        case 0xDC00...0xDFFF:
            throw failure("a low surrogate without its high one")
        default:
            return Unicode.Scalar(first)!
        }
    }

    mutating func hexQuad() throws -> UInt32 {
        guard bytes.count - position >= 4 else { throw failure("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// RFC 8259 §6: `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`.
    mutating func number() throws -> JSONValue {
        let start = position
        var whole = true
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count, isDigit(bytes[position]) else { throw failure("a number needs a digit") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) { throw failure("a number can't start with 0") }
        } else {
            skipDigits()
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            whole = false
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else { throw failure("a fraction needs a digit") }
            skipDigits()
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            whole = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard position < bytes.count, isDigit(bytes[position]) else { throw failure("an exponent needs a digit") }
            skipDigits()
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if whole, let value = Int64(text) { return .int(value) }
        if !whole, let value = Self.exactInteger(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else {
            throw JSONParsingError(reason: "a number beyond Double's range", offset: start)
        }
        return Int64(exactly: value).map(JSONValue.int) ?? .double(value)
    }

    /// A number written with a fraction or an exponent whose value is a whole number in
    /// `Int64`, computed exactly (`92233720368541e03` is 92233720368541000; through `Double` it
    /// would round past 2^53, where Foundation doesn't); nil when it isn't whole or doesn't fit.
    static func exactInteger(_ text: String) -> Int64? {
        let negative = text.hasPrefix("-")
        let unsigned = negative ? text.dropFirst() : Substring(text)
        let parts = unsigned.split(maxSplits: 1, omittingEmptySubsequences: false, whereSeparator: { $0 == "e" || $0 == "E" })
        guard let exponent = parts.count == 2 ? Int(parts[1]) : 0, exponent > -400, exponent < 400 else { return nil }
        let mantissa = parts[0].split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        var digits = Array(mantissa[0].utf8) + (mantissa.count == 2 ? Array(mantissa[1].utf8) : [])
        var shift = exponent - (mantissa.count == 2 ? mantissa[1].utf8.count : 0)
        while shift < 0, digits.last == UInt8(ascii: "0") { digits.removeLast(); shift += 1 }
        guard shift >= 0 else { return nil }
        var magnitude: UInt64 = 0
        for digit in digits {
            let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            guard !overflow, !overflow2 else { return nil }
            magnitude = sum
        }
        for _ in 0..<shift where magnitude != 0 {
            let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            magnitude = times10
        }
        if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    mutating func skipDigits() {
        while position < bytes.count, isDigit(bytes[position]) { position += 1 }
    }
}
