import Foundation
import Testing
import TesseraDomain
#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite("QR code")
struct QRCodeTests {
    @Test("symbols match independent encoders module for module", arguments: QRReference.all)
    func matchesReference(reference: QRReference) throws {
        let code = try QRCode(reference.text, correction: reference.correction, version: reference.version, mask: reference.mask)
        #expect(code.version == reference.version)
        #expect(code.mask == reference.mask)
        #expect(code.size == reference.rows.count)
        for (row, expected) in reference.rows.enumerated() {
            #expect(Self.row(row, of: code) == expected, "row \(row)")
        }
    }

    @Test("the penalty score follows §7.8.3.1 (as segno's evaluate_mask scores the same symbols)")
    func penalty() {
        // Scores segno 1.6.6's encoder.mask_scores gives the reference symbols.
        let scores = [1156, 1030, 1020, 1110, 1275, 2210, 3109, 2530]
        for (reference, score) in zip(QRReference.all, scores) {
            let modules = reference.rows.flatMap { $0.map { $0 == "1" } }
            #expect(QRCode.penalty(modules, size: reference.rows.count) == score, "\(reference)")
        }
        // All light: N1 19 × 42 lines, N2 3 × 20 × 20, N4 10 × 10.
        var modules = [Bool](repeating: false, count: 21 * 21)
        #expect(QRCode.penalty(modules, size: 21) == 798 + 1200 + 100)
        // One dark-light-dark-dark-dark-light-dark run in the middle row.
        for (offset, dark) in [true, false, true, true, true, false, true].enumerated() { modules[10 * 21 + 3 + offset] = dark }
        #expect(QRCode.penalty(modules, size: 21) == 773 + 1152 + 40 + 90)
    }

    @Test("the automatic mask is the one of lowest penalty, the first on a tie")
    func automaticMask() throws {
        // "aa" at Q picks mask 7; 42 "a"s at L tie between masks 1 and 4.
        for text in ["a", "aa", String(repeating: "a", count: 42), QRReference.otpauth, String(repeating: "0123456789", count: 30)] {
            for correction in QRCode.ErrorCorrection.allCases {
                let chosen = try QRCode(text, correction: correction)
                let penalties = try (0...7).map {
                    let code = try QRCode(text, correction: correction, version: chosen.version, mask: $0)
                    return QRCode.penalty(Self.modules(of: code), size: code.size)
                }
                #expect(chosen.mask == penalties.firstIndex(of: penalties.min()!))
                let forced = try QRCode(text, correction: correction, version: chosen.version, mask: chosen.mask)
                #expect(Self.modules(of: forced) == Self.modules(of: chosen))
            }
        }
    }

    @Test("byte capacities match §7.4.10 table 7")
    func capacities() {
        let table: [Int: [Int]] = [1: [17, 14, 11, 7], 2: [32, 26, 20, 14], 3: [53, 42, 32, 24], 7: [154, 122, 86, 64],
                                   10: [271, 213, 151, 119], 40: [2953, 2331, 1663, 1273]]
        for (version, capacities) in table {
            for (correction, capacity) in zip(QRCode.ErrorCorrection.allCases, capacities) {
                #expect(QRCode.byteCapacity(version: version, correction) == capacity, "\(version)-\(correction)")
            }
        }
    }

    @Test("the smallest version that holds the text is chosen")
    func smallestVersion() throws {
        #expect(try QRCode(String(repeating: "a", count: 14)).version == 1)
        #expect(try QRCode(String(repeating: "a", count: 15)).version == 2)
        #expect(try QRCode(String(repeating: "a", count: 122)).version == 7)
        #expect(try QRCode(String(repeating: "a", count: 123)).version == 8)
        #expect(try QRCode(String(repeating: "a", count: 7), correction: .high).version == 1)
        #expect(try QRCode(String(repeating: "é", count: 4), correction: .high).version == 2)
        #expect(try QRCode("a", version: 5, mask: nil).version == 5)
        #expect(try QRCode(String(repeating: "a", count: 15), version: 1, mask: nil).version == 2)
    }

