import Foundation

/// A JSON value, used for JWT claim sets and other open-ended JSON objects.
public enum JSONValue: Sendable, Hashable, Codable {
    /// A JSON string.
    case string(String)
    /// A decoded number is `.int` whenever its value is a whole number that fits, however it
    /// is written (`1.0`, `1e2`, a fraction below `Double`'s precision), so re-encoding never changes the case.
    case int(Int64)
    /// A JSON number that is not a whole number fitting `Int64`.
    case double(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// A JSON array.
    case array([JSONValue])
    /// A JSON object, its members by name.
    case object([String: JSONValue])
    /// JSON `null`.
    case null

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int64.self) { self = .int(value) }
        else if let value = try? container.decode(Double.self) { self = Int64(exactly: value).map(JSONValue.int) ?? .double(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    /// The string, or nil when the value is not a string.
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    /// The boolean, or nil when the value is not `true` or `false`.
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    /// The members, or nil when the value is not an object.
    public var objectValue: [String: JSONValue]? { if case .object(let v) = self { v } else { nil } }
    /// The elements, or nil when the value is not an array.
    public var arrayValue: [JSONValue]? { if case .array(let v) = self { v } else { nil } }
    /// Integer value; a JSON number with a fractional part is truncated.
    public var intValue: Int64? {
        switch self {
        case .int(let v): v
        case .double(let v) where v.isFinite && abs(v) < 9e15: Int64(v)
        default: nil
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
}

/// JSON coding with stable, readable output: sorted keys, unescaped slashes.
public enum CanonicalJSON {
    /// Encodes `value` as JSON with sorted keys and unescaped slashes.
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// Decodes a `T` from JSON with a default `JSONDecoder`.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try JSONDecoder().decode(type, from: data)
    }
}

extension JSONValue {
    /// Compact JSON with sorted object keys and unescaped slashes, written directly:
    /// every signed token goes through this, so it avoids `JSONEncoder`.
    public var serialized: Data {
        var output = [UInt8]()
        output.reserveCapacity(256)
        write(to: &output)
        return Data(output)
    }

    func write(to output: inout [UInt8]) {
        switch self {
        case .string(let value): Self.write(string: value, to: &output)
        case .int(let value): output.append(contentsOf: String(value).utf8)
        case .double(let value): output.append(contentsOf: (value.isFinite ? String(value) : "null").utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .null: output.append(contentsOf: "null".utf8)
        case .array(let values):
            output.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                value.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.write(string: key, to: &output)
                output.append(UInt8(ascii: ":"))
                members[key]!.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// RFC 8259 §7: quote, backslash and control characters are escaped.
    static func write(string: String, to output: inout [UInt8]) {
        var string = string
        // A native string's bytes, without a copy (a bridged one is made native first).
        string.withUTF8 { write(utf8: $0, to: &output) }
    }

    private static func write(utf8 bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Tokens, hashes and most claims need no escape: their bytes go in at once. The check
        // reads every byte without a branch (a loop the compiler makes vector instructions of).
        var escapes: UInt8 = 0
        for byte in bytes {
            escapes |= (byte < 0x20 ? 1 : 0) | (byte == UInt8(ascii: "\"") ? 1 : 0) | (byte == UInt8(ascii: "\\") ? 1 : 0)
        }
        guard escapes != 0 else {
            output.append(contentsOf: bytes)
            output.append(UInt8(ascii: "\""))
            return
        }
        let hex = Array("0123456789abcdef".utf8)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                output.append(contentsOf: Array("\\u00".utf8))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 15)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
