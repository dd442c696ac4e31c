import Foundation
import Hummingbird
import NIOCore
import Prometheus
import Testing
import TesseraAuthCore
@testable import TesseraServer
@testable import TesseraNode
@testable import TesseraDomain

/// One HTTP/1.1 answer read off a raw connection.
struct RawAnswer {
    let status: String
    let fields: [(name: String, value: String)]
    let body: String

    func field(_ name: String) -> String? { fields.first { $0.name.lowercased() == name.lowercased() }?.value }

    /// Every field but the two that differ from answer to answer, as `name: value` lines, sorted.
    var stableFields: [String] {
        fields.filter { !["x-request-id", "date"].contains($0.name.lowercased()) }.map { "\($0.name.lowercased()): \($0.value)" }.sorted()
    }

    /// The answers in `text`, in order (each with a Content-Length, as the provider sends them).
    static func parse(_ text: String) throws -> [RawAnswer] {
        var rest = Substring(text)
        var answers: [RawAnswer] = []
        while !rest.isEmpty {
            let head = try #require(rest.range(of: "\r\n\r\n"), "no end of head in: \(rest.prefix(200))")
            let lines = rest[..<head.lowerBound].components(separatedBy: "\r\n")
            let fields = lines.dropFirst().map { line -> (String, String) in
                let colon = line.firstIndex(of: ":") ?? line.endIndex
                return (String(line[..<colon]), line[colon...].dropFirst().trimmingCharacters(in: .whitespaces))
            }
            let length = Int(fields.first { $0.0.lowercased() == "content-length" }?.1 ?? "0") ?? 0
            let bodyStart = head.upperBound
            let bodyEnd = rest.utf8.index(bodyStart, offsetBy: length)
            answers.append(RawAnswer(status: lines[0], fields: fields, body: String(rest[bodyStart..<bodyEnd])))
            rest = rest[bodyEnd...]
        }
        return answers
    }
}

/// A loopback port nothing listens on right now.
func freePort() -> Int {
    guard let listener = try? LoopbackRedirectListener() else { return 18_000 + Int.random(in: 0..<2000) }
    defer { listener.close() }
    return Int(listener.port)
}

