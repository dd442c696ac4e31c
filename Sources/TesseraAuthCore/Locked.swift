import Foundation

/// A value behind a lock, for the SDK's few pieces of shared state. `NSLock` exists on every
/// platform the SDK is for (iOS 15, macOS 12, Linux), where the standard library's `Mutex`
/// needs iOS 18 / macOS 15 and, on Linux, can trap in optimised async code (docs/security.md,
/// "The release build"). The server's locks are NIO's `NIOLockedValueBox`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, which it may change, while no other thread can.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
