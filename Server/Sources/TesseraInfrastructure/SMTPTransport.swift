import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NIOConcurrencyHelpers
import TesseraDomain

/// How long the client waits. RFC 5321 §4.5.3.2 suggests minutes; a relay that answers
/// slower than this is treated as down and the message retried later.
public struct SMTPTimeouts: Sendable {
    public var connect: TimeAmount = .seconds(30)
    /// Each reply, including the greeting and each step of the TLS handshake.
    public var reply: TimeAmount = .seconds(30)
    /// The reply to the end of the message data, when the relay may scan the message.
    public var dataEnd: TimeAmount = .seconds(60)
    public init() {}
}

/// Delivers to an SMTP relay (RFC 5321) over SwiftNIO: one connection per message,
/// EHLO (HELO if refused), STARTTLS (RFC 3207) or implicit TLS (RFC 8314), AUTH PLAIN or
/// LOGIN (RFC 4954, RFC 4616) only over TLS or to a loopback host, then MAIL, RCPT, DATA
/// and QUIT.
///
/// A 5xx reply to RCPT or DATA refuses the message for good; any other failure is
/// temporary (the relay may come back, or its configuration be fixed).
public struct SMTPTransport: MailTransport {
    let settings: SMTPSettings
    /// The name this client gives in EHLO: the issuer's host.
    let clientName: String
    let timeouts: SMTPTimeouts
    let tlsContext: NIOSSLContext
    let logger: Logger
    let group: any EventLoopGroup

    /// `trustRoots` replaces the system's CA certificates (tests use their own CA).
    public init(settings: SMTPSettings, clientName: String, timeouts: SMTPTimeouts = SMTPTimeouts(), logger: Logger,
                trustRoots: NIOSSLTrustRoots? = nil, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        self.settings = settings
        self.clientName = clientName
        self.timeouts = timeouts
        self.logger = logger
        self.group = group
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let trustRoots { tls.trustRoots = trustRoots }
        if !settings.verifyCertificates { tls.certificateVerification = .none }
        tlsContext = try NIOSSLContext(configuration: tls)
    }

    public func deliver(_ message: OutboxMessage) async throws {
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            let settings = settings, tlsHandler = tlsHandlerFactory()
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(timeouts.connect)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connect(host: settings.host, port: settings.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if settings.security == .implicitTLS { try channel.pipeline.syncOperations.addHandler(try tlsHandler()) }
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw MailDeliveryError.relay("cannot connect to \(settings.host):\(settings.port): \(error)")
        }
        do {
            try await channel.executeThenClose { inbound, outbound in
                let session = SMTPSession(channel: channel.channel, inbound: inbound.makeAsyncIterator(), outbound: outbound,
                                          isTLS: settings.security == .implicitTLS, logger: logger)
                try await converse(session, message)
            }
        } catch let error as MailDeliveryError {
            throw error
        } catch {
            throw MailDeliveryError.relay("SMTP session with \(settings.host):\(settings.port) failed: \(error)")
        }
    }

