import Foundation
import NIOConcurrencyHelpers

/// The current time in Unix seconds, injectable so that expiry is testable without sleeping.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Int64
    public init(_ read: @escaping @Sendable () -> Int64) { self.read = read }
    public func now() -> Int64 { read() }
    public static let system = WallClock { Int64(Date().timeIntervalSince1970) }
}

/// A clock tests move by hand.
public final class ManualClock: Sendable {
    private let time: NIOLockedValueBox<Int64>
    public init(_ start: Int64 = 1_800_000_000) { time = NIOLockedValueBox(start) }
    public func advance(by seconds: Int64) { time.withLockedValue { $0 += seconds } }
    public var clock: WallClock { WallClock { [self] in time.withLockedValue { $0 } } }
}
