import Crypto
import Foundation
import TesseraCore

/// SHA-256 of a bearer value (code, refresh token, cookie), hex: what the stores key on.
/// These values are 256-bit random, so a fast unsalted hash is enough to make a stolen
/// database useless for replay.
package func tokenHash(_ token: String) -> String {
    Base64URL.hex(SHA256.hash(data: Data(token.utf8)))
}

/// What a refresh token is made of and what `refresh_tokens` keys it on.
///
/// A token starts with the second it was issued (four bytes, big-endian) before its 32 random
/// bytes, and its key is that second in hex followed by the token's ``tokenHash(_:)``. Keys
/// then grow with time: each new token lands at the end of the table's index and an expired
/// one is deleted from its beginning, where a key of the hash alone would put each token on a
/// random page of an index that, with millions of grants, the caches mostly don't hold (one
/// page read from disk per rotation and per purged row; docs/performance.md, "The large
/// database"). The second is no secret (the client knows when it got its token); the key still
/// holds only a hash of the whole token. Anything else presented, tokens issued before this
/// format among them (43 characters), keys on the hash alone, as before.
package enum RefreshTokenKey {
    static let timeBytes = 4, randomBytes = 32
    /// The length of a token of this format: 36 bytes in base64url.
    static let tokenLength = (timeBytes + randomBytes) * 4 / 3

    /// A new refresh token issued at `now` (Unix seconds).
    package static func token(issuedAt now: Int64) -> String {
        let second = UInt32(clamping: now)
        let time = (0..<timeBytes).map { UInt8(truncatingIfNeeded: second >> (8 * (timeBytes - 1 - $0))) }
        return Base64URL.encode(time + SecureRandom.bytes(randomBytes))
    }

    /// The key `token` is stored under.
    package static func key(_ token: String) -> String {
        guard token.utf8.count == tokenLength, let bytes = Base64URL.decode(token) else { return tokenHash(token) }
        return Base64URL.hex(bytes.prefix(timeBytes)) + tokenHash(token)
    }
}

/// Salted SHA-256 for client secrets (`sha256$salt$hash`). Generated secrets are 256-bit
/// random and registered ones must be at least 32 characters, so an adaptive hash would
/// only cost every token request time without adding protection.
package enum ClientSecretHash {
    package static func make(_ secret: String) -> String {
        let salt = Base64URL.encode(SecureRandom.bytes(16))
        return "sha256$\(salt)$\(digest(secret, salt: salt))"
    }

    package static func verify(_ secret: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "sha256" else { return false }
        return constantTimeEquals(Array(digest(secret, salt: String(parts[1])).utf8), Array(parts[2].utf8))
    }

    private static func digest(_ secret: String, salt: String) -> String {
        Base64URL.encode(SHA256.hash(data: Data((salt + "$" + secret).utf8)))
    }
}

/// Seals private keys at rest with AES-256-GCM under `TESSERA_MASTER_KEY`.
public struct SecretBox: Sendable {
    let key: SymmetricKey
    static let prefix = "enc:v1:"

    /// Accepts 32 bytes as base64 (`openssl rand -base64 32`) or as 64 hex digits.
    public init(masterKey: String) throws {
        let trimmed = masterKey.trimmingCharacters(in: .whitespacesAndNewlines)
        if let data = Data(base64Encoded: trimmed), data.count == 32 {
            key = SymmetricKey(data: data)
        } else if trimmed.count == 64, let data = Data(hex: trimmed) {
            key = SymmetricKey(data: data)
        } else {
            throw ConfigurationError("TESSERA_MASTER_KEY must be 32 random bytes as base64 (openssl rand -base64 32) or 64 hex digits")
        }
    }

    func seal(_ plaintext: Data, context: String) throws -> String {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Data(context.utf8))
        return Self.prefix + box.combined!.base64EncodedString()
    }

    func open(_ sealed: String, context: String) throws -> Data {
        guard sealed.hasPrefix(Self.prefix), let data = Data(base64Encoded: String(sealed.dropFirst(Self.prefix.count))) else {
            throw ConfigurationError("a sealed value is malformed")
        }
        return try AES.GCM.open(try AES.GCM.SealedBox(combined: data), using: key, authenticating: Data(context.utf8))
    }

    static func isSealed(_ value: String) -> Bool { value.hasPrefix(prefix) }
}

extension Data {
    init?(hex: String) {
        var bytes = [UInt8]()
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next() {
            guard let low = iterator.next(), let h = Self.nibble(high), let l = Self.nibble(low) else { return nil }
            bytes.append(h << 4 | l)
        }
        self.init(bytes)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
    }
}
