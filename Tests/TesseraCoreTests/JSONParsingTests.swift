import Foundation
import Testing
import TesseraCore

/// `JSONValue(parsing:)` against Foundation's `JSONDecoder` decoding a `JSONValue`: the same value
/// for every text both read, and refused where Foundation refuses.
@Suite("JSON parsing")
struct JSONParsingTests {
    static func foundation(_ text: String) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    static let valid = [
        "{}", "[]", "0", "-0", "1", "-1", "42", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
        "12345678901234567890123", "92233720368541e03", "-9223372036854775.808e3", "9223372036854775.808e3", "1.5e1", "1500e-2",
        "0.000e5", "-0.0", "1.0", "2.5e-9223372036854775808", "0e9223372036854775807", "1.5", "-2.25", "1e2", "1E+2", "1e-2", "2.5e3", "1.00000000000000000001", "0.1",
        "1e308", "true", "false", "null", "\"\"", "\"plain\"", "\"a/b\"", "\"\\/\"", "\"quote \\\" backslash \\\\\"",
        "\"\\b\\f\\n\\r\\t\"", "\"\\u0041\\u00e9\\u4e2d\"", "\"\\ud83d\\ude00\"", "\"кириллица 🙂\"", "\"\\u0000\"",
        " \t\n\r{ \"a\" : [ 1 , 2 , { \"b\" : null } ] , \"c\" : \"d\" } \n",
        "{\"name\":\"Zoë\",\"given_name\":\"Zoë\",\"address\":{\"country\":\"FR\",\"postal_code\":\"75001\"},\"phone_number_verified\":false}",
        "[[[[[]]]]]", "[1,\"two\",3.5,true,null,{}]", "{\"a\":1,\"a\":2}",
    ]

    static let invalid = [
        "", " ", "{", "}", "[", "]", "{\"a\"}", "{\"a\" 1}", "{a:1}", "{1:2}", "[1 2]", "01", "-", "+1", ".5",
        "1.", "1e", "1e+", "-a", "tru", "truex", "nul", "NaN", "Infinity", "1e400", "-1e400", "\"unterminated", "\"\\x\"",
        "\"\\u12\"", "\"\\u12G4\"", "\"\\ud83d\"", "\"\\ude00\"", "\"\\ud83d\\u0041\"", "\"tab\there\"", "\"line\nbreak\"",
        "1 2", "{} {}", "[1]x", "'single'",
    ]

    @Test("every text both read gives the same value")
    func sameValues() throws {
        for text in Self.valid {
            let expected = try #require(Self.foundation(text), "Foundation refuses \(text)")
            let parsed = try JSONValue(parsing: text)
            #expect(parsed == expected, "\(text): \(parsed) against \(expected)")
            #expect(try JSONValue(parsing: Data(text.utf8)) == expected, "\(text)")
        }
    }

