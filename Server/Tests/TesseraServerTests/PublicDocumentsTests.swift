import Foundation
import Hummingbird
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import HTTPTypes
import Prometheus
import Testing
import TesseraAuthCore
import TesseraServer
import TesseraNode
import TesseraDomain

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

    static func tokenPost(_ body: String, basic: String? = nil, _ extra: String = "") -> String {
        let authorization = basic.map { "Authorization: Basic \(Data($0.utf8).base64EncodedString())\r\n" } ?? ""
        return "POST /token HTTP/1.1\r\nHost: id.example\r\nContent-Type: application/x-www-form-urlencoded\r\n\(authorization)\(extra)"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    @Test("a token request read on the event loop and answered by the router, in order, as the router's own path answers it")
    func tokenRequestsFromTheLoop() async throws {
        try await withServedProvider(configure: { $0.issuer = "https://id.example" }) { provider, port in
            try await provider.addWebClient(id: "service", grants: ["client_credentials"], scopes: ["api"])
            let grant = "grant_type=client_credentials&scope=api"
            let credentials = "service:\(testSecret)"
            // Pipelined: routed from the loop, a document, routed again with a larger body, one the
            // router reads itself (chunked), a failure, one with `Expect` and one with `Connection:
            // close` (both the router's too).
            let chunked = "POST /token HTTP/1.1\r\nHost: id.example\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Authorization: Basic \(Data(credentials.utf8).base64EncodedString())\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "\(String(grant.utf8.count, radix: 16))\r\n\(grant)\r\n0\r\n\r\n"
            let answers = try await exchange(port: port, [
                Self.tokenPost(grant, basic: credentials, "X-Request-Id: proxy-given-id-5678\r\n"),
                Self.get("/jwks.json"),
                Self.tokenPost(grant + "&" + String(repeating: "x", count: 3000) + "=1", basic: credentials),
                chunked,
                Self.tokenPost(grant, basic: "service:wrong-secret-wrong-secret-wrong"),
                Self.tokenPost(grant, basic: credentials, "Expect: 100-continue\r\n"),
                Self.tokenPost(grant, basic: credentials, "Connection: close\r\n"),
            ])
            let statuses = answers.map(\.status)
            #expect(statuses == ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK", "HTTP/1.1 200 OK", "HTTP/1.1 200 OK", "HTTP/1.1 401 Unauthorized",
                                 "HTTP/1.1 200 OK", "HTTP/1.1 200 OK"], "\(statuses)")
            guard answers.count == 7 else { return }
            let (first, loopSecond, routerRead, failed, last) = (answers[0], answers[2], answers[3], answers[4], answers[6])
            #expect(first.field("X-Request-Id") == "proxy-given-id-5678")
            #expect(answers[1].body.contains("\"keys\""), "the document in its place")
            for answer in [first, loopSecond, routerRead, answers[5], last] {
                let token = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
                #expect(token["token_type"] as? String == "Bearer" && (token["access_token"] as? String)?.isEmpty == false)
            }
            // The same header fields whichever side read the request (the router's own answer is the reference).
            #expect(first.stableFields == routerRead.stableFields && loopSecond.stableFields == routerRead.stableFields,
                    "\(first.stableFields) against \(routerRead.stableFields)")
            #expect(first.field("Strict-Transport-Security") == SecurityHeadersMiddleware.hstsValue
                    && first.field("Cache-Control") == "no-store" && first.field("Date")?.hasSuffix(" GMT") == true)
            #expect(failed.body.contains("invalid_client") && failed.field("WWW-Authenticate") != nil)
            let ids = answers.compactMap { $0.field("X-Request-Id") }
            #expect(ids.count == 7 && Set(ids).count == 7, "every answer has its own request id")
        }
    }

    @Test("a routed answer's head written as bytes is the bytes NIO's codec makes of it; one the codec would change goes to it")
    func headBytes() throws {
        let date = "Mon, 30 Nov 2026 11:19:49 GMT"
        func head(_ status: HTTPResponse.Status, _ fields: HTTPFields) -> HTTPResponse { HTTPResponse(status: status, headerFields: fields) }
        func name(_ text: String) -> HTTPField.Name { HTTPField.Name(text)! }
        let token: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store", name("Pragma"): "no-cache",
                                 .contentLength: "770", name("X-Content-Type-Options"): "nosniff", name("Referrer-Policy"): "no-referrer",
                                 name("X-Request-Id"): "Y1eNSPmN51VfEPbS"]
        var refused = token
        refused[.wwwAuthenticate] = #"Basic realm="tessera", error="invalid_client""#
        refused[.contentLength] = "770"
        var stale = token
        stale[.date] = "Thu, 01 Jan 1970 00:00:00 GMT"
        for answer in [head(.ok, token), head(.unauthorized, refused), head(.init(code: 401), refused), head(.init(code: 429), token),
                       head(.init(code: 200, reasonPhrase: "Fine"), token), head(.init(code: 299, reasonPhrase: "Odd"), token),
                       head(.init(code: 599), token), head(.ok, stale)] {
            let ours = try #require(ResponseHeadBytes.encoded(answer, bodyLength: 770, date: date, allocator: ByteBufferAllocator()))
            // The router's path sets the date on the head; a stale one is dropped and the new one
            // written last, as the bytes do.
            var dated = answer
            dated.headerFields[.date] = nil
            dated.headerFields[.date] = date
            let channel = EmbeddedChannel()
            try channel.pipeline.syncOperations.addHandlers([HTTPResponseEncoder(), HTTP1ToHTTPServerCodec(secure: false)])
            try channel.writeOutbound(HTTPResponsePart.head(dated))
            guard case .byteBuffer(let theirs) = try #require(try channel.readOutbound(as: IOData.self)) else {
                Issue.record("NIO's encoder wrote a file region")
                continue
            }
            #expect(String(buffer: ours) == String(buffer: theirs))
            _ = try channel.finish()
        }
        // Left to the codec: a length that isn't the body's or none, a chunked or closing answer, no body.
        var chunked = token
        chunked[.contentLength] = nil
        chunked[.transferEncoding] = "chunked"
        var closing = token
        closing[.connection] = "close"
        var unknown = token
        unknown[.contentLength] = nil
        for (answer, length) in [(head(.ok, token), 769), (head(.ok, unknown), 770), (head(.ok, chunked), 770), (head(.ok, closing), 770),
                                 (head(.noContent, token), 770), (head(.notModified, token), 770), (head(.continue, token), 770)] {
            #expect(ResponseHeadBytes.encoded(answer, bodyLength: length, date: date, allocator: ByteBufferAllocator()) == nil,
                    "\(answer.status) \(answer.headerFields)")
        }
    }

    @Test("many pipelined token requests: answered one at a time, in order, with documents and the router's answers between")
    func manyPipelined() async throws {
        try await withServedProvider { provider, port in
            try await provider.addWebClient(id: "service", grants: ["client_credentials"], scopes: ["api"])
            let requests = (0..<30).map { index in
                switch index % 3 {
                case 0: Self.tokenPost("grant_type=client_credentials&scope=api", basic: "service:\(testSecret)")
                case 1: Self.get("/jwks.json")
                default: Self.tokenPost("grant_type=client_credentials", basic: "service:wrong-secret-\(index)")
                }
            } + [Self.get("/health", "Connection: close\r\n")]
            let answers = try await exchange(port: port, requests)
            let expected = (0..<30).map { ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK", "HTTP/1.1 401 Unauthorized"][$0 % 3] } + ["HTTP/1.1 200 OK"]
            #expect(answers.map(\.status) == expected)
            let tokens = answers.enumerated().filter { $0.offset % 3 == 0 && $0.offset < 30 }.map(\.element.body)
            #expect(tokens.count == 10 && tokens.allSatisfy { $0.contains("\"access_token\"") } && Set(tokens).count == 10)
            #expect(answers.last?.body.hasPrefix("ok") == true)
        }
    }

    @Test("a token request's form too large for the loop goes to the router, which refuses it as before")
    func largeTokenRequestGoesToTheRouter() async throws {
        try await withServedProvider { provider, port in
            try await provider.addWebClient(id: "service", grants: ["client_credentials"], scopes: ["api"])
            let body = "grant_type=client_credentials&pad=" + String(repeating: "y", count: maxFormBody)
            let answers = try await exchange(port: port, [Self.tokenPost(body, basic: "service:\(testSecret)", "Connection: close\r\n")])
            #expect(answers.first?.status == "HTTP/1.1 400 Bad Request" && answers.first?.body.contains("too large") == true,
                    "\(answers.first?.status ?? "none") \(answers.first?.body ?? "")")
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
