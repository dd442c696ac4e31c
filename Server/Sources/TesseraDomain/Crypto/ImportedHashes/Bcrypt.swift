import Crypto
import TesseraCore

/// A bcrypt hash, `$2b$<cost>$<22 salt><31 hash>` in bcrypt's own base64 (Provos and
/// Mazières, "A Future-Adaptable Password Scheme", USENIX 1999, as OpenBSD's bcrypt(3) writes it).
///
/// `$2a$`, `$2b$` and `$2y$` are all computed by `$2b$`'s rule: the password's first 72 bytes,
/// then a NUL; as in C, a NUL in the password ends it. `$2y$` is PHP's name for the same thing; `$2a$` differs only in OpenBSD's own
/// pre-2014 code, which counted a password's length in a byte, so passwords of 255 bytes or more
/// hashed wrongly there. The other `$2a$` writers (crypt_blowfish, Go, jBCrypt, node) never had
/// that bug, so `$2b$`'s rule is right for them. `$2x$` (crypt_blowfish's sign-extension bug)
/// is not accepted.
struct BcryptHash: ImportedHash {
    let cost: Int
    let salt: [UInt8]
    let hash: [UInt8]
    /// Django's `bcrypt_sha256`: bcrypt of the password's SHA-256 in lowercase hex, so that
    /// bytes past the 72nd still count.
    let prehash: Bool

    init(_ text: Substring, prehash: Bool = false) throws {
        let parts = text.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].isEmpty else {
            throw ImportedHashError("bcrypt hash must be $2b$<cost>$<53 characters>")
        }
        guard ["2a", "2b", "2y"].contains(parts[1]) else {
            throw ImportedHashError("bcrypt version must be 2a, 2b or 2y, not \(String(parts[1].prefix(4)).debugDescription)")
        }
        // bcrypt allows 31; each step doubles the work (13 is about 0.5 s a check here), so
        // past PasswordCostCaps a sign-in attempt would hold a hashing thread for seconds.
        let caps = PasswordCostCaps.bcryptCost
        guard parts[2].count == 2 else { throw ImportedHashError("bcrypt cost must be two digits, 04 to \(caps.upperBound)") }
        cost = try ImportedFields.decimal(parts[2], "bcrypt cost", in: caps)
        let body = parts[3]
        guard body.count == 53 else {
            throw ImportedHashError("bcrypt salt and hash must be 53 characters (22 + 31), found \(body.count)")
        }
        guard let salt = BcryptBase64.decode(body.prefix(22)), let hash = BcryptBase64.decode(body.suffix(31)) else {
            throw ImportedHashError("bcrypt salt and hash must be in bcrypt's base64 alphabet (./A-Za-z0-9)")
        }
        self.salt = salt
        self.hash = hash
        self.prehash = prehash
    }

    func matches(_ password: [UInt8]) -> Bool {
        let key = prehash ? SHA256.hash(data: password).flatMap { [Self.hexDigits[Int($0 >> 4)], Self.hexDigits[Int($0 & 0xF)]] } : password
        return constantTimeEquals(Bcrypt.hash(key, salt: salt, cost: cost), hash)
    }

    static let hexDigits = Array("0123456789abcdef".utf8)
}

/// bcrypt's base64: the alphabet `./A-Za-z0-9`, no padding, spare low bits of the last
/// character ignored.
package enum BcryptBase64 {
    package static func decode(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in text.utf8 {
            guard let value = value(of: character) else { return nil }
            accumulator = (accumulator << 6 | value) & 0x3FFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> bits))
            }
        }
        return bytes
    }

    static func value(of character: UInt8) -> UInt32? {
        switch character {
        case UInt8(ascii: "."): 0
        case UInt8(ascii: "/"): 1
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(character - UInt8(ascii: "A")) + 2
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(character - UInt8(ascii: "a")) + 28
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(character - UInt8(ascii: "0")) + 54
        default: nil
        }
    }
}

