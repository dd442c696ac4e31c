import Crypto
import Foundation

/// The key an authenticator app shares with the server for time-based one-time passwords
/// (RFC 4226 §4 R6, RFC 6238 §5.1), shown to the user in base32 (RFC 4648 §6) and in the
/// enrolment QR code.
///
/// Its `description` never shows the key, so interpolating one into a log line is harmless.
package struct TOTPSecret: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    package let bytes: Data

    /// A new random secret of 160 bits, the length RFC 4226 §4 (R6) recommends, from
    /// swift-crypto's system random source.
    package init() {
        bytes = SymmetricKey(size: SymmetricKeySize(bitCount: 160)).withUnsafeBytes { Data($0) }
    }

    /// A secret kept from an earlier enrolment. Must not be empty.
    package init(bytes: Data) {
        precondition(!bytes.isEmpty, "a TOTP secret must not be empty")
        self.bytes = bytes
    }

    /// A secret as users and other systems write it: base32 (RFC 4648 §6) in either case,
    /// with or without spaces and trailing `=` padding. `nil` for anything else, for an empty
    /// secret and for a non-canonical final character (bits past the last byte must be zero,
    /// RFC 4648 §3.5). Shorter secrets than RFC 4226 recommends are accepted: old enrolments
    /// elsewhere used 80 bits.
    package init?(base32: String) {
        guard let bytes = Base32.decode(base32), !bytes.isEmpty else { return nil }
        self.bytes = bytes
    }

    /// RFC 4648 §6 base32, uppercase and without padding, as the Key Uri Format's `secret`
    /// parameter expects.
    package var base32: String { Base32.encode(bytes) }

    package var description: String { "TOTPSecret(\(bytes.count) bytes)" }
    package var debugDescription: String { description }
}

