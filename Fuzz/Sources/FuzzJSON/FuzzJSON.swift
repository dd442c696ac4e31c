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
        require(foundation == value, "read as \(value), by Foundation as \(String(describing: foundation))")
        require((try? JSONValue(parsing: value.serialized)) == value, "\(value) reads back from its serialization")
    } catch let error as JSONParsingError {
        // Refused where Foundation reads it: only a comma before a closing bracket, and text
        // in UTF-16 or UTF-32, which Foundation detects by a zero byte among the first four or a
        // byte order mark (RFC 8259 §8.1: JSON exchanged between systems is UTF-8).
        guard foundation != nil else { return 0 }
        if bytes.prefix(4).contains(0) || bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) { return 0 }
        require(error.offset < bytes.count && (bytes[error.offset] == UInt8(ascii: "]") || bytes[error.offset] == UInt8(ascii: "}"))
                    && bytes[..<error.offset].last(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: ","),
                "refused (\(error)) what Foundation reads as \(foundation!)")
    } catch {
        require(false, "a parse failed with \(error), not a JSONParsingError")
    }
    return 0
}
