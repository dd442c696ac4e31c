import Foundation

/// A QR code symbol (ISO/IEC 18004:2015) holding text in byte mode, drawn as SVG for the
/// TOTP enrolment page, so that the `otpauth://` URI never leaves the server for a
/// third-party QR service.
///
/// The text is encoded as UTF-8 in a single byte-mode segment (§7.4.5) without an ECI
/// header; the smallest version (1–40) that holds it at the chosen error-correction level
/// is used, and of the eight data masks the one with the lowest penalty score (§7.8.3).
package struct QRCode: Sendable {
    /// The error-correction level (§7.5.1): roughly 7, 15, 25 and 30 % of the codewords
    /// can be restored.
    package enum ErrorCorrection: Sendable, CaseIterable {
        case low, medium, quartile, high

        /// The two bits that stand for the level in the format information (§7.9.1, table 12).
        var formatBits: Int {
            switch self {
            case .low: 0b01
            case .medium: 0b00
            case .quartile: 0b11
            case .high: 0b10
            }
        }

        fileprivate var index: Int {
            switch self {
            case .low: 0
            case .medium: 1
            case .quartile: 2
            case .high: 3
            }
        }
    }

    /// Why a symbol could not be made.
    package enum Failure: Error, Equatable, CustomStringConvertible {
        /// The text does not fit in version 40 at this level; `capacity` bytes would.
        case textTooLong(byteCount: Int, capacity: Int)
        /// Versions run from 1 to 40.
        case versionOutOfRange(Int)
        /// Masks are numbered 0 to 7.
        case maskOutOfRange(Int)

        package var description: String {
            switch self {
            case let .textTooLong(byteCount, capacity):
                "QR code: \(byteCount) bytes of text do not fit; at most \(capacity) fit at this error-correction level"
            case let .versionOutOfRange(version): "QR code: version \(version) is not between 1 and 40"
            case let .maskOutOfRange(mask): "QR code: mask \(mask) is not between 0 and 7"
            }
        }
    }

    /// 1 to 40; the symbol is 17 + 4 × version modules wide (§6.3.1).
    package let version: Int
    package let correction: ErrorCorrection
    /// The data mask pattern applied (§7.8.2), 0 to 7.
    package let mask: Int
    /// Modules along each side, without the quiet zone.
    package let size: Int
    private let modules: [Bool]

    /// Encodes `text` in the smallest version that holds it, with the mask of lowest penalty.
    package init(_ text: String, correction: ErrorCorrection = .medium) throws {
        try self.init(text, correction: correction, version: nil, mask: nil)
    }

    /// Encodes `text` at least at `version` (the smallest that holds it when `nil`) with
    /// `mask` (the one of lowest penalty when `nil`). Forcing these is for tests that compare
    /// symbols with another encoder's.
    package init(_ text: String, correction: ErrorCorrection = .medium, version minimumVersion: Int?, mask forcedMask: Int?) throws {
        let bytes = Array(text.utf8)
        if let minimumVersion, !(1...40).contains(minimumVersion) { throw Failure.versionOutOfRange(minimumVersion) }
        if let forcedMask, !(0...7).contains(forcedMask) { throw Failure.maskOutOfRange(forcedMask) }
        guard let version = ((minimumVersion ?? 1)...40).first(where: { Self.byteCapacity(version: $0, correction) >= bytes.count })
        else {
            throw Failure.textTooLong(byteCount: bytes.count, capacity: Self.byteCapacity(version: 40, correction))
        }
        self.version = version
        self.correction = correction
        size = 17 + 4 * version

        let codewords = Self.interleaved(Self.dataCodewords(bytes, version: version, correction), version: version, correction)
        var symbol = Symbol(version: version)
        symbol.place(codewords)

        var best: (mask: Int, modules: [Bool])?
        var bestPenalty = Int.max
        for mask in forcedMask.map({ [$0] }) ?? Array(0...7) {
            var candidate = symbol
            candidate.apply(mask: mask)
            candidate.drawFormat(correction: correction, mask: mask)
            let penalty = forcedMask == nil ? Self.penalty(candidate.dark, size: size) : 0
            if penalty < bestPenalty {
                bestPenalty = penalty
                best = (mask, candidate.dark)
            }
        }
        mask = best!.mask
        modules = best!.modules
    }

    /// Whether the module at `row`, `column` (from the top left, 0-based) is dark; modules
    /// outside the symbol are the light quiet zone.
    package func isDark(row: Int, column: Int) -> Bool {
        guard (0..<size).contains(row), (0..<size).contains(column) else { return false }
        return modules[row * size + column]
    }

    /// The symbol as a self-contained SVG image to inline in a page: a white square with
    /// `quietZone` light modules around the symbol (§6.3.8 asks for 4), the dark modules as a
    /// single path of one rectangle per horizontal run, each module `moduleSize` pixels.
    /// `title` names the image for screen readers (`role="img"` with a `<title>` child, which
    /// SVG-AAM maps to the accessible name) and is escaped. No scripts, styles or external references,
    /// so a strict Content-Security-Policy allows it.
    package func svg(moduleSize: Int = 4, quietZone: Int = 4, title: String) -> String {
        precondition(moduleSize > 0 && quietZone >= 0)
        let extent = size + 2 * quietZone
        var path = ""
        for row in 0..<size {
            var column = 0
            while column < size {
                guard isDark(row: row, column: column) else {
                    column += 1
                    continue
                }
                let start = column
                while column < size, isDark(row: row, column: column) { column += 1 }
                path += "M\(start + quietZone) \(row + quietZone)h\(column - start)v1h-\(column - start)z"
            }
        }
        return ##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(extent * moduleSize)" height="\##(extent * moduleSize)" "##
            + ##"viewBox="0 0 \##(extent) \##(extent)" shape-rendering="crispEdges" role="img">"##
            + "<title>\(Self.escaped(title))</title>"
            + ##"<rect width="\##(extent)" height="\##(extent)" fill="#fff"/>"##
            + ##"<path fill="#000" d="\##(path)"/></svg>"##
    }

    /// XML character data and attribute values (XML 1.0 §2.4): the five predefined entities.
    private static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}

