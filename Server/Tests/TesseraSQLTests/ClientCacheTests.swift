import Foundation
import Synchronization
import Testing
import TesseraCore
import TesseraDomain
@testable import TesseraSQL

/// The clients' memory: one read at a time per client, and nothing remembered that might be
/// wrong (an unknown id, a failed read, a read overtaken by a change).
@Suite("client cache")
struct ClientCacheTests {
    static func client(_ name: String = "Web App") -> Client {
        Client(id: "web", name: name, authMethod: .clientSecretBasic, redirectURIs: [], grantTypes: [], scopes: ScopeSet([]), createdAt: 1)
    }

    /// A read the test lets finish: it counts its calls, and each waits until ``open()``.
    final class GatedRead: Sendable {
        private let state = Mutex((calls: 0, open: false, waiting: [CheckedContinuation<Void, Never>]()))
        let answer: @Sendable (Int) throws -> Client?

        init(answer: @escaping @Sendable (Int) throws -> Client?) {
            self.answer = answer
        }

        var calls: Int { state.withLock { $0.calls } }

        func callAsFunction() async throws -> Client? {
            let call = state.withLock { state in
                state.calls += 1
                return state.calls
            }
            await withCheckedContinuation { continuation in
                let go = state.withLock { state in
                    if state.open { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if go { continuation.resume() }
            }
            return try answer(call)
        }

        func open() {
            let waiting = state.withLock { state in
                state.open = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }
    }

    final class Asked: Sendable {
        let count = Mutex(0)
    }

    /// Starts `count` callers of `cache`, and returns once each has asked (and a moment more,
    /// for the last to reach the cache).
    static func callers(_ count: Int, of cache: ClientCache, reading read: GatedRead) async -> [Task<Client?, any Error>] {
        let asked = Asked()
        let tasks = (0..<count).map { _ in
            Task<Client?, any Error> {
                asked.count.withLock { $0 += 1 }
                return try await cache.client(id: "web") { try await read() }
            }
        }
        while asked.count.withLock({ $0 }) < count { try? await Task.sleep(for: .milliseconds(1)) }
        try? await Task.sleep(for: .milliseconds(50))
        return tasks
    }

    @Test("twenty callers of a client nobody remembers make one read, and all get the client; the next caller reads nothing")
    func oneReadForMany() async throws {
        let cache = ClientCache(lifetime: .seconds(60))
        let read = GatedRead { _ in Self.client() }
        let tasks = await Self.callers(20, of: cache, reading: read)
        #expect(read.calls == 1)
        read.open()
        for task in tasks { #expect(try await task.value?.name == "Web App") }
        #expect(try await cache.client(id: "web") { try await read() }?.name == "Web App")
        #expect(read.calls == 1)
    }

    @Test("a failed read reaches every caller waiting for it, and is not remembered: the next caller reads again")
    func failedReadIsShared() async throws {
        struct Down: Error {}
        let cache = ClientCache(lifetime: .seconds(60))
        let read = GatedRead { call in
            if call == 1 { throw Down() }
            return Self.client()
        }
        let tasks = await Self.callers(5, of: cache, reading: read)
        read.open()
        for task in tasks {
            await #expect(throws: Down.self) { try await task.value }
        }
        #expect(try await cache.client(id: "web") { try await read() } != nil)
        #expect(read.calls == 2)
    }

    @Test("an unknown id is read each time (a client registered meanwhile is found at once)")
    func unknownIsNotRemembered() async throws {
        let cache = ClientCache(lifetime: .seconds(60))
        let read = GatedRead { call in call == 1 ? nil : Self.client() }
        read.open()
        #expect(try await cache.client(id: "web") { try await read() } == nil)
        #expect(try await cache.client(id: "web") { try await read() } != nil)
        #expect(read.calls == 2)
    }

    @Test("a client forgotten while it is read is read again by the next caller; one remembered is read again when its time is up")
    func forgottenAndExpired() async throws {
        let cache = ClientCache(lifetime: .milliseconds(300))
        let read = GatedRead { call in Self.client("Version \(call)") }
        let tasks = await Self.callers(1, of: cache, reading: read)
        cache.forget("web")
        read.open()
        #expect(try await tasks[0].value?.name == "Version 1")
        #expect(try await cache.client(id: "web") { try await read() }?.name == "Version 2")
        #expect(try await cache.client(id: "web") { try await read() }?.name == "Version 2")
        try await Task.sleep(for: .milliseconds(400))
        #expect(try await cache.client(id: "web") { try await read() }?.name == "Version 3")
        #expect(read.calls == 3)
    }
}
