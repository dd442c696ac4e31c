import Foundation
import FuzzSupport
import TesseraCore

/// libFuzzer entry point: the input is a JSON text, read by `JSONValue(parsing:)` and by
/// Foundation's `JSONDecoder`, which the stores used before it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    // Foundation's `JSONValue` decoding tries each type in turn at every level: deep nesting
    // takes it seconds (a hang to libFuzzer). Past 64 brackets only the parser's own checks run.
    guard bytes.lazy.filter({ $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "{") }).count <= 64 else {
        if let value = try? JSONValue(parsing: Data(bytes)) {
            require((try? JSONValue(parsing: value.serialized)) == value, "\(value) reads back from its serialization")
        }
        return 0
    }
    let foundation = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    do {
        let value = try JSONValue(parsing: Data(bytes))
        // What the parser reads, Foundation reads as the same value; and it reads back from
        // the writer every signed token goes through.
        require(foundation == value || hasFractionOrExponentPastDoublePrecision(bytes),
                "read as \(value), by Foundation as \(String(describing: foundation))")
        require((try? JSONValue(parsing: value.serialized)) == value, "\(value) reads back from its serialization")
        checkRefusingRepeatedNames(bytes, value)
    } catch is JSONParsingError {
        // Refused where Foundation reads it: not checked. Foundation reads more than RFC 8259:
        // a comma before a closing bracket, UTF-16 and UTF-32, and anything at all in the value
        // of a member named a second time (it keeps the first and never reads the other).
    } catch {
        require(false, "a parse failed with \(error), not a JSONParsingError")
    }
    return 0
}

/// Refusing repeated names changes nothing else: the same value when no object names a member
/// twice, and otherwise a refusal for that reason alone.
func checkRefusingRepeatedNames(_ bytes: [UInt8], _ value: JSONValue) {
    do {
        let strict = try JSONValue(parsing: Data(bytes), repeatedNames: .refused)
        require(strict == value, "read as \(strict) refusing repeated names, as \(value) otherwise")
    } catch let error as JSONParsingError {
        require(error.reason.hasSuffix("is named a second time"), "refused for \(error) only when refusing repeated names")
    } catch {
        require(false, "a parse failed with \(error), not a JSONParsingError")
    }
}

/// Whether the text holds a number written with a fraction or an exponent whose magnitude is
/// 2^53 or more, which Foundation reads erratically (see `JSONValue(parsing:)`): such a text is
/// checked against our writer only. Numbers are found as runs of number characters, inside
/// strings too (such a text is then left unchecked, which is only less checking); the unit tests
/// hold these numbers to their exact values.
func hasFractionOrExponentPastDoublePrecision(_ bytes: [UInt8]) -> Bool {
    let numberCharacters = Set("0123456789+-.eE".utf8)
    let marks = Set(".eE".utf8)
    var index = 0
    while index < bytes.count {
        guard numberCharacters.contains(bytes[index]) else { index += 1; continue }
        let start = index
        while index < bytes.count, numberCharacters.contains(bytes[index]) { index += 1 }
        let token = bytes[start..<index]
        if token.contains(where: marks.contains), let value = Double(String(decoding: token, as: UTF8.self)),
           value.isFinite, value.magnitude >= 0x1p53 { return true }
    }
    return false
}