    @Test("text beyond version 40 is refused with the capacity, and so are bad versions and masks")
    func failures() throws {
        #expect(throws: QRCode.Failure.textTooLong(byteCount: 2954, capacity: 2953)) {
            try QRCode(String(repeating: "a", count: 2954), correction: .low)
        }
        #expect(throws: QRCode.Failure.textTooLong(byteCount: 1274, capacity: 1273)) {
            try QRCode(String(repeating: "a", count: 1274), correction: .high)
        }
        #expect(throws: QRCode.Failure.versionOutOfRange(41)) { try QRCode("a", version: 41, mask: nil) }
        #expect(throws: QRCode.Failure.versionOutOfRange(0)) { try QRCode("a", version: 0, mask: nil) }
        #expect(throws: QRCode.Failure.maskOutOfRange(8)) { try QRCode("a", version: nil, mask: 8) }
        #expect("\(QRCode.Failure.textTooLong(byteCount: 2954, capacity: 2953))".contains("at most 2953"))
        #expect(try QRCode(String(repeating: "a", count: 2953), correction: .low).version == 40)
    }

    @Test("the symbol is 17 + 4 × version modules wide, with finder, separator and timing patterns (§6.3)",
          arguments: [1, 2, 6, 7, 10, 21, 32, 40])
    func functionPatterns(version: Int) throws {
        let code = try QRCode("a", correction: .low, version: version, mask: version % 8)
        let size = code.size
        #expect(size == 17 + 4 * version)
        for (top, left) in [(0, 0), (0, size - 7), (size - 7, 0)] {
            for dy in -1...7 {
                for dx in -1...7 where (0..<size).contains(top + dy) && (0..<size).contains(left + dx) {
                    let ring = max(abs(dy - 3), abs(dx - 3))
                    #expect(code.isDark(row: top + dy, column: left + dx) == (ring != 2 && ring != 4),
                            "finder at \(top), \(left): \(dy), \(dx)")
                }
            }
        }
        for index in 8..<size - 8 {
            #expect(code.isDark(row: 6, column: index) == index.isMultiple(of: 2))
            #expect(code.isDark(row: index, column: 6) == index.isMultiple(of: 2))
        }
        #expect(code.isDark(row: size - 8, column: 8))
        #expect(!code.isDark(row: -1, column: 0) && !code.isDark(row: 0, column: size))
    }

    @Test("alignment patterns sit at the centres of annex E table E.1")
    func alignmentPatterns() throws {
        let table: [Int: [Int]] = [2: [6, 18], 7: [6, 22, 38], 10: [6, 28, 50], 15: [6, 26, 48, 70], 22: [6, 26, 50, 74, 98],
                                   32: [6, 34, 60, 86, 112, 138], 40: [6, 30, 58, 86, 114, 142, 170]]
        for (version, centres) in table {
            let code = try QRCode("a", correction: .medium, version: version, mask: 1)
            let last = centres.last!
            for row in centres {
                for column in centres where !(row == 6 && column == 6) && !(row == 6 && column == last) && !(row == last && column == 6) {
                    for dy in -2...2 {
                        for dx in -2...2 {
                            #expect(code.isDark(row: row + dy, column: column + dx) == (max(abs(dy), abs(dx)) != 1),
                                    "version \(version), centre \(row), \(column)")
                        }
                    }
                }
            }
        }
    }

    /// Annex C table C.1: the format information (masked with 101010000010010) for each
    /// level and mask.
    static let formatTable: [QRCode.ErrorCorrection: [Int]] = [
        .low: [0x77C4, 0x72F3, 0x7DAA, 0x789D, 0x662F, 0x6318, 0x6C41, 0x6976],
        .medium: [0x5412, 0x5125, 0x5E7C, 0x5B4B, 0x45F9, 0x40CE, 0x4F97, 0x4AA0],
        .quartile: [0x355F, 0x3068, 0x3F31, 0x3A06, 0x24B4, 0x2183, 0x2EDA, 0x2BED],
        .high: [0x1689, 0x13BE, 0x1CE7, 0x19D0, 0x0762, 0x0255, 0x0D0C, 0x083B],
    ]

    @Test("both copies of the format information decode to the level and mask (§7.9.1, annex C)")
    func formatInformation() throws {
        for correction in QRCode.ErrorCorrection.allCases {
            for mask in 0...7 {
                let code = try QRCode(QRReference.otpauth, correction: correction, version: nil, mask: mask)
                let size = code.size
                let first = [(0, 8), (1, 8), (2, 8), (3, 8), (4, 8), (5, 8), (7, 8), (8, 8), (8, 7),
                             (8, 5), (8, 4), (8, 3), (8, 2), (8, 1), (8, 0)]
                let second = (0..<8).map { (8, size - 1 - $0) } + (8..<15).map { (size - 15 + $0, 8) }
                for positions in [first, second] {
                    var bits = 0
                    for (index, (row, column)) in positions.enumerated() where code.isDark(row: row, column: column) {
                        bits |= 1 << index
                    }
                    #expect(bits == Self.formatTable[correction]?[mask], "\(correction), mask \(mask)")
                    // BCH(15, 5): once unmasked, a multiple of the generator 10100110111.
                    #expect(Self.remainder(bits ^ 0x5412, dividingBy: 0x537) == 0)
                }
            }
        }
    }

    /// Annex D table D.1: the version information of versions 7 to 40.
    static let versionTable = [
        0x07C94, 0x085BC, 0x09A99, 0x0A4D3, 0x0BBF6, 0x0C762, 0x0D847, 0x0E60D, 0x0F928, 0x10B78, 0x1145D, 0x12A17,
        0x13532, 0x149A6, 0x15683, 0x168C9, 0x177EC, 0x18EC4, 0x191E1, 0x1AFAB, 0x1B08E, 0x1CC1A, 0x1D33F, 0x1ED75,
        0x1F250, 0x209D5, 0x216F0, 0x228BA, 0x2379F, 0x24B0B, 0x2542E, 0x26A64, 0x27541, 0x28C69,
    ]

    @Test("versions 7 and up carry both blocks of version information (§7.10, annex D)", arguments: 7...40)
    func versionInformation(version: Int) throws {
        let code = try QRCode("a", correction: .quartile, version: version, mask: version % 8)
        let size = code.size
        var upperRight = 0, lowerLeft = 0
        for index in 0..<18 {
            if code.isDark(row: index / 3, column: size - 11 + index % 3) { upperRight |= 1 << index }
            if code.isDark(row: size - 11 + index % 3, column: index / 3) { lowerLeft |= 1 << index }
        }
        #expect(upperRight == Self.versionTable[version - 7])
        #expect(lowerLeft == Self.versionTable[version - 7])
        #expect(upperRight >> 12 == version)
        #expect(Self.remainder(upperRight, dividingBy: 0x1F25) == 0)
    }

    @Test("the SVG is well-formed, accessible and self-contained, and draws exactly the dark modules")
    func svg() throws {
        let code = try QRCode(QRReference.otpauth)
        let svg = code.svg(moduleSize: 5, quietZone: 4, title: "Scan with your authenticator app")
        let extent = code.size + 8
        let document = try #require(SVGDocument(svg))
        #expect(document.root == "svg")
        #expect(document.attributes["svg"]?["viewBox"] == "0 0 \(extent) \(extent)")
        #expect(document.attributes["svg"]?["width"] == "\(extent * 5)")
        #expect(document.attributes["svg"]?["shape-rendering"] == "crispEdges")
        #expect(document.attributes["svg"]?["role"] == "img")
        #expect(document.title == "Scan with your authenticator app")
        #expect(document.elements == ["svg", "title", "rect", "path"])
        #expect(document.attributes["rect"]?["fill"] == "#fff")
        #expect(document.attributes["rect"]?["width"] == "\(extent)")
        for forbidden in ["<script", "href", "url(", "<style", "<image", "<foreignObject", " on"] {
            #expect(!svg.contains(forbidden), "\(forbidden)")
        }

        // Read the path back: each subpath is one horizontal run of dark modules, and runs
        // in a row never touch (they are merged).
        let path = try #require(document.attributes["path"]?["d"])
        var drawn = Set<[Int]>()
        var runEnds = Set<[Int]>()
        for subpath in path.split(separator: "M") {
            let numbers = subpath.split(whereSeparator: { "hvz ".contains($0) }).compactMap { Int($0) }
            try #require(numbers.count == 5 && numbers[3] == 1 && numbers[4] == -numbers[2], "\(subpath)")
            let (x, y, length) = (numbers[0] - 4, numbers[1] - 4, numbers[2])
            #expect(!runEnds.contains([y, x]), "run at \(y), \(x) continues the one before")
            runEnds.insert([y, x + length])
            for column in x..<x + length { drawn.insert([y, column]) }
        }
        for row in 0..<code.size {
            for column in 0..<code.size {
                #expect(drawn.contains([row, column]) == code.isDark(row: row, column: column))
            }
        }
    }

    @Test("the title is escaped")
    func escapedTitle() throws {
        let title = #"</title><script>alert("x")</script> & 'Tom's' <b>"#
        let svg = try QRCode("a").svg(title: title)
        #expect(!svg.contains("<script"))
        #expect(svg.contains("&lt;/title&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &apos;Tom&apos;s&apos; &lt;b&gt;"))
        let document = try #require(SVGDocument(svg))
        #expect(document.title == title)
        #expect(document.elements == ["svg", "title", "rect", "path"])
    }

    @Test("module size and quiet zone scale the image")
    func svgDimensions() throws {
        let code = try QRCode("a")
        let document = try #require(SVGDocument(code.svg(moduleSize: 1, quietZone: 0, title: "t")))
        #expect(document.attributes["svg"]?["viewBox"] == "0 0 21 21")
        #expect(document.attributes["svg"]?["height"] == "21")
        #expect(document.attributes["path"]?["d"]?.hasPrefix("M0 0h7v1h-7z") == true)
    }

    // MARK: Helpers

    static func row(_ row: Int, of code: QRCode) -> String {
        String((0..<code.size).map { code.isDark(row: row, column: $0) ? "1" : "0" })
    }

    static func modules(of code: QRCode) -> [Bool] {
        (0..<code.size).flatMap { row in (0..<code.size).map { code.isDark(row: row, column: $0) } }
    }

    /// The remainder of `value` divided by `generator` as polynomials over GF(2).
    static func remainder(_ value: Int, dividingBy generator: Int) -> Int {
        let degree = Int.bitWidth - 1 - generator.leadingZeroBitCount
        var value = value
        while value != 0, Int.bitWidth - 1 - value.leadingZeroBitCount >= degree {
            value ^= generator << (Int.bitWidth - 1 - value.leadingZeroBitCount - degree)
        }
        return value
    }
}