    @Test("what Foundation refuses is refused, with where the text stops being JSON")
    func refusals() {
        for text in Self.invalid {
            #expect(Self.foundation(text) == nil, "Foundation reads \(text)")
            #expect(throws: JSONParsingError.self, "\(text)") { try JSONValue(parsing: text) }
        }
        #expect(throws: JSONParsingError(reason: "a comma or the closing bracket must follow", offset: 3)) {
            try JSONValue(parsing: "[1 2]")
        }
        #expect(throws: JSONParsingError.self) { try JSONValue(parsing: Data([0x22, 0xFF, 0xFE, 0x22])) }
        // Foundation reads a comma before a closing bracket, and UTF-16; RFC 8259 (and this
        // parser) doesn't.
        for text in ["[1,]", "{\"a\":1,}"] {
            #expect(Self.foundation(text) != nil)
            #expect(throws: JSONParsingError.self, "\(text)") { try JSONValue(parsing: text) }
        }
        let utf16 = Data([0x00, 0x34])
        #expect((try? JSONDecoder().decode(JSONValue.self, from: utf16)) == .int(4))
        #expect(throws: JSONParsingError.self) { try JSONValue(parsing: utf16) }
        #expect(throws: JSONParsingError.self) { try JSONValue(parsing: Data([0x22, 0xC3, 0x22])) }
    }

    @Test("a member named twice: the first counts, or the text is refused with the name and where it is named again")
    func repeatedNames() throws {
        #expect(try JSONValue(parsing: #"{"a":1,"a":2}"#) == .object(["a": .int(1)]))
        #expect(throws: JSONParsingError(reason: #"the member "a" is named a second time"#, offset: 7)) {
            try JSONValue(parsing: #"{"a":1,"a":2}"#, repeatedNames: .refused)
        }
        // After their escapes, by Swift's string equality (é and e + U+0301 are one name), in
        // any object however deep; the same name in two objects, or as a value, is no repeat.
        for text in [#"{"sub":1,"\u0073ub":2}"#, "{\"n\u{E9}\":1,\"ne\u{301}\":2}", #"[{"x":{"y":[{"z":1,"z":1}]}}]"#] {
            #expect(throws: JSONParsingError.self, "\(text)") { try JSONValue(parsing: text, repeatedNames: .refused) }
        }
        let distinct = #"{"a":{"x":1},"b":{"x":[{"x":2}]},"s":"\"a\":","t":["a","a"]}"#
        #expect(try JSONValue(parsing: distinct, repeatedNames: .refused) == JSONValue(parsing: distinct))
        // A name with a control character is quoted with its escape in the reason.
        #expect(throws: JSONParsingError(reason: #"the member "\n" is named a second time"#, offset: 9)) {
            try JSONValue(parsing: #"{"\n":1, "\n":2}"#, repeatedNames: .refused)
        }
    }

    @Test("numbers with a fraction or an exponent past 2^53: exact when whole, else the nearest Double (Foundation reads them erratically)")
    func fractionPastDoublePrecision() throws {
        let text = "[1592233744073716162.5,-9007199254740993.5e0,92233720368547758e2,9007199254740993.9999999999999999999999999999]"
        #expect(try JSONValue(parsing: text) == .array([.int(1_592_233_744_073_716_224), .int(-9_007_199_254_740_994),
                                                         .int(9_223_372_036_854_775_800), .int(9_007_199_254_740_994)]))
        #expect(Self.foundation(text) == .array([.int(1_592_233_744_073_716_162), .int(-9_007_199_254_740_993),
                                                 .double(9_223_372_036_854_775_808), .int(9_007_199_254_740_994)]))
        // Below 2^53 both take the Double (4503599627370497.5 rounds to even), and a whole
        // number is exact however it is written.
        #expect(try JSONValue(parsing: "4503599627370497.5") == .int(4_503_599_627_370_498))
        #expect(Self.foundation("4503599627370497.5") == .int(4_503_599_627_370_498))
        #expect(try JSONValue(parsing: "15922337440737161620e-1") == .int(1_592_233_744_073_716_162))
    }

    @Test("nesting: 512 levels are read, 513 refused")
    func depth() throws {
        let deep = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        var expected = JSONValue.array([])
        for _ in 1..<512 { expected = .array([expected]) }
        #expect(try JSONValue(parsing: deep) == expected)
        let deeper = "[" + deep + "]"
        #expect(throws: JSONParsingError.self) { try JSONValue(parsing: deeper) }
    }

    @Test("random values read back from our writer and from JSONEncoder")
    func randomValues() throws {
        var generator = SeededGenerator(seed: 0x5eed)
        for _ in 0..<500 {
            let value = Self.random(depth: 0, using: &generator)
            #expect(try JSONValue(parsing: value.serialized) == value)
            #expect(try JSONValue(parsing: try JSONEncoder().encode(value)) == value)
        }
    }

    static func random(depth: Int, using generator: inout SeededGenerator) -> JSONValue {
        switch Int.random(in: depth < 4 ? 0...7 : 0...5, using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(Int64.random(in: Int64.min...Int64.max, using: &generator) >> Int64.random(in: 0...62, using: &generator))
        case 3: return .double(Double(Int.random(in: -1_000_000...1_000_000, using: &generator)) + 0.5)
        case 4, 5:
            let scalars = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                Unicode.Scalar([0x22, 0x5C, 0x2F, 0x0A, 0x01, 0x41, 0xE9, 0x4E2D, 0x1F600][Int.random(in: 0...8, using: &generator)])!
            }
            return .string(String(String.UnicodeScalarView(scalars)))
        case 6:
            return .array((0..<Int.random(in: 0...4, using: &generator)).map { _ in random(depth: depth + 1, using: &generator) })
        default:
            var members: [String: JSONValue] = [:]
            for index in 0..<Int.random(in: 0...4, using: &generator) {
                members["k\(index)\u{e9}"] = random(depth: depth + 1, using: &generator)
            }
            return .object(members)
        }
    }
}

/// SplitMix64: the same values every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
