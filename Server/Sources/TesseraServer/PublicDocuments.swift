import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import TesseraCore
import TesseraDomain
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The documents every client fetches and nothing varies: the discovery documents and the
/// JWKS. The public listener answers a plain `GET` of them on the connection's event loop
/// (``PublicDocumentHandler``), without the hop to the concurrency pool and back that every
/// other request makes through the router: the same bytes and headers, the same request id,
/// metrics and security headers, a fraction of the work.
///
/// The token endpoint's requests are read on the event loop too (``route(to:logger:)``) and
/// handed to the node's responder — the router with its middleware, as any request — from there,
/// without Hummingbird's asynchronous channel in between (its stream of request parts, the
/// request's body stream and the response writer: 7 % of a client_credentials request's CPU).
///
/// Empty until the provider serves (``publish(services:)``): until then every request goes to
/// the router, which answers 503.
package final class PublicDocuments: Sendable {
    /// A published document.
    struct Document: Sendable {
        /// The route it is registered under in the router (the metrics' `http.route`).
        let route: String
        let contentType: String
        /// The body; a function for the JWKS, which changes when the keys are rotated.
        let body: @Sendable () throws -> Data
    }

    /// What a published answer carries besides the document.
    struct Settings: Sendable {
        let strictTransportSecurity: Bool
        let metrics: Bool
    }

    /// The provider's responder (the router, behind what the node puts in front of it), for the
    /// requests the listener passes it from the event loop (``PublicDocumentHandler``).
    package typealias Respond = @Sendable (Request, TesseraRequestContext) async throws -> Response

    /// The routes whose requests go from the event loop straight to the responder, and the logger
    /// their contexts carry.
    struct Routed: Sendable {
        /// The token endpoint's path: the requests every client makes most, with a small form for a body.
        let path: Substring
        let respond: Respond
        let logger: Logger
    }

    /// Keyed by `Substring`, so a request's path is looked up without being copied.
    private let state = NIOLockedValueBox<(documents: [Substring: Document], settings: Settings)?>(nil)
    private let routedState = NIOLockedValueBox<Routed?>(nil)

    package init() {}

    /// From now on a `POST` to the token endpoint is read whole on the event loop and handed to
    /// `respond` there, rather than through Hummingbird's asynchronous channel.
    package func route(to respond: @escaping Respond, logger: Logger) {
        routedState.withLockedValue { $0 = Routed(path: Substring(Endpoint.token.path), respond: respond, logger: logger) }
    }

    var routed: Routed? { routedState.withLockedValue { $0 } }

    /// Publishes the documents of `services`' provider: from now on they are answered on the
    /// event loop. Not when the log shows every request (`debug`): then the router answers them,
    /// and logs them.
    package func publish(services: Services) throws {
        guard services.logger.logLevel > .debug else { return }
        let discovery = try DiscoveryEndpoint(services: services).document
        let keys = services.keys
        var documents: [Substring: Document] = [:]
        for path in DiscoveryEndpoint.discoveryPaths {
            documents[Substring(path)] = Document(route: path, contentType: "application/json", body: { discovery })
        }
        documents[Substring(Endpoint.jwks.path)] = Document(route: Endpoint.jwks.path, contentType: DiscoveryEndpoint.jwksContentType,
                                                 body: { try keys.jwksDocument })
        let settings = Settings(strictTransportSecurity: services.configuration.secureCookies,
                                metrics: services.configuration.metricsPort != nil)
        state.withLockedValue { $0 = (documents, settings) }
    }

    /// The document published at `path`, and the settings of the answer; nil when none is.
    func document(at path: Substring) -> (Document, Settings)? {
        state.withLockedValue { state in
            guard let state, let document = state.documents[path] else { return nil }
            return (document, state.settings)
        }
    }
}

