import Foundation

/// Base64url without padding (RFC 7515 §2, RFC 4648 §5), encoded and decoded directly on
/// bytes: it runs several times for every token the provider signs or checks.
public enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// Encodes bytes as base64url without padding.
    public static func encode<S: Sequence>(_ data: S) -> String where S.Element == UInt8 {
        let bytes = Array(data)
        var output = [UInt8]()
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output.append(alphabet[Int(chunk >> 18 & 63)])
            output.append(alphabet[Int(chunk >> 12 & 63)])
            output.append(alphabet[Int(chunk >> 6 & 63)])
            output.append(alphabet[Int(chunk & 63)])
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            let chunk = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            output.append(alphabet[Int(chunk >> 18 & 63)])
            output.append(alphabet[Int(chunk >> 12 & 63)])
            if rest == 2 { output.append(alphabet[Int(chunk >> 6 & 63)]) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes base64url; refuses padding, characters outside the alphabet, and
    /// non-canonical trailing bits.
    public static func decode(_ string: some StringProtocol) -> Data? {
        let input = Array(string.utf8)
        guard input.count % 4 != 1 else { return nil }
        var output = [UInt8]()
        output.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in input {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return Data(output)
    }

    /// Lower-case hexadecimal.
    public static func hex<S: Sequence>(_ data: S) -> String where S.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var output = [UInt8]()
        for byte in data {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 15)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}
