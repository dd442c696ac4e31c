import NIOCore
import NIOPosix
import TesseraDomain

/// Password hashing's threads: a SwiftNIO thread pool of their own, started at once and shut
/// down when the last reference goes.
public final class NIOHashingThreads: HashingThreads {
    public let count: Int
    private let pool: NIOThreadPool

    /// `count`: threads, one derivation each at a time (default: the machine's cores).
    public init(count: Int = System.coreCount) {
        self.count = max(1, count)
        pool = NIOThreadPool(numberOfThreads: self.count)
        pool.start()
    }

    deinit {
        pool.shutdownGracefully { _ in }
    }

    public func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await pool.runIfActive(work)
    }
}
