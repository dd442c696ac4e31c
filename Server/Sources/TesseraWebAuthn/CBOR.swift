import Foundation

/// A CBOR data item (RFC 8949 §3) of the kinds WebAuthn uses: the attestation object (§6.5.4),
/// COSE keys (RFC 9052 §7) and authenticator extension outputs (§9, §5.7.4).
///
/// A map is a dictionary: the decoder refuses a map that names a key twice (RFC 8949 §5.6
/// leaves duplicates to the decoder; two readers keeping different copies is how one
/// attestation could mean two things), so the order of the pairs carries nothing.
public enum CBORValue: Sendable, Hashable {
    /// Major type 0: an unsigned integer.
    case unsigned(UInt64)
    /// Major type 1: the integer -1 - `n` (so `.negative(0)` is -1 and `.negative(6)` is -7).
    case negative(UInt64)
    /// Major type 2: a byte string.
    case bytes(Data)
    /// Major type 3: a text string (well-formed UTF-8, RFC 8949 §3.1).
    case text(String)
    /// Major type 4: an array.
    case array([CBORValue])
    /// Major type 5: a map.
    case map([CBORValue: CBORValue])
    /// Major type 7, simple values 20 and 21.
    case bool(Bool)
    /// Major type 7, simple value 22.
    case null

    /// The item for an integer, in whichever major type holds it (COSE labels and algorithm numbers).
    public static func integer(_ value: Int64) -> CBORValue {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    /// The integer, when this is one that fits in an `Int64`.
    public var integerValue: Int64? {
        switch self {
        case .unsigned(let value): value <= UInt64(Int64.max) ? Int64(value) : nil
        case .negative(let value): value <= UInt64(Int64.max) ? -1 - Int64(value) : nil
        default: nil
        }
    }

    public var bytesValue: Data? {
        if case .bytes(let value) = self { value } else { nil }
    }

    public var textValue: String? {
        if case .text(let value) = self { value } else { nil }
    }

    public var arrayValue: [CBORValue]? {
        if case .array(let value) = self { value } else { nil }
    }

    public var mapValue: [CBORValue: CBORValue]? {
        if case .map(let value) = self { value } else { nil }
    }

    /// The value under a text key of a map (`"fmt"`, `"attStmt"`, ...).
    public subscript(key: String) -> CBORValue? {
        mapValue?[.text(key)]
    }

    /// The value under an integer key of a map (COSE labels such as 1 `kty`, 3 `alg`, -1 `crv`).
    public subscript(label: Int64) -> CBORValue? {
        mapValue?[.integer(label)]
    }
}

/// A strict decoder of the CBOR WebAuthn uses (RFC 8949): definite lengths only; integers,
/// byte and text strings, arrays, maps, `true`, `false` and `null`. Everything else (tags,
/// floats, `undefined`, other simple values, indefinite lengths, reserved encodings) is
/// refused, as are text that is not UTF-8, maps with a repeated key and nesting deeper than
/// ``defaultMaximumDepth``.
///
/// Every length is checked against the bytes that remain before anything is read or
/// allocated for it, so a claimed length never costs more than the input that carries it.
/// Integers are not required to be in their shortest form: the CTAP2 canonical form (§6.5.1)
/// is the authenticator's duty, and a longer form changes no meaning.
public enum CBORDecoder {
    /// The deepest nesting accepted: an attestation object is three levels deep (the object,
    /// `attStmt`, `x5c`); extension outputs rarely go further.
    public static let defaultMaximumDepth = 16

    /// Decodes the one data item that fills `bytes` exactly.
    public static func decode(_ bytes: Data, maximumDepth: Int = defaultMaximumDepth) throws(WebAuthnError) -> CBORValue {
        let input = [UInt8](bytes)
        var reader = CBORReader(input, from: 0, maximumDepth: maximumDepth)
        let value = try reader.readItem()
        guard reader.offset == input.count else {
            throw .malformed("CBOR: \(input.count - reader.offset) bytes after the data item")
        }
        return value
    }

    /// Decodes the data item at the start of `bytes`, and says how many bytes it took: a COSE
    /// key inside authenticator data is followed by more (§6.1), and only its own length says where it ends.
    public static func decodePrefix(_ bytes: Data, maximumDepth: Int = defaultMaximumDepth) throws(WebAuthnError) -> (value: CBORValue, count: Int) {
        let input = [UInt8](bytes)
        var reader = CBORReader(input, from: 0, maximumDepth: maximumDepth)
        let value = try reader.readItem()
        return (value, reader.offset)
    }
}

/// Reads CBOR data items from `bytes`, starting at `offset`; `offset` then points past the item.
struct CBORReader {
    let bytes: [UInt8]
    private(set) var offset: Int
    let maximumDepth: Int