// MARK: - Codewords

extension QRCode {
    /// Error-correction codewords per block (§7.5.1, table 9), by level (L, M, Q, H) and version.
    private static let eccPerBlock: [[Int]] = [
        [7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
         28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
        [10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
         26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28],
        [13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30,
         28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
        [17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
         30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
    ]

    /// Error-correction blocks (§7.5.1, table 9), by level (L, M, Q, H) and version. Where
    /// the codewords do not divide evenly, the later blocks hold one data codeword more.
    private static let blockCount: [[Int]] = [
        [1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
         8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25],
        [1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
         17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49],
        [1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20,
         23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68],
        [1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
         25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81],
    ]

    /// All codewords of each version (table 1): the modules left after the function
    /// patterns, eight to a codeword (the rest are remainder bits, §7.7.3), counted on a symbol
    /// with only its function patterns drawn.
    private static let totalCodewords: [Int] = (1...40).map { Symbol(version: $0).freeModules / 8 }

    private static func dataCodewordCount(version: Int, _ correction: ErrorCorrection) -> Int {
        totalCodewords[version - 1]
            - eccPerBlock[correction.index][version - 1] * blockCount[correction.index][version - 1]
    }

    /// Bits of the character count indicator in byte mode (table 3).
    private static func countBits(version: Int) -> Int { version <= 9 ? 8 : 16 }

    /// The most bytes one byte-mode segment holds at `version` and `correction`.
    package static func byteCapacity(version: Int, _ correction: ErrorCorrection) -> Int {
        (dataCodewordCount(version: version, correction) * 8 - 4 - countBits(version: version)) / 8
    }

    /// §7.4: mode indicator 0100, character count, the bytes, a terminator of up to four zero
    /// bits, zeros to the byte boundary, then the pad codewords 0xEC 0x11 in turn (§7.4.10).
    private static func dataCodewords(_ bytes: [UInt8], version: Int, _ correction: ErrorCorrection) -> [UInt8] {
        let capacity = dataCodewordCount(version: version, correction)
        var bits = BitBuffer()
        bits.append(0b0100, count: 4)
        bits.append(bytes.count, count: countBits(version: version))
        for byte in bytes { bits.append(Int(byte), count: 8) }
        bits.append(0, count: min(4, capacity * 8 - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var codewords = bits.bytes
        var pad: UInt8 = 0xEC
        while codewords.count < capacity {
            codewords.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return codewords
    }

    /// §7.5.2 and §7.6: the data split into blocks, each followed by its Reed–Solomon
    /// codewords, then interleaved: the i-th data codeword of every block in turn, then the
    /// i-th error-correction codeword of every block.
    private static func interleaved(_ data: [UInt8], version: Int, _ correction: ErrorCorrection) -> [UInt8] {
        let blocks = blockCount[correction.index][version - 1]
        let ecc = eccPerBlock[correction.index][version - 1]
        let total = totalCodewords[version - 1]
        let shortBlocks = blocks - total % blocks
        let shortData = total / blocks - ecc
        let generator = ReedSolomon.generator(degree: ecc)

        var dataBlocks: [ArraySlice<UInt8>] = []
        var eccBlocks: [[UInt8]] = []
        var start = 0
        for block in 0..<blocks {
            let length = shortData + (block < shortBlocks ? 0 : 1)
            let slice = data[start..<start + length]
            dataBlocks.append(slice)
            eccBlocks.append(ReedSolomon.remainder(of: slice, generator: generator))
            start += length
        }

        var out: [UInt8] = []
        out.reserveCapacity(total)
        for i in 0...shortData {
            for block in dataBlocks where i < block.count { out.append(block[block.startIndex + i]) }
        }
        for i in 0..<ecc {
            for block in eccBlocks { out.append(block[i]) }
        }
        return out
    }
}

/// Bits appended most significant first, read back as bytes.
private struct BitBuffer {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    mutating func append(_ value: Int, count bitCount: Int) {
        for shift in stride(from: bitCount - 1, through: 0, by: -1) {
            if count % 8 == 0 { bytes.append(0) }
            if (value >> shift) & 1 == 1 { bytes[count / 8] |= 0x80 >> UInt8(count % 8) }
            count += 1
        }
    }
}

/// Reed–Solomon codes over GF(2⁸) with the field polynomial x⁸ + x⁴ + x³ + x² + 1 (0x11D)
/// and the generator polynomial ∏ (x − αⁱ), i = 0 … degree − 1, α = 2 (§7.5.2, annex A).
private enum ReedSolomon {
    /// αⁱ for i in 0 ..< 255, and its inverse, the discrete logarithm.
    private static let (exponents, logarithms): ([UInt8], [Int]) = {
        var exponents = [UInt8](repeating: 0, count: 255)
        var logarithms = [Int](repeating: 0, count: 256)
        var value = 1
        for power in 0..<255 {
            exponents[power] = UInt8(value)
            logarithms[value] = power
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        return (exponents, logarithms)
    }()

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        guard a != 0, b != 0 else { return 0 }
        return exponents[(logarithms[Int(a)] + logarithms[Int(b)]) % 255]
    }

    /// The generator's coefficients from xᵈᵉᵍʳᵉᵉ (always 1) down to x⁰.
    static func generator(degree: Int) -> [UInt8] {
        var polynomial: [UInt8] = [1]
        for power in 0..<degree {
            // Multiply by (x + αⁱ): subtraction is addition in GF(2⁸).
            var next = polynomial + [0]
            for (index, coefficient) in polynomial.enumerated() {
                next[index + 1] ^= multiply(coefficient, exponents[power])
            }
            polynomial = next
        }
        return polynomial
    }

    /// The error-correction codewords: the remainder of data(x) · xᵈᵉᵍʳᵉᵉ divided by the generator.
    static func remainder(of data: ArraySlice<UInt8>, generator: [UInt8]) -> [UInt8] {
        let degree = generator.count - 1
        var remainder = [UInt8](repeating: 0, count: degree)
        for codeword in data {
            let factor = codeword ^ remainder[0]
            remainder.removeFirst()
            remainder.append(0)
            for index in 0..<degree {
                remainder[index] ^= multiply(generator[index + 1], factor)
            }
        }
        return remainder
    }
}

// MARK: - The symbol

/// A symbol being drawn: the dark modules, and which are function patterns (finder,
/// separators, timing, alignment, format and version areas) that data and masks leave alone.
private struct Symbol {
    let version: Int
    let size: Int
    var dark: [Bool]
    var isFunction: [Bool]

    /// A symbol with its function patterns drawn and the format area reserved (§6.3).
    init(version: Int) {
        self.version = version
        size = 17 + 4 * version
        dark = Array(repeating: false, count: size * size)
        isFunction = Array(repeating: false, count: size * size)

        // Timing patterns (§6.3.5): row and column 6, dark on even indices.
        for index in 0..<size {
            set(row: 6, column: index, dark: index % 2 == 0)
            set(row: index, column: 6, dark: index % 2 == 0)
        }
        // Finder patterns with their separators (§6.3.3, §6.3.4) in three corners.
        for (row, column) in [(3, 3), (3, size - 4), (size - 4, 3)] {
            for dy in -4...4 {
                for dx in -4...4 where (0..<size).contains(row + dy) && (0..<size).contains(column + dx) {
                    let ring = max(abs(dy), abs(dx))
                    set(row: row + dy, column: column + dx, dark: ring != 2 && ring != 4)
                }
            }
        }
        // Alignment patterns (§6.3.6) at every pair of centre coordinates, bar the three that
        // would sit on a finder pattern.
        let centres = Self.alignmentCentres(version: version)
        let corners = Set([[6, 6], [6, size - 7], [size - 7, 6]])
        for row in centres {
            for column in centres where !corners.contains([row, column]) {
                for dy in -2...2 {
                    for dx in -2...2 {
                        set(row: row + dy, column: column + dx, dark: max(abs(dy), abs(dx)) != 1)
                    }
                }
            }
        }
        // Format information (§7.9.1), reserved for now, and its always-dark module.
        for index in 0...8 {
            reserve(row: 8, column: index)
            reserve(row: index, column: 8)
        }
        for index in 0..<8 {
            reserve(row: 8, column: size - 1 - index)
            reserve(row: size - 1 - index, column: 8)
        }
        set(row: size - 8, column: 8, dark: true)
        // Version information (§7.10) from version 7.
        if version >= 7 { drawVersion() }
    }

    /// Alignment pattern centres (§6.3.6, annex E table E.1): 6, then version ÷ 7 + 1 more
    /// counting back from size − 7 by an even step, the smallest that reaches 6 in that
    /// many gaps (the first gap takes up the slack). Version 32 is the table's one exception:
    /// a step of 26 with a first gap of 28.
    static func alignmentCentres(version: Int) -> [Int] {
        guard version > 1 else { return [] }
        let size = 17 + 4 * version
        let count = version / 7 + 2
        let span = size - 13
        var step = (span + count - 2) / (count - 1)
        step += step % 2
        if version == 32 { step = 26 }
        return [6] + (0..<count - 1).reversed().map { size - 7 - $0 * step }
    }

    var freeModules: Int { isFunction.count { !$0 } }

    private mutating func set(row: Int, column: Int, dark isDark: Bool) {
        dark[row * size + column] = isDark
        isFunction[row * size + column] = true
    }

    private mutating func reserve(row: Int, column: Int) {
        isFunction[row * size + column] = true
    }

    /// §7.10: six version bits and twelve BCH(18, 6) check bits, least significant first,
    /// in two 6 × 3 blocks beside the top-right and bottom-left finders.
    private mutating func drawVersion() {
        let bits = (version << 12) | QRCode.bchRemainder(version, generator: 0x1F25, degree: 12)
        for index in 0..<18 {
            let isDark = (bits >> index) & 1 == 1
            let near = index / 3, far = size - 11 + index % 3
            set(row: near, column: far, dark: isDark)
            set(row: far, column: near, dark: isDark)
        }
    }

    /// §7.9.1: the level's two bits and the mask's three, twelve BCH(15, 5) check bits, XORed
    /// with 101010000010010 so that no format is all light; drawn twice, bit 14 first.
    mutating func drawFormat(correction: QRCode.ErrorCorrection, mask: Int) {
        let data = (correction.formatBits << 3) | mask
        let bits = ((data << 10) | QRCode.bchRemainder(data, generator: 0x537, degree: 10)) ^ 0x5412
        for index in 0..<15 {
            let isDark = (bits >> index) & 1 == 1
            // Around the top-left finder: up column 8 (skipping the timing row), then left
            // along row 8 (skipping the timing column).
            switch index {
            case 0..<6: set(row: index, column: 8, dark: isDark)
            case 6: set(row: 7, column: 8, dark: isDark)
            case 7: set(row: 8, column: 8, dark: isDark)
            case 8: set(row: 8, column: 7, dark: isDark)
            default: set(row: 8, column: 14 - index, dark: isDark)
            }
            // The copy: bits 0–7 along row 8 from the right edge, 8–14 down column 8 to the bottom.
            if index < 8 {
                set(row: 8, column: size - 1 - index, dark: isDark)
            } else {
                set(row: size - 15 + index, column: 8, dark: isDark)
            }
        }
    }

    /// §7.7.3: codeword bits, most significant first, in two-module columns from the bottom
    /// right, up and down in turn, skipping the vertical timing column and function modules;
    /// what is left over (the remainder bits) stays light.
    mutating func place(_ codewords: [UInt8]) {
        var bit = 0
        var right = size - 1
        var upward = true
        while right > 0 {
            if right == 6 { right = 5 }
            for step in 0..<size {
                let row = upward ? size - 1 - step : step
                for column in [right, right - 1] where !isFunction[row * size + column] {
                    if bit < codewords.count * 8 {
                        dark[row * size + column] = (codewords[bit / 8] >> UInt8(7 - bit % 8)) & 1 == 1
                    }
                    bit += 1
                }
            }
            upward.toggle()
            right -= 2
        }
    }

    /// §7.8.2, table 10: inverts the data modules where the mask's condition holds.
    mutating func apply(mask: Int) {
        for row in 0..<size {
            for column in 0..<size where !isFunction[row * size + column] {
                let invert = switch mask {
                case 0: (row + column) % 2 == 0
                case 1: row % 2 == 0
                case 2: column % 3 == 0
                case 3: (row + column) % 3 == 0
                case 4: (row / 2 + column / 3) % 2 == 0
                case 5: (row * column) % 2 + (row * column) % 3 == 0
                case 6: ((row * column) % 2 + (row * column) % 3) % 2 == 0
                default: ((row + column) % 2 + (row * column) % 3) % 2 == 0
                }
                if invert { dark[row * size + column].toggle() }
            }
        }
    }
}

extension QRCode {
    /// The remainder of value(x) · x^degree divided by `generator` over GF(2): the check bits
    /// of the BCH codes that protect format (§7.9.1, annex C) and version (§7.10, annex D).
    static func bchRemainder(_ value: Int, generator: Int, degree: Int) -> Int {
        var remainder = value << degree
        var bit = Int.bitWidth - 1 - remainder.leadingZeroBitCount
        while bit >= degree {
            if (remainder >> bit) & 1 == 1 { remainder ^= generator << (bit - degree) }
            bit -= 1
        }
        return remainder
    }

    /// The penalty score of §7.8.3.1, table 11, for a whole symbol (format and version
    /// information included):
    /// N1 = 3 (+1 a module past 5) for each run of five or more same-colour modules in a row
    /// or column; N2 = 3 for each 2 × 2 block of one colour; N3 = 40 for each
    /// dark-light-dark-dark-dark-light-dark run with four light modules before or after it
    /// (past the edge is the light quiet zone); N4 = 10 for each whole 5 % the dark share is
    /// away from half.
    package static func penalty(_ dark: [Bool], size: Int) -> Int {
        var score = 0
        let finderLike = [true, false, true, true, true, false, true]
        for line in 0..<size {
            let lines = [(0..<size).map { dark[line * size + $0] }, (0..<size).map { dark[$0 * size + line] }]
            for modules in lines {
                var run = 1
                for index in 1...size {
                    if index < size, modules[index] == modules[index - 1] {
                        run += 1
                    } else {
                        if run >= 5 { score += run - 2 }
                        run = 1
                    }
                }
                func isLight(_ range: Range<Int>) -> Bool {
                    range.allSatisfy { !(0..<size).contains($0) || !modules[$0] }
                }
                for start in 0...(size - 7) where modules[start..<start + 7].elementsEqual(finderLike) {
                    if isLight(start - 4..<start) || isLight(start + 7..<start + 11) { score += 40 }
                }
            }
        }
        for row in 0..<size - 1 {
            for column in 0..<size - 1 {
                let colour = dark[row * size + column]
                if dark[row * size + column + 1] == colour, dark[(row + 1) * size + column] == colour,
                   dark[(row + 1) * size + column + 1] == colour {
                    score += 3
                }
            }
        }
        let darkCount = dark.count { $0 }
        score += 10 * (abs(20 * darkCount - 10 * dark.count) / dark.count)
        return score
    }
}
