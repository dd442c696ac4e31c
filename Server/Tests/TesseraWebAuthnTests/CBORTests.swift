import Foundation
import Testing
import TesseraWebAuthn

@Suite("CBOR decoder (RFC 8949)")
struct CBORTests {
    static func decode(_ hex: String) throws -> CBORValue {
        try CBORDecoder.decode(Data(hex: hex))
    }

    static func refusal(_ hex: String) -> String? {
        do {
            _ = try CBORDecoder.decode(Data(hex: hex))
            return nil
        } catch {
            #expect(error.code == .malformed)
            return error.detail
        }
    }

    @Test("decodes RFC 8949 Appendix A's examples of the kinds WebAuthn uses")
    func appendixA() throws {
        #expect(try Self.decode("00") == .unsigned(0))
        #expect(try Self.decode("17") == .unsigned(23))
        #expect(try Self.decode("1818") == .unsigned(24))
        #expect(try Self.decode("1903e8") == .unsigned(1000))
        #expect(try Self.decode("1a000f4240") == .unsigned(1_000_000))
        #expect(try Self.decode("1bffffffffffffffff") == .unsigned(.max))
        #expect(try Self.decode("20") == .negative(0))
        #expect(try Self.decode("20").integerValue == -1)
        #expect(try Self.decode("3903e7").integerValue == -1000)
        #expect(try Self.decode("390100").integerValue == -257)
        #expect(try Self.decode("3bffffffffffffffff") == .negative(.max))
        #expect(try Self.decode("3bffffffffffffffff").integerValue == nil, "below Int64.min")
        #expect(try Self.decode("3b7fffffffffffffff").integerValue == .min)
        #expect(try Self.decode("40") == .bytes(Data()))
        #expect(try Self.decode("4401020304") == .bytes(Data([1, 2, 3, 4])))
        #expect(try Self.decode("60") == .text(""))
        #expect(try Self.decode("6449455446") == .text("IETF"))
        #expect(try Self.decode("62c3bc") == .text("ü"))
        #expect(try Self.decode("64f0908591") == .text("\u{10151}"))
        #expect(try Self.decode("80") == .array([]))
        #expect(try Self.decode("83010203") == .array([.unsigned(1), .unsigned(2), .unsigned(3)]))
        #expect(try Self.decode("8301820203820405") == .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])]))
        #expect(try Self.decode("a0") == .map([:]))
        #expect(try Self.decode("a201020304") == .map([.unsigned(1): .unsigned(2), .unsigned(3): .unsigned(4)]))
        #expect(try Self.decode("a26161016162820203") == .map([.text("a"): .unsigned(1), .text("b"): .array([.unsigned(2), .unsigned(3)])]))
        #expect(try Self.decode("f4") == .bool(false))
        #expect(try Self.decode("f5") == .bool(true))
        #expect(try Self.decode("f6") == .null)
    }

    @Test("a longer-than-needed integer form is read for its value")
    func nonShortestIntegers() throws {
        #expect(try Self.decode("1800") == .unsigned(0))
        #expect(try Self.decode("190001") == .unsigned(1))
        #expect(try Self.decode("5800") == .bytes(Data()))
    }

    @Test("decodePrefix says how many bytes the item took; decode refuses bytes after it")
    func prefixAndTrailingBytes() throws {
        let (value, count) = try CBORDecoder.decodePrefix(Data(hex: "a2010203820405ffee"))
        #expect(value == .map([.unsigned(1): .unsigned(2), .unsigned(3): .array([.unsigned(4), .unsigned(5)])]))
        #expect(count == 7)
        #expect(Self.refusal("a2010203820405ff") != nil)
        #expect(Self.refusal("0000") != nil)
    }

    @Test("decodePrefix counts from the start of a Data slice, whatever its indices")
    func dataSlice() throws {
        let whole = Data(hex: "ffff8201020000")
        let slice = whole[2..<5]
        let (value, count) = try CBORDecoder.decodePrefix(slice)
        #expect(value == .array([.unsigned(1), .unsigned(2)]))
        #expect(count == 3)
    }