/// Answers a plain `GET` of a ``PublicDocuments`` document on the event loop; reads a token
/// request whole and hands it to the responder itself (``RoutedRequest``); passes every other
/// request on to the router's side (Hummingbird's asynchronous channel), untouched. Sits after
/// Hummingbird's connection-state handler, so the idle timeout and a graceful shutdown see these
/// requests as they see any other.
///
/// Only a request the router would answer the same way is answered here: a document's `GET`
/// with no body, a token `POST` with a form's `Content-Length`, neither with `Connection: close`
/// (the router's side closes the connection after the answer). Pipelined requests are answered
/// in the order they came: an answer waits until the answers to the requests before it are
/// written, and while the responder answers a token request no further request is read (one at
/// a time on a connection, as on the router's side).
final class PublicDocumentHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// A request whose answer is not written yet.
    private enum Pending {
        /// The router answers it.
        case router
        /// Answered here once it is read (`complete`) and every answer before it is written.
        case document(PublicDocuments.Document, PublicDocuments.Settings, requestID: String, started: UInt64, complete: Bool)
        /// Read here, answered by the responder (``RoutedRequest``).
        case routed(RoutedRequest)
    }

    private let documents: PublicDocuments
    /// The requests read and not answered yet, oldest first.
    private var pending = CircularBuffer<Pending>(initialCapacity: 2)
    /// Whether the request being read goes to the router (its body and end follow it there).
    private var forwarding = false
    /// Per route, the last bytes answered and what was made of them (the body, and the status
    /// line with the header fields every answer of it has, encoded), so an unchanged document is
    /// neither copied nor described again.
    private var cached: [String: (data: Data, body: ByteBuffer, head: ByteBuffer)] = [:]
    private var date = HTTPDate()
    /// This connection's request ids: a random prefix, then a count (an id is unique, not secret).
    private var requestIDs = RequestIDs()

    /// Whether the handler is still in the pipeline (an answer made after the connection closed is dropped).
    private var added = true
    /// The connection's peer, for the responder's request contexts.
    private var peer: IPAddress?
    /// Whether the responder is answering a request read here (from its end until its answer is
    /// written): the parts read meanwhile wait in ``deferred``, and the channel reads no more.
    private var answering = false
    /// Request parts read while the responder answered (those the bytes of one read held), oldest first.
    private var deferred = CircularBuffer<NIOAny>()
    /// Whether the channel asked for more bytes while the responder answered.
    private var readAsked = false

    init(documents: PublicDocuments) {
        self.documents = documents
    }

    func handlerAdded(context: ChannelHandlerContext) {
        peer = TesseraRequestContext.peer(of: context.channel)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        added = false
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answering else {
            deferred.append(data)
            return
        }
        switch unwrapInboundIn(data) {
        case .head(let request):
            if let (document, settings) = answerable(request) {
                forwarding = false
                pending.append(.document(document, settings, requestID: requestIDs.make(from: request.headerFields[.xRequestID]),
                                         started: DispatchTime.now().uptimeNanoseconds, complete: false))
            } else if let (routed, length) = routable(request) {
                forwarding = false
                pending.append(.routed(RoutedRequest(head: request, length: length, routed: routed,
                                                     allocator: context.channel.allocator)))
            } else {
                forwarding = true
                pending.append(.router)
                context.fireChannelRead(data)
            }
        case .body(let bytes):
            if forwarding {
                context.fireChannelRead(data)
            } else if let last = pending.last, case .routed(let request) = last {
                request.body.writeImmutableBuffer(bytes)
            }
            // A body part of a document's GET is read and dropped, as the router's route would.
        case .end:
            if forwarding {
                context.fireChannelRead(data)
            } else if let last = pending.last, case .document(let document, let settings, let requestID, let started, false) = last {
                pending[pending.index(before: pending.endIndex)] = .document(document, settings, requestID: requestID, started: started,
                                                                              complete: true)
                answerReady(context: context)
            } else if let last = pending.last, case .routed(let request) = last {
                answering = true
                respond(to: request, context: context)
            }
            forwarding = false
        }
    }

    /// The router's answers pass here on their way out; once one ends, the answers asked for
    /// after it that are ready are written. (None of the router's answers can come while an
    /// answer before it is still being made: a request after one the responder is answering
    /// isn't read until that answer is out.)
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        if case .end = unwrapOutboundIn(data), let first = pending.first, case .router = first {
            pending.removeFirst()
            answerReady(context: context)
        }
    }

    /// Writes the answers at the front of the queue that are ready: documents read in full, and
    /// the responder's answer once made, after which the requests read meanwhile go on.
    private func answerReady(context: ChannelHandlerContext) {
        while let first = pending.first {
            switch first {
            case .router, .document(_, _, _, _, false):
                return
            case .document(let document, let settings, let requestID, let started, true):
                pending.removeFirst()
                answer(context: context, document: document, settings: settings, requestID: requestID, started: started)
            case .routed(let request):
                guard let answer = request.answer else { return }
                pending.removeFirst()
                guard case .response(let head, let body, let trailers) = answer else {
                    // The body failed to be made: the router's writer would have left half an answer
                    // on the connection. Nothing is written and nothing more is read; it closes.
                    deferred.removeAll()
                    context.close(promise: nil)
                    return
                }
                writeAnswer(context: context, head: head, body: body, trailers: trailers)
                answering = false
                readDeferred(context: context)
            }
        }
    }

    /// Reads the parts that arrived while the responder answered, until one of them is a request
    /// for the responder again; then asks for more bytes if the channel had.
    private func readDeferred(context: ChannelHandlerContext) {
        guard !deferred.isEmpty else {
            if readAsked { readAsked = false; context.read() }
            return
        }
        while !answering, let part = deferred.popFirst() {
            channelRead(context: context, data: part)
        }
        // What went on to the router's side is delivered there at the end of a read.
        context.fireChannelReadComplete()
        if !answering, readAsked { readAsked = false; context.read() }
    }

    /// While the responder answers a request, the channel reads no more bytes: one request at a
    /// time on a connection, as the router's side reads them.
    func read(context: ChannelHandlerContext) {
        if answering || !deferred.isEmpty { readAsked = true } else { context.read() }
    }

    /// Hands a request read in full to the responder, in a task of its own (on this event loop
    /// when the tasks run on the loops); its answer is written when every answer before it is.
    private func respond(to request: RoutedRequest, context: ChannelHandlerContext) {
        let made = request.made()
        let source = ApplicationRequestContextSource(channel: context.channel, logger: request.routed.logger)
        let (respond, peer) = (request.routed.respond, peer)
        context.eventLoop.makeFutureWithTask { await RoutedRequest.answer(made, source: source, peer: peer, respond: respond) }
            .assumeIsolatedUnsafeUnchecked().whenSuccess { answer in
                request.answer = answer
                guard self.added else { return }
                self.answerReady(context: context)
            }
    }

    /// The responder's answer, as Hummingbird's writer would send it: the head with the date,
    /// the body, the end. An answer of a known length (every token answer) goes out as bytes, as a
    /// document's does (``write(context:head:body:requestID:)``), past the HTTP codec's conversion
    /// and encoding; any other through them.
    private func writeAnswer(context: ChannelHandlerContext, head: HTTPResponse, body: ByteBuffer, trailers: HTTPFields?) {
        let date = date.now()
        if trailers == nil, let bytes = ResponseHeadBytes.encoded(head, bodyLength: body.readableBytes, date: date, allocator: context.channel.allocator) {
            context.write(wrapOutboundOut(.body(bytes)), promise: nil)
            if body.readableBytes > 0 { context.write(wrapOutboundOut(.body(body)), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        var head = head
        head.headerFields[.date] = date
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if body.readableBytes > 0 { context.write(wrapOutboundOut(.body(body)), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(trailers)), promise: nil)
    }

    /// The responder's route `request` asks for, when it is read here, and its body's length:
    /// a `POST` with a `Content-Length` no larger than a form may be (a larger body goes to the
    /// router, which refuses it as before), no `Transfer-Encoding`, no `Expect` (left to the
    /// router's side, as before), no `Connection: close` (the router's side closes after).
    private func routable(_ request: HTTPRequest) -> (PublicDocuments.Routed, Int)? {
        guard request.method == .post, let path = Self.keptOpenPath(request),
              let length = request.headerFields[.contentLength].flatMap({ Int($0) }), (0...maxFormBody).contains(length),
              request.headerFields[.expect] == nil, let routed = documents.routed, routed.path == path else { return nil }
        return (routed, length)
    }

    /// The path `request` asks for (before any query: found, not split, as a split makes an array
    /// per request), when its body, if any, has a length (no `Transfer-Encoding`) and the
    /// connection stays open after its answer (no `Connection: close`); nil otherwise.
    private static func keptOpenPath(_ request: HTTPRequest) -> Substring? {
        guard let target = request.path, request.headerFields[.transferEncoding] == nil,
              !(request.headerFields[values: .connection].contains { $0.lowercased().contains("close") }) else { return nil }
        return target[..<(target.firstIndex(of: "?") ?? target.endIndex)]
    }

    /// The document `request` asks for, when this handler may answer it.
    private func answerable(_ request: HTTPRequest) -> (PublicDocuments.Document, PublicDocuments.Settings)? {
        guard request.method == .get, let path = Self.keptOpenPath(request),
              request.headerFields[.contentLength].map({ $0 == "0" }) ?? true else { return nil }
        return documents.document(at: path)
    }

    private func answer(context: ChannelHandlerContext, document: PublicDocuments.Document, settings: PublicDocuments.Settings,
                        requestID: String, started: UInt64) {
        // Active while it is answered (synchronously, here), so the gauge can't be left counting
        // a request whose connection closed before it was answered.
        if settings.metrics { PublicDocumentMetrics.active.increment() }
        let data: Data
        do { data = try document.body() } catch {
            // No keys loaded (cannot happen once the provider serves): the router's answer, a 500.
            let body = ByteBuffer(string: #"{"error":"server_error"}"#)
            let head = Self.head(status: .internalServerError, contentType: "application/json", length: body.readableBytes,
                                 settings: settings)
            write(context: context, head: head, body: body, requestID: requestID)
            record(document, status: .internalServerError, settings: settings, started: started)
            return
        }
        let made: (data: Data, body: ByteBuffer, head: ByteBuffer)
        if let known = cached[document.route], Self.same(known.data, data) {
            made = known
        } else {
            made = (data, ByteBuffer(data: data),
                    Self.head(status: .ok, contentType: document.contentType, length: data.count, settings: settings))
            cached[document.route] = made
        }
        write(context: context, head: made.head, body: made.body, requestID: requestID)
        record(document, status: .ok, settings: settings, started: started)
    }

    /// Whether two documents are the same bytes: the same storage (the usual case: the document
    /// didn't change), else equal contents.
    private static func same(_ first: Data, _ second: Data) -> Bool {
        guard first.count == second.count else { return false }
        let shared = first.withUnsafeBytes { a in second.withUnsafeBytes { b in a.baseAddress == b.baseAddress } }
        return shared || first == second
    }

    /// The status line and the header fields every answer of a document has, as HTTP/1.1 sends
    /// them (what Hummingbird's codec would make of the same answer), up to the request id.
    private static func head(status: HTTPResponse.Status, contentType: String, length: Int, settings: PublicDocuments.Settings) -> ByteBuffer {
        var head = ByteBuffer()
        ResponseHeadBytes.write(status: status, fields: fields(status: status, contentType: contentType, length: length, settings: settings),
                                to: &head)
        return head
    }

    /// The header fields of every answer of a document: the router's, with the security headers.
    private static func fields(status: HTTPResponse.Status, contentType: String, length: Int, settings: PublicDocuments.Settings) -> HTTPFields {
        var fields: HTTPFields = [.contentType: contentType]
        if status == .ok {
            fields[.cacheControl] = "public, max-age=300"
            fields[.accessControlAllowOrigin] = "*"
        }
        fields[.contentLength] = String(length)
        fields[.xContentTypeOptions] = "nosniff"
        fields[.referrerPolicy] = "no-referrer"
        if settings.strictTransportSecurity { fields[.strictTransportSecurity] = SecurityHeadersMiddleware.hstsValue }
        return fields
    }

    /// The answer as bytes — `head` with the request id and the date, then the body — written as
    /// body parts without a head, and the end, flushed once. ``RequestPartsWatcher``, in front of
    /// the HTTP codec, sends such an answer to the socket as it is: it is neither converted to
    /// NIO's types nor encoded again (a tenth of the work of answering). The connection's state
    /// handler, between here and there, sees its end as any other answer's.
    private func write(context: ChannelHandlerContext, head: ByteBuffer, body: ByteBuffer, requestID: String) {
        let date = date.now()
        var bytes = context.channel.allocator.buffer(capacity: head.readableBytes + requestID.utf8.count + date.utf8.count + 32)
        bytes.writeImmutableBuffer(head)
        bytes.writeString("\(HTTPField.Name.xRequestID.rawName): \(requestID)\r\n\(HTTPField.Name.date.rawName): \(date)\r\n\r\n")
        context.write(wrapOutboundOut(.body(bytes)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    private func record(_ document: PublicDocuments.Document, status: HTTPResponse.Status, settings: PublicDocuments.Settings,
                        started: UInt64) {
        guard settings.metrics else { return }
        let metrics = PublicDocumentMetrics.of(route: document.route, status: status.code)
        metrics.counter.increment()
        metrics.timer.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - started))
        PublicDocumentMetrics.active.decrement()
    }
}

/// The metrics of the published documents' answers, under the names and dimensions
/// Hummingbird's `MetricsMiddleware` gives the router's (so a dashboard sees one series per route).
enum PublicDocumentMetrics {
    struct Route {
        let counter: Counter
        let timer: Metrics.Timer
    }

    static let active = Meter(label: "http.server.active_requests", dimensions: [("http.request.method", "GET")])
    private static let routes = NIOLockedValueBox<[String: Route]>([:])

    static func of(route: String, status: Int) -> Route {
        let key = "\(status) \(route)"
        return routes.withLockedValue { routes in
            if let known = routes[key] { return known }
            let dimensions = [("http.route", route), ("http.request.method", "GET"), ("http.response.status_code", String(status))]
            let made = Route(counter: Counter(label: "hb.requests", dimensions: dimensions),
                             timer: Metrics.Timer(label: "http.server.request.duration", dimensions: dimensions, preferredDisplayUnit: .seconds))
            routes[key] = made
            return made
        }
    }
}

/// An answer's head as the bytes HTTP/1.1 sends, made here rather than by NIO's codec (which
/// converts it to NIO's types, then encodes those).
package enum ResponseHeadBytes {
    /// `head` as HTTP/1.1 sends it, with `date`, when NIO's encoder would send its fields as they
    /// are: a body whose `Content-Length` is given and right, no `Transfer-Encoding` or
    /// `Connection` field (the connection's state handler reads that one from a head), a status
    /// that has a body. Nil otherwise: the codec decides.
    package static func encoded(_ head: HTTPResponse, bodyLength: Int, date: String, allocator: ByteBufferAllocator) -> ByteBuffer? {
        let fields = head.headerFields
        guard head.status.code >= 200, head.status != .noContent, head.status != .notModified,
              fields[.contentLength] == String(bodyLength), fields[.transferEncoding] == nil, fields[.connection] == nil
        else { return nil }
        var bytes = allocator.buffer(capacity: 256)
        write(status: head.status, fields: fields, to: &bytes)
        bytes.writeString("\(HTTPField.Name.date.rawName): \(date)\r\n\r\n")
        return bytes
    }

    /// The status line and `fields` but any `Date`, each line ended, the head not. The reason
    /// phrase is NIO's: a known code's own, whatever the answer gave (an answer made from a code
    /// alone has none).
    package static func write(status: HTTPResponse.Status, fields: HTTPFields, to bytes: inout ByteBuffer) {
        let phrase = HTTPResponseStatus(statusCode: status.code, reasonPhrase: status.reasonPhrase).reasonPhrase
        bytes.writeString("HTTP/1.1 \(status.code) \(phrase)\r\n")
        for field in fields where field.name != .date {
            bytes.writeString(field.name.rawName)
            bytes.writeStaticString(": ")
            bytes.writeString(field.value)
            bytes.writeStaticString("\r\n")
        }
    }
}

/// The `Date` header's value (RFC 9110 §5.6.7, IMF-fixdate), made again only when the second changes.
package struct HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private var second = time_t(-1)
    private var value = ""

    /// The current value.
    mutating func now() -> String {
        let seconds = time(nil)
        if seconds != second {
            value = Self.format(seconds)
            second = seconds
        }
        return value
    }

    /// `seconds` since 1970 as an IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
    package static func format(_ seconds: time_t) -> String {
        var seconds = seconds
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(1900 + parts.tm_year) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}

/// Request ids for one connection: the id a proxy in front gave (``RequestID/make(from:)``'s
/// rule), else 16 base64url characters — 9 random bytes drawn once for the connection, then a
/// 3-byte count. Unique like the router's random ids, without drawing random bytes per request.
struct RequestIDs {
    private var prefix: [UInt8] = []
    private var count: UInt32 = 0

    mutating func make(from header: String?) -> String {
        if let header, RequestID.isPlain(header) { return header }
        if prefix.isEmpty || count >= 1 << 24 {
            prefix = SecureRandom.bytes(9)
            count = 0
        }
        count += 1
        return Base64URL.encode(prefix + [UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 8),
                                          UInt8(truncatingIfNeeded: count)])
    }
}

/// A request read whole on the event loop for the responder (``PublicDocumentHandler``), and
/// its answer once made. Used on the connection's event loop only, but for what ``made()`` and
/// ``answer(_:source:respond:)`` hand to the task.
final class RoutedRequest {
    /// The responder's answer, made in the task.
    enum Answer: Sendable {
        case response(HTTPResponse, ByteBuffer, HTTPFields?)
        /// The response's body failed while it was being made.
        case failed
    }

    let head: HTTPRequest
    let routed: PublicDocuments.Routed
    var body: ByteBuffer
    var answer: Answer?

    init(head: HTTPRequest, length: Int, routed: PublicDocuments.Routed, allocator: ByteBufferAllocator) {
        self.head = head
        self.routed = routed
        self.body = allocator.buffer(capacity: length)
    }

    /// The request as the router sees it, its body whole.
    func made() -> Request {
        Request(head: head, body: RequestBody(buffer: body))
    }

    /// What Hummingbird's application does with a request: its context (with the connection's
    /// peer, `peer`), the responder's answer
    /// (a 500 without a body for an error no responder turned into an answer), the body made.
    static func answer(_ request: Request, source: ApplicationRequestContextSource, peer: IPAddress?,
                       respond: PublicDocuments.Respond) async -> Answer {
        let context = TesseraRequestContext(source: source, peer: peer)
        var response: Response
        do {
            response = try await respond(request, context)
        } catch {
            source.logger.debug("Unrecognised Error", metadata: ["error.type": "\(error)"])
            response = Response(status: .internalServerError, body: .init())
        }
        let collector = BodyCollector()
        do { try await response.body.write(collector) } catch { return .failed }
        return .response(response.head, collector.bytes, collector.trailers)
    }
}

/// Takes a response's body as the responder writes it, whole.
private final class BodyCollector: ResponseBodyWriter {
    var bytes = ByteBuffer()
    var trailers: HTTPFields?

    func write(_ buffer: ByteBuffer) async throws {
        if bytes.readableBytes == 0 { bytes = buffer } else { bytes.writeImmutableBuffer(buffer) }
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {
        trailers = trailingHeaders
    }
}
