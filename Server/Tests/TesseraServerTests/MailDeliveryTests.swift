import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import Testing
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraInfrastructure
import TesseraSQL
import TesseraTestSupport

/// A code email like the sign-in features send.
func codeMessage(to: String = "alice@example.com", code: String = "12345678") -> MailMessage {
    MailMessage(to: to, subject: "Ваш код: \(code)", text: "Ваш код: \(code)\n.hidden line\n", html: "<p>\(code)</p>",
                language: "ru", metadata: ["purpose": "test"])
}

extension Provider {
    var outboxMailer: OutboxMailer { self.mailer as! OutboxMailer }

    /// Delivery from this provider's outbox through `transport`, with the provider's clock.
    func delivery(_ transport: any MailTransport, logger: Logger? = nil) -> OutboxDelivery {
        OutboxDelivery(store: store, transport: transport, clock: self.clock, logger: logger ?? self.logger,
                       signal: self.mailDelivery.signal)
    }
}

/// An SMTP transport to a sink (or a port where nothing listens), with short timeouts.
func smtp(_ url: String, logger: Logger = Logger(label: "test"), trustRoots: NIOSSLTrustRoots? = nil,
          replyTimeout: TimeAmount = .seconds(5)) throws -> SMTPTransport {
    var timeouts = SMTPTimeouts()
    timeouts.connect = .seconds(2)
    timeouts.reply = replyTimeout
    timeouts.dataEnd = replyTimeout
    return try SMTPTransport(settings: try SMTPSettings(parsing: url), clientName: "[127.0.0.1]", timeouts: timeouts,
                             logger: logger, trustRoots: trustRoots)
}

/// A port with nothing listening on it (a sink started and stopped).
func deadPort() async throws -> Int {
    let sink = try await SMTPSink.start()
    await sink.stop()
    return sink.port
}

@Suite("Email delivery")
struct MailDeliveryTests {
    @Test("send stores the message in the outbox before any delivery is attempted")
    func sendIsDurable() async throws {
        try await withProvider { provider async throws in
            let id = try await provider.outboxMailer.enqueue(codeMessage())
            let stored = try #require(try await provider.store.outboxMessage(id: id))
            #expect(stored.status == .pending && stored.attempts == 0 && stored.recipient == "alice@example.com")
            #expect(stored.mime.contains("Message-ID: <") && stored.mime.contains("@[127.0.0.1]>"))
            #expect(stored.mime.contains("From: Tessera <no-reply@[127.0.0.1]>"))
        }
    }

    @Test("an invalid recipient is refused at send, and nothing is stored")
    func invalidRecipient() async throws {
        try await withProvider { provider async throws in
            await #expect(throws: MailError.self) { try await provider.mailer.send(codeMessage(to: "bob@example.com\r\nBcc: x@y.z")) }
            #expect(try await provider.store.outboxMessages(recipient: nil, limit: 10).isEmpty)
        }
    }

    @Test("the development mailer logs recipient, subject and text and marks the message delivered")
    func developmentMailer() async throws {
        let capture = LogCapture()
        try await withProvider { provider async throws in
            let id = try await provider.outboxMailer.enqueue(codeMessage())
            let round = try await provider.delivery(LogTransport(logger: capture.logger(level: .info))).deliverDue()
            #expect(round == .init(delivered: 1))
            #expect(try await provider.store.outboxMessage(id: id)?.status == .delivered)
            #expect(capture.text.contains("alice@example.com") && capture.text.contains("Ваш код: 12345678"))
            #expect(capture.text.contains("mail.purpose=test"))
        }
    }

    @Test("with --dev and without --smtp-url the provider's mailer delivers to the log")
    func developmentMailerWithDev() async throws {
        try await withProvider(configure: { $0.dev = true }) { provider async throws in
            #expect(provider.mailDelivery.transport is LogTransport)
            try await provider.mailer.send(codeMessage())
            #expect(try await provider.mailDelivery.deliverDue() == .init(delivered: 1))
        }
    }

