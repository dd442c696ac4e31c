import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TesseraAuth
@testable import TesseraAuthCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain GET over real loopback HTTP, as the browser sends it: over a blocking socket, on a
/// thread of its own. (URLSession's callbacks run on Dispatch's pool, which the suite's
/// CPU-heavy tests keep busy for seconds on a two-core machine: a GET timed out with nothing
/// wrong in the listener.)
func get(_ url: String) async throws -> (status: Int, body: String) {
    let components = try #require(URLComponents(string: url))
    let port = UInt16(try #require(components.port))
    let target = components.percentEncodedPath + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
    return try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try blockingGet(port: port, target: target) }) }.start()
    }
}

struct GetFailed: Error {
    let reason: String
}

private func blockingGet(port: UInt16, target: String) throws -> (status: Int, body: String) {
    #if canImport(Darwin)
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #else
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #endif
    guard fd >= 0 else { throw GetFailed(reason: "no socket") }
    defer { _ = close(fd) }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { throw GetFailed(reason: "connection refused") }
    let request = Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8)
    var sent = 0
    while sent < request.count {
        #if canImport(Darwin)
        let count = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        #else
        let count = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        #endif
        guard count > 0 else { throw GetFailed(reason: "the request could not be sent") }
        sent += count
    }
    var answer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count == 0 { break }
        guard count > 0 else { throw GetFailed(reason: "no complete answer within 10 s") }
        answer.append(contentsOf: chunk[..<count])
    }
    let text = String(decoding: answer, as: UTF8.self)
    guard let head = text.range(of: "\r\n\r\n"), let status = Int(text.split(separator: " ").dropFirst().first ?? "") else {
        throw GetFailed(reason: "not an HTTP answer: \(text.prefix(80))")
    }
    return (status, String(text[head.upperBound...]))
}

@Suite("LoopbackRedirectListener")
struct LoopbackRedirectListenerTests {
    @Test("it binds an ephemeral port on 127.0.0.1 and names the redirect URI with the IP literal (RFC 8252 §7.3, §8.3)")
    func redirectURI() throws {
        let listener = try LoopbackRedirectListener()
        defer { listener.close() }
        #expect(listener.port > 0)
        #expect(listener.redirectURI == "http://127.0.0.1:\(listener.port)/callback")
        let other = try LoopbackRedirectListener(callbackPath: "/oauth2/done")
        defer { other.close() }
        #expect(other.port != listener.port)
        #expect(other.redirectURI.hasSuffix("/oauth2/done"))
    }

    @Test("a real GET of the callback ends the wait with the full URL; the browser gets a closing page")
    func receivesCallback() async throws {
        let listener = try LoopbackRedirectListener()
        let waiting = Task { try await listener.waitForCallback(timeout: .seconds(10), expectedState: "st-1") }
        let favicon = try await get("http://127.0.0.1:\(listener.port)/favicon.ico")
        #expect(favicon.status == 404)
        let stray = try await get("\(listener.redirectURI)?code=evil&state=forged")
        #expect(stray.status == 400)
        let page = try await get("\(listener.redirectURI)?code=abc&state=st-1&iss=http%3A%2F%2F127.0.0.1%3A8080")
        #expect(page.status == 200)
        #expect(page.body.contains("You can close this window"))
        let url = try await waiting.value
        #expect(url.absoluteString == "\(listener.redirectURI)?code=abc&state=st-1&iss=http%3A%2F%2F127.0.0.1%3A8080")
        let response = AuthResponse(url: url)
        #expect(response.authCode == "abc" && response.iss == "http://127.0.0.1:8080")
        // One sign-in only: the port is closed afterwards.
        await #expect(throws: (any Error).self) { _ = try await get(listener.redirectURI) }
    }

    @Test("an error redirect is passed on and the page says the sign-in failed")
    func errorRedirect() async throws {
        let listener = try LoopbackRedirectListener()
        let waiting = Task { try await listener.waitForCallback(timeout: .seconds(10)) }
        let page = try await get("\(listener.redirectURI)?error=access_denied&state=s")
        #expect(page.body.contains("Sign-in failed: access_denied"))
        #expect(AuthResponse(url: try await waiting.value).error == "access_denied")
    }

    @Test("an idle connection (a browser's speculative one) doesn't hold up the redirect")
    func idleConnection() async throws {
        // A head timeout far longer than any loaded machine's delay: served one after the other, the
        // idle connection would hold the redirect for all of it (a 5-second one failed under load).
        let listener = try LoopbackRedirectListener(callbackPath: "/callback", port: 0, pages: .init(), headTimeout: .seconds(120))
        let waiting = Task { try await listener.waitForCallback(timeout: .seconds(90)) }
        let idle = openIdleConnection(port: listener.port)
        defer { _ = close(idle) }
        let started = ContinuousClock.now
        let page = try await get("\(listener.redirectURI)?code=abc&state=s")
        #expect(page.status == 200)
        #expect(AuthResponse(url: try await waiting.value).authCode == "abc")
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    @Test("many waits at once, more than the machine has cores, are each served, the last started first")
    func manyWaits() async throws {
        let count = ProcessInfo.processInfo.activeProcessorCount * 2 + 2
        let listeners = try (0..<count).map { _ in try LoopbackRedirectListener() }
        let waits = listeners.map { listener in Task { try await listener.waitForCallback(timeout: .seconds(20)) } }
        try await Task.sleep(for: .milliseconds(100))
        for (index, listener) in listeners.enumerated().reversed() {  // the last started first
            let page = try await get("\(listener.redirectURI)?code=c\(index)&state=s")
            #expect(page.status == 200)
            #expect(AuthResponse(url: try await waits[index].value).authCode == "c\(index)")
        }
    }

    @Test("no redirect in time is a timeout")
    func timeout() async throws {
        let listener = try LoopbackRedirectListener()
        await #expect { try await listener.waitForCallback(timeout: .milliseconds(300)) } throws: { ($0 as? AuthError)?.code == .timeout }
    }

    @Test("cancelling the waiting task ends the wait")
    func cancellation() async throws {
        let listener = try LoopbackRedirectListener()
        let waiting = Task { try await listener.waitForCallback(timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(100))
        waiting.cancel()
        await #expect { try await waiting.value } throws: { ($0 as? AuthError)?.code == .cancelled }
    }

    @Test("the loopback user agent opens the URL and waits for the matching redirect")
    func userAgent() async throws {
        let listener = try LoopbackRedirectListener()
        let agent = LoopbackUserAgent(listener: listener, timeout: .seconds(10)) { url in
            // The "browser": the provider would redirect here with the request's state.
            Task { _ = try await get("\(listener.redirectURI)?code=c&state=\(queryItems(url)["state"] ?? "")") }
        }
        let callback = try await agent.present(URL(string: "https://id.example.com/authorize?state=xyz")!, redirectURI: listener.redirectURI)
        #expect(AuthResponse(url: callback).state == "xyz")
    }
}
