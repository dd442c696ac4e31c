import Foundation

/// A JSON value (RFC 8259) as the client-data reader needs it: numbers are checked for their
/// syntax but not kept, since no member WebAuthn defines in the client data is a number.
enum JSONValue: Equatable {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    case number
    case bool(Bool)
    case null
}

/// A strict JSON reader for clientDataJSON (§5.8.1, §7.1 "run an implementation-specific JSON
/// parser"). Ours, rather than Foundation's, for three reasons: an object that names a member
/// twice is refused (Foundation keeps one of them silently, and another reader could keep the
/// other, so one client data would say two things); nesting is bounded; and the same bytes
/// parse the same way on every platform.
///
/// TesseraCore has a parser too, `JSONValue(parsing:)`, for the values we store and exchange:
/// it reads as Foundation does (the first of two members with one name counts), which this
/// reader must not, and this target stands on Foundation, swift-crypto and swift-certificates
/// alone (docs/architecture.md's walls), as its CBOR and base64url readers do.
///
/// Input must be UTF-8 (a leading byte order mark is dropped, as §7.1's "UTF-8 decode"
/// requires); strings may not hold unescaped control characters or unpaired surrogates.
struct JSONReader {
    static let maximumDepth = 32

    private let bytes: [UInt8]
    private var offset: Int

    /// Parses the single JSON text that fills `data`.
    static func parse(_ data: Data) throws(WebAuthnError) -> JSONValue {
        var bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard Bytes.isValidUTF8(bytes, 0..<bytes.count) else { throw .malformed("client data: not UTF-8") }
        var reader = JSONReader(bytes: bytes, offset: 0)
        reader.skipWhitespace()
        let value = try reader.readValue(depth: 1)
        reader.skipWhitespace()
        guard reader.offset == bytes.count else { throw reader.error("text after the JSON value") }
        return value
    }

    private func error(_ what: String) -> WebAuthnError {
        .malformed("client data: \(what) at byte \(offset)")
    }

    private var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            offset += 1
        }
    }

    private mutating func expect(_ literal: String) throws(WebAuthnError) {
        let expected = Array(literal.utf8)
        guard bytes.count - offset >= expected.count, bytes[offset..<(offset + expected.count)].elementsEqual(expected) else {
            throw error("expected \(literal)")
        }
        offset += expected.count
    }

    private mutating func readValue(depth: Int) throws(WebAuthnError) -> JSONValue {
        guard depth <= Self.maximumDepth else { throw error("nested deeper than \(Self.maximumDepth) levels") }
        guard let byte = current else { throw error("the input ends where a value should start") }
        switch byte {
        case UInt8(ascii: "{"): return try readObject(depth: depth)
        case UInt8(ascii: "["): return try readArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try readNumber(); return .number
        default: throw error("unexpected character")
        }
    }

    private mutating func readObject(depth: Int) throws(WebAuthnError) -> JSONValue {
        offset += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            offset += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let nameOffset = offset
            let name = try readString()
            skipWhitespace()
            try expect(":")
            skipWhitespace()
            let value = try readValue(depth: depth + 1)
            guard members.updateValue(value, forKey: name) == nil else {
                throw .malformed("client data: the member \"\(name)\" at byte \(nameOffset) is named twice")
            }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "}"): offset += 1; return .object(members)
            default: throw error("expected , or }")
            }
        }
    }

    private mutating func readArray(depth: Int) throws(WebAuthnError) -> JSONValue {
        offset += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            offset += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try readValue(depth: depth + 1))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "]"): offset += 1; return .array(elements)
            default: throw error("expected , or ]")
            }
        }
    }

    /// RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func readNumber() throws(WebAuthnError) {
        func isDigit(_ byte: UInt8?) -> Bool { byte.map { (0x30...0x39).contains($0) } ?? false }
        if current == UInt8(ascii: "-") { offset += 1 }
        if current == UInt8(ascii: "0") {
            offset += 1
        } else {
            guard isDigit(current) else { throw error("a number without digits") }
            while isDigit(current) { offset += 1 }
        }
        if current == UInt8(ascii: ".") {
            offset += 1
            guard isDigit(current) else { throw error("a number without digits after the point") }
            while isDigit(current) { offset += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            offset += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { offset += 1 }
            guard isDigit(current) else { throw error("a number without exponent digits") }
            while isDigit(current) { offset += 1 }
        }
    }

    /// A string (RFC 8259 §7), its escapes resolved; the input is known to be UTF-8.
    private mutating func readString() throws(WebAuthnError) -> String {
        offset += 1
        let source = bytes
        var scalars = String.UnicodeScalarView()
        var runStart = offset
        func flush(upTo end: Int) {
            scalars.append(contentsOf: String(decoding: source[runStart..<end], as: UTF8.self).unicodeScalars)
        }
        while true {
            guard let byte = current else { throw error("an unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                flush(upTo: offset)
                offset += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush(upTo: offset)
                offset += 1
                scalars.append(try readEscape())
                runStart = offset
            case 0x00..<0x20:
                throw error("an unescaped control character in a string")
            default:
                offset += 1
            }
        }
    }

    /// The character after a backslash; `\u` escapes of a surrogate must come as a pair.
    private mutating func readEscape() throws(WebAuthnError) -> Unicode.Scalar {
        guard let byte = current else { throw error("an unterminated escape") }
        offset += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try readHex4()
            switch unit {
            case 0xD800...0xDBFF:
                guard current == UInt8(ascii: "\\") else { throw error("an unpaired surrogate escape") }
                offset += 1
                guard current == UInt8(ascii: "u") else { throw error("an unpaired surrogate escape") }
                offset += 1
                let low = try readHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("an unpaired surrogate escape") }
                let value = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                guard let scalar = Unicode.Scalar(value) else { throw error("an invalid escape") }
                return scalar
            case 0xDC00...0xDFFF:
                throw error("an unpaired surrogate escape")
            default:
                guard let scalar = Unicode.Scalar(unit) else { throw error("an invalid escape") }
                return scalar
            }
        default:
            throw error("an unknown escape")
        }
    }

    private mutating func readHex4() throws(WebAuthnError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw error("a short \\u escape") }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("a \\u escape with a non-hex digit")
            }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }
}
