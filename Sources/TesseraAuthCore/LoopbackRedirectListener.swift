import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-shot HTTP listener on `127.0.0.1` that receives the authorization redirect of a
/// command-line or desktop program (RFC 8252 §7.3).
///
/// It binds an ephemeral port as soon as it is created, so ``redirectURI`` is known before the
/// authorization request is built; the provider accepts any port for a public client that
/// registered `http://127.0.0.1/callback`. It answers the browser with a small page saying the
/// window can be closed, and hands the full callback URL to the caller. Plain POSIX sockets:
/// no server framework is involved and nothing listens beyond the one sign-in.
///
/// For command-line tools and desktop apps on macOS 13 or later and Linux (it times out with
/// `Duration`); iOS apps and older macOS use ``ExternalUserAgent`` over `ASWebAuthenticationSession`.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public final class LoopbackRedirectListener: Sendable {
    /// The port the operating system gave the listener.
    public let port: UInt16
    /// The path the redirect must arrive at; other paths get 404 (a browser's favicon request, say).
    public let callbackPath: String
    private let listeningSocket: Locked<Int32>
    private let pages: Pages
    /// How long a connection may take to send its request head (a test lengthens it).
    private let headTimeout: Duration

    /// The texts of the page the browser shows after the redirect.
    public struct Pages: Sendable {
        /// Shown when the redirect carries a code.
        public var success: String
        /// Shown when the redirect carries an error; `{error}` is replaced by the error code.
        public var failure: String

        /// The texts; the defaults are for a terminal program.
        public init(success: String = "Sign-in complete. You can close this window and return to the terminal.",
                    failure: String = "Sign-in failed: {error}. You can close this window and return to the terminal.") {
            self.success = success
            self.failure = failure
        }
    }

    /// Binds `127.0.0.1` on `port` (0: an ephemeral port) and starts listening.
    /// - Parameters:
    ///   - callbackPath: the path of ``redirectURI``, starting with `/`.
    ///   - port: the port to bind; 0 (the default) lets the system choose one.
    ///   - pages: what the browser shows after the redirect (success and failure pages).
    public convenience init(callbackPath: String = "/callback", port: UInt16 = 0, pages: Pages = Pages()) throws {
        try self.init(callbackPath: callbackPath, port: port, pages: pages, headTimeout: .seconds(5))
    }

    /// `headTimeout`: how long a connection may take to send its request's head (tests lengthen it).
    init(callbackPath: String, port: UInt16, pages: Pages, headTimeout: Duration) throws {
        precondition(callbackPath.hasPrefix("/"), "the callback path starts with /")
        self.callbackPath = callbackPath
        self.pages = pages
        self.headTimeout = headTimeout
        let fd = Self.makeSocket()
        guard fd >= 0 else { throw AuthError(.configuration, "cannot create a socket: \(Self.lastError())") }
        do {
            self.port = try Self.bindLoopback(fd, port: port)
        } catch {
            _ = Self.closeSocket(fd)
            throw error
        }
        listeningSocket = Locked(fd)
    }

    deinit {
        close()
    }

    /// `http://127.0.0.1:PORT/callback`: the redirect URI to put in the authorization request.
    /// An IP literal rather than `localhost`, as RFC 8252 §8.3 recommends.
    public var redirectURI: String { "http://127.0.0.1:\(port)\(callbackPath)" }

    /// Stops listening. Idempotent; a pending ``waitForCallback(timeout:expectedState:)`` ends with ``AuthError/Code/cancelled``.
    public func close() {
        listeningSocket.withLock { fd in
            if fd >= 0 { _ = Self.closeSocket(fd) }
            fd = -1
        }
    }

    /// Waits for the browser's redirect and returns its full URL (`http://127.0.0.1:PORT/callback?code=...`).
    ///
    /// Requests for other paths get 404 and waiting goes on; so do requests whose `state` is
    /// present but not `expectedState`. Then the listener closes: it serves one sign-in.
    /// - Throws: ``AuthError`` ``AuthError/Code/timeout`` after `timeout`, ``AuthError/Code/cancelled``
    ///   when the task is cancelled or the listener closed.
    public func waitForCallback(timeout: Duration = .seconds(300), expectedState: String? = nil) async throws -> URL {
        let cancelled = CancellationFlag()
        let deadline = ContinuousClock.now.advanced(by: timeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<URL, any Error>) in
                // A thread of its own: the loop blocks in poll(2) for the whole wait. On a shared
                // pool (Dispatch's global queue is as wide as the cores, and on Linux Swift's
                // concurrency runs there too) a few waiting listeners starve the whole program.
                let thread = Thread {
                    continuation.resume(with: Result {
                        defer { self.close() }
                        return try self.serve(until: deadline, expectedState: expectedState, cancelled: cancelled)
                    })
                }
                thread.name = "TesseraAuth loopback listener"
                thread.start()
            }
        } onCancel: {
            cancelled.set()
        }
    }

    /// The accept loop, on a thread of its own. Connections are read side by side, so a browser's
    /// idle speculative connection can't hold up the real request; each gets 5 seconds to send
    /// its request head. Polls in short slices to notice cancellation and the deadline.
    private func serve(until deadline: ContinuousClock.Instant, expectedState: String?, cancelled: CancellationFlag) throws -> URL {
        var connections: [Int32: (head: [UInt8], deadline: ContinuousClock.Instant)] = [:]
        defer { for fd in connections.keys { _ = Self.closeSocket(fd) } }
        while true {
            if cancelled.isSet { throw AuthError(.cancelled, "waiting for the browser was cancelled") }
            let now = ContinuousClock.now
            let remaining = now.duration(to: deadline)
            if remaining <= .zero {
                throw AuthError(.timeout, "no sign-in redirect reached \(redirectURI) within the time allowed")
            }
            let listening = listeningSocket.withLock { $0 }
            guard listening >= 0 else { throw AuthError(.cancelled, "the loopback listener was closed") }
            for (fd, connection) in connections where connection.deadline < now {
                _ = Self.closeSocket(fd)
                connections[fd] = nil
            }
            let clients = Array(connections.keys)
            var descriptors = ([listening] + clients).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let slice = min(remaining, .milliseconds(200))
            let milliseconds = Int32(slice.components.seconds * 1000 + slice.components.attoseconds / 1_000_000_000_000_000)
            guard poll(&descriptors, nfds_t(descriptors.count), max(milliseconds, 1)) > 0 else { continue }
            if descriptors[0].revents != 0 {
                let client = accept(listening, nil, nil)
                if client >= 0 {
                    Self.prepare(client)
                    connections[client] = ([], ContinuousClock.now.advanced(by: headTimeout))
                }
            }
            for (index, fd) in clients.enumerated() where descriptors[index + 1].revents != 0 {
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0, var connection = connections[fd] else {
                    _ = Self.closeSocket(fd)
                    connections[fd] = nil
                    continue
                }
                connection.head.append(contentsOf: chunk[..<count])
                if let end = connection.head.firstRange(of: [13, 10, 13, 10]) {
                    let head = String(decoding: connection.head[..<end.lowerBound], as: UTF8.self)
                    let url = handle(fd, head: head, expectedState: expectedState)
                    _ = Self.closeSocket(fd)
                    connections[fd] = nil
                    if let url { return url }
                } else if connection.head.count > 16_384 {
                    _ = Self.closeSocket(fd)
                    connections[fd] = nil
                } else {
                    connections[fd] = connection
                }
            }
        }
    }

    /// Answers one request; returns the callback URL when it is the redirect.
    private func handle(_ client: Int32, head: String, expectedState: String?) -> URL? {
        let requestLine = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3, parts[0] == "GET", parts[1].hasPrefix("/"),
              let url = URL(string: "http://127.0.0.1:\(port)\(parts[1])"),
              let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            Self.respond(client, status: "400 Bad Request", html: Self.page(title: "Bad request", message: "This address only receives a sign-in redirect."))
            return nil
        }
        guard components.percentEncodedPath == callbackPath else {
            Self.respond(client, status: "404 Not Found", html: Self.page(title: "Not found", message: "Nothing here."))
            return nil
        }
        let response = AuthResponse(url: url)
        if let expectedState, let state = response.state, state != expectedState {
            Self.respond(client, status: "400 Bad Request",
                         html: Self.page(title: "Unexpected response", message: "This response is not for the sign-in in progress."))
            return nil
        }
        if let error = response.error {
            Self.respond(client, status: "200 OK", html: Self.page(title: "Sign-in failed", message: pages.failure.replacingOccurrences(of: "{error}", with: error)))
        } else {
            Self.respond(client, status: "200 OK", html: Self.page(title: "Signed in", message: pages.success))
        }
        return url
    }

    // MARK: The page

    static func page(title: String, message: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escapeHTML(title))</title>
        <style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#1b1b1b}h1{font-size:1.4rem}</style>
        </head><body><h1>\(escapeHTML(title))</h1><p>\(escapeHTML(message))</p></body></html>
        """
    }

    static func escapeHTML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    // MARK: Sockets

    private static func makeSocket() -> Int32 {
        #if canImport(Darwin)
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        if fd >= 0 { prepare(fd) }
        return fd
    }

    /// Close-on-exec (a browser started by the program must not inherit the socket) and, on
    /// Apple platforms, no SIGPIPE.
    private static func prepare(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        #if canImport(Darwin)
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    private static func bindLoopback(_ fd: Int32, port: UInt16) throws -> UInt16 {
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw AuthError(.configuration, "cannot bind 127.0.0.1:\(port): \(lastError())") }
        guard listen(fd, 16) == 0 else { throw AuthError(.configuration, "cannot listen on 127.0.0.1:\(port): \(lastError())") }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw AuthError(.configuration, "cannot read the listener's port: \(lastError())") }
        return UInt16(bigEndian: actual.sin_port)
    }

    private static func respond(_ fd: Int32, status: String, html: String) {
        let body = Array(html.utf8)
        let head = "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.count)\r\n"
            + "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\n"
            + "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'\r\nConnection: close\r\n\r\n"
        var bytes = Array(head.utf8) + body
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeMutableBytes { raw in
                #if canImport(Darwin)
                send(fd, raw.baseAddress! + sent, raw.count - sent, 0)
                #else
                send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                #endif
            }
            guard count > 0 else { return }
            sent += count
        }
    }

    private static func closeSocket(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
        Darwin.close(fd)
        #elseif canImport(Glibc)
        Glibc.close(fd)
        #elseif canImport(Musl)
        Musl.close(fd)
        #endif
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }
}

/// Set once when the waiting task is cancelled; read by the accept loop.
private final class CancellationFlag: Sendable {
    private let value = Locked(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
