import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
import TesseraNode

/// The server's tasks on its event loops (`Node.runTasksOnEventLoops`), in a process of their own:
/// the hook is the process's, and is installed once.
@Suite struct EventLoopExecutorTests {
    /// A task's job runs on its loop as Swift's generic executor, as on Swift's own pool: a call
    /// into a nonisolated async function goes on in the same job. Run as the loop's own serial
    /// executor, every such call went back to the end of the loop's queue (≈ 12 times a token
    /// request), behind the other requests' signatures: two tasks' steps then took turns.
    @Test func aTaskRunsToItsNextSuspensionInOneGo() async {
        await #expect(processExitsWith: .success) {
            guard Node.runTasksOnEventLoops() else { exit(2) }
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let steps = NIOLockedValueBox<[String]>([])
            // Both tasks are enqueued on the loop before either runs.
            let tasks = try await loop.submit {
                ["a", "b"].map { name in Task { await Walk.down(name, from: 3, steps: steps) } }
            }.get()
            for task in tasks { await task.value }
            let taken = steps.withLockedValue { $0 }
            let expected = ["a3", "a2", "a1", "a0", "b3", "b2", "b1", "b0"]
            guard taken == expected else {
                FileHandle.standardError.write(Data("steps \(taken), expected \(expected)\n".utf8))
                exit(1)
            }
        }
    }
}

private enum Walk {
    /// Nonisolated and async: each call starts on the generic executor.
    static func down(_ name: String, from step: Int, steps: NIOLockedValueBox<[String]>) async {
        steps.withLockedValue { $0.append("\(name)\(step)") }
        if step > 0 { await down(name, from: step - 1, steps: steps) }
    }
}
