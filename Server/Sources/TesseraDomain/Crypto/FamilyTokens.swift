import Crypto
import Foundation
import TesseraCore

/// A refresh token of a family that keeps only its current token, on its grant's row:
/// `<grant id>.<generation>.<secret>.<tag>`.
///
/// Rotating one writes that row and nothing else (no row per token), and a family's storage
/// doesn't grow with its rotations. A used token needs no row to be known as one: the tag is an
/// HMAC-SHA-256 (128 bits) of the rest under the provider's refresh-token key, so a token that
/// carries it was made here, and one of an earlier generation than its family's current is a
/// used token of that family: presenting it is reuse (RFC 9700 §4.14.2). A token without a good
/// tag is refused before the database is asked, and knowing a grant's id (an administrator
/// does) is no way to end its family. The store keeps only the current token's hash.
package struct FamilyToken: Sendable, Equatable {
    package let grantID: String
    package let generation: Int64

    package init(grantID: String, generation: Int64) {
        self.grantID = grantID
        self.generation = generation
    }
}

/// Makes and reads ``FamilyToken``s under the provider's refresh-token key (the `settings` row
/// `refresh_token_key`, shared by every node).
package struct FamilyTokens: Sendable {
    /// HMAC-SHA-256's two hashes with the key's blocks already absorbed (RFC 2104): a tag is then
    /// three SHA-256 compressions. swift-crypto's `HMAC`, generic over the hash, set the key up
    /// at every call and cost ≈ 5 µs a tag, 1.3 % of a refresh.
    private let inner: SHA256, outer: SHA256
    static let secretBytes = 32, tagBytes = 16

    package init(key: String) {
        var block = Array(key.utf8)
        if block.count > 64 { block = Array(SHA256.hash(data: block)) }
        block += [UInt8](repeating: 0, count: 64 - block.count)
        var inner = SHA256(), outer = SHA256()
        inner.update(data: block.map { $0 ^ 0x36 })
        outer.update(data: block.map { $0 ^ 0x5c })
        (self.inner, self.outer) = (inner, outer)
    }

    /// Whether `token` is of this format at all: stored refresh tokens (base64url) have no dot.
    package static func isFamilyFormat(_ token: String) -> Bool {
        token.utf8.contains(UInt8(ascii: "."))
    }

    /// A new token of `grantID`'s family at `generation`.
    package func make(grantID: String, generation: Int64) -> String {
        let body = grantID + "." + String(generation) + "." + Base64URL.encode(SecureRandom.bytes(Self.secretBytes))
        return body + "." + Base64URL.encode(tag(Array(body.utf8)))
    }

    /// The family and generation of a token made by ``make(grantID:generation:)`` under this key;
    /// nil for anything else, a token whose tag is wrong included.
    package func parse(_ token: String) -> FamilyToken? {
        let bytes = Array(token.utf8)
        guard bytes.count <= 256, let tagStart = bytes.lastIndex(of: UInt8(ascii: ".")) else { return nil }
        let body = bytes[..<tagStart]
        let parts = body.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        // The tag compared as text: one spelling per tag (base64url's last character has spare bits).
        guard parts.count == 3, !parts[0].isEmpty, parts[2].count == (Self.secretBytes * 4 + 2) / 3,
              constantTimeEquals(Array(Base64URL.encode(tag(Array(body))).utf8), bytes[(tagStart + 1)...]),
              let generation = Int64(String(decoding: parts[1], as: UTF8.self)), generation >= 0 else { return nil }
        return FamilyToken(grantID: String(decoding: parts[0], as: UTF8.self), generation: generation)
    }

    /// HMAC-SHA-256 of `body`, its first ``tagBytes``.
    package func tag(_ body: [UInt8]) -> [UInt8] {
        var inner = inner, outer = outer
        inner.update(data: body)
        outer.update(data: Array(inner.finalize()))
        return Array(outer.finalize().prefix(Self.tagBytes))
    }
}
