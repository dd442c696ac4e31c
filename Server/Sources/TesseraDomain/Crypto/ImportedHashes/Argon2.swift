import TesseraCore

/// An Argon2 hash in the PHC string form the reference implementation (and argon2-cffi,
/// libsodium, PHP, Django) writes: `$argon2id$v=19$m=65536,t=3,p=4$<salt>$<hash>`, salt and hash
/// in base64 without padding. Version 0x10 strings have no `v=` field (or `v=16`).
struct Argon2Hash: ImportedHash {
    let parameters: Argon2.Parameters
    let salt: [UInt8]
    let hash: [UInt8]

    /// Bounds an import accepts: memory, passes and lanes within ``PasswordCostCaps``; salts of
    /// at least 8 bytes and tags of 4 to 1024 (RFC 9106 §3.1 allows more, nobody uses it).
    static let memoryKiB = PasswordCostCaps.argon2MemoryKiB
    static let iterations = PasswordCostCaps.argon2Iterations
    static let parallelism = PasswordCostCaps.argon2Parallelism
    static let saltLength = 8...1024
    static let hashLength = 4...1024

    init(_ text: Substring) throws {
        var parts = text.split(separator: "$", omittingEmptySubsequences: false)
        let hasVersion = parts.count > 2 && parts[2].hasPrefix("v=")
        guard parts.count == (hasVersion ? 6 : 5), parts[0].isEmpty else {
            throw ImportedHashError("argon2 hash must be $argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash>")
        }
        guard let variant = Argon2.Variant(name: parts[1]) else {
            throw ImportedHashError("argon2 variant must be argon2id, argon2i or argon2d, not \(String(parts[1].prefix(10)).debugDescription)")
        }
        var version = Argon2.version10
        if hasVersion {
            switch parts[2] {
            case "v=19": version = Argon2.version13
            case "v=16": version = Argon2.version10
            default: throw ImportedHashError("argon2 version must be v=19 or v=16, not \(String(parts[2].prefix(10)).debugDescription)")
            }
            parts.remove(at: 2)
        }
        var values: [Substring: Substring] = [:]
        for pair in parts[2].split(separator: ",", omittingEmptySubsequences: false) {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard kv.count == 2, ["m", "t", "p"].contains(kv[0]) else {
                throw ImportedHashError("argon2 parameters must be m=<KiB>,t=<passes>,p=<lanes>; \(String(pair.prefix(12)).debugDescription) is not one of them")
            }
            guard values.updateValue(kv[1], forKey: kv[0]) == nil else { throw ImportedHashError("argon2 parameter \(kv[0]) is given twice") }
        }
        guard let m = values["m"], let t = values["t"], let p = values["p"] else {
            throw ImportedHashError("argon2 parameters must include m, t and p")
        }
        let parallelism = try ImportedFields.decimal(p, "argon2 parallelism p", in: Self.parallelism)
        parameters = try Argon2.Parameters(
            variant: variant, version: version,
            memoryKiB: ImportedFields.decimal(m, "argon2 memory m (KiB)", in: max(Self.memoryKiB.lowerBound, 8 * parallelism)...Self.memoryKiB.upperBound),
            iterations: ImportedFields.decimal(t, "argon2 passes t", in: Self.iterations),
            parallelism: parallelism)
        guard parameters.memoryKiB * parameters.iterations <= PasswordCostCaps.argon2MemoryPasses else {
            throw ImportedHashError("argon2 memory times passes (m·t) must be at most 256 MiB, here \((parameters.memoryKiB * parameters.iterations) >> 10) MiB")
        }
        salt = try ImportedFields.decode(parts[3], "argon2 salt", with: ImportedFields.standard)
        hash = try ImportedFields.decode(parts[4], "argon2 hash", with: ImportedFields.standard)
        guard Self.saltLength.contains(salt.count) else { throw ImportedHashError("argon2 salt must be at least 8 bytes, found \(salt.count)") }
        guard Self.hashLength.contains(hash.count) else { throw ImportedHashError("argon2 hash must be 4 to 1024 bytes, found \(hash.count)") }
    }