/// EksBlowfish and the bcrypt output, as the 1999 paper defines them.
enum Bcrypt {
    /// P-array (18 words) then the four S-boxes (256 words each), one buffer.
    static let stateWords = 18 + 4 * 256
    static let initialState: [UInt32] = BlowfishConstants.p + BlowfishConstants.s0 + BlowfishConstants.s1
        + BlowfishConstants.s2 + BlowfishConstants.s3

    /// The 23 bytes that a bcrypt string's last 31 characters encode.
    static func hash(_ password: [UInt8], salt: [UInt8], cost: Int) -> [UInt8] {
        precondition(salt.count == 16 && (4...31).contains(cost))
        // $2b$: the C string's bytes, at most 72 of them, then its NUL.
        let key = Array(password.prefix { $0 != 0 }.prefix(72)) + [0]
        let keyWords = (0..<18).map { streamWord(key, $0) }
        let saltWords = (0..<4).map { streamWord(salt, $0) }
        let saltKeyWords = (0..<18).map { saltWords[$0 % 4] }

        let state = UnsafeMutablePointer<UInt32>.allocate(capacity: stateWords)
        defer { state.deallocate() }
        initialState.withUnsafeBufferPointer { state.initialize(from: $0.baseAddress!, count: stateWords) }

        expand(state, key: keyWords, salt: saltWords)
        for _ in 0..<(UInt64(1) << UInt64(cost)) {
            expand(state, key: keyWords, salt: nil)
            expand(state, key: saltKeyWords, salt: nil)
        }

        var text = (0..<6).map { streamWord(Array("OrpheanBeholderScryDoubt".utf8), $0) }
        for _ in 0..<64 {
            for i in stride(from: 0, to: 6, by: 2) {
                (text[i], text[i + 1]) = encipher(text[i], text[i + 1], state)
            }
        }
        let bytes = text.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } }
        return Array(bytes.prefix(23))
    }

    /// Word `index` of `bytes` read big-endian as an endless cycle (OpenBSD's `Blowfish_stream2word`).
    static func streamWord(_ bytes: [UInt8], _ index: Int) -> UInt32 {
        (0..<4).reduce(0) { word, k in word << 8 | UInt32(bytes[(4 * index + k) % bytes.count]) }
    }

    /// ExpandKey: XOR the key into P, then replace P and the S-boxes by successive encryptions,
    /// each of the previous block XOR the next two salt words (when there is a salt).
    static func expand(_ state: UnsafeMutablePointer<UInt32>, key: [UInt32], salt: [UInt32]?) {
        for i in 0..<18 { state[i] ^= key[i] }
        var left: UInt32 = 0
        var right: UInt32 = 0
        let salted = salt != nil
        let salt = salt ?? []
        var next = 0
        for i in stride(from: 0, to: stateWords, by: 2) {
            if salted {
                left ^= salt[next]
                right ^= salt[next + 1]
                next ^= 2
            }
            (left, right) = encipher(left, right, state)
            state[i] = left
            state[i + 1] = right
        }
    }

    /// One Blowfish block encryption with the current state: 16 Feistel rounds.
    @inline(__always)
    static func encipher(_ left: UInt32, _ right: UInt32, _ state: UnsafeMutablePointer<UInt32>) -> (UInt32, UInt32) {
        let s0 = state + 18, s1 = s0 + 256, s2 = s1 + 256, s3 = s2 + 256
        @inline(__always) func f(_ x: UInt32) -> UInt32 {
            ((s0[Int(x >> 24)] &+ s1[Int((x >> 16) & 0xFF)]) ^ s2[Int((x >> 8) & 0xFF)]) &+ s3[Int(x & 0xFF)]
        }
        var l = left
        var r = right
        for i in stride(from: 0, to: 16, by: 2) {
            l ^= state[i]
            r ^= f(l) ^ state[i + 1]
            l ^= f(r)
        }
        return (r ^ state[17], l ^ state[16])
    }
}
