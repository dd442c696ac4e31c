/// Stops the run when a property that must hold for every input does not. The trap is a
/// crash to libFuzzer, which then keeps the input as an artefact; the message names the rule.
public func require(_ holds: Bool, _ rule: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    guard !holds else { return }
    fatalError("property violated: \(rule())", file: file, line: line)
}

/// The bytes libFuzzer hands to `LLVMFuzzerTestOneInput`, copied so no target holds the
/// fuzzer's buffer past the call.
public func fuzzInput(_ start: UnsafeRawPointer, _ count: Int) -> [UInt8] {
    Array(UnsafeRawBufferPointer(start: start, count: count))
}

/// Whether two strings are the same bytes: `==` on `String` compares canonical equivalence,
/// which would hide a round trip that changes the encoding of a character.
public func sameBytes(_ lhs: some StringProtocol, _ rhs: some StringProtocol) -> Bool {
    lhs.utf8.elementsEqual(rhs.utf8)
}
