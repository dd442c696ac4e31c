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
        require(foundation == value || hasFractionPastDoublePrecision(bytes),
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

/// Whether the text holds a number with a non-zero fraction whose magnitude is 2^53 or more:
/// Foundation reads it as the integer its digits before the point make, `JSONValue(parsing:)` as
/// its nearest `Double` (documented there). Numbers are found as runs of number characters,
/// inside strings too (such a text is then left unchecked, which is only less checking).
func hasFractionPastDoublePrecision(_ bytes: [UInt8]) -> Bool {
    let numberCharacters = Set("0123456789+-.eE".utf8)
    var index = 0
    while index < bytes.count {
        guard numberCharacters.contains(bytes[index]) else { index += 1; continue }
        let start = index
        while index < bytes.count, numberCharacters.contains(bytes[index]) { index += 1 }
        let token = String(decoding: bytes[start..<index], as: UTF8.self)
        if let value = Double(token), value.isFinite, value.magnitude >= 0x1p53, !isWholeDecimal(token) { return true }
    }
    return false
}

/// Whether a decimal number's text (`-12.50e1`) has a value that is a whole number.
func isWholeDecimal(_ token: String) -> Bool {
    let parts = token.lowercased().split(separator: "e", maxSplits: 1, omittingEmptySubsequences: false)
    guard let exponent = parts.count == 2 ? Int(parts[1]) : 0 else { return false }
    let mantissa = parts[0].filter { $0 != "-" && $0 != "+" }.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    let digits = Array(mantissa[0]) + (mantissa.count == 2 ? Array(mantissa[1]) : [])
    // The point stands after this many of the digits (none or all of them when it is outside).
    let (point, overflow) = mantissa[0].count.addingReportingOverflow(exponent)
    guard !overflow else { return exponent > 0 }
    return digits.dropFirst(max(0, point)).allSatisfy { $0 == "0" }
}