    /// Makes the TLS handler for a new connection, on its event loop.
    private func tlsHandlerFactory() -> @Sendable () throws -> NIOSSLClientHandler {
        let context = tlsContext, host = settings.host
        // SNI carries host names only; for an IP address NIOSSL checks the certificate against the peer's address.
        let isAddress = host.contains(":") || host.split(separator: ".").allSatisfy { UInt8($0) != nil }
        return { try NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host) }
    }

    private func converse(_ session: SMTPSession, _ message: OutboxMessage) async throws {
        let greeting = try await session.reply(to: "connection greeting", timeout: timeouts.reply)
        guard greeting.code == 220 else { throw MailDeliveryError.relay("the server refused the session: \(greeting)", replyCode: greeting.code) }
        var extensions = try await hello(session)

        if case .startTLS(let required) = settings.security {
            if extensions["STARTTLS"] != nil {
                let reply = try await session.command("STARTTLS", timeout: timeouts.reply)
                guard reply.code == 220 else { throw MailDeliveryError.relay("STARTTLS refused: \(reply)", replyCode: reply.code) }
                try await session.startTLS(tlsHandlerFactory())
                extensions = try await hello(session)
            } else if required {
                throw MailDeliveryError.relay("\(settings.host) does not offer STARTTLS, and the SMTP URL requires it (starttls=required)")
            }
        }

        if let username = settings.username, let password = settings.password {
            guard session.isTLS || settings.hostIsLoopback else {
                throw MailDeliveryError.relay("not sending the SMTP password to \(settings.host) without TLS "
                                              + "(the server offers no STARTTLS; use smtps:// or a relay that supports it)")
            }
            try await authenticate(session, username: username, password: password, mechanisms: extensions["AUTH"] ?? [])
        }

        let mail = try await session.command("MAIL FROM:<\(message.sender)>", timeout: timeouts.reply)
        guard mail.code == 250 else { throw MailDeliveryError.relay("MAIL FROM:<\(message.sender)> refused: \(mail)", replyCode: mail.code) }
        let rcpt = try await session.command("RCPT TO:<\(message.recipient)>", timeout: timeouts.reply)
        guard rcpt.code == 250 || rcpt.code == 251 else { throw Self.refusal("RCPT TO:<\(message.recipient)>", rcpt) }
        let data = try await session.command("DATA", timeout: timeouts.reply)
        guard data.code == 354 else { throw Self.refusal("DATA", data) }
        try await session.write(try Self.dataPayload(message.mime), what: "the message", timeout: timeouts.dataEnd)
        let accepted = try await session.reply(to: "end of data", timeout: timeouts.dataEnd)
        guard accepted.code == 250 else { throw Self.refusal("the message", accepted) }
        logger.debug("SMTP relay accepted the message", metadata: ["mail.id": "\(message.id)", "smtp.reply": "\(accepted)"])

        // The message is delivered; a failed goodbye changes nothing.
        _ = try? await session.command("QUIT", timeout: .seconds(5))
    }

    /// EHLO, or HELO for a server that doesn't know EHLO; returns the extensions
    /// (keyword → parameters, upper-cased).
    private func hello(_ session: SMTPSession) async throws -> [String: [String]] {
        let ehlo = try await session.command("EHLO \(clientName)", timeout: timeouts.reply)
        if ehlo.code == 250 {
            var extensions: [String: [String]] = [:]
            for line in ehlo.lines.dropFirst() {
                let words = line.uppercased().split(whereSeparator: { $0 == " " || $0 == "=" }).map(String.init)
                if let keyword = words.first { extensions[keyword, default: []] += words.dropFirst() }
            }
            return extensions
        }
        guard (500...599).contains(ehlo.code) else { throw MailDeliveryError.relay("EHLO refused: \(ehlo)", replyCode: ehlo.code) }
        let helo = try await session.command("HELO \(clientName)", timeout: timeouts.reply)
        guard helo.code == 250 else { throw MailDeliveryError.relay("EHLO and HELO refused: \(helo)", replyCode: helo.code) }
        return [:]
    }

    /// AUTH PLAIN (RFC 4616) if offered, else AUTH LOGIN. Credentials never reach the log.
    private func authenticate(_ session: SMTPSession, username: String, password: String, mechanisms: [String]) async throws {
        let reply: SMTPReply
        if mechanisms.contains("PLAIN") {
            let response = Data("\0\(username)\0\(password)".utf8).base64EncodedString()
            reply = try await session.command("AUTH PLAIN \(response)", logAs: "AUTH PLAIN ***", timeout: timeouts.reply)
        } else if mechanisms.contains("LOGIN") {
            let start = try await session.command("AUTH LOGIN", timeout: timeouts.reply)
            guard start.code == 334 else { throw MailDeliveryError.relay("AUTH LOGIN refused: \(start)", replyCode: start.code) }
            let user = try await session.command(Data(username.utf8).base64EncodedString(), logAs: "***", timeout: timeouts.reply)
            guard user.code == 334 else { throw MailDeliveryError.relay("AUTH LOGIN refused the user name: \(user)", replyCode: user.code) }
            reply = try await session.command(Data(password.utf8).base64EncodedString(), logAs: "***", timeout: timeouts.reply)
        } else if mechanisms.isEmpty {
            throw MailDeliveryError.relay("the SMTP URL has credentials but \(settings.host) does not offer AUTH")
        } else {
            throw MailDeliveryError.relay("\(settings.host) offers AUTH \(mechanisms.joined(separator: " ")); "
                                          + "Tessera supports PLAIN and LOGIN")
        }
        guard reply.code == 235 else {
            throw MailDeliveryError.relay("authentication as '\(username)' failed: \(reply)", replyCode: reply.code)
        }
    }

    /// A refusal of this message: permanent for 5xx, deferred otherwise.
    static func refusal(_ what: String, _ reply: SMTPReply) -> MailDeliveryError {
        let text = "\(what) refused: \(reply)"
        return (500...599).contains(reply.code) ? .rejected(text, replyCode: reply.code) : .deferred(text, replyCode: reply.code)
    }

    /// The DATA payload (RFC 5321 §4.5.2): CRLF line endings, a "." doubled at the start of
    /// a line, and the terminating CRLF "." CRLF. Refuses lines over 998 octets (§4.5.3.1.6).
    package static func dataPayload(_ message: String) throws -> ByteBuffer {
        var buffer = ByteBuffer()
        var lines = message.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        for var line in lines {
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            guard line.count <= 998 else { throw MailDeliveryError.rejected("the message has a line over 998 octets", replyCode: nil) }
            if line.first == UInt8(ascii: ".") { buffer.writeInteger(UInt8(ascii: ".")) }
            buffer.writeBytes(line)
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString(".\r\n")
        return buffer
    }
}

/// A reply: a three-digit code and one or more lines of text (RFC 5321 §4.2).
struct SMTPReply: Sendable, Equatable, CustomStringConvertible {
    var code: Int
    var lines: [String]

    var description: String {
        lines.isEmpty ? String(code) : lines.map { "\(code) \($0)" }.joined(separator: " / ")
    }
}

/// One SMTP connection's reading and writing, used by one task.
final class SMTPSession {
    private let channel: any Channel
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var buffer = ByteBuffer()
    private let logger: Logger
    private(set) var isTLS: Bool

