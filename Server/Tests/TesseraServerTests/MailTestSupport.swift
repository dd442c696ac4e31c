import Crypto
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization
import X509
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraSQL

/// A minimal SMTP server on 127.0.0.1 for tests: speaks enough of RFC 5321 (with
/// STARTTLS, implicit TLS and AUTH PLAIN/LOGIN) for Tessera's client, records every
/// command and every accepted message, and can be told to refuse at each step.
final class SMTPSink: Sendable {
    struct Options: Sendable {
        /// Offer STARTTLS with this server context.
        var startTLS: NIOSSLContext?
        /// Speak TLS from the first byte (smtps).
        var implicitTLS: NIOSSLContext?
        /// Require AUTH with these credentials before MAIL.
        var credentials: (user: String, password: String)?
        var authMechanisms = ["PLAIN", "LOGIN"]
        var supportsEHLO = true
        /// Never send the greeting (to test timeouts).
        var silent = false
        /// Replace the reply to RCPT, DATA, or the end of the data (e.g. "550 5.1.1 no such user").
        var rcptReply: String?
        var dataReply: String?
        var dataEndReply: String?
    }

    struct Received: Sendable, Equatable {
        var from: String
        var to: [String]
        /// The message as the client meant it: dot-unstuffed, CRLF line endings.
        var data: String
        var overTLS: Bool
        var authenticatedAs: String?
    }

    private struct State {
        var received: [Received] = []
        var commands: [String] = []
        var connections: [any Channel] = []
        var authentications: [(mechanism: String, user: String, password: String)] = []
    }

    let port: Int
    let options: Options
    private let state = Mutex(State())
    private let server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    var received: [Received] { state.withLock { $0.received } }
    /// Every command line received, AUTH payloads included.
    var commands: [String] { state.withLock { $0.commands } }
    var authentications: [(mechanism: String, user: String, password: String)] { state.withLock { $0.authentications } }