    init(_ bytes: [UInt8], from offset: Int, maximumDepth: Int = CBORDecoder.defaultMaximumDepth) {
        self.bytes = bytes
        self.offset = offset
        self.maximumDepth = maximumDepth
    }

    private var remaining: Int { bytes.count - offset }

    /// One data item and everything nested in it.
    mutating func readItem() throws(WebAuthnError) -> CBORValue {
        try readItem(depth: 1)
    }

    private mutating func readItem(depth: Int) throws(WebAuthnError) -> CBORValue {
        guard depth <= maximumDepth else {
            throw .malformed("CBOR: nested deeper than \(maximumDepth) levels at byte \(offset)")
        }
        let start = offset
        guard remaining >= 1 else { throw .malformed("CBOR: the input ends where a data item should start (byte \(start))") }
        let initial = bytes[offset]
        offset += 1
        let major = initial >> 5
        let additional = initial & 0x1F
        if major == 7 {
            return try readSimple(additional, at: start)
        }
        let argument = try readArgument(additional, major: major, at: start)
        switch major {
        case 0:
            return .unsigned(argument)
        case 1:
            return .negative(argument)
        case 2:
            let range = try take(argument, "byte string", at: start)
            return .bytes(Data(bytes[range]))
        case 3:
            let range = try take(argument, "text string", at: start)
            guard Bytes.isValidUTF8(bytes, range) else { throw .malformed("CBOR: text string at byte \(start) is not UTF-8") }
            return .text(String(decoding: bytes[range], as: UTF8.self))
        case 4:
            // Each element takes at least one byte: a count beyond what remains cannot be true.
            guard argument <= UInt64(remaining) else {
                throw .malformed("CBOR: array at byte \(start) claims \(argument) elements, only \(remaining) bytes remain")
            }
            var elements: [CBORValue] = []
            elements.reserveCapacity(Int(argument))
            for _ in 0..<Int(argument) {
                elements.append(try readItem(depth: depth + 1))
            }
            return .array(elements)
        case 5:
            guard argument <= UInt64(remaining / 2) else {
                throw .malformed("CBOR: map at byte \(start) claims \(argument) pairs, only \(remaining) bytes remain")
            }
            var pairs: [CBORValue: CBORValue] = [:]
            pairs.reserveCapacity(Int(argument))
            for _ in 0..<Int(argument) {
                let keyOffset = offset
                let key = try readItem(depth: depth + 1)
                let value = try readItem(depth: depth + 1)
                guard pairs.updateValue(value, forKey: key) == nil else {
                    throw .malformed("CBOR: map at byte \(start) repeats the key at byte \(keyOffset)")
                }
            }
            return .map(pairs)
        default:
            throw .malformed("CBOR: tag at byte \(start); WebAuthn uses no tags")
        }
    }

    /// The argument of the initial byte (RFC 8949 §3): the value itself below 24, else the
    /// 1, 2, 4 or 8 bytes that follow.
    private mutating func readArgument(_ additional: UInt8, major: UInt8, at start: Int) throws(WebAuthnError) -> UInt64 {
        let width: Int
        switch additional {
        case 0..<24: return UInt64(additional)
        case 24: width = 1
        case 25: width = 2
        case 26: width = 4
        case 27: width = 8
        case 31:
            throw .malformed("CBOR: indefinite length (major type \(major)) at byte \(start); only definite lengths are accepted")
        default:
            throw .malformed("CBOR: reserved additional information \(additional) at byte \(start)")
        }
        guard remaining >= width else { throw .malformed("CBOR: the input ends inside the header at byte \(start)") }
        let value = Bytes.bigEndian(bytes, at: offset, count: width)
        offset += width
        return value
    }

    /// Major type 7: only `false`, `true` and `null` appear in WebAuthn's structures.
    private mutating func readSimple(_ additional: UInt8, at start: Int) throws(WebAuthnError) -> CBORValue {
        switch additional {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 25, 26, 27: throw .malformed("CBOR: floating-point number at byte \(start); WebAuthn uses none")
        case 31: throw .malformed("CBOR: break outside an indefinite-length item at byte \(start)")
        default: throw .malformed("CBOR: simple value \(additional) at byte \(start) is not true, false or null")
        }
    }

    /// The range of the next `length` bytes, after checking they are there.
    private mutating func take(_ length: UInt64, _ what: String, at start: Int) throws(WebAuthnError) -> Range<Int> {
        guard length <= UInt64(remaining) else {
            throw .malformed("CBOR: \(what) at byte \(start) claims \(length) bytes, only \(remaining) remain")
        }
        let range = offset..<(offset + Int(length))
        offset = range.upperBound
        return range
    }
}
