import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import TesseraDomain

extension ConnectionLimits {
    /// Hummingbird's HTTP/1 server with these limits.
    package var server: HTTPServerBuilder { server(documents: nil) }

    /// Hummingbird's HTTP/1 server with these limits, answering `documents` on the event loop.
    package func server(documents: PublicDocuments?) -> HTTPServerBuilder {
        let limits = self
        return HTTPServerBuilder { responder in GuardedHTTP1Channel(limits: limits, responder: responder, documents: documents) }
    }
}

/// Hummingbird's HTTP/1 child channel with a deadline for the request head and the body:
/// its own idle timeout only counts whole HTTP parts, so a head sent a line at a time would
/// never time out.
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let limits: ConnectionLimits
    let responder: HTTPChannelHandler.Responder
    /// Answered on the event loop (``PublicDocumentHandler``), when given.
    let documents: PublicDocuments?

    func channel(with handlers: @escaping @Sendable () -> [any RemovableChannelHandler]) -> HTTP1Channel {
        HTTP1Channel(responder: responder, configuration: .init(
            additionalChannelHandlers: handlers(), idleTimeout: .seconds(limits.idleTimeout),
            httpDecoderConfiguration: .init(maxHeaderFieldSize: limits.maxHeaderBytes, maxHeaderListSize: limits.maxHeaderBytes,
                                            maxHeaderFieldCount: limits.maxHeaderCount)))
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let deadlines = RequestDeadlines(limits: limits)
        do {
            try channel.pipeline.syncOperations.addHandler(RequestBytesWatcher(deadlines: deadlines), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let setup = self.channel(with: { [RequestPartsWatcher(deadlines: deadlines)] }).setup(channel: channel, logger: logger)
        guard let documents else { return setup }
        // After the connection-state handler, so that its idle timeout and graceful close count these requests too.
        return setup.flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            try operations.addHandler(PublicDocumentHandler(documents: documents),
                                      position: .after(try operations.handler(type: HTTPConnectionStateHandler.self)))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await channel(with: { [] }).handle(value: value, logger: logger)
    }
}

/// One connection's request deadlines, shared by the handler that sees its bytes (before the
/// HTTP decoder) and the one that sees its HTTP parts (after it). Used on the connection's
/// event loop only.
final class RequestDeadlines: @unchecked Sendable {
    enum Phase {
        /// Between requests: the idle timeout applies.
        case idle
        /// Bytes of a head arrived, the head isn't complete.
        case readingHead
        /// The head is complete; the body is arriving.
        case readingBody
        /// The request is complete; the response is being made.
        case responding
    }

    let limits: ConnectionLimits
    var phase = Phase.idle
    var timer: Scheduled<Void>?
    /// The phase ``timer`` runs for.
    var timing: Phase?
    /// The context of the handler in front of the HTTP codec: what it writes goes to the socket as is.
    var front: ChannelHandlerContext?

    init(limits: ConnectionLimits) { self.limits = limits }

    /// Starts or stops the deadline the phase has reached once the bytes just read are decoded:
    /// a request that arrives whole (most do) moves from idle to responding within one read and
    /// never schedules a timer; one whose head or body is still coming gets the head timeout from
    /// its first bytes, or the idle timeout for its body from its head.
    func settle(on eventLoop: any EventLoop) {
        switch phase {
        case .readingHead, .readingBody:
            guard timing != phase else { return }
            let seconds = phase == .readingHead ? limits.requestHeadTimeout : limits.idleTimeout
            timer?.cancel()
            timer = eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: .seconds(seconds)) { self.expired() }
            timing = phase
        case .idle, .responding:
            cancel()
        }
    }

    func cancel() {
        timer?.cancel()
        timer = nil
        timing = nil
    }

    /// The head or the body didn't arrive in time: 408, and the connection closes.
    func expired() {
        timer = nil
        timing = nil
        guard phase == .readingHead || phase == .readingBody, let front else { return }
        var answer = front.channel.allocator.buffer(capacity: 96)
        answer.writeString("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        let channel = front.channel
        front.writeAndFlush(NIOAny(answer)).whenComplete { _ in channel.close(promise: nil) }
        self.front = nil
    }
}

/// Sees a request's first bytes: from then on its head has ``ConnectionLimits/requestHeadTimeout``.
final class RequestBytesWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    let deadlines: RequestDeadlines

    init(deadlines: RequestDeadlines) { self.deadlines = deadlines }

    func handlerAdded(context: ChannelHandlerContext) {
        deadlines.front = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadlines.cancel()
        deadlines.front = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if deadlines.phase == .idle, unwrapInboundIn(data).readableBytes > 0 {
            deadlines.phase = .readingHead
        }
        // The decoder behind passes on the parts these bytes complete (``RequestPartsWatcher``
        // moves the phase on), then the deadline of where the request stands is settled.
        context.fireChannelRead(data)
        deadlines.settle(on: context.eventLoop)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadlines.cancel()
        deadlines.front = nil
        context.fireChannelInactive()
    }
}

/// Sees the decoded request parts and the response's end: the head is in (the body gets the
/// idle timeout), the request is in (no deadline while the server answers), the answer is out.
final class RequestPartsWatcher: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart
    let deadlines: RequestDeadlines
    /// Whether the answer being written began with a head. One that doesn't is an answer already
    /// encoded (``PublicDocumentHandler``): its body parts go to the socket as they are, past the
    /// HTTP codec, and its end no further than here.
    private var answerHasHead = false

    init(deadlines: RequestDeadlines) { self.deadlines = deadlines }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            deadlines.phase = .readingBody
        case .body:
            break
        case .end:
            deadlines.phase = .responding
        }
        context.fireChannelRead(data)
    }

    /// The answer is out (even one sent before the whole request arrived): the connection is
    /// between requests again, under the idle timeout.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head:
            answerHasHead = true
        case .body(let bytes):
            guard !answerHasHead else { break }
            if let front = deadlines.front {
                front.write(NIOAny(bytes), promise: promise)
            } else {
                promise?.fail(ChannelError.ioOnClosedChannel)
            }
            return
        case .end:
            // Between requests again: the idle timeout (Hummingbird's) applies. Bytes of the next
            // request already read started its head deadline.
            if deadlines.phase != .readingHead {
                deadlines.phase = .idle
                deadlines.cancel()
            }
            guard answerHasHead else {
                promise?.succeed(())
                return
            }
            answerHasHead = false
        }
        context.write(data, promise: promise)
    }
}
