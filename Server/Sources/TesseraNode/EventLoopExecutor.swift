import CTesseraConcurrency
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

extension Node {
    /// Runs Swift concurrency's tasks on the server's event loops (NIO's singleton group, which the
    /// HTTP server and the PostgreSQL driver already use) instead of a pool of threads of its own.
    ///
    /// A request's handler is an async task: by default the connection's bytes arrive on an event
    /// loop thread, the router runs on a thread of the concurrency pool, and the answer goes back
    /// to the event loop — two wake-ups of another thread per request, and on a machine with few
    /// cores, four busy threads taking turns on two. With the event loops as the global executor a
    /// task enqueued from an event loop stays on it, so a request is read, answered and written on
    /// one thread. What must not block a loop already has threads of its own: password hashing
    /// (`NIOHashingThreads`), SQLite (`DatabaseThread`), and the signatures of most grants that
    /// wait on the database (Dispatch's threads: `UserGrantTokens.response`). A loop's requests
    /// use PostgreSQL connections of their own loop (`PostgresDatabase.pools`).
    ///
    /// Call it first thing, before any task runs (`serve` does). `TESSERA_EXECUTOR=pool` keeps
    /// Swift's own pool. True when the event loops took over.
    @discardableResult
    public static func runTasksOnEventLoops() -> Bool {
        if ProcessInfo.processInfo.environment["TESSERA_EXECUTOR"]?.lowercased() == "pool" { return false }
        let installed = GlobalJobsOnEventLoops.install()
        if !installed {
            FileHandle.standardError.write(Data(
                "tessera: tasks stay on Swift's own thread pool: another global executor was installed first\n".utf8))
        }
        tasksOnEventLoops.withLockedValue { $0 = installed }
        return installed
    }

    /// Whether ``runTasksOnEventLoops()`` took over: then each request's task is kept on its
    /// connection's loop (``EventLoopTaskExecutor``).
    static var tasksRunOnEventLoops: Bool { tasksOnEventLoops.withLockedValue { $0 } }
    private static let tasksOnEventLoops = NIOLockedValueBox(false)
}

/// Swift concurrency's global executor taken over by NIO's singleton event loop group: the
/// runtime's enqueue hook sends each job that has no executor of its own to the loop it is
/// enqueued from, or from any other thread to the group's next loop.
///
/// The loop runs the job as Swift's generic executor, as a thread of Swift's own pool would.
/// Handed to the loop as a job (`EventLoop.enqueue`), it would run as the loop's serial executor,
/// and every call into a nonisolated async function, which starts on the generic executor, would
/// leave it for a job of its own at the end of the loop's queue: 14 jobs a token request instead
/// of 2, each behind the signatures of the loop's other requests (docs/performance.md,
/// twenty-fifth session).
///
/// SwiftNIO offers the same (`NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`)
/// but finds the hook with `dlsym`, which fails in a binary linked with the Swift libraries
/// statically, as `tessera` is (scripts/build-release): their symbols aren't exported. Here the
/// linker resolves the hook (`CTesseraConcurrency`), whichever way the runtime is linked.
private enum GlobalJobsOnEventLoops {
    /// The hook's type in the runtime: the job, and the runtime's own enqueue (not called).
    typealias Hook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void

    /// False when a hook was already installed (it is kept).
    static func install() -> Bool {
        let hook: Hook = { job, _ in runOnEventLoop(job) }
        return tessera_install_global_enqueue_hook(unsafeBitCast(hook, to: UnsafeRawPointer.self))
    }

    /// Swift's generic executor, which isolates to nothing: the runtime's `SerialExecutorRef`
    /// with neither identity nor implementation (`SerialExecutorRef::generic()`), the executor
    /// its own pool runs global jobs on. The standard library names no value for it (the cast
    /// traps if the two sizes ever differ; EventLoopExecutorTests holds the behaviour).
    static let generic = unsafeBitCast((UnsafeRawPointer?.none, UInt(0)), to: UnownedSerialExecutor.self)
}

/// A global job to the loop it is enqueued from (from any other thread, the group's next), run
/// there as the generic executor. A function of its own: written in the hook's closure, it crashed
/// Swift 6.3.1's compiler (region-based isolation checking `install()`).
private func runOnEventLoop(_ job: UnownedJob) {
    MultiThreadedEventLoopGroup.singleton.any().execute { job.runSynchronously(on: GlobalJobsOnEventLoops.generic) }
}

/// An event loop as the executor a task prefers: the jobs of a request's task run on its
/// connection's loop, whatever the task awaited in between (a nested preference, such as
/// SQLite's thread, still wins inside its scope).
package final class EventLoopTaskExecutor: TaskExecutor {
    package let loop: any EventLoop

    package init(_ loop: any EventLoop) {
        self.loop = loop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
