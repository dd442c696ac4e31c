import Testing
@testable import TesseraAuthCore

@Suite("The SDK's lock (NSLock: iOS 15 / macOS 12, where Mutex is not)")
struct LockedTests {
    @Test("a thousand concurrent changes, none lost; a value read back as written")
    func concurrentChanges() async {
        let counter = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<1000 { group.addTask { counter.withLock { $0 += 1 } } }
        }
        #expect(counter.withLock { $0 } == 1000)
        let flag = SingleUse()
        let taken = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 { group.addTask { flag.take() } }
            return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(taken == 1)
    }
}
