import Foundation
import Testing
import TesseraDomain
import TesseraSQL
import TesseraTestSupport

/// ``SigningThreads``: where a refresh on SQLite goes from the database's thread.
@Suite("Signing threads")
struct SigningThreadsTests {
    /// A serial queue standing for a request's event loop: the executor a request's task prefers.
    final class RequestQueue: TaskExecutor {
        static let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "request")

        init() { queue.setSpecific(key: Self.key, value: "request") }

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    /// Where the calling code runs: the request's queue, SQLite's thread (NIO's `TP-#…`), or elsewhere.
    static func place() -> String {
        if DispatchQueue.getSpecific(key: RequestQueue.key) != nil { return "request" }
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.hasPrefix("TP-") ? "database" : "elsewhere"
    }

    @Test("a request's task that prefers the signing threads goes from SQLite's thread to them, not back to its own executor")
    func leavesTheDatabaseThreadForTheSigningThreads() async throws {
        try await withStore(.sqlite) { store in
            let request = RequestQueue()
            let (plain, signing) = try await withTaskExecutorPreference(request) {
                // As before: from the database's thread back to the request's executor.
                _ = try await store.transaction { _ in Self.place() }
                let plain = Self.place()
                let signing = try await withTaskExecutorPreference(SigningThreads.executor) {
                    let inside = try await store.transaction { _ in Self.place() }
                    return [Self.place(), inside, Self.place()]
                }
                return (plain, signing + [Self.place()])
            }
            #expect(plain == "request")
            // Before and after the transaction on the signing threads, in it on the database's,
            // and back on the request's executor once the preference ends.
            #expect(signing == ["elsewhere", "database", "elsewhere", "request"])
        }
    }
}