    @Test("without --smtp-url and --dev nothing is sent or logged: the message fails with the reason and stays in the outbox")
    func nothingLoggedOutsideDev() async throws {
        let capture = LogCapture()
        try await withProvider { provider async throws in
            #expect(provider.mailDelivery.transport is UnsentTransport)
            let id = try await provider.outboxMailer.enqueue(codeMessage())
            let delivery = provider.delivery(provider.mailDelivery.transport, logger: capture.logger(level: .trace))
            #expect(try await delivery.deliverDue() == .init(failed: 1))
            let message = try #require(try await provider.store.outboxMessage(id: id))
            #expect(message.status == .failed && message.lastError?.contains("no SMTP server is configured") == true)
            #expect(!capture.text.contains("12345678"), "the code is not in the log: \(capture.text)")
            #expect(capture.text.contains("no SMTP server is configured"))
        }
    }

    @Test("GET /dev/outbox lists messages newest first as JSON, and exists only with --dev")
    func devOutbox() async throws {
        let clock = ManualClock()
        try await withApp(clock: clock, configure: { $0.dev = true }) { provider, browser async throws in
            try await provider.mailer.send(codeMessage(to: "alice@example.com", code: "11111111"))
            clock.advance(by: 1)
            try await provider.mailer.send(codeMessage(to: "bob@example.com", code: "22222222"))
            try await provider.mailDelivery.deliverDue()
            let response = try await browser.request("/dev/outbox")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json; charset=utf-8")
            let list = try JSONDecoder().decode([[String: JSONValue]].self, from: Data(response.body.text.utf8))
            try #require(list.count == 2)
            #expect(list[0]["to"] == .string("bob@example.com") && list[1]["to"] == .string("alice@example.com"))
            #expect(list[0]["subject"] == .string("Ваш код: 22222222"))
            #expect(list[0]["text"] == .string("Ваш код: 22222222\n.hidden line\n"))
            #expect(list[0]["html"] == .string("<p>22222222</p>"))
            #expect(list[0]["status"] == .string("delivered"))
            #expect(list[0]["created_at"] == .int(1_800_000_001))
            #expect(list[0]["id"] != nil)
            let filtered = try await browser.request("/dev/outbox?to=ALICE@example.com")
            #expect(filtered.body.text.contains("11111111") && !filtered.body.text.contains("22222222"))
        }
        try await withApp { _, browser async throws in
            #expect(try await browser.request("/dev/outbox").status == .notFound)
        }
    }

    @Test("a real SMTP exchange delivers the envelope and the exact message, dot-stuffing undone")
    func realExchange() async throws {
        try await SMTPSink.with { sink async throws in
            try await withProvider(configure: { $0.smtpURL = "smtp://127.0.0.1:\(sink.port)" }) { provider async throws in
                #expect(provider.mailDelivery.transport is SMTPTransport)
                let id = try await provider.outboxMailer.enqueue(codeMessage())
                #expect(try await provider.mailDelivery.deliverDue() == .init(delivered: 1))
                let received = try #require(sink.received.first)
                let stored = try #require(try await provider.store.outboxMessage(id: id))
                #expect(received.from == "no-reply@[127.0.0.1]")
                #expect(received.to == ["alice@example.com"])
                #expect(received.data == stored.mime)
                #expect(stored.status == .delivered && stored.attempts == 1 && stored.finishedAt != nil)
                #expect(sink.commands.first == "EHLO [127.0.0.1]")
                #expect(sink.commands.last == "QUIT")
                #expect(!received.overTLS, "no STARTTLS offered: plaintext, as the URL allows")
            }
        }
    }