    init(channel: any Channel, inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
         outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, isTLS: Bool, logger: Logger) {
        self.channel = channel
        self.inbound = inbound
        self.outbound = outbound
        self.isTLS = isTLS
        self.logger = logger
    }

    /// Sends a command line and reads its reply; `logAs` replaces the line in the trace log.
    func command(_ line: String, logAs: String? = nil, timeout: TimeAmount) async throws -> SMTPReply {
        logger.trace("SMTP C: \(logAs ?? line)")
        try await write(ByteBuffer(string: line + "\r\n"), what: logAs ?? line, timeout: timeout)
        return try await reply(to: logAs ?? line, timeout: timeout)
    }

    func write(_ data: ByteBuffer, what: String, timeout: TimeAmount) async throws {
        do {
            try await outbound.write(data)
        } catch {
            // A failed write means the connection is gone; why (a TLS handshake failure, say)
            // is reported on the inbound side.
            var cause: any Error = error
            do {
                try await withDeadline(timeout) { while try await self.inbound.next() != nil {} }
            } catch let inboundError {
                cause = inboundError
            }
            throw MailDeliveryError.relay("connection failed while sending \(what): \(cause)")
        }
    }

    /// Reads one (possibly multi-line) reply within `timeout`.
    func reply(to what: String, timeout: TimeAmount) async throws -> SMTPReply {
        do {
            let reply = try await withDeadline(timeout) { try await self.readReply() }
            logger.trace("SMTP S: \(reply)")
            return reply
        } catch let error as DeadlinePassed {
            let milliseconds = error.timeout.nanoseconds / 1_000_000
            let limit = milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
            throw MailDeliveryError.relay("no reply to \(what) within \(limit)")
        } catch let error as MailDeliveryError {
            throw error
        } catch {
            throw MailDeliveryError.relay("connection failed while waiting for the reply to \(what): \(error)")
        }
    }

    /// Runs `body`, closing the connection if it takes longer than `timeout`; the
    /// resulting failure is reported as ``DeadlinePassed``.
    private func withDeadline<T>(_ timeout: TimeAmount, _ body: () async throws -> T) async throws -> T {
        let timedOut = TimeoutFlag()
        let channel = channel
        let timer = channel.eventLoop.scheduleTask(in: timeout) {
            timedOut.fire()
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        do {
            return try await body()
        } catch {
            if timedOut.hasFired { throw DeadlinePassed(timeout: timeout) }
            throw error
        }
    }

    private struct DeadlinePassed: Error {
        let timeout: TimeAmount
    }

    /// Upgrades the connection after the server's 220 to STARTTLS. Anything the server
    /// sent after that reply, before the handshake, is an injection attempt (RFC 3207 §6).
    func startTLS(_ makeHandler: @escaping @Sendable () throws -> NIOSSLClientHandler) async throws {
        guard buffer.readableBytes == 0 else {
            throw MailDeliveryError.relay("the server sent data after its STARTTLS reply; refusing to continue")
        }
        let channel = channel
        do {
            try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.addHandler(try makeHandler(), position: .first)
            }.get()
        } catch {
            throw MailDeliveryError.relay("cannot start TLS: \(error)")
        }
        isTLS = true
    }

    private func readReply() async throws -> SMTPReply {
        var lines: [String] = []
        var code: Int?
        while true {
            let line = try await readLine()
            let bytes = Array(line.utf8)
            guard bytes.count >= 3, let number = Int(String(line.prefix(3))), (200...599).contains(number),
                  bytes.count == 3 || bytes[3] == UInt8(ascii: " ") || bytes[3] == UInt8(ascii: "-") else {
                throw MailDeliveryError.relay("malformed SMTP reply: \(line.prefix(200))")
            }
            if let code, code != number { throw MailDeliveryError.relay("malformed multi-line SMTP reply (\(code), then \(number))") }
            code = number
            lines.append(bytes.count > 4 ? String(decoding: bytes[4...], as: UTF8.self) : "")
            if bytes.count == 3 || bytes[3] == UInt8(ascii: " ") { return SMTPReply(code: number, lines: lines) }
            guard lines.count < 100 else { throw MailDeliveryError.relay("SMTP reply of more than 100 lines") }
        }
    }

    private func readLine() async throws -> String {
        while true {
            if let end = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
                var bytes = buffer.readBytes(length: end - buffer.readerIndex + 1) ?? []
                bytes.removeLast()
                if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
                return String(decoding: bytes, as: UTF8.self)
            }
            guard buffer.readableBytes < 4096 else { throw MailDeliveryError.relay("SMTP reply line over 4096 octets") }
            guard var chunk = try await inbound.next() else {
                throw MailDeliveryError.relay("the server closed the connection")
            }
            buffer.writeBuffer(&chunk)
        }
    }
}

/// Set by a timer that closed the connection, so that the resulting error reads as a timeout.
private final class TimeoutFlag: Sendable {
    private let fired = NIOLockedValueBox(false)
    func fire() { fired.withLockedValue { $0 = true } }
    var hasFired: Bool { fired.withLockedValue { $0 } }
}