/// An SVG document read with Foundation's XMLParser: the elements in order, each one's
/// attributes (the last of each name) and the title text.
final class SVGDocument: NSObject, XMLParserDelegate {
    private(set) var elements: [String] = []
    private(set) var attributes: [String: [String: String]] = [:]
    private(set) var title = ""
    private var inTitle = false
    var root: String? { elements.first }

    init?(_ text: String) {
        super.init()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = self
        guard parser.parse() else { return nil }
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
                attributes attributeDict: [String: String] = [:]) {
        elements.append(elementName)
        attributes[elementName] = attributeDict
        inTitle = elementName == "title"
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        inTitle = false
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if inTitle { title += string }
    }
}

/// A symbol from another encoder, frozen as rows of 0 (light) and 1 (dark) without the quiet
/// zone, generated once with Python and checked to decode (zbar) to `text`.
///
/// The segno 1.6.6 symbols are all full to capacity: segno adds a whole zero codeword after
/// the terminator when the data already ends on a byte boundary (heuer/segno#123, #148),
/// which ISO/IEC 18004 §7.4.10 does not, so partly filled symbols of its differ from the
/// standard (and ours) in the pad codewords. The otpauth URI symbol, partly filled, is from
/// python-qrcode 8.2, which pads as the standard does. python-qrcode makes the full
/// symbols identically too.
struct QRReference: Sendable, CustomTestStringConvertible {
    let source: String
    let text: String
    let correction: QRCode.ErrorCorrection
    let version: Int
    let mask: Int
    let rows: [String]