    func matches(_ password: [UInt8]) -> Bool {
        let derived = Argon2.hash(password: password, salt: salt, parameters: parameters, tagLength: hash.count)
        return constantTimeEquals(derived, hash)
    }
}

/// Argon2 (RFC 9106), all three variants, versions 0x13 and 0x10. Lanes are filled one after
/// another on the calling thread: the result is the same as with threads (§3.4: a segment reads
/// other lanes only from finished slices), and a server verifying passwords has other
/// requests to keep its cores busy.
package enum Argon2 {
    package enum Variant: UInt32, Sendable {
        case d = 0, i = 1, id = 2

        init?(name: Substring) {
            switch name {
            case "argon2d": self = .d
            case "argon2i": self = .i
            case "argon2id": self = .id
            default: return nil
            }
        }
    }

    package static let version13: UInt32 = 0x13
    /// The first published version: later passes overwrite blocks instead of XORing into them.
    static let version10: UInt32 = 0x10

    package struct Parameters: Equatable, Sendable {
        var variant: Variant
        var version: UInt32
        var memoryKiB: Int
        var iterations: Int
        var parallelism: Int

        package init(variant: Variant, version: UInt32, memoryKiB: Int, iterations: Int, parallelism: Int) {
            self.variant = variant
            self.version = version
            self.memoryKiB = memoryKiB
            self.iterations = iterations
            self.parallelism = parallelism
        }
    }

    /// Words in a 1 KiB block.
    static let blockWords = 128
    /// Slices a lane is cut into (RFC 9106 §3.4, "SL").
    static let syncPoints = 4

    /// The tag, RFC 9106 §3.2.
    package static func hash(password: [UInt8], salt: [UInt8], secret: [UInt8] = [], associatedData: [UInt8] = [],
                     parameters: Parameters, tagLength: Int) -> [UInt8] {
        let lanes = parameters.parallelism
        // m' = 4p * floor(m / 4p) blocks, q columns a lane.
        let blockCount = syncPoints * lanes * (parameters.memoryKiB / (syncPoints * lanes))
        let laneLength = blockCount / lanes
        let segmentLength = laneLength / syncPoints

        var input: [UInt8] = []
        for value in [lanes, tagLength, parameters.memoryKiB, parameters.iterations] { input += le32(value) }
        input += le32(parameters.version) + le32(parameters.variant.rawValue)
        for field in [password, salt, secret, associatedData] { input += le32(field.count) + field }
        let h0 = Blake2b.hash(input, outputLength: 64)

        let memory = UnsafeMutablePointer<UInt64>.allocate(capacity: blockCount * blockWords)
        defer { memory.deallocate() }
        // Scratch for G (2 blocks), the address block, its input and the zero block.
        let scratch = UnsafeMutablePointer<UInt64>.allocate(capacity: 5 * blockWords)
        defer { scratch.deallocate() }

        for lane in 0..<lanes {
            for column in 0..<2 {
                let bytes = variableHash(h0 + le32(column) + le32(lane), length: 1024)
                load(bytes, into: memory + (lane * laneLength + column) * blockWords)
            }
        }

        let filler = Filler(memory: memory, scratch: scratch, parameters: parameters, blockCount: blockCount,
                            laneLength: laneLength, segmentLength: segmentLength)
        for pass in 0..<parameters.iterations {
            for slice in 0..<syncPoints {
                for lane in 0..<lanes { filler.fill(pass: pass, slice: slice, lane: lane) }
            }
        }

        // The XOR of every lane's last block.
        let final = scratch
        final.update(from: memory + (laneLength - 1) * blockWords, count: blockWords)
        for lane in 1..<lanes {
            let last = memory + (lane * laneLength + laneLength - 1) * blockWords
            for i in 0..<blockWords { final[i] ^= last[i] }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1024)
        for i in 0..<blockWords { for k in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: final[i] >> (8 * k))) } }
        return variableHash(bytes, length: tagLength)
    }

    /// H' (RFC 9106 §3.3): BLAKE2b stretched to `length` bytes.
    static func variableHash(_ input: [UInt8], length: Int) -> [UInt8] {
        let prefixed = le32(length) + input
        if length <= 64 { return Blake2b.hash(prefixed, outputLength: length) }
        let r = (length + 31) / 32 - 2
        var v = Blake2b.hash(prefixed, outputLength: 64)
        var output = Array(v.prefix(32))
        output.reserveCapacity(length)
        for _ in 1..<r {
            v = Blake2b.hash(v, outputLength: 64)
            output += v.prefix(32)
        }
        output += Blake2b.hash(v, outputLength: length - 32 * r)
        return output
    }

    static func le32(_ value: Int) -> [UInt8] { le32(UInt32(truncatingIfNeeded: value)) }
    static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    static func load(_ bytes: [UInt8], into block: UnsafeMutablePointer<UInt64>) {
        for i in 0..<blockWords {
            var word: UInt64 = 0
            for k in 0..<8 { word |= UInt64(bytes[8 * i + k]) << (8 * k) }
            block[i] = word
        }
    }

    /// Fills segments of the memory (RFC 9106 §3.2 steps 5-6, §3.4 indexing).
    struct Filler {
        let memory: UnsafeMutablePointer<UInt64>
        let scratch: UnsafeMutablePointer<UInt64>
        let parameters: Parameters
        let blockCount: Int
        let laneLength: Int
        let segmentLength: Int

        var addresses: UnsafeMutablePointer<UInt64> { scratch + 2 * blockWords }
        var addressInput: UnsafeMutablePointer<UInt64> { scratch + 3 * blockWords }
        var zero: UnsafeMutablePointer<UInt64> { scratch + 4 * blockWords }

        func fill(pass: Int, slice: Int, lane: Int) {
            let variant = parameters.variant
            let dataIndependent = variant == .i || (variant == .id && pass == 0 && slice < syncPoints / 2)
            let xor = parameters.version != version10 && pass > 0
            if dataIndependent {
                // §3.4.1.2: the input block (r, l, sl, m', t, y, counter, 0...).
                zero.update(repeating: 0, count: blockWords)
                addressInput.update(repeating: 0, count: blockWords)
                addressInput[0] = UInt64(pass)
                addressInput[1] = UInt64(lane)
                addressInput[2] = UInt64(slice)
                addressInput[3] = UInt64(blockCount)
                addressInput[4] = UInt64(parameters.iterations)
                addressInput[5] = UInt64(variant.rawValue)
            }
            // The first two blocks of each lane come from H0.
            let first = pass == 0 && slice == 0 ? 2 : 0
            if dataIndependent && first != 0 { nextAddresses() }

            for index in first..<segmentLength {
                let column = slice * segmentLength + index
                let current = memory + (lane * laneLength + column) * blockWords
                let previous = memory + (lane * laneLength + (column == 0 ? laneLength - 1 : column - 1)) * blockWords
                let pseudoRandom: UInt64
                if dataIndependent {
                    if index % blockWords == 0 { nextAddresses() }
                    pseudoRandom = addresses[index % blockWords]
                } else {
                    pseudoRandom = previous[0]
                }
                let referenceLane = pass == 0 && slice == 0 ? lane : Int((pseudoRandom >> 32) % UInt64(parameters.parallelism))
                let referenceColumn = self.referenceColumn(pass: pass, slice: slice, index: index,
                                                           sameLane: referenceLane == lane, j1: pseudoRandom & 0xFFFF_FFFF)
                let reference = memory + (referenceLane * laneLength + referenceColumn) * blockWords
                Argon2.compress(previous, reference, into: current, xor: xor, scratch: scratch)
            }
        }

        /// §3.4.1.2: the next block of 128 pseudo-random values, G(0, G(0, input)).
        func nextAddresses() {
            addressInput[6] &+= 1
            Argon2.compress(zero, addressInput, into: addresses, xor: false, scratch: scratch)
            Argon2.compress(zero, addresses, into: addresses, xor: false, scratch: scratch)
        }

        /// §3.4.2: map J1 onto the blocks this one may reference, biased towards recent ones.
        func referenceColumn(pass: Int, slice: Int, index: Int, sameLane: Bool, j1: UInt64) -> Int {
            // Finished segments, plus this segment up to the previous block when in the same lane;
            // another lane's last finished block is excluded while this segment's first is computed.
            let finished = pass == 0 ? slice * segmentLength : laneLength - segmentLength
            let areaSize = sameLane ? finished + index - 1 : finished - (index == 0 ? 1 : 0)
            let x = (j1 &* j1) >> 32
            let y = (UInt64(areaSize) &* x) >> 32
            let relative = areaSize - 1 - Int(y)
            let start = pass == 0 || slice == syncPoints - 1 ? 0 : (slice + 1) * segmentLength
            return (start + relative) % laneLength
        }
    }

    /// The compression function G (RFC 9106 §3.5) of blocks `x` and `y`, written to `next`, or
    /// XORed into it when `xor`. `y` may be `next`. `scratch` holds two blocks.
    @inline(__always)
    static func compress(_ x: UnsafePointer<UInt64>, _ y: UnsafePointer<UInt64>, into next: UnsafeMutablePointer<UInt64>,
                         xor: Bool, scratch r: UnsafeMutablePointer<UInt64>) {
        let kept = r + blockWords
        if xor {
            for i in 0..<blockWords {
                let value = x[i] ^ y[i]
                r[i] = value
                kept[i] = value ^ next[i]
            }
        } else {
            for i in 0..<blockWords {
                let value = x[i] ^ y[i]
                r[i] = value
                kept[i] = value
            }
        }
        for row in 0..<8 { permute(r, base: 16 * row, step: 2) }
        for column in 0..<8 { permute(r, base: 2 * column, step: 16) }
        for i in 0..<blockWords { next[i] = kept[i] ^ r[i] }
    }

    /// The permutation P (§3.6) of the eight 16-byte registers starting at `base`, `step`
    /// words apart: a row (step 2) or a column (step 16) of the block seen as an 8×8 matrix.
    @inline(__always)
    static func permute(_ block: UnsafeMutablePointer<UInt64>, base: Int, step: Int) {
        let r0 = block + base, r1 = r0 + step, r2 = r1 + step, r3 = r2 + step
        let r4 = r3 + step, r5 = r4 + step, r6 = r5 + step, r7 = r6 + step
        var v0 = r0[0], v1 = r0[1], v2 = r1[0], v3 = r1[1], v4 = r2[0], v5 = r2[1], v6 = r3[0], v7 = r3[1]
        var v8 = r4[0], v9 = r4[1], v10 = r5[0], v11 = r5[1], v12 = r6[0], v13 = r6[1], v14 = r7[0], v15 = r7[1]
        mix(&v0, &v4, &v8, &v12)
        mix(&v1, &v5, &v9, &v13)
        mix(&v2, &v6, &v10, &v14)
        mix(&v3, &v7, &v11, &v15)
        mix(&v0, &v5, &v10, &v15)
        mix(&v1, &v6, &v11, &v12)
        mix(&v2, &v7, &v8, &v13)
        mix(&v3, &v4, &v9, &v14)
        r0[0] = v0; r0[1] = v1; r1[0] = v2; r1[1] = v3; r2[0] = v4; r2[1] = v5; r3[0] = v6; r3[1] = v7
        r4[0] = v8; r4[1] = v9; r5[0] = v10; r5[1] = v11; r6[0] = v12; r6[1] = v13; r7[0] = v14; r7[1] = v15
    }

    /// GB (§3.6): BLAKE2b's G with each addition strengthened by twice the product of the
    /// low 32 bits.
    @inline(__always)
    static func mix(_ a: inout UInt64, _ b: inout UInt64, _ c: inout UInt64, _ d: inout UInt64) {
        let low: UInt64 = 0xFFFF_FFFF
        a = a &+ b &+ 2 &* (a & low) &* (b & low)
        d = rotateRight(d ^ a, 32)
        c = c &+ d &+ 2 &* (c & low) &* (d & low)
        b = rotateRight(b ^ c, 24)
        a = a &+ b &+ 2 &* (a & low) &* (b & low)
        d = rotateRight(d ^ a, 16)
        c = c &+ d &+ 2 &* (c & low) &* (d & low)
        b = rotateRight(b ^ c, 63)
    }

    @inline(__always)
    static func rotateRight(_ x: UInt64, _ n: UInt64) -> UInt64 {
        x >> n | x << (64 - n)
    }
}
