import FuzzSupport
import TesseraCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    _ = fuzzInput(start, count)
    return 0
}
