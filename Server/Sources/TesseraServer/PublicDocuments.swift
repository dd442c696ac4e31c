import Foundation
import HTTPTypes
import Logging
import Metrics
import NIOConcurrencyHelpers
import NIOCore
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

    /// Keyed by `Substring`, so a request's path is looked up without being copied.
    private let state = NIOLockedValueBox<(documents: [Substring: Document], settings: Settings)?>(nil)

    package init() {}

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

/// Answers a plain `GET` of a ``PublicDocuments`` document on the event loop; passes every other
/// request on to the router, untouched. Sits after Hummingbird's connection-state handler, so
/// the idle timeout and a graceful shutdown see these requests as they see any other.
///
/// Only a request the router would answer the same way is answered here: `GET`, no body, no
/// `Connection: close` (the router's side closes the connection after the answer). Pipelined
/// requests are answered in the order they came: an answer waits until the router's answers to
/// the requests before it are written.
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

    init(documents: PublicDocuments) {
        self.documents = documents
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            if let (document, settings) = answerable(request) {
                forwarding = false
                pending.append(.document(document, settings, requestID: requestIDs.make(from: request.headerFields[.xRequestID]),
                                         started: DispatchTime.now().uptimeNanoseconds, complete: false))
            } else {
                forwarding = true
                pending.append(.router)
                context.fireChannelRead(data)
            }
        case .body:
            // A body part of a document's GET is read and dropped, as the router's route would.
            if forwarding { context.fireChannelRead(data) }
        case .end:
            if forwarding {
                context.fireChannelRead(data)
            } else if let last = pending.last, case .document(let document, let settings, let requestID, let started, false) = last {
                pending[pending.index(before: pending.endIndex)] = .document(document, settings, requestID: requestID, started: started,
                                                                              complete: true)
                answerReady(context: context)
            }
            forwarding = false
        }
    }

    /// The router's answers pass here on their way out; once one ends, the documents asked for
    /// after it are answered.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        if case .end = unwrapOutboundIn(data), let first = pending.first, case .router = first {
            pending.removeFirst()
            answerReady(context: context)
        }
    }

    /// Answers the documents at the front of the queue that are read in full.
    private func answerReady(context: ChannelHandlerContext) {
        while let first = pending.first, case .document(let document, let settings, let requestID, let started, true) = first {
            pending.removeFirst()
            answer(context: context, document: document, settings: settings, requestID: requestID, started: started)
        }
    }

    /// The document `request` asks for, when this handler may answer it.
    private func answerable(_ request: HTTPRequest) -> (PublicDocuments.Document, PublicDocuments.Settings)? {
        guard request.method == .get, let target = request.path,
              request.headerFields[.contentLength].map({ $0 == "0" }) ?? true,
              request.headerFields[.transferEncoding] == nil,
              !(request.headerFields[values: .connection].contains { $0.lowercased().contains("close") }) else { return nil }
        // The path before any query (found, not split: a split makes an array per request).
        return documents.document(at: target[..<(target.firstIndex(of: "?") ?? target.endIndex)])
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
        var head = ByteBuffer(string: "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n")
        for field in fields(status: status, contentType: contentType, length: length, settings: settings) {
            head.writeString("\(field.name.rawName): \(field.value)\r\n")
        }
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

/// The `Date` header's value (RFC 9110 §5.6.7, IMF-fixdate), made again only when the second changes.
struct HTTPDate {
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
    static func format(_ seconds: time_t) -> String {
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