    /// Starts a sink on an ephemeral port (or `port`, to bring a "down" server back).
    static func start(port: Int = 0, _ options: Options = Options()) async throws -> SMTPSink {
        let implicitTLS = options.implicitTLS
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let implicitTLS { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: implicitTLS)) }
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let sink = SMTPSink(server: server, options: options)
        sink.task.withLock { task in
            task = Task {
                try? await server.executeThenClose { inbound in
                    try await withThrowingDiscardingTaskGroup { group in
                        for try await connection in inbound {
                            sink.state.withLock { $0.connections.append(connection.channel) }
                            group.addTask { await sink.serve(connection) }
                        }
                    }
                }
            }
        }
        return sink
    }

    private init(server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>, options: Options) {
        self.server = server
        self.options = options
        port = server.channel.localAddress?.port ?? 0
    }

    func stop() async {
        try? await server.channel.close()
        for connection in state.withLock({ $0.connections }) { try? await connection.close() }
        await task.withLock { $0 }?.value
    }

    /// Runs `body` with a sink, stopping it afterwards.
    static func with<T>(_ options: Options = Options(), _ body: (SMTPSink) async throws -> T) async throws -> T {
        let sink = try await start(options)
        do {
            let result = try await body(sink)
            await sink.stop()
            return result
        } catch {
            await sink.stop()
            throw error
        }
    }

    /// Waits until `count` messages have arrived.
    func waitForMessages(_ count: Int = 1, timeout: Duration = .seconds(10)) async throws -> [Received] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let received = self.received
            if received.count >= count { return received }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw SinkTimeout()
    }

    struct SinkTimeout: Error {}

    // MARK: One connection

    private func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        try? await connection.executeThenClose { inbound, outbound in
            var lines = LineReader(inbound.makeAsyncIterator())
            let channel = connection.channel
            func reply(_ text: String) async throws { try await outbound.write(ByteBuffer(string: text + "\r\n")) }

            if options.silent {
                while try await lines.next() != nil {}
                return
            }
            var tls = options.implicitTLS != nil
            var authenticated: String?
            var from: String?
            var recipients: [String] = []
            try await reply("220 sink.test ESMTP ready")
            while let line = try await lines.next() {
                state.withLock { $0.commands.append(line) }
                let verb = line.split(separator: " ").first.map { $0.uppercased() } ?? ""
                switch verb {
                case "EHLO":
                    guard options.supportsEHLO else { try await reply("502 5.5.2 EHLO not supported"); continue }
                    var keywords = ["PIPELINING", "8BITMIME"]
                    if options.startTLS != nil && !tls { keywords.append("STARTTLS") }
                    if options.credentials != nil { keywords.append("AUTH " + options.authMechanisms.joined(separator: " ")) }
                    try await reply((["250-sink.test greets you"] + keywords.dropLast().map { "250-" + $0 } + ["250 " + keywords.last!])
                        .joined(separator: "\r\n"))
                case "HELO":
                    try await reply("250 sink.test")
                case "STARTTLS":
                    guard let context = options.startTLS, !tls else { try await reply("502 5.5.1 no TLS here"); continue }
                    // Reply and insert TLS in one event-loop turn, so the client's ClientHello can't be read as plaintext.
                    try await channel.eventLoop.submit {
                        channel.writeAndFlush(ByteBuffer(string: "220 2.0.0 go ahead\r\n"), promise: nil)
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context), position: .first)
                    }.get()
                    tls = true
                    authenticated = nil
                case "AUTH":
                    let words = line.split(separator: " ").map(String.init)
                    let mechanism = words.count > 1 ? words[1].uppercased() : ""
                    guard options.authMechanisms.contains(mechanism) else { try await reply("504 5.5.4 unknown mechanism"); continue }
                    var user = "", password = ""
                    if mechanism == "PLAIN" {
                        var response = words.count > 2 ? words[2] : nil
                        if response == nil {
                            try await reply("334 ")
                            response = try await lines.next()
                        }
                        let parts = Data(base64Encoded: response ?? "").map { $0.split(separator: 0, omittingEmptySubsequences: false) } ?? []
                        if parts.count == 3 {
                            user = String(decoding: parts[1], as: UTF8.self)
                            password = String(decoding: parts[2], as: UTF8.self)
                        }
                    } else {
                        try await reply("334 VXNlcm5hbWU6")
                        user = String(decoding: Data(base64Encoded: try await lines.next() ?? "") ?? Data(), as: UTF8.self)
                        try await reply("334 UGFzc3dvcmQ6")
                        password = String(decoding: Data(base64Encoded: try await lines.next() ?? "") ?? Data(), as: UTF8.self)
                    }
                    state.withLock { $0.authentications.append((mechanism, user, password)) }
                    if let credentials = options.credentials, credentials.user == user, credentials.password == password {
                        authenticated = user
                        try await reply("235 2.7.0 Authentication successful")
                    } else {
                        try await reply("535 5.7.8 Authentication credentials invalid")
                    }
                case "MAIL":
                    if options.credentials != nil && authenticated == nil { try await reply("530 5.7.0 Authentication required"); continue }
                    from = Self.path(line)
                    recipients = []
                    try await reply("250 2.1.0 OK")
                case "RCPT":
                    guard from != nil else { try await reply("503 5.5.1 MAIL first"); continue }
                    if let custom = options.rcptReply { try await reply(custom); continue }
                    recipients.append(Self.path(line))
                    try await reply("250 2.1.5 OK")
                case "DATA":
                    guard let sender = from, !recipients.isEmpty else { try await reply("503 5.5.1 RCPT first"); continue }
                    if let custom = options.dataReply { try await reply(custom); continue }
                    try await reply("354 End data with <CR><LF>.<CR><LF>")
                    var data: [String] = []
                    while let dataLine = try await lines.next(), dataLine != "." {
                        data.append(dataLine.hasPrefix(".") ? String(dataLine.dropFirst()) : dataLine)
                    }
                    if let custom = options.dataEndReply { try await reply(custom); continue }
                    let message = Received(from: sender, to: recipients, data: data.map { $0 + "\r\n" }.joined(), overTLS: tls,
                                           authenticatedAs: authenticated)
                    state.withLock { $0.received.append(message) }
                    from = nil
                    try await reply("250 2.0.0 OK queued")
                case "RSET":
                    from = nil
                    try await reply("250 2.0.0 OK")
                case "NOOP":
                    try await reply("250 2.0.0 OK")
                case "QUIT":
                    try await reply("221 2.0.0 Bye")
                    return
                default:
                    try await reply("500 5.5.2 unknown command")
                }
            }
        }
    }

    /// The address in `MAIL FROM:<a>` or `RCPT TO:<a>`.
    static func path(_ line: String) -> String {
        guard let open = line.firstIndex(of: "<"), let close = line.lastIndex(of: ">"), open < close else { return "" }
        return String(line[line.index(after: open)..<close])
    }
}

/// CRLF-terminated lines from a byte stream.
struct LineReader {
    var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    var buffer = ByteBuffer()

    init(_ iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator) {
        self.iterator = iterator
    }

