import Foundation

/// Byte-level helpers shared by the parsers. Everything here works on `[UInt8]` with indexes
/// from zero, so a `Data` slice's offset indices never leak into the parsing.
enum Bytes {
    /// Whether two byte strings are equal, taking the same time whatever their contents: the
    /// expected challenge is a secret until the ceremony ends (§13.5.3). Only the lengths,
    /// which are not secret, end the comparison early.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices {
            difference |= lhs[index] ^ rhs[index]
        }
        return difference == 0
    }

    /// Whether `bytes[range]` is well-formed UTF-8 (RFC 3629 §4): no overlong forms, no
    /// surrogates, nothing above U+10FFFF, no truncated sequence. CBOR text strings (RFC 8949
    /// §3.1, major type 3) and clientDataJSON (§5.8.1, "UTF-8 decode") must be.
    static func isValidUTF8(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        var index = range.lowerBound
        let end = range.upperBound
        while index < end {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            // The length of the sequence and the range its second byte must fall in (RFC 3629 §4's table).
            let length: Int
            var secondLow: UInt8 = 0x80
            var secondHigh: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; secondLow = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; secondHigh = 0x9F
            case 0xF0: length = 4; secondLow = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; secondHigh = 0x8F
            default: return false
            }
            guard end - index >= length else { return false }
            let second = bytes[index + 1]
            guard second >= secondLow, second <= secondHigh else { return false }
            var next = index + 2
            while next < index + length {
                guard bytes[next] & 0xC0 == 0x80 else { return false }
                next += 1
            }
            index += length
        }
        return true
    }

    /// A big-endian unsigned integer of `count` bytes at `offset`; the caller has checked the bytes are there.
    static func bigEndian(_ bytes: [UInt8], at offset: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for byte in bytes[offset..<(offset + count)] {
            value = value << 8 | UInt64(byte)
        }
        return value
    }
}

/// Base64url without padding (RFC 4648 §5), as WebAuthn uses it for the client data's
/// `challenge` (§5.8.1, "base64url encoding" in §3). Decoding is strict: only the URL-safe
/// alphabet, no padding, no whitespace, and unused trailing bits must be zero, so that one
/// challenge has exactly one accepted spelling.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The value of one alphabet character, or nil for any other byte.
    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }

    /// The unpadded base64url encoding of `bytes`.
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index < input.count {
            let remaining = input.count - index
            let first = input[index]
            let second: UInt8 = remaining > 1 ? input[index + 1] : 0
            let third: UInt8 = remaining > 2 ? input[index + 2] : 0
            output.append(alphabet[Int(first >> 2)])
            output.append(alphabet[Int((first & 0x03) << 4 | second >> 4)])
            if remaining > 1 { output.append(alphabet[Int((second & 0x0F) << 2 | third >> 6)]) }
            if remaining > 2 { output.append(alphabet[Int(third & 0x3F)]) }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes `text` encodes, or nil when it is not canonical unpadded base64url.
    static func decode(_ text: some StringProtocol) -> Data? {
        let characters = Array(text.utf8)
        guard characters.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in characters {
            guard let value = sextet(character) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Leftover bits (2 or 4) carry no byte; a canonical encoding leaves them zero.
        guard accumulator == 0 else { return nil }
        return Data(output)
    }
}