@Suite("Discovery and the JWKS answered on the event loop")
struct PublicDocumentsTests {
    /// A provider listening on a free loopback port; `body` gets it and the port.
    func withServedProvider(configure: @escaping (inout ServerConfiguration) -> Void = { _ in },
                            _ body: @escaping @Sendable (Provider, Int) async throws -> Void) async throws {
        try await withProvider(configure: { configuration in
            configuration.host = "127.0.0.1"
            configuration.port = freePort()
            configure(&configuration)
        }) { provider in
            let (ports, continuation) = AsyncStream<Int>.makeStream()
            let app = try buildApplication(provider: provider) { port in continuation.yield(port) }
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    defer { continuation.finish() }
                    try await app.runService(gracefulShutdownSignals: [])
                }
                var iterator = ports.makeAsyncIterator()
                let port = try #require(await iterator.next(), "the provider stopped before listening")
                defer { tasks.cancelAll() }
                try await body(provider, port)
            }
        }
    }

    /// Sends `requests` in one write on a new connection (pipelined) and reads the answers until
    /// the provider closes it (the last request says `Connection: close`).
    func exchange(port: Int, _ requests: [String]) async throws -> [RawAnswer] {
        try await withRawConnection(port: port) { connection in
            try await connection.send(requests.joined())
            return try RawAnswer.parse(try await connection.readUntilClosed().text)
        }
    }

    static func get(_ path: String, _ extra: String = "") -> String { "GET \(path) HTTP/1.1\r\nHost: id.example\r\n\(extra)\r\n" }

    @Test("pipelined: answered here and by the router in order, with the same bytes and headers as the router's")
    func sameAsTheRouter() async throws {
        try await withServedProvider { provider, port in
            let answers = try await exchange(port: port, [
                Self.get("/.well-known/openid-configuration", "X-Request-Id: proxy-given-id-1234\r\n"),
                Self.get("/jwks.json"),
                "POST /token HTTP/1.1\r\nHost: id.example\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 18\r\n\r\ngrant_type=nothing",
                Self.get("/.well-known/oauth-authorization-server?x=1"),
                Self.get("/jwks.json", "Connection: close\r\n"),
            ])
            try #require(answers.count == 5)
            let (discovery, jwks, token, metadata, routerJWKS) = (answers[0], answers[1], answers[2], answers[3], answers[4])
            #expect(discovery.status == "HTTP/1.1 200 OK" && discovery.field("X-Request-Id") == "proxy-given-id-1234")
            #expect(discovery.body.utf8.count == (try DiscoveryEndpoint(services: provider.services).document.count))
            #expect(metadata.body == discovery.body && metadata.stableFields == discovery.stableFields)
            #expect((token.status.hasPrefix("HTTP/1.1 400") || token.status.hasPrefix("HTTP/1.1 401")) && token.body.contains("\"error\""),
                    "the router's answer, in its place: \(token.status) \(token.body)")
            #expect(jwks.body == String(decoding: try provider.services.keys.jwksDocument, as: UTF8.self))
            #expect(routerJWKS.body == jwks.body && routerJWKS.stableFields == jwks.stableFields, "the router's answer is the same")
            #expect(jwks.field("Content-Type") == "application/jwk-set+json" && jwks.field("Cache-Control") == "public, max-age=300")
            #expect(jwks.field("X-Content-Type-Options") == "nosniff" && jwks.field("Referrer-Policy") == "no-referrer")
            let ids = answers.compactMap { $0.field("X-Request-Id") }
            #expect(ids.count == 5 && Set(ids).count == 5, "every answer has its own request id")
            let date = try #require(jwks.field("Date"))
            #expect(date.hasSuffix(" GMT") && date.count == 29, "\(date)")
            #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT", "RFC 9110 §5.6.7's example")
        }
    }

    @Test("answers written as bytes end their requests: a connection that asks only for documents is closed once idle")
    func idleAfterDocuments() async throws {
        try await withServedProvider(configure: { $0.connectionLimits.idleTimeout = 1 }) { _, port in
            try await withRawConnection(port: port) { connection in
                try await connection.send(Self.get("/jwks.json") + Self.get("/.well-known/openid-configuration"))
                // Were an answer's end not seen by the connection's state, the request would stay
                // in progress and the idle timeout would never close the connection.
                let (text, after) = try await connection.readUntilClosed(within: .seconds(10))
                let answers = try RawAnswer.parse(text)
                #expect(answers.map(\.status) == ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"] && after >= .milliseconds(900))
                #expect(answers[1].body.contains("\"jwks_uri\""))
            }
        }
    }

    @Test("a rotation reaches the JWKS at once; HSTS with an https issuer; requests with a body go to the router")
    func rotationAndHeaders() async throws {
        try await withServedProvider(configure: { $0.issuer = "https://id.example" }) { provider, port in
            let before = try await exchange(port: port, [Self.get("/jwks.json", "Connection: keep-alive\r\n"),
                                                         Self.get("/health", "Connection: close\r\n")])
            let kid = try await provider.keys.rotate()
            let after = try await exchange(port: port, [Self.get("/jwks.json"), Self.get("/health", "Connection: close\r\n")])
            #expect(!before[0].body.isEmpty && after[0].body != before[0].body && after[0].body.contains(kid))
            #expect(after[0].field("Strict-Transport-Security") == SecurityHeadersMiddleware.hstsValue)
            // A GET with a body isn't one the router answers as a plain GET: it goes there.
            let withBody = try await exchange(port: port, ["GET /jwks.json HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"])
            #expect(withBody.first?.body == after[0].body)
        }
    }

    @Test("the answers are counted under the router's metric names")
    func metrics() async throws {
        bootstrapMetrics()
        @Sendable func count() -> Double {
            let text = MetricsExport.registry.emitToString()
            return text.split(separator: "\n").filter { $0.hasPrefix("hb_requests") && $0.contains(#"http_route="/jwks.json""#) }
                .compactMap { Double($0.split(separator: " ").last ?? "") }.reduce(0, +)
        }
        try await withServedProvider(configure: { $0.metricsPort = freePort() }) { _, port in
            let start = count()
            _ = try await exchange(port: port, [Self.get("/jwks.json"), Self.get("/jwks.json"), Self.get("/health", "Connection: close\r\n")])
            #expect(count() - start == 2)
        }
    }
}