/// RFC 4648 §6 base32: the alphabet `A`–`Z`, `2`–`7`, five bits a character.
package enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// Uppercase, without the `=` padding (the Key Uri Format omits it).
    package static func encode(_ data: Data) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((data.count * 8 + 4) / 5)
        var buffer: UInt32 = 0, bits = 0
        for byte in data {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int((buffer >> UInt32(bits)) & 0x1F)])
            }
        }
        if bits > 0 {
            out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 0x1F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Ignores whitespace, case and trailing padding; `nil` for any other character, for a
    /// length no encoder produces (1, 3 or 6 characters past a multiple of 8) and for
    /// non-zero bits after the last whole byte.
    package static func decode(_ text: String) -> Data? {
        var symbols = Array(text.utf8.filter { !($0 == 0x20 || (0x09...0x0D).contains($0)) })
        while symbols.last == UInt8(ascii: "=") { symbols.removeLast() }
        var out = Data()
        out.reserveCapacity(symbols.count * 5 / 8)
        var buffer: UInt32 = 0, bits = 0
        for symbol in symbols {
            let value: UInt8
            switch symbol {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = symbol - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = symbol - UInt8(ascii: "a")
            case UInt8(ascii: "2")...UInt8(ascii: "7"): value = symbol - UInt8(ascii: "2") + 26
            default: return nil
            }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        guard bits < 5, buffer == 0 else { return nil }
        return out
    }
}

/// Time-based one-time passwords (RFC 6238): HOTP (RFC 4226) with the counter taken from
/// the clock, one step every `period` seconds since the Unix epoch (T0 = 0).
///
/// A code is accepted once: ``matchingStep(_:at:window:after:)`` returns the time step the
/// code belongs to, and the caller stores the last accepted step with the enrolment and
/// passes it back next time, so the same code (or an older one) is refused (RFC 6238 §5.2).
package struct TOTP: Sendable {
    /// The HMAC hash (RFC 6238 §1.2); the raw value is the Key Uri Format's `algorithm`.
    package enum Algorithm: String, Sendable, CaseIterable {
        case sha1 = "SHA1"
        case sha256 = "SHA256"
        case sha512 = "SHA512"
    }

    package let secret: TOTPSecret
    package let digits: Int
    package let period: Int
    package let algorithm: Algorithm

    /// The defaults are the ones every authenticator app supports (6 digits, 30 s, SHA-1);
    /// RFC 4226 §5.3 allows 6 to 8 digits.
    package init(secret: TOTPSecret, digits: Int = 6, period: Int = 30, algorithm: Algorithm = .sha1) {
        precondition((6...8).contains(digits), "RFC 4226 §5.3: 6 to 8 digits")
        precondition(period > 0, "the time step must be positive")
        self.secret = secret
        self.digits = digits
        self.period = period
        self.algorithm = algorithm
    }

    /// RFC 6238 §4.2: T = floor((time − T0) / X), with T0 = 0 and X = `period`.
    package func step(at unixTime: Int64) -> Int64 {
        let period = Int64(period)
        let quotient = unixTime / period
        return unixTime % period < 0 ? quotient - 1 : quotient
    }

    /// The code an authenticator shows at `unixTime`, zero-padded to `digits`.
    package func code(at unixTime: Int64) -> String {
        code(forStep: step(at: unixTime))
    }

    /// The code for time step (HOTP counter) `step`: RFC 4226 §5.3, HOTP(K, C) =
    /// Truncate(HMAC(K, C)) mod 10^digits, zero-padded.
    package func code(forStep step: Int64) -> String {
        let value = String(value(forStep: step))
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The time step within `window` steps either side of `unixTime`'s whose code is `code`,
    /// or `nil`. Steps at or before `lastUsedStep` are not candidates: pass the step stored
    /// from the last accepted code so that no code is accepted twice (RFC 6238 §5.2), and
    /// store the step returned here in its place.
    ///
    /// RFC 6238 §5.2 allows one step back for network delay; the default window also allows
    /// one ahead for a fast clock. Every candidate's code is computed and compared without
    /// branching on the comparison, so the time taken does not tell which step (if any)
    /// matched. If two candidates happen to share a code, the earliest is returned, which
    /// locks out the fewest later codes. `code` must be exactly `digits` ASCII digits.
    package func matchingStep(_ code: String, at unixTime: Int64, window: Int = 1, after lastUsedStep: Int64? = nil) -> Int64? {
        precondition(window >= 0, "the window counts steps either side")
        guard let entered = Self.parse(code, digits: digits) else { return nil }
        let current = step(at: unixTime)
        var found: UInt64 = 0
        var matched: UInt64 = 0
        // From the latest to the earliest, so that an earlier match replaces a later one.
        for offset in stride(from: window, through: -window, by: -1) {
            let candidate = current &+ Int64(offset)
            let difference = value(forStep: candidate) ^ entered
            // 1 when difference is 0: both values are below 2^31, so only 0 keeps bit 31
            // of (difference − 1) set.
            let equal = UInt64((difference &- 1) >> 31) & 1
            let eligible: UInt64 = lastUsedStep.map { candidate > $0 ? 1 : 0 } ?? 1
            let take = 0 &- (equal & eligible)
            matched = (matched & ~take) | (UInt64(bitPattern: candidate) & take)
            found |= take & 1
        }
        return found == 1 ? Int64(bitPattern: matched) : nil
    }

    /// The `otpauth://` URI authenticator apps read from the enrolment QR code, in Google's
    /// Key Uri Format: `otpauth://totp/Issuer:account?secret=…&issuer=…&algorithm=…&digits=…&period=…`.
    ///
    /// The label's parts and the `issuer` parameter are percent-encoded (RFC 3986 §2.1;
    /// spaces as `%20`, not `+`). Neither part should contain a colon, which the format uses
    /// as the separator; one that does is encoded as `%3A`, which apps may still split on.
    /// An empty issuer leaves out both the prefix and the parameter.
    package func provisioningURI(issuer: String, account: String) -> String {
        let label = issuer.isEmpty
            ? Self.percentEncoded(account, keeping: "@")
            : Self.percentEncoded(issuer, keeping: "@") + ":" + Self.percentEncoded(account, keeping: "@")
        var query = "secret=" + secret.base32
        if !issuer.isEmpty { query += "&issuer=" + Self.percentEncoded(issuer) }
        query += "&algorithm=\(algorithm.rawValue)&digits=\(digits)&period=\(period)"
        return "otpauth://totp/" + label + "?" + query
    }

    /// RFC 4226 §5.3 dynamic truncation: the 31-bit number at the offset the last nibble of
    /// HMAC(K, C) gives, C being the 8-byte big-endian counter (§5.2).
    package func truncatedHMAC(forStep step: Int64) -> UInt32 {
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Data($0) }
        let key = SymmetricKey(data: secret.bytes)
        let mac: [UInt8] = switch algorithm {
        case .sha1: Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
        case .sha256: Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
        case .sha512: Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
        }
        let offset = Int(mac[mac.count - 1] & 0x0F)
        return (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16)
            | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
    }

    private func value(forStep step: Int64) -> UInt32 {
        truncatedHMAC(forStep: step) % Self.powersOfTen[digits]
    }

    private static let powersOfTen: [UInt32] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000]

    /// The number `code` spells if it is exactly `digits` ASCII digits.
    private static func parse(_ code: String, digits: Int) -> UInt32? {
        guard code.utf8.count == digits else { return nil }
        var value: UInt32 = 0
        for byte in code.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + UInt32(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// Percent-encodes every UTF-8 byte but RFC 3986 §2.3's unreserved characters and `keeping`.
    private static func percentEncoded(_ text: String, keeping extra: Character? = nil) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        let kept = extra.flatMap(\.asciiValue)
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            case _ where byte == kept:
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
