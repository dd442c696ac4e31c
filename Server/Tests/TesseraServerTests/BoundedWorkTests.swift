import Foundation
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraInfrastructure
import TesseraSQL
import TesseraTestSupport

@Suite("Security: bounded work")
struct BoundedWorkTests {
    @Test("a rate limiter allows its limit in a burst, then one more each limit-th of the window", arguments: TestBackend.available)
    func rateLimiter(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
            let limiter = RateLimiter("test", limit: 3, window: 60, store: store)
            for _ in 0..<3 { #expect(try await limiter.take("a", now: 1000) == nil) }
            #expect(try await limiter.take("a", now: 1000) == 20, "the next one in 20 s")
            #expect(try await limiter.take("b", now: 1000) == nil, "another key has its own share")
            #expect(try await RateLimiter("other", limit: 3, window: 60, store: store).take("a", now: 1000) == nil,
                    "another limiter's key of the same name is another key")
            #expect(try await limiter.take("a", now: 1019) == 1)
            #expect(try await limiter.take("a", now: 1020) == nil)
            #expect(try await limiter.take("a", now: 1020) != nil)
            #expect(try await limiter.take("a", now: 990) != nil, "a clock behind the last use refills nothing")
            for _ in 0..<3 { #expect(try await limiter.take("a", now: 2000) == nil, "a quiet key is full again") }
            #expect(try await limiter.take("a", now: 2000) != nil, "and no fuller than the limit")
        }
    }

