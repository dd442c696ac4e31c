import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOPosix
import Testing
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraSQL

/// A raw TCP connection to `port`: `body` sends bytes as a person typing (or an attacker
/// dribbling) would, and reads what the server sends until it closes.
func withRawConnection<T: Sendable>(port: Int, _ body: @Sendable (RawConnection) async throws -> T) async throws -> T {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
    return try await channel.executeThenClose { inbound, outbound in
        try await body(RawConnection(inbound: inbound, outbound: outbound))
    }
}

struct RawConnection: @unchecked Sendable {
    let inbound: NIOAsyncChannelInboundStream<ByteBuffer>
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>

    func send(_ text: String) async throws {
        try await outbound.write(ByteBuffer(string: text))
    }

    /// Everything the server sends until it closes the connection, and how long that took.
    ///
    /// A reset ends the reading like a close: a server that closes while bytes it has not read
    /// are waiting (a client still dribbling its head) is answered by the kernel with a reset
    /// instead of a FIN, and the reset can reach the reader after the answer it follows.
    func readUntilClosed(within limit: Duration = .seconds(20)) async throws -> (text: String, after: Duration) {
        let start = ContinuousClock.now
        let reader = Task {
            var text = ""
            do {
                for try await buffer in inbound { text += String(buffer: buffer) }
            } catch let error as IOError where error.errnoCode == ECONNRESET {}
            return (text, ContinuousClock.now - start)
        }
        let watchdog = Task {
            try await Task.sleep(for: limit)
            reader.cancel()
        }
        defer { watchdog.cancel() }
        let result = try await reader.value
        guard result.1 < limit else { throw ConnectionStillOpen() }
        return result
    }

    struct ConnectionStillOpen: Error {}
}

@Suite("Connection limits")
struct ConnectionLimitsTests {
    func withServer(_ limits: ConnectionLimits, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
        let router = Router()
        router.get("/hello") { _, _ in "hello" }
        let app = Application(router: router, server: limits.server, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in try await body(try #require(client.port)) }
    }

    @Test("a request head sent a line at a time gets 408 when the head timeout passes, however often lines come")
    func slowHead() async throws {
        var limits = ConnectionLimits()
        limits.requestHeadTimeout = 1
        limits.idleTimeout = 30
        try await withServer(limits) { port in
            try await withRawConnection(port: port) { connection in
                try await connection.send("GET /hello HTTP/1.1\r\nHost: x\r\n")
                let dribble = Task {
                    for _ in 0..<10 {
                        try await Task.sleep(for: .milliseconds(300))
                        try? await connection.send("X-Slow: 1\r\n")
                    }
                }
                defer { dribble.cancel() }
                let (text, after) = try await connection.readUntilClosed()
                #expect(text.hasPrefix("HTTP/1.1 408"), "\(text)")
                #expect(after < .seconds(5))
            }
        }
    }

    @Test("a connection that sends nothing, or nothing more after its answer, is closed after the idle timeout")
    func idle() async throws {
        var limits = ConnectionLimits()
        // 2 s: under a loaded test run, the request of the second connection may come a second
        // after it connects.
        limits.idleTimeout = 2
        try await withServer(limits) { port in
            try await withRawConnection(port: port) { silent in
                let (nothing, after) = try await silent.readUntilClosed()
                #expect(nothing.isEmpty && after < .seconds(5))
            }
            try await withRawConnection(port: port) { used in
                try await used.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
                let (answer, _) = try await used.readUntilClosed()
                #expect(answer.hasPrefix("HTTP/1.1 200") && answer.hasSuffix("hello"), "kept alive, answered, then closed when idle")
            }
        }
    }

    @Test("a head with too many fields, or too large, is refused with 400")
    func headerLimits() async throws {
        try await withServer(ConnectionLimits()) { port in
            try await withRawConnection(port: port) { many in
                try await many.send("GET /hello HTTP/1.1\r\nHost: x\r\n" + (0..<150).map { "X-\($0): 1\r\n" }.joined() + "\r\n")
                #expect(try await many.readUntilClosed().text.hasPrefix("HTTP/1.1 400"))
            }
            try await withRawConnection(port: port) { large in
                try await large.send("GET /hello HTTP/1.1\r\nHost: x\r\nX-Large: \(String(repeating: "a", count: 20_000))\r\n\r\n")
                #expect(try await large.readUntilClosed().text.hasPrefix("HTTP/1.1 400"))
            }
        }
    }

    @Test("the limits come from flags, the environment or the config file, and must be sensible")
    func configuration() throws {
        let loaded = try ConfigurationLoader(flags: ["idle-timeout": "45s", "request-head-timeout": "5"],
                                             environment: ["TESSERA_MAX_HEADER_COUNT": "64"]).configuration()
        #expect(loaded.connectionLimits.idleTimeout == 45 && loaded.connectionLimits.requestHeadTimeout == 5)
        #expect(loaded.connectionLimits.maxHeaderCount == 64 && loaded.connectionLimits.maxHeaderBytes == 16 * 1024)
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader(flags: ["max-header-bytes": "100"], environment: [:]).configuration() }
    }
}
