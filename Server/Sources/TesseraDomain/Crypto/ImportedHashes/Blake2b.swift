/// BLAKE2b, unkeyed, with a digest of 1 to 64 bytes (RFC 7693): the hash Argon2 is built on.
/// One-shot only, since Argon2 hashes short messages.
package enum Blake2b {
    /// RFC 7693 §2.6: the SHA-512 initial values.
    static let iv: [UInt64] = [
        0x6A09_E667_F3BC_C908, 0xBB67_AE85_84CA_A73B, 0x3C6E_F372_FE94_F82B, 0xA54F_F53A_5F1D_36F1,
        0x510E_527F_ADE6_82D1, 0x9B05_688C_2B3E_6C1F, 0x1F83_D9AB_FB41_BD6B, 0x5BE0_CD19_137E_2179,
    ]

    /// RFC 7693 §2.7: the message word schedule of rounds 0 to 9 (rounds 10 and 11 reuse 0 and 1).
    static let sigma: [[Int]] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
        [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
        [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
        [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
        [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
        [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
        [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
        [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
        [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    ]

    /// The `outputLength`-byte BLAKE2b digest of `message` (RFC 7693 §3.3).
    package static func hash(_ message: [UInt8], outputLength: Int = 64) -> [UInt8] {
        precondition((1...64).contains(outputLength))
        var h = iv
        h[0] ^= 0x0101_0000 ^ UInt64(outputLength)
        // Every full block but the last; the last (possibly partial, possibly empty) is final.
        let blocks = max(1, (message.count + 127) / 128)
        var block = [UInt8](repeating: 0, count: 128)
        for index in 0..<blocks {
            let start = index * 128
            let end = min(start + 128, message.count)
            for i in 0..<128 { block[i] = start + i < end ? message[start + i] : 0 }
            compress(&h, block: block, bytesSoFar: UInt64(end), final: index == blocks - 1)
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(64)
        for word in h { for k in 0..<8 { digest.append(UInt8(truncatingIfNeeded: word >> (8 * k))) } }
        return Array(digest.prefix(outputLength))
    }

    /// RFC 7693 §3.2: the compression function F. The byte count fits in 64 bits here, so its
    /// high word is always zero.
    static func compress(_ h: inout [UInt64], block: [UInt8], bytesSoFar: UInt64, final: Bool) {
        var m = [UInt64](repeating: 0, count: 16)
        for i in 0..<16 {
            for k in 0..<8 { m[i] |= UInt64(block[8 * i + k]) << (8 * k) }
        }
        var v = h + iv
        v[12] ^= bytesSoFar
        if final { v[14] = ~v[14] }
        for round in 0..<12 {
            let s = sigma[round % 10]
            mix(&v, 0, 4, 8, 12, m[s[0]], m[s[1]])
            mix(&v, 1, 5, 9, 13, m[s[2]], m[s[3]])
            mix(&v, 2, 6, 10, 14, m[s[4]], m[s[5]])
            mix(&v, 3, 7, 11, 15, m[s[6]], m[s[7]])
            mix(&v, 0, 5, 10, 15, m[s[8]], m[s[9]])
            mix(&v, 1, 6, 11, 12, m[s[10]], m[s[11]])
            mix(&v, 2, 7, 8, 13, m[s[12]], m[s[13]])
            mix(&v, 3, 4, 9, 14, m[s[14]], m[s[15]])
        }
        for i in 0..<8 { h[i] ^= v[i] ^ v[i + 8] }
    }

    /// RFC 7693 §3.1: the mixing function G.
    @inline(__always)
    static func mix(_ v: inout [UInt64], _ a: Int, _ b: Int, _ c: Int, _ d: Int, _ x: UInt64, _ y: UInt64) {
        v[a] = v[a] &+ v[b] &+ x
        v[d] = rotateRight(v[d] ^ v[a], 32)
        v[c] = v[c] &+ v[d]
        v[b] = rotateRight(v[b] ^ v[c], 24)
        v[a] = v[a] &+ v[b] &+ y
        v[d] = rotateRight(v[d] ^ v[a], 16)
        v[c] = v[c] &+ v[d]
        v[b] = rotateRight(v[b] ^ v[c], 63)
    }

    @inline(__always)
    static func rotateRight(_ x: UInt64, _ n: UInt64) -> UInt64 {
        x >> n | x << (64 - n)
    }
}