    mutating func next() async throws -> String? {
        while true {
            if let end = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
                var bytes = buffer.readBytes(length: end - buffer.readerIndex + 1) ?? []
                bytes.removeLast()
                if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
                return String(decoding: bytes, as: UTF8.self)
            }
            guard var chunk = try await iterator.next() else { return nil }
            buffer.writeBuffer(&chunk)
        }
    }
}

/// A self-signed certificate for `localhost`, made once per test run.
struct TestCertificate: Sendable {
    let certificate: NIOSSLCertificate
    let key: NIOSSLPrivateKey

    static let localhost: TestCertificate = {
        // swiftlint:disable:next force_try
        try! make(hostName: "localhost")
    }()

    static func make(hostName: String) throws -> TestCertificate {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(hostName) }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                SubjectAlternativeNames([.dnsName(hostName)])
            },
            issuerPrivateKey: .init(key))
        return TestCertificate(
            certificate: try NIOSSLCertificate(bytes: Array(try certificate.serializeAsPEM().pemString.utf8), format: .pem),
            key: try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem))
    }

    func serverContext() throws -> NIOSSLContext {
        try NIOSSLContext(configuration: .makeServerConfiguration(certificateChain: [.certificate(certificate)],
                                                                   privateKey: .privateKey(key)))
    }

    var trustRoots: NIOSSLTrustRoots { .certificates([certificate]) }
}

/// Keeps every log line, so tests can check what was (and wasn't) logged.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    var text: String { lines.withLock { $0.joined(separator: "\n") } }

    func logger(level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "test") { _ in Handler(capture: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ line: String) { lines.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            capture.append("\(event.level) \(event.message) \(all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        }
    }
}

/// Decodes RFC 2047 "B" encoded-words and unfolds a header value.
func decodeHeader(_ value: String) -> String {
    let words = value.replacingOccurrences(of: "\r\n ", with: " ").split(separator: " ", omittingEmptySubsequences: false)
    var result = ""
    var previousWasEncoded = false
    for (index, word) in words.enumerated() {
        if word.hasPrefix("=?UTF-8?B?"), word.hasSuffix("?="), let data = Data(base64Encoded: String(word.dropFirst(10).dropLast(2))) {
            // Whitespace between adjacent encoded-words is not part of the text (RFC 2047 §6.2).
            if index > 0 && !previousWasEncoded { result += " " }
            result += String(decoding: data, as: UTF8.self)
            previousWasEncoded = true
        } else {
            if index > 0 { result += " " }
            result += word
            previousWasEncoded = false
        }
    }
    return result
}

/// Decodes a quoted-printable body (RFC 2045 §6.7).
func decodeQuotedPrintable(_ text: String) -> String {
    var bytes: [UInt8] = []
    let lines = text.components(separatedBy: "\r\n")
    for (index, line) in lines.enumerated() {
        var soft = false
        var characters = Array(line.utf8)[...]
        while let byte = characters.first {
            characters = characters.dropFirst()
            if byte == UInt8(ascii: "=") {
                if characters.isEmpty { soft = true; break }
                let hex = String(decoding: characters.prefix(2), as: UTF8.self)
                bytes.append(UInt8(hex, radix: 16) ?? 0)
                characters = characters.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        if !soft && index < lines.count - 1 { bytes += [13, 10] }
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// A parsed message: headers (name lower-cased → unfolded value) and body.
struct ParsedMessage {
    var headers: [String: String] = [:]
    var body: String

    init(_ raw: String) {
        let split = raw.range(of: "\r\n\r\n")!
        body = String(raw[split.upperBound...])
        var current: (String, String)?
        for line in raw[..<split.lowerBound].components(separatedBy: "\r\n") {
            if line.hasPrefix(" ") || line.hasPrefix("\t"), let (name, value) = current {
                current = (name, value + "\r\n" + line)
            } else {
                if let (name, value) = current { headers[name] = value }
                let parts = line.split(separator: ":", maxSplits: 1)
                current = (parts[0].lowercased(), String(parts[1].dropFirst()))
            }
        }
        if let (name, value) = current { headers[name] = value }
    }

    /// The parts of a multipart body, each parsed.
    func parts(boundary: String) -> [ParsedMessage] {
        body.components(separatedBy: "--" + boundary).dropFirst().filter { !$0.hasPrefix("--") }.map { chunk in
            // Swift sees CRLF as one Character.
            var chunk = chunk
            if chunk.hasPrefix("\r\n") { chunk.removeFirst() }
            if chunk.hasSuffix("\r\n") { chunk.removeLast() }
            return ParsedMessage(chunk)
        }
    }
}