    @Test("concurrent takes never share a token", arguments: TestBackend.available)
    func rateLimiterUnderConcurrency(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
            let limiter = RateLimiter("test", limit: 10, window: 60, store: store)
            let allowed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<30 { group.addTask { try await limiter.take("busy", now: 5000) == nil } }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(allowed == 10)
        }
    }

    @Test("failures are counted per key in the window, hashed, and forgotten on reset", arguments: TestBackend.available)
    func failureThrottle(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
            let perAddress = FailureThrottle("login:address", limit: 3, window: 900, store: store)
            let perAccount = FailureThrottle("login:account", limit: 5, window: 900, store: store)
            let counters = [(perAddress, "198.51.100.7"), (perAccount, "alice@example.com")]
            for second in 0..<3 { #expect(try await FailureThrottle.reserve(counters, now: 10_000 + Int64(second)) != nil) }
            #expect(try await FailureThrottle.reserve(counters, now: 10_010) == nil, "the address had its three")
            #expect(try await FailureThrottle.reserve([(perAccount, "alice@example.com")], now: 10_010) != nil,
                    "a refused attempt counted nothing: the account has 3 of 5, and now 4")
            #expect(try await FailureThrottle.reserve(counters, now: 10_000 + 900) != nil, "the first failure left the window")
            try await perAddress.reset("198.51.100.7")
            let forgiven = try #require(try await FailureThrottle.reserve(counters, now: 10_902))
            try await FailureThrottle.forgive(forgiven)
            let stored = try await store.database.withDatabase { db in
                try await db.raw("SELECT key_hash FROM throttle_failures").all().map { try $0.decode(column: "key_hash", as: String.self) }
            }
            #expect(stored.count == 5, "the account's five; the address's were reset and the last attempt forgiven")
            #expect(!stored.contains { $0.contains("alice") || $0.contains("198.51") })
        }
    }

    @Test("40 concurrent attempts against a limit of 5 count 40 and let exactly 5 through", arguments: TestBackend.available)
    func failureThrottleUnderConcurrency(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
            let perPair = FailureThrottle("login:account+address", limit: 5, window: 900, store: store)
            let perAddress = FailureThrottle("login:address", limit: 20, window: 900, store: store)
            let counters = [(perPair, "bob@example.com|203.0.113.9"), (perAddress, "203.0.113.9")]
            let through = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<40 { group.addTask { try await FailureThrottle.reserve(counters, now: 20_000) != nil } }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(through == 5)
        }
    }

    @Test("work limits count per address and per client", arguments: TestBackend.available)
    func workLimits(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
            var settings = WorkLimitSettings()
            settings.flowsPerAddress = 2
            settings.flowsPerClient = 3
            let limits = WorkLimits(settings, store: store)
            try await limits.admit(.flow, address: "198.51.100.1", client: "app", now: 0)
            try await limits.admit(.flow, address: "198.51.100.1", client: "app", now: 0)
            await #expect(throws: WorkLimits.Exceeded(work: .flow, retryAfter: 30)) {
                try await limits.admit(.flow, address: "198.51.100.1", client: "other-app", now: 0)
            }
            try await limits.admit(.flow, address: "198.51.100.2", client: "app", now: 0)
            await #expect(throws: WorkLimits.Exceeded.self, "the client's share is spent, whatever the address") {
                try await limits.admit(.flow, address: "198.51.100.3", client: "app", now: 0)
            }
            try await limits.admit(.hashing, address: "198.51.100.1", client: "app", now: 0)
        }
    }

    /// Order in which queued jobs got their slot.
    final class Order: Sendable {
        let names = Mutex<[String]>([])
        func append(_ name: String) { names.withLock { $0.append(name) } }
        var all: [String] { names.withLock { $0 } }
    }

    static func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(condition())
    }

    @Test("the hashing queue is bounded, lets work under way go first, and keeps room for it")
    func hashingQueue() async throws {
        let queue = HashingQueue(slots: 1, length: 8)
        try await queue.enter(.underWay)  // the one thread is busy
        let order = Order()
        func job(_ name: String, _ priority: PasswordHasher.Priority) -> Task<Void, any Error> {
            Task {
                try await queue.enter(priority)
                order.append(name)
                queue.leave()
            }
        }
        let new1 = job("new 1", .new)
        try await Self.waitUntil { queue.waiting.new == 1 }
        let new2 = job("new 2", .new)
        try await Self.waitUntil { queue.waiting.new == 2 }
        await #expect(throws: PasswordHasher.Busy.self, "new work may fill only a quarter of the queue") {
            try await queue.enter(.new)
        }
        var underWay: [Task<Void, any Error>] = []
        for i in 1...6 {
            underWay.append(job("under way \(i)", .underWay))
            try await Self.waitUntil { queue.waiting.underWay == i }
        }
        await #expect(throws: PasswordHasher.Busy.self, "the queue is full") { try await queue.enter(.underWay) }
        queue.leave()
        for task in underWay + [new1, new2] { try await task.value }
        #expect(order.all == (1...6).map { "under way \($0)" } + ["new 1", "new 2"])
        #expect(queue.waiting == (0, 0))
        try await queue.enter(.new)  // the slot came back
        queue.leave()
    }

    @Test("a flood of new passwords waits behind sign-ins, and past the queue is refused at once")
    func hasherUnderFlood() async throws {
        let hasher = PasswordHasher(parameters: ScryptParameters(logN: 13, r: 8, p: 1), threads: NIOHashingThreads(count: 1), queueLength: 4)
        let hash = try await hasher.hash("correct horse", priority: .new)
        let flood = (0..<40).map { _ in Task { try? await hasher.hash("a new password", priority: .new) } }
        let verified = try await hasher.verify("correct horse", against: hash, priority: .underWay)
        #expect(verified.matches)
        let refused = await flood.asyncFilter { await $0.value == nil }.count
        #expect(refused >= 30, "at most the running one and the queue's quarter (1) were accepted at a time: \(refused) refused")
    }

    @Test("an authorization parameter over its size is invalid_request; a too long state is not sent back")
    func parameterSizes() async throws {
        try await withApp { _, browser in
            func authorize(_ extra: [(String, String)]) async throws -> RequestParameters {
                let query = RequestParameters.encode([("response_type", "code"), ("client_id", "web"), ("redirect_uri", testRedirect),
                                                      ("scope", "openid")] + extra)
                let response = try await browser.request("/authorize?" + query)
                #expect(response.status == .found)
                return response.redirectParameters
            }
            let long = try await authorize([("state", String(repeating: "s", count: 2049))])
            #expect(long["error"] == "invalid_request" && long["error_description"]?.contains("state") == true)
            #expect(long["state"] == nil, "an oversized state is not echoed")
            let nonce = try await authorize([("state", "kept"), ("nonce", String(repeating: "n", count: 513))])
            #expect(nonce["error"] == "invalid_request" && nonce["state"] == "kept")
            let fits = try await browser.request("/authorize?" + RequestParameters.encode([
                ("response_type", "code"), ("client_id", "web"), ("redirect_uri", testRedirect), ("scope", "openid"),
                ("state", String(repeating: "s", count: 2048))]))
            #expect(fits.status == .ok, "at the limit the login page opens")
        }
    }

    @Test("sign-ins started from one address are limited: the login page, then temporarily_unavailable to the client")
    func interactionsPerAddress() async throws {
        try await withApp(configure: { $0.workLimits.flowsPerAddress = 3 }) { provider, browser in
            let query = RequestParameters.encode([("response_type", "code"), ("client_id", "web"), ("redirect_uri", testRedirect),
                                                  ("scope", "openid"), ("state", "s")])
            for _ in 0..<3 { #expect(try await browser.request("/authorize?" + query).status == .ok) }
            let refused = try await browser.request("/authorize?" + query)
            #expect(refused.status == .found && refused.redirectParameters["error"] == "temporarily_unavailable")
            #expect(refused.redirectParameters["state"] == "s")
        }
    }

    @Test("native flows and password hashing from one address are limited with slow_down and Retry-After")
    func nativePerAddress() async throws {
        try await withNativeApp(configure: { $0.workLimits.flowsPerAddress = 3; $0.workLimits.hashingPerAddress = 1 }) { app in
            func start(_ email: String, password: String? = nil) async throws -> TestResponse {
                try await app.post("/signup/v1.0/start", [("username", email), ("challenge_type", "oob password redirect")]
                                   + (password.map { [("password", $0)] } ?? []))
            }
            #expect(try await start("one@example.com", password: "a long new passphrase").status == .ok)
            let hashing = try await start("two@example.com", password: "a long new passphrase")
            #expect(hashing.status == .tooManyRequests && hashing.json["error"] == "slow_down")
            #expect(hashing.headers[.retryAfter] == "60" && hashing.json["retry_after"] == 60)
            #expect(try await start("three@example.com").status == .ok, "without a password no hashing is needed")
            let flows = try await app.post("/oauth2/v2.0/initiate", [("username", "alice@example.com"), ("challenge_type", "password redirect")])
            #expect(flows.status == .tooManyRequests && flows.json["error"] == "slow_down")
            #expect(flows.json["error_description"]?.stringValue?.contains("Try again in 20 s") == true, "\(flows.body.text)")
        }
    }
}

extension Sequence where Element: Sendable {
    func asyncFilter(_ keep: (Element) async -> Bool) async -> [Element] {
        var kept: [Element] = []
        for element in self where await keep(element) { kept.append(element) }
        return kept
    }
}