    var testDescription: String { "\(version)-\(correction), mask \(mask), from \(source)" }

    static let otpauth = "otpauth://totp/Tessera:alice@example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        + "&issuer=Tessera&algorithm=SHA1&digits=6&period=30"

    static let all: [QRReference] = [
        QRReference(source: "segno", text: "Tessera 1-M 01",
                  correction: .medium, version: 1, mask: 2, rows: [
                      "111111100001101111111",
                      "100000100011101000001",
                      "101110101101101011101",
                      "101110101101101011101",
                      "101110101110101011101",
                      "100000101010101000001",
                      "111111101010101111111",
                      "000000001111100000000",
                      "101111100010101111100",
                      "010010011101000111101",
                      "101110110100100101110",
                      "011000000100100001100",
                      "001100101000111101010",
                      "000000001101000110110",
                      "111111100100110001010",
                      "100000101010100111101",
                      "101110101100101101011",
                      "101110101100011010100",
                      "101110101110110001000",
                      "100000100011110001100",
                      "111111101111000000010",
                  ]),
        QRReference(source: "segno", text: "Tessera 1-L m4 01",
                  correction: .low, version: 1, mask: 4, rows: [
                      "111111101001001111111",
                      "100000101000101000001",
                      "101110101111001011101",
                      "101110101001001011101",
                      "101110100000001011101",
                      "100000101100101000001",
                      "111111101010101111111",
                      "000000000111000000000",
                      "110011100001100101111",
                      "110001011011011011110",
                      "001000111111000110010",
                      "001110010000000010000",
                      "010101100111000001001",
                      "000000001100011010101",
                      "111111100000010010110",
                      "100000101111000100010",
                      "101110101100110001011",
                      "101110100110000110101",
                      "101110100101010010100",
                      "100000101111010010000",
                      "111111101111011100001",
                  ]),
        QRReference(source: "segno", text: "1-Q m7 0123",
                  correction: .quartile, version: 1, mask: 7, rows: [
                      "111111101110001111111",
                      "100000100001101000001",
                      "101110101111101011101",
                      "101110101101001011101",
                      "101110100010101011101",
                      "100000101100001000001",
                      "111111101010101111111",
                      "000000001000000000000",
                      "010101111101011101101",
                      "010110011001110010111",
                      "011011110010011001111",
                      "011000011101011101001",
                      "101111110100110011101",
                      "000000001010000101011",
                      "111111101110110010100",
                      "100000101000110011001",
                      "101110100100100100010",
                      "101110101000011010011",
                      "101110100100100010101",
                      "100000101110100010000",
                      "111111100111111101010",
                  ]),
        QRReference(source: "segno", text: "1-H m1 ",
                  correction: .high, version: 1, mask: 1, rows: [
                      "111111100111101111111",
                      "100000101001001000001",
                      "101110101000101011101",
                      "101110101101001011101",
                      "101110101101001011101",
                      "100000101111101000001",
                      "111111101010101111111",
                      "000000000111100000000",
                      "001001111100110111110",
                      "000101011110111001101",
                      "110100110100111110111",
                      "000101001001010001010",
                      "100101111010010111111",
                      "000000001001100010111",
                      "111111101101100111111",
                      "100000101111000100011",
                      "101110100000010111001",
                      "101110100101001110000",
                      "101110101101101111111",
                      "100000100111011101000",
                      "111111100011111001001",
                  ]),
        QRReference(source: "segno", text: "Åsa's code, 2-L, mask 5: 012345",
                  correction: .low, version: 2, mask: 5, rows: [
                      "1111111001001110101111111",
                      "1000001001001000001000001",
                      "1011101001111001101011101",
                      "1011101011100101101011101",
                      "1011101011111100001011101",
                      "1000001000100010001000001",
                      "1111111010101010101111111",
                      "0000000000001010100000000",
                      "1100011100000110000011000",
                      "0001110100011010000110110",
                      "1000111001101001111110111",
                      "1000100000101010101111011",
                      "0010111011110000101101001",
                      "1110110100011011000100001",
                      "1001001101001101011110000",
                      "1011010000101001111010110",
                      "1011001111001111111111101",
                      "0000000011011101100011001",
                      "1111111010111010101010000",
                      "1000001011111010100011001",
                      "1011101001010101111110101",
                      "1011101000011010101000100",
                      "1011101001100001000100101",
                      "1000001010100000110000001",
                      "1111111010110011111111001",
                  ]),
        QRReference(source: "segno", text: "Version 7-Q, mask 0, every codeword data: 0123456789abcdefghijklmnopqrstuvwxyz 0123456",
                  correction: .quartile, version: 7, mask: 0, rows: [
                      "111111101001001111110111111000110000101111111",
                      "100000101100010101110001101101100001001000001",
                      "101110101000110001100010011001110001001011101",
                      "101110101010101011101100100001110101101011101",
                      "101110101001101110111111101101111111101011101",
                      "100000100111101010101000101101110000001000001",
                      "111111101010101010101010101010101010101111111",
                      "000000001001100100011000111010011110000000000",
                      "011010110101011001001111100010111101001011111",
                      "111000010001011010101111010000011000000111011",
                      "100101100100101110000111100010010001010010111",
                      "110011011110001001111110100111101110111011001",
                      "011011110111110011010111001011101000010111001",
                      "011010010100011100011111000000010101010010011",
                      "111100100000010110110001100000000000100110011",
                      "011011001110001001111111110110111011000110000",
                      "001100100111111011111010010011011100011110010",
                      "010000001010011010000000000100010000000100000",
                      "100010101010011111000000110101001001110001111",
                      "110110000101011111011000000011001011110010011",
                      "101111111001000001101111100010011011111111011",
                      "011010001110110010011000110101000100100010001",
                      "001010101110111000111010101111011001101010011",
                      "010010001100101000101000101010101101100010010",
                      "011011111010101010101111111111101001111110011",
                      "011100011100111001010011101000010001001101011",
                      "110101100001000110000010100011101001101001111",
                      "110010000111100001110110001110001000101100000",
                      "110100101000010110010010100111101000100001011",
                      "111011000010111110000110010110010100000000101",
                      "100111110110010000100101011011001101011011001",
                      "100100001110000000011000110111011010011000010",
                      "000001101000110010010101111111111010100000001",
                      "001101000000010011110001010100000001110001011",
                      "000010111001001010110010011111010000111101111",
                      "011110001111111011000100110011001100101101010",
                      "100110100001001001001111101111101010111111001",
                      "000000001010111101001000100110001100100010011",
                      "111111101100110000001010100010011101101011011",
                      "100000100001101000101000100111011010100010010",
                      "101110101010111110011111111010101000111110001",
                      "101110100101010011010010110000010100110010000",
                      "101110101010010100011101000011011000110110011",
                      "100000101101111110010101110011011101000000010",
                      "111111100110001010000010111011011010100111011",
                  ]),
        QRReference(source: "segno", text: "Version 10-H, mask 6, full: 0123456789abcdefghijklmnopqrstuvwxyz"
                      + " 0123456789abcdefghijklmnopqrstuvwxyz 0123456789abcdefg",
                  correction: .high, version: 10, mask: 6, rows: [
                      "111111100110010111101011000001000000101000110011001111111",
                      "100000100110101010111010101101110111010011001101001000001",
                      "101110101111100001100111100111110110011000001111001011101",
                      "101110101001110011110000001110101011100011101101001011101",
                      "101110100101010000111011011111101011001000101001001011101",
                      "100000100100110111010100111000110001001111000110001000001",
                      "111111101010101010101010101010101010101010101010101111111",
                      "000000000011100000101100101000100101001111010100100000000",
                      "000110110000000110010000011111111001000011000000000001100",
                      "001010010101101100111000001101101101111001111011111101100",
                      "101100101101100001100101001100100000000100001011100100111",
                      "111001001011100000001110110110110101001001111000100100101",
                      "011111111010011011111100000011000001011011001011000010001",
                      "111110011111011110100000101111110011111110110100111100000",
                      "011011101100110010000111011001111000011111000100001010110",
                      "111110000010110111000111001100101111000100000110000100101",
                      "110000110001011011110111011100111001000101111111011100001",
                      "000011000111111101101011110000001110100010111010110010001",
                      "110111111111101010001000000010110100010001001100010011001",
                      "011000001011111000000101110001000111001001100100010111111",
                      "001000100000011011111110111011100010110011010101010010010",
                      "111110010111110011010001100000111011011111111010111010110",
                      "010001111101000100001001010100100111000010001010110101011",
                      "001101000000001101110000100101110100000001101100100001100",
                      "000101100100011000100101111001000111000011001110010010011",
                      "000110011110101010111011100000111111001001110100101101100",
                      "011011111101111000000010011111111001101010001100111111010",
                      "110010001000101011101001111000111011111100110010100011111",
                      "100010101000110111100000111010111111100000101101101010101",
                      "111010001110100101000111111000111000000111100011100010001",
                      "110111111100011010010001011111111101100100010001111110101",
                      "000011000000011101000001100110100010100011110101010001101",
                      "001011111010111111111000000001011000010011100010010000001",
                      "111000001001001111100101000111101110011001101111111110110",
                      "001111100010000001000100111100111001000111001111011010101",
                      "000101011000011101110001000101110010100101101110111111111",
                      "010011101111111111011101000111011110111110111111101100001",
                      "001101011011110011000000011100111001011001110101001101100",
                      "000011101011001010110010101110101110101010001000010111000",
                      "010100001011001001110110111111100101011100100001010001101",
                      "011000111010100000000110101110100000100001111101101011011",
                      "111100011101110001010100001011101111110110110010101010101",
                      "001000111111000011110100010010000001010110010001101101001",
                      "010000000111101100110010101101000001111010100111000001101",
                      "000000100010001001110011111100000000010011000000011001000",
                      "010001010011101110010101100001001010001000111111110110010",
                      "101001100011001011100010110101101010010100011111001000101",
                      "111110000100101010000001011101110111010001001100001010100",
                      "000000101001000001110111101111101010100010101111111111011",
                      "000000001110011001111100101000111011111001110001100011010",
                      "111111101111010010010111111010111010110000000100101011010",
                      "100000100001110010100001011000101110100000010110100011101",
                      "101110101101101110100011111111111010100101101010111110010",
                      "101110101110111010110011101110011011110010100011010001100",
                      "101110100001101001000101001110010000011110011000111010011",
                      "100000100100010001001100001011000010110010110110011010111",
                      "111111100101010010010100110110000100101011000010001011000",
                  ]),
        QRReference(source: "python-qrcode", text: otpauth,
                  correction: .medium, version: 8, mask: 3, rows: [
                      "1111111011101001101100011111110010100100101111111",
                      "1000001011000100100100110011110100001111101000001",
                      "1011101001001010000101000000000111111101101011101",
                      "1011101010011000100001110100011101011101001011101",
                      "1011101001111010101100111110010111001100001011101",
                      "1000001001001110011111100011111100000010001000001",
                      "1111111010101010101010101010101010101010101111111",
                      "0000000010001101010100100010000111110101100000000",
                      "1011011100011100001110111111100000010000001001011",
                      "0010100000111100101101100100111110010100011011000",
                      "1010011001010111010110001011000010000011001111000",
                      "0010000101000010011111100000011110110000010111111",
                      "0001111101011011000101011100001100111101101101010",
                      "0011000110011010110010001111100001001111000001001",
                      "0000011100010111110001100000101100011011101000110",
                      "0100100111001010000001001010001101001110001010010",
                      "0111011001010110111001000010000011010101101111101",
                      "1110010000111111011001011001100000100000110001111",
                      "1111101110100000001000011011011000001011010101011",
                      "0110110100110101011111011011111001001111011101000",
                      "1111101111111010000011010001101001110100010001001",
                      "1101010100110000001001001000011010011101011100111",
                      "1101111110100000100111111110111111100001111111000",
                      "0110100010100110010110100010100010100001100010100",
                      "1001101011101100001011101010011001111110101010111",
                      "1011100011000101110011100011000111010111100011111",
                      "0001111110100111100000111110100111110100111111010",
                      "0001100100001000100101100101111110000000110100010",
                      "0101111011110111010010000011001111010000010000010",
                      "1100010100110000101010000101110001100101100100101",
                      "0111001010111010110010011101100100101111111010111",
                      "1000010010001110010101110000001011101111111110000",
                      "1101111110001000001111010111001010000100001111000",
                      "1001010010101101000100011011110010110000001001000",
                      "1000111000001011001000100111110100010100110110000",
                      "0000110101011111001000111100000110101011011101111",
                      "1010101001101011101101001110011000111111101011111",
                      "1110000001000110110110000110100111010110111111100",
                      "0100011100110100011011000100101101010010110011010",
                      "0111000001100011001101011110010100001100000000010",
                      "1110001010011101111001111111001110100110111111110",
                      "0000000011001100010001100010010011101000100010001",
                      "1111111010001111000001101011101101000100101011111",
                      "1000001010001110101100100010101000001100100011011",
                      "1011101001111111111001111111111000010001111111111",
                      "1011101010111010010001010111011110001100101110101",
                      "1011101011110000000110000001101010100111001111011",
                      "1000001000100000000101110011100000111011110000100",
                      "1111111010000111111011011001011000001100010000111",
                  ]),
    ]
}
