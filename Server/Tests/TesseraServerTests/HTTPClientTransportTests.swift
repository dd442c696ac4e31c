import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TesseraAuthCore
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraInfrastructure
import TesseraSQL

/// The server's HTTP transport (what federation and `tessera login` use) against a real
/// Hummingbird server on loopback.
@Suite("AsyncHTTPClientTransport over loopback")
struct HTTPClientTransportTests {
    static let answerHeader = HTTPField.Name("X-Answer-Header")!
    static let testHeader = HTTPField.Name("X-Test")!

    static var router: Router<BasicRequestContext> {
        let router = Router()
        router.get("/echo") { request, _ -> Response in
            let json = try JSONEncoder().encode(["method": "GET", "x-test": request.headers[testHeader] ?? "",
                                                 "accept": request.headers[.accept] ?? "",
                                                 "user-agent": request.headers[.userAgent] ?? "",
                                                 "query": request.uri.query ?? ""])
            return Response(status: .ok, headers: [.contentType: "application/json", answerHeader: "Yes"],
                            body: .init(byteBuffer: ByteBuffer(bytes: json)))
        }
        router.post("/echo") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 16)
            return Response(status: .created, headers: [.contentType: request.headers[.contentType] ?? "none",
                                                        answerHeader: request.headers[.authorization] ?? "none"],
                            body: .init(byteBuffer: body))
        }
        router.post("/refuse") { _, _ -> Response in
            Response(status: .badRequest, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                     body: .init(byteBuffer: ByteBuffer(string: #"{"error":"invalid_grant"}"#)))
        }
        router.get("/broken") { _, _ -> Response in
            Response(status: .internalServerError, body: .init(byteBuffer: ByteBuffer(string: "down")))
        }
        router.get("/big") { request, _ -> Response in
            let size = Int(request.uri.queryParameters["n"] ?? "0") ?? 0
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(repeating: UInt8(ascii: "x"), count: size)))
        }
        // No Content-Length: the size shows only while the body arrives.
        router.get("/stream") { request, _ -> Response in
            let chunks = Int(request.uri.queryParameters["chunks"] ?? "0") ?? 0
            return Response(status: .ok, body: ResponseBody { writer in
                for _ in 0..<chunks { try await writer.write(ByteBuffer(repeating: UInt8(ascii: "y"), count: 1024)) }
                try await writer.finish(nil)
            })
        }
        // Later than the tests wait (and the live server's shutdown waits for the handler).
        router.get("/slow") { _, _ -> Response in
            try await Task.sleep(for: .seconds(6))
            return Response(status: .ok)
        }
        // The head at once, the rest of the body much later.
        router.get("/stall") { _, _ -> Response in
            Response(status: .ok, body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: "partial"))
                try await Task.sleep(for: .seconds(6))
                try await writer.finish(nil)
            })
        }
        router.get("/moved") { _, _ -> Response in
            Response(status: .found, headers: [.location: "/echo?from=moved"])
        }
        router.post("/moved") { _, _ -> Response in
            Response(status: .seeOther, headers: [.location: "/echo?from=post"])
        }
        return router
    }

    func withServer(_ body: @escaping @Sendable (URL) async throws -> Void) async throws {
        let app = Application(router: Self.router)
        try await app.test(.live) { client in
            try await body(URL(string: "http://127.0.0.1:\(try #require(client.port))")!)
        }
    }

    @Test("GET sends the request's headers; the answer's header names are lower-cased")
    func get() async throws {
        try await withServer { base in
            let response = try await AsyncHTTPClientTransport().send(
                HTTPTransportRequest(url: base.appending(path: "echo").appending(queryItems: [.init(name: "q", value: "a b")]),
                                     headers: ["Accept": "application/json", "X-Test": "hello"]))
            #expect(response.status == 200)
            #expect(response.headers["x-answer-header"] == "Yes" && response.headers["content-type"] == "application/json")
            #expect(response.headers.keys.allSatisfy { $0 == $0.lowercased() })
            let echo = try JSONDecoder().decode([String: String].self, from: response.body)
            #expect(echo == ["method": "GET", "x-test": "hello", "accept": "application/json", "user-agent": "Tessera", "query": "q=a%20b"])
        }
    }

    @Test("POST sends the body and its headers")
    func post() async throws {
        try await withServer { base in
            let form = Data("grant_type=authorization_code&code=abc".utf8)
            let response = try await AsyncHTTPClientTransport().send(
                HTTPTransportRequest(method: "POST", url: base.appending(path: "echo"),
                                     headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic d2ViOnNlY3JldA=="],
                                     body: form))
            #expect(response.status == 201)
            #expect(response.body == form)
            #expect(response.headers["content-type"] == "application/x-www-form-urlencoded")
            #expect(response.headers["x-answer-header"] == "Basic d2ViOnNlY3JldA==")
            #expect(response.headers["content-length"] == String(form.count))
        }
    }

    @Test("a 4xx or 5xx answer is returned with its body, not thrown")
    func errorStatus() async throws {
        try await withServer { base in
            let transport = AsyncHTTPClientTransport()
            let refused = try await transport.send(HTTPTransportRequest(method: "POST", url: base.appending(path: "refuse"), body: Data()))
            #expect(refused.status == 400 && refused.headers["cache-control"] == "no-store")
            #expect(String(decoding: refused.body, as: UTF8.self) == #"{"error":"invalid_grant"}"#)
            let broken = try await transport.send(HTTPTransportRequest(url: base.appending(path: "broken")))
            #expect(broken.status == 500 && broken.body == Data("down".utf8))
            let missing = try await transport.send(HTTPTransportRequest(url: base.appending(path: "nowhere")))
            #expect(missing.status == 404)
        }
    }

    @Test("redirects are followed as URLSession follows them; a POST answered 303 goes on as a GET")
    func redirects() async throws {
        try await withServer { base in
            let transport = AsyncHTTPClientTransport()
            let get = try await transport.send(HTTPTransportRequest(url: base.appending(path: "moved")))
            #expect(get.status == 200)
            #expect(try JSONDecoder().decode([String: String].self, from: get.body)["query"] == "from=moved")
            let post = try await transport.send(HTTPTransportRequest(method: "POST", url: base.appending(path: "moved"), body: Data("x=1".utf8)))
            #expect(post.status == 200)
            #expect(try JSONDecoder().decode([String: String].self, from: post.body)["method"] == "GET")
        }
    }

    @Test("a refused connection is a network error, at once")
    func refused() async throws {
        // A port that was just free: nobody listens on it.
        let port = try { let listener = try LoopbackRedirectListener(); defer { listener.close() }; return listener.port }()
        let error = await #expect(throws: AuthError.self) {
            _ = try await AsyncHTTPClientTransport().send(HTTPTransportRequest(url: URL(string: "http://127.0.0.1:\(port)/.well-known/openid-configuration")!))
        }
        #expect(error?.code == .network)
        // The refusal itself, not a connect timeout after retries (no wall-clock bound: the whole
        // suite on two cores made a 9-second one fail).
        #expect(error?.reason.contains("127.0.0.1:\(port)") == true && error?.reason.contains("Connection refused") == true)
    }

    @Test("a body over the limit is a network error, with or without Content-Length")
    func oversized() async throws {
        try await withServer { base in
            let transport = AsyncHTTPClientTransport(maxBodySize: 4096)
            let fits = try await transport.send(HTTPTransportRequest(url: base.appending(path: "big").appending(queryItems: [.init(name: "n", value: "4096")])))
            #expect(fits.body.count == 4096)
            let declared = await #expect(throws: AuthError.self) {
                _ = try await transport.send(HTTPTransportRequest(url: base.appending(path: "big").appending(queryItems: [.init(name: "n", value: "4097")])))
            }
            #expect(declared?.code == .network && declared?.reason.contains("larger than 4096 bytes") == true)
            let streamed = await #expect(throws: AuthError.self) {
                _ = try await transport.send(HTTPTransportRequest(url: base.appending(path: "stream").appending(queryItems: [.init(name: "chunks", value: "64")])))
            }
            #expect(streamed?.code == .network && streamed?.reason.contains("larger than 4096 bytes") == true)
            // The default limit, 1 MiB.
            let big = await #expect(throws: AuthError.self) {
                _ = try await AsyncHTTPClientTransport().send(
                    HTTPTransportRequest(url: base.appending(path: "big").appending(queryItems: [.init(name: "n", value: String((1 << 20) + 1))])))
            }
            #expect(big?.code == .network)
        }
    }

    @Test("no complete answer within the timeout is a network error, whether the head or the body is late")
    func timeout() async throws {
        try await withServer { base in
            let transport = AsyncHTTPClientTransport(timeout: 0.5)
            for path in ["slow", "stall"] {
                // The server answers in full after 6 s: a transport that waited for it would succeed,
                // so the timeout's own error is the proof (a wall-clock bound failed under load).
                let error = await #expect(throws: AuthError.self) {
                    _ = try await transport.send(HTTPTransportRequest(url: base.appending(path: path)))
                }
                #expect(error?.code == .network && error?.reason.contains("within 0.5 seconds") == true, "\(path)")
            }
        }
    }

    @Test("a cancelled task's request ends as cancelled")
    func cancelled() async throws {
        try await withServer { base in
            let task = Task { try await AsyncHTTPClientTransport().send(HTTPTransportRequest(url: base.appending(path: "slow"))) }
            try await Task.sleep(for: .milliseconds(200))
            task.cancel()
            // Waiting for the server's answer (6 s) would end in a success, not `.cancelled`.
            let error = await #expect(throws: AuthError.self) { _ = try await task.value }
            #expect(error?.code == .cancelled)
        }
    }
}