    @Test("indefinite lengths are refused", arguments: [
        "5f42010243030405ff",  // byte string in chunks
        "7f657374726561646d696e67ff",  // text string in chunks
        "9f018202039f0405ffff",  // array
        "bf61610161629f0203ffff",  // map
        "ff",  // a lone break
    ])
    func indefiniteLengths(_ hex: String) {
        #expect(Self.refusal(hex)?.contains(hex == "ff" ? "break" : "indefinite length") == true)
    }

    @Test("nesting is limited to 16 levels")
    func nestingDepth() throws {
        let sixteen = String(repeating: "81", count: 15) + "00"
        #expect(try CBORDecoder.decode(Data(hex: sixteen)) != .null)
        let seventeen = String(repeating: "81", count: 16) + "00"
        #expect(Self.refusal(seventeen)?.contains("nested deeper than 16") == true)
        let maps = String(repeating: "a101", count: 16) + "00"
        #expect(Self.refusal(maps) != nil)
        // Far deeper than any stack could recurse: refused at level 17, not by a crash.
        let deep = Data(repeating: 0x81, count: 100_000) + Data([0x00])
        #expect(throws: WebAuthnError.self) { try CBORDecoder.decode(deep) }
    }

    @Test("a length beyond the remaining input is refused before anything is allocated for it", arguments: [
        "5bffffffffffffffff",  // a byte string of 2^64 - 1 bytes
        "5a7fffffff00",  // a byte string of 2 GiB, one byte present
        "7a00010000616263",  // a text string of 65,536 bytes, three present
        "9bffffffffffffffff",  // an array of 2^64 - 1 elements
        "9a00000005010203",  // an array of five elements, three present
        "bbffffffffffffffff",  // a map of 2^64 - 1 pairs
        "a30102",  // a map of three pairs, one present
        "4a0102",  // a byte string of ten bytes, two present
        "19",  // a header cut short
        "1a0001",
    ])
    func claimedLengths(_ hex: String) {
        #expect(Self.refusal(hex) != nil)
    }

    @Test("the same lengths decode when the bytes are all there")
    func presentLengths() throws {
        #expect(try Self.decode("9a000000050102030405").arrayValue?.count == 5)
        #expect(try Self.decode("7a00000003616263") == .text("abc"))
    }

    @Test("text must be well-formed UTF-8", arguments: [
        "62c328",  // a lead byte followed by ASCII
        "62c080",  // overlong NUL
        "63e08080",  // overlong
        "63eda080",  // a UTF-16 surrogate, U+D800
        "64f4908080",  // above U+10FFFF
        "61ff",
        "62e282",  // cut short
    ])
    func invalidUTF8(_ hex: String) {
        #expect(Self.refusal(hex)?.contains("UTF-8") == true)
    }

    @Test("a map that repeats a key is refused, also when the key is written differently")
    func duplicateKeys() {
        #expect(Self.refusal("a201020103") != nil)
        #expect(Self.refusal("a26161016161f6") != nil)
        #expect(Self.refusal("a20102180103") != nil, "1 and 24-prefixed 1 are the same key")
    }

    @Test("tags, floats, undefined and other simple values are refused", arguments: [
        "c074323031332d30332d32315432303a30343a30305a",  // tag 0
        "d82076687474703a2f2f7777772e6578616d706c652e636f6d",  // tag 32
        "f93c00", "fa47c35000", "fb3ff199999999999a",  // floats
        "f7",  // undefined
        "f0",  // simple value 16
        "f818",  // one-byte simple value
        "1c", "3d", "5e",  // reserved additional information 28-30
    ])
    func unsupportedItems(_ hex: String) {
        #expect(Self.refusal(hex) != nil)
    }

    @Test("empty input is refused")
    func emptyInput() {
        #expect(throws: WebAuthnError.self) { try CBORDecoder.decode(Data()) }
        #expect(throws: WebAuthnError.self) { try CBORDecoder.decodePrefix(Data()) }
    }
}