    @Test("a message sent while the SMTP server is down stays pending and goes out when the server is back")
    func deliveredWhenServerReturns() async throws {
        let clock = ManualClock()
        let port = try await deadPort()
        try await withProvider(clock: clock, configure: { $0.smtpURL = "smtp://127.0.0.1:\(port)" }) { provider async throws in
            let id = try await provider.outboxMailer.enqueue(codeMessage())
            #expect(try await provider.mailDelivery.deliverDue() == .init(deferred: 1))
            var stored = try #require(try await provider.store.outboxMessage(id: id))
            #expect(stored.status == .pending && stored.attempts == 1)
            #expect(stored.nextAttemptAt == clock.clock.now() + 60)
            #expect(stored.lastError?.contains("cannot connect to 127.0.0.1:\(port)") == true)
            #expect(try await provider.mailDelivery.deliverDue() == .init(), "not due again before the backoff")

            let sink = try await SMTPSink.start(port: port)
            clock.advance(by: 60)
            #expect(try await provider.mailDelivery.deliverDue() == .init(delivered: 1))
            stored = try #require(try await provider.store.outboxMessage(id: id))
            #expect(stored.status == .delivered && stored.attempts == 2)
            #expect(sink.received.count == 1)
            await sink.stop()
        }
    }

    @Test("the outbox survives a restart: queued by one process, delivered by the next")
    func survivesRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-mail-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = DatabaseLocation.sqliteFile(directory.appendingPathComponent("db.sqlite").path)
        let port = try await deadPort()
        try await withProvider(configure: { $0.database = database; $0.smtpURL = "smtp://127.0.0.1:\(port)" }) { provider async throws in
            try await provider.mailer.send(codeMessage())
        }
        try await SMTPSink.with { sink async throws in
            try await withProvider(configure: { $0.database = database; $0.smtpURL = "smtp://127.0.0.1:\(sink.port)" }) { provider async throws in
                #expect(try await provider.mailDelivery.deliverDue() == .init(delivered: 1))
                #expect(sink.received.first?.to == ["alice@example.com"])
            }
        }
    }

    @Test("deferred messages back off 1, 2, 4 … minutes up to an hour, and fail after a day")
    func backoffThenGiveUp() async throws {
        let clock = ManualClock()
        var options = SMTPSink.Options()
        options.rcptReply = "451 4.3.0 mailbox busy, try later"
        try await SMTPSink.with(options) { sink async throws in
            try await withProvider(clock: clock) { provider async throws in
                let delivery = provider.delivery(try smtp("smtp://127.0.0.1:\(sink.port)"))
                let id = try await provider.outboxMailer.enqueue(codeMessage())
                let created = clock.clock.now()
                var delays: [Int64] = []
                while true {
                    let round = try await delivery.deliverDue()
                    let stored = try #require(try await provider.store.outboxMessage(id: id))
                    if stored.status == .failed {
                        #expect(round == .init(failed: 1))
                        #expect(stored.lastError?.contains("gave up after \(stored.attempts) attempts") == true)
                        #expect(stored.lastError?.contains("451 4.3.0 mailbox busy") == true)
                        break
                    }
                    #expect(round == .init(deferred: 1))
                    #expect(stored.lastError == "RCPT TO:<alice@example.com> refused: 451 4.3.0 mailbox busy, try later")
                    delays.append(stored.nextAttemptAt - clock.clock.now())
                    clock.advance(by: stored.nextAttemptAt - clock.clock.now())
                }
                #expect(delays.prefix(7) == [60, 120, 240, 480, 960, 1920, 3600])
                #expect(delays.dropFirst(6).allSatisfy { $0 == 3600 })
                #expect(clock.clock.now() - created > 86_400 - 3600 && clock.clock.now() - created <= 86_400)
                #expect(sink.received.isEmpty)
            }
        }
    }

    @Test("a 5xx reply to RCPT, DATA or the message fails it for good, with the reply logged", arguments: [
        ("RCPT", "550 5.1.1 <alice@example.com>: no such user"),
        ("DATA", "554 5.5.1 no valid recipients"),
        ("end of data", "552 5.3.4 message too big"),
    ])
    func permanentFailure(_ step: String, _ reply: String) async throws {
        var options = SMTPSink.Options()
        switch step {
        case "RCPT": options.rcptReply = reply
        case "DATA": options.dataReply = reply
        default: options.dataEndReply = reply
        }
        let capture = LogCapture()
        try await SMTPSink.with(options) { sink async throws in
            try await withProvider { provider async throws in
                let delivery = provider.delivery(try smtp("smtp://127.0.0.1:\(sink.port)"), logger: capture.logger())
                let id = try await provider.outboxMailer.enqueue(codeMessage())
                #expect(try await delivery.deliverDue() == .init(failed: 1))
                let stored = try #require(try await provider.store.outboxMessage(id: id))
                #expect(stored.status == .failed && stored.attempts == 1)
                #expect(stored.lastError?.hasSuffix(reply) == true)
                #expect(capture.text.contains("error mail refused permanently") && capture.text.contains(reply))
            }
        }
    }

    @Test("AUTH PLAIN sends the credentials, and the password never reaches the log")
    func authPlain() async throws {
        var options = SMTPSink.Options()
        options.credentials = ("mailer@example.com", "p@ss word")
        let capture = LogCapture()
        try await SMTPSink.with(options) { sink async throws in
            try await withProvider { provider async throws in
                let transport = try smtp("smtp://mailer%40example.com:p%40ss%20word@127.0.0.1:\(sink.port)", logger: capture.logger())
                try await provider.mailer.send(codeMessage())
                #expect(try await provider.delivery(transport, logger: capture.logger()).deliverDue() == .init(delivered: 1))
                #expect(sink.received.first?.authenticatedAs == "mailer@example.com")
                #expect(sink.authentications.map(\.mechanism) == ["PLAIN"])
                let secret = Data("\0mailer@example.com\0p@ss word".utf8).base64EncodedString()
                #expect(capture.text.contains("SMTP C: AUTH PLAIN ***"), "the trace log shows the conversation")
                #expect(!capture.text.contains("p@ss word") && !capture.text.contains(secret))
            }
        }
    }

    @Test("AUTH LOGIN is used when the server offers only LOGIN")
    func authLogin() async throws {
        var options = SMTPSink.Options()
        options.credentials = ("mailer", "secret")
        options.authMechanisms = ["LOGIN"]
        try await SMTPSink.with(options) { sink async throws in
            try await withProvider { provider async throws in
                try await provider.mailer.send(codeMessage())
                let round = try await provider.delivery(try smtp("smtp://mailer:secret@127.0.0.1:\(sink.port)")).deliverDue()
                #expect(round == .init(delivered: 1))
                #expect(sink.authentications.map(\.mechanism) == ["LOGIN"])
                #expect(sink.received.first?.authenticatedAs == "mailer")
            }
        }
    }

    @Test("wrong credentials: the relay's reply is kept and logged, the message retried, the password nowhere")
    func authFailure() async throws {
        var options = SMTPSink.Options()
        options.credentials = ("mailer", "right")
        let capture = LogCapture()
        try await SMTPSink.with(options) { sink async throws in
            try await withProvider { provider async throws in
                let id = try await provider.outboxMailer.enqueue(codeMessage())
                let transport = try smtp("smtp://mailer:wrong-password@127.0.0.1:\(sink.port)", logger: capture.logger())
                #expect(try await provider.delivery(transport, logger: capture.logger()).deliverDue() == .init(deferred: 1))
                let stored = try #require(try await provider.store.outboxMessage(id: id))
                #expect(stored.status == .pending)
                #expect(stored.lastError == "authentication as 'mailer' failed: 535 5.7.8 Authentication credentials invalid")
                #expect(capture.text.contains("535 5.7.8"))
                #expect(!capture.text.contains("wrong-password") && stored.lastError?.contains("wrong-password") == false)
                #expect(!sink.commands.contains { $0.hasPrefix("MAIL") })
            }
        }
    }

    @Test("credentials given but the server offers no AUTH: an error before MAIL")
    func noAuthOffered() async throws {
        try await SMTPSink.with { sink async throws in
            try await withProvider { provider async throws in
                let id = try await provider.outboxMailer.enqueue(codeMessage())
                #expect(try await provider.delivery(try smtp("smtp://u:p@127.0.0.1:\(sink.port)")).deliverDue() == .init(deferred: 1))
                #expect(try await provider.store.outboxMessage(id: id)?.lastError?.contains("does not offer AUTH") == true)
            }
        }
    }

    @Test("starttls=required with a server that doesn't offer STARTTLS is an error, and nothing is sent in clear")
    func startTLSRequiredButMissing() async throws {
        var options = SMTPSink.Options()
        options.credentials = ("u", "p")
        try await SMTPSink.with(options) { sink async throws in
            try await withProvider { provider async throws in
                let id = try await provider.outboxMailer.enqueue(codeMessage())
                let transport = try smtp("smtp://u:p@127.0.0.1:\(sink.port)?starttls=required")
                #expect(try await provider.delivery(transport).deliverDue() == .init(deferred: 1))
                let stored = try #require(try await provider.store.outboxMessage(id: id))
                #expect(stored.status == .pending)
                #expect(stored.lastError == "127.0.0.1 does not offer STARTTLS, and the SMTP URL requires it (starttls=required)")
                #expect(sink.commands == ["EHLO [127.0.0.1]"], "no AUTH, no MAIL: nothing after EHLO")
            }
        }
    }

    @Test("STARTTLS upgrades the session when offered, then EHLO again, AUTH and the message go over TLS")
    func startTLS() async throws {
        var options = SMTPSink.Options()
        options.startTLS = try TestCertificate.localhost.serverContext()
        options.credentials = ("u", "p")
        try await SMTPSink.with(options) { sink async throws in
            try await withProvider { provider async throws in
                try await provider.mailer.send(codeMessage())
                let transport = try smtp("smtp://u:p@127.0.0.1:\(sink.port)?starttls=required&tls_verify=none")
                #expect(try await provider.delivery(transport).deliverDue() == .init(delivered: 1))
                #expect(sink.received.first?.overTLS == true)
                #expect(sink.commands.prefix(3) == ["EHLO [127.0.0.1]", "STARTTLS", "EHLO [127.0.0.1]"])
            }
        }
    }

    @Test("certificates are verified by default: a relay with an untrusted certificate gets nothing")
    func untrustedCertificate() async throws {
        var options = SMTPSink.Options()
        options.startTLS = try TestCertificate.localhost.serverContext()
        try await SMTPSink.with(options) { sink async throws in
            try await withProvider { provider async throws in
                let id = try await provider.outboxMailer.enqueue(codeMessage())
                #expect(try await provider.delivery(try smtp("smtp://localhost:\(sink.port)")).deliverDue() == .init(deferred: 1))
                let error = try #require(try await provider.store.outboxMessage(id: id)?.lastError)
                #expect(error.lowercased().contains("certificate"), "\(error)")
                #expect(sink.received.isEmpty && !sink.commands.contains { $0.hasPrefix("MAIL") })
            }
        }
    }

    @Test("a trusted certificate passes full verification, host name included; a wrong host name fails")
    func trustedCertificate() async throws {
        var options = SMTPSink.Options()
        options.startTLS = try TestCertificate.localhost.serverContext()
        let roots = TestCertificate.localhost.trustRoots
        try await SMTPSink.with(options) { sink async throws in
            try await withProvider { provider async throws in
                try await provider.mailer.send(codeMessage())
                let good = try smtp("smtp://localhost:\(sink.port)", trustRoots: roots)
                #expect(try await provider.delivery(good).deliverDue() == .init(delivered: 1))
                #expect(sink.received.first?.overTLS == true)

                let id = try await provider.outboxMailer.enqueue(codeMessage())
                let wrongName = try smtp("smtp://127.0.0.1:\(sink.port)", trustRoots: roots)
                #expect(try await provider.delivery(wrongName).deliverDue() == .init(deferred: 1))
                let error = try #require(try await provider.store.outboxMessage(id: id)?.lastError)
                #expect(error.contains("EHLO") && error.contains("failedToValidateHostname"), "\(error)")
                #expect(sink.received.count == 1)
            }
        }
    }

    @Test("smtps:// speaks TLS from the first byte")
    func implicitTLS() async throws {
        var options = SMTPSink.Options()
        options.implicitTLS = try TestCertificate.localhost.serverContext()
        try await SMTPSink.with(options) { sink async throws in
            try await withProvider { provider async throws in
                try await provider.mailer.send(codeMessage())
                let transport = try smtp("smtps://localhost:\(sink.port)", trustRoots: TestCertificate.localhost.trustRoots)
                #expect(try await provider.delivery(transport).deliverDue() == .init(delivered: 1))
                #expect(sink.received.first?.overTLS == true)
            }
        }
    }

    @Test("a server that never answers times out, and the message waits for a retry")
    func replyTimeout() async throws {
        var options = SMTPSink.Options()
        options.silent = true
        try await SMTPSink.with(options) { sink async throws in
            try await withProvider { provider async throws in
                let id = try await provider.outboxMailer.enqueue(codeMessage())
                let transport = try smtp("smtp://127.0.0.1:\(sink.port)", replyTimeout: .milliseconds(200))
                let started = ContinuousClock.now
                #expect(try await provider.delivery(transport).deliverDue() == .init(deferred: 1))
                #expect(ContinuousClock.now - started < .seconds(15), "far less than the 30 s default")
                #expect(try await provider.store.outboxMessage(id: id)?.lastError == "no reply to connection greeting within 200 ms")
            }
        }
    }

    @Test("a server that refuses EHLO gets HELO")
    func heloFallback() async throws {
        var options = SMTPSink.Options()
        options.supportsEHLO = false
        try await SMTPSink.with(options) { sink async throws in
            try await withProvider { provider async throws in
                try await provider.mailer.send(codeMessage())
                #expect(try await provider.delivery(try smtp("smtp://127.0.0.1:\(sink.port)")).deliverDue() == .init(delivered: 1))
                #expect(sink.commands.prefix(2) == ["EHLO [127.0.0.1]", "HELO [127.0.0.1]"])
            }
        }
    }

    @Test("a message past its expiry is marked failed instead of being sent late")
    func expiredMessage() async throws {
        let clock = ManualClock()
        try await SMTPSink.with { sink async throws in
            try await withProvider(clock: clock) { provider async throws in
                var message = codeMessage()
                message.expiresAt = clock.clock.now() + 600
                let id = try await provider.outboxMailer.enqueue(message)
                clock.advance(by: 600)
                #expect(try await provider.delivery(try smtp("smtp://127.0.0.1:\(sink.port)")).deliverDue() == .init(failed: 1))
                #expect(try await provider.store.outboxMessage(id: id)?.lastError == "expired before it could be delivered")
                #expect(sink.commands.isEmpty)
            }
        }
    }

    @Test("a claimed message is sent once: a second worker can't take it until the lease ends, and a lost claim changes nothing",
          arguments: TestBackend.available)
    func claims(on backend: TestBackend) async throws {
        let clock = ManualClock()
        try await withProvider(on: backend, clock: clock) { provider async throws in
            let id = try await provider.outboxMailer.enqueue(codeMessage())
            let now = clock.clock.now()
            let first = try #require(try await provider.store.claimDueMessage(now: now, leaseUntil: now + 600))
            #expect(first.id == id && first.status == .sending && first.attempts == 1)
            #expect(try await provider.store.claimDueMessage(now: now, leaseUntil: now + 600) == nil)

            clock.advance(by: 600)
            let second = try #require(try await provider.store.claimDueMessage(now: now + 600, leaseUntil: now + 1200))
            #expect(second.id == id && second.attempts == 2)
            #expect(try await provider.store.markDelivered(first, now: now + 601) == false, "the first worker's claim was lost")
            #expect(try await provider.store.outboxMessage(id: id)?.status == .sending)
            #expect(try await provider.store.markDelivered(second, now: now + 601) == true)
            #expect(try await provider.store.outboxMessage(id: id)?.status == .delivered)
        }
    }

    @Test("workers claiming together take different messages, each exactly once", arguments: TestBackend.available)
    func concurrentClaims(on backend: TestBackend) async throws {
        let clock = ManualClock()
        try await withProvider(on: backend, clock: clock) { provider async throws in
            var ids: Set<String> = []
            for _ in 0..<12 { ids.insert(try await provider.outboxMailer.enqueue(codeMessage())) }
            let now = clock.clock.now(), store = provider.store
            let claimed = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        var mine: [String] = []
                        while let message = try await store.claimDueMessage(now: now, leaseUntil: now + 600) { mine.append(message.id) }
                        return mine
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(claimed.count == 12 && Set(claimed) == ids, "every message claimed once")
        }
    }

    @Test("a message whose attempts never finish (the worker died each time) is given up after a day")
    func abandonedClaims() async throws {
        let clock = ManualClock()
        try await withProvider(clock: clock) { provider async throws in
            let id = try await provider.outboxMailer.enqueue(codeMessage())
            for _ in 0..<3 {
                let now = clock.clock.now()
                _ = try #require(try await provider.store.claimDueMessage(now: now, leaseUntil: now + 600))
                clock.advance(by: 30_000)
            }
            #expect(try await provider.mailDelivery.deliverDue() == .init(failed: 1))
            #expect(try await provider.store.outboxMessage(id: id)?.lastError == "not delivered within 24 hours (3 attempts)")
        }
    }

    @Test("several workers on one outbox deliver every message exactly once")
    func concurrentWorkers() async throws {
        try await SMTPSink.with { sink async throws in
            try await withProvider { provider async throws in
                for index in 0..<6 { try await provider.mailer.send(codeMessage(to: "user\(index)@example.com")) }
                let workers = try (0..<3).map { _ in provider.delivery(try smtp("smtp://127.0.0.1:\(sink.port)")) }
                let delivered = try await withThrowingTaskGroup(of: Int.self) { group in
                    for worker in workers { group.addTask { try await worker.deliverDue().delivered } }
                    return try await group.reduce(0, +)
                }
                #expect(delivered == 6)
                #expect(sink.received.flatMap(\.to).sorted() == (0..<6).map { "user\($0)@example.com" })
            }
        }
    }

    @Test("the delivery service sends a queued message at once and stops on shutdown")
    func deliveryService() async throws {
        try await SMTPSink.with { sink async throws in
            try await withProvider(configure: { $0.smtpURL = "smtp://127.0.0.1:\(sink.port)" }) { provider async throws in
                let service = MailDeliveryService(delivery: provider.mailDelivery, pollInterval: .seconds(3600))
                let group = ServiceGroup(configuration: .init(services: [service], logger: provider.logger))
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    try await Task.sleep(for: .milliseconds(50))
                    try await provider.mailer.send(codeMessage())
                    _ = try await sink.waitForMessages(1, timeout: .seconds(10))
                    await group.triggerGracefulShutdown()
                    try await tasks.waitForAll()
                }
                #expect(try await provider.store.outboxMessages(recipient: nil, limit: 1).first?.status == .delivered)
            }
        }
    }

    @Test("old delivered and failed messages are purged")
    func purge() async throws {
        let clock = ManualClock()
        try await withProvider(clock: clock) { provider async throws in
            let delivered = try await provider.outboxMailer.enqueue(codeMessage())
            try await provider.mailDelivery.deliverDue()
            let pending = try await provider.outboxMailer.enqueue(codeMessage())
            let now = clock.clock.now()
            try await provider.store.purgeOutbox(deliveredBefore: now + 1, failedBefore: now + 1)
            #expect(try await provider.store.outboxMessage(id: delivered) == nil)
            #expect(try await provider.store.outboxMessage(id: pending) != nil, "never a message still to send")
        }
    }
}
