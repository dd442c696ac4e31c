import Foundation
import NIOCore
import Testing
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraInfrastructure
import TesseraSQL

@Suite("Email messages (MIME)")
struct MailMessageTests {
    let sender = try! MailAddress(displayName: "Tessera", address: "no-reply@id.example.com")

    func render(_ message: MailMessage, from: MailAddress? = nil) -> String {
        MIMEMessage.render(message, from: from ?? sender, messageID: "abc123@id.example.com", date: 1_800_000_000,
                           boundary: "=_tessera_test")
    }

    @Test("a Russian subject is sent as UTF-8 encoded-words that decode to the original")
    func russianSubject() throws {
        let subject = "Ваш код для входа в приложение «Тессера»: 12345678 — действует десять минут"
        let raw = render(MailMessage(to: "alice@example.com", subject: subject, text: "x", language: "ru"))
        let message = ParsedMessage(raw)
        let header = try #require(message.headers["subject"])
        #expect(header.hasPrefix("=?UTF-8?B?"))
        #expect(header.contains("\r\n "), "a long subject is folded over several lines")
        #expect(decodeHeader(header) == subject)
        for line in raw.components(separatedBy: "\r\n") where line.contains("=?UTF-8?") {
            #expect(line.utf8.count <= 76, "RFC 2047 §2: lines with encoded-words are at most 76 octets")
        }
        #expect(message.headers["content-language"] == "ru")
    }

    @Test("a short ASCII subject stays readable; a line break can't inject a header")
    func asciiSubject() {
        let plain = ParsedMessage(render(MailMessage(to: "alice@example.com", subject: "Your code is 1234", text: "x")))
        #expect(plain.headers["subject"] == "Your code is 1234")
        let raw = render(MailMessage(to: "alice@example.com", subject: "Hi\r\nBcc: mallory@example.com", text: "x"))
        #expect(!raw.components(separatedBy: "\r\n").contains { $0.hasPrefix("Bcc:") })
        #expect(ParsedMessage(raw).headers["subject"] == "Hi Bcc: mallory@example.com")
    }

    @Test("text and HTML travel as multipart/alternative, UTF-8, quoted-printable, and decode to the originals")
    func multipartAlternative() throws {
        let text = "Ваш код: 12345678\n\nIt's = 100% yours.  \nLine with trailing space "
        let html = "<p>Ваш код: <b>12345678</b></p>\n<p>a=b</p>"
        let raw = render(MailMessage(to: "alice@example.com", subject: "Code", text: text, html: html, language: "ru"))
        let message = ParsedMessage(raw)
        #expect(message.headers["mime-version"] == "1.0")
        #expect(message.headers["content-type"] == "multipart/alternative; boundary=\"=_tessera_test\"")
        #expect(message.headers["from"] == "Tessera <no-reply@id.example.com>")
        #expect(message.headers["to"] == "alice@example.com")
        #expect(message.headers["message-id"] == "<abc123@id.example.com>")
        #expect(message.headers["date"] == "Fri, 15 Jan 2027 08:00:00 +0000")
        #expect(message.headers["auto-submitted"] == "auto-generated")
        let parts = message.parts(boundary: "=_tessera_test")
        try #require(parts.count == 2)
        #expect(parts[0].headers["content-type"] == "text/plain; charset=UTF-8")
        #expect(parts[1].headers["content-type"] == "text/html; charset=UTF-8")
        for part in parts { #expect(part.headers["content-transfer-encoding"] == "quoted-printable") }
        #expect(decodeQuotedPrintable(parts[0].body) == text.replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(decodeQuotedPrintable(parts[1].body) == html.replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(raw.hasSuffix("--=_tessera_test--\r\n"))
    }

    @Test("a message without HTML is a single text/plain part")
    func textOnly() {
        let message = ParsedMessage(render(MailMessage(to: "alice@example.com", subject: "Hi", text: "hello")))
        #expect(message.headers["content-type"] == "text/plain; charset=UTF-8")
        #expect(decodeQuotedPrintable(message.body) == "hello\r\n")
    }

    @Test("every line ends in CRLF, is 7-bit and at most 76 octets, even for a long Cyrillic paragraph")
    func lineDiscipline() {
        let long = String(repeating: "Съешь же ещё этих мягких французских булок, да выпей чаю. ", count: 40)
        let raw = render(MailMessage(to: "alice@example.com", subject: long, text: long + "\n" + long, html: "<p>\(long)</p>"))
        #expect(!raw.replacingOccurrences(of: "\r\n", with: "").contains("\n"), "no bare LF")
        #expect(!raw.replacingOccurrences(of: "\r\n", with: "").contains("\r"), "no bare CR")
        #expect(raw.utf8.allSatisfy { $0 < 128 }, "7-bit clean")
        for line in raw.components(separatedBy: "\r\n") { #expect(line.utf8.count <= 76) }
    }

    @Test("quoted-printable escapes '=', non-ASCII and whitespace at the end of a line")
    func quotedPrintable() {
        #expect(MIMEMessage.quotedPrintable("a=b") == "a=3Db")
        #expect(MIMEMessage.quotedPrintable("end \nnext\t") == "end=20\r\nnext=09")
        #expect(MIMEMessage.quotedPrintable("Ж") == "=D0=96")
        let long = String(repeating: "ж", count: 100)
        let encoded = MIMEMessage.quotedPrintable(long)
        #expect(encoded.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 76 })
        #expect(decodeQuotedPrintable(encoded) == long)
    }

    @Test("the DATA payload doubles a leading dot and ends with CRLF . CRLF")
    func dotStuffing() throws {
        let payload = try SMTPTransport.dataPayload("Subject: x\r\n\r\n.hidden\r\n..two\r\nend\r\n")
        #expect(String(buffer: payload) == "Subject: x\r\n\r\n..hidden\r\n...two\r\nend\r\n.\r\n")
        #expect(String(buffer: try SMTPTransport.dataPayload("a\nb")) == "a\r\nb\r\n.\r\n", "bare LF becomes CRLF")
        #expect(throws: MailDeliveryError.self) { try SMTPTransport.dataPayload(String(repeating: "x", count: 999)) }
    }

    @Test("the sender's display name is quoted or encoded as needed")
    func fromHeader() throws {
        #expect(MIMEMessage.mailbox(try MailAddress(parsing: "no-reply@x.example")) == "no-reply@x.example")
        #expect(MIMEMessage.mailbox(try MailAddress(parsing: "\"Example, Inc.\" <a@x.example>")) == "\"Example, Inc.\" <a@x.example>")
        let russian = MIMEMessage.mailbox(try MailAddress(parsing: "Тессера <a@x.example>"))
        #expect(russian.hasPrefix("=?UTF-8?B?") && russian.hasSuffix(" <a@x.example>"))
        #expect(decodeHeader(String(russian.dropLast(" <a@x.example>".count))) == "Тессера")
    }

    @Test("the default sender and Message-ID domain come from the issuer's host")
    func defaultSender() {
        #expect(MailAddress.defaultSender(issuer: "https://id.example.com").description == "Tessera <no-reply@id.example.com>")
        #expect(MailAddress.defaultSender(issuer: "http://127.0.0.1:8080").address == "no-reply@[127.0.0.1]")
        #expect(MailAddress.domain(ofIssuer: "http://[::1]:8080") == "[IPv6:::1]")
        #expect(MailAddress.defaultSender(issuer: "http://tessera_server:8080").address == "no-reply@tessera_server")
        #expect(MIMEMessage.newMessageID(domain: "id.example.com").hasSuffix("@id.example.com"))
    }

    @Test("addresses that could break a header or an SMTP command are refused", arguments: [
        "alice", "@example.com", "alice@", "a b@example.com", "alice@example.com\r\nBcc: x@y.z", "<alice@example.com>",
        "alice@@example.com", "алиса@example.com", "alice@exa mple.com", "alice@.example.com", "alice@example..com",
    ])
    func invalidAddresses(_ address: String) {
        #expect(!MailAddress.isValid(address: address))
    }

    @Test("ordinary addresses are accepted", arguments: ["alice@example.com", "a.b+tag@sub.example.org", "x@[127.0.0.1]", "o'neil@example.ie"])
    func validAddresses(_ address: String) {
        #expect(MailAddress.isValid(address: address))
    }
}

@Suite("SMTP URL")
struct SMTPSettingsTests {
    @Test("smtp:// defaults to port 587 with opportunistic STARTTLS; credentials are percent-decoded")
    func smtpDefaults() throws {
        let settings = try SMTPSettings(parsing: "smtp://mailer%40example.com:p%40ss%3Aword@mail.example.com")
        #expect(settings.host == "mail.example.com")
        #expect(settings.port == 587)
        #expect(settings.security == .startTLS(required: false))
        #expect(settings.username == "mailer@example.com")
        #expect(settings.password == "p@ss:word")
        #expect(settings.verifyCertificates)
    }

    @Test("smtps:// is implicit TLS on port 465; options are read")
    func smtpsAndOptions() throws {
        let smtps = try SMTPSettings(parsing: "smtps://mail.example.com")
        #expect(smtps.port == 465 && smtps.security == .implicitTLS)
        let required = try SMTPSettings(parsing: "smtp://127.0.0.1:2525?starttls=required&tls_verify=none")
        #expect(required.security == .startTLS(required: true) && !required.verifyCertificates && required.port == 2525)
        #expect(try SMTPSettings(parsing: "smtp://[::1]:25").host == "::1")
    }

    @Test("a bad SMTP URL is a configuration error naming the problem", arguments: [
        ("http://mail.example.com", "scheme"), ("smtp://", "no host"), ("smtp://mail.example.com:0", "out of range"),
        ("smtp://mail.example.com/x", "path"), ("smtp://mail.example.com?starttls=maybe", "starttls"),
        ("smtp://mail.example.com?tls=on", "unknown parameter"), ("smtps://mail.example.com?starttls=required", "smtp:// only"),
        ("smtp://user@mail.example.com", "no password"), ("not a url", "smtp"),
    ])
    func badURLs(_ url: String, _ problem: String) {
        #expect {
            try SMTPSettings(parsing: url)
        } throws: { error in
            let description = "\(error)"
            return error is ConfigurationError && description.hasPrefix("smtp-url: ") && description.contains(problem)
        }
    }

    @Test("the password never appears in the description or in errors")
    func passwordIsRedacted() throws {
        let settings = try SMTPSettings(parsing: "smtp://user:hunter2@mail.example.com?starttls=required")
        #expect(settings.description == "smtp://user:***@mail.example.com:587?starttls=required")
        do {
            _ = try SMTPSettings(parsing: "smtp://user:hunter2@mail.example.com/path")
            Issue.record("expected an error")
        } catch {
            #expect(!"\(error)".contains("hunter2"))
        }
    }

    @Test("only loopback hosts may receive credentials without TLS")
    func loopback() throws {
        for host in ["127.0.0.1", "127.0.0.53", "localhost", "[::1]"] {
            #expect(try SMTPSettings(parsing: "smtp://\(host):25").hostIsLoopback)
        }
        for host in ["mail.example.com", "10.0.0.1", "localhost.example.com", "128.0.0.1", "mail.localhost"] {
            #expect(try !SMTPSettings(parsing: "smtp://\(host):25").hostIsLoopback)
        }
    }

    @Test("the server refuses to start with a bad smtp-url or mail-from")
    func startupValidation() throws {
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader(flags: ["smtp-url": "smtp://mail.example.com?tls_verify=sometimes"], environment: [:]).configuration()
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader(flags: ["mail-from": "Tessera"], environment: [:]).configuration()
        }
        let good = try ConfigurationLoader(flags: ["smtp-url": "smtps://u:p@mail.example.com", "mail-from": "Ids <ids@example.com>"],
                                           environment: [:]).configuration()
        #expect(good.smtpURL == "smtps://u:p@mail.example.com")
    }
}

@Suite("Email templates")
struct MailTemplatesTests {
    @Test("the one-time-code email renders in Russian and English, text and HTML")
    func oneTimeCode() throws {
        let templates = try MailTemplates()
        let ru = try templates.render("one-time-code", language: .ru, values: ["code": "12345678", "minutes": "10"])
        #expect(ru.subject == "Ваш код: 12345678")
        #expect(ru.text.contains("Ваш код: 12345678") && ru.text.contains("Код действует 10 мин."))
        #expect(ru.html.contains("<html lang=\"ru\">") && ru.html.contains(">12345678</p>"))
        let en = try templates.render("one-time-code", language: .en, values: ["code": "12345678"])
        #expect(en.subject == "Your code is 12345678")
        #expect(!en.text.contains("expires"), "an unset value leaves its section out")
        #expect(en.html.contains("<title>Your code is 12345678</title>"))
    }

    @Test("values are HTML-escaped in the HTML part only")
    func escaping() throws {
        let mail = try MailTemplates().render("one-time-code", language: .en, values: ["code": "<b>&"])
        #expect(mail.text.contains("Your code is <b>&"))
        #expect(mail.html.contains("&lt;b&gt;&amp;") && !mail.html.contains("<b>&"))
    }

    @Test("a language without a version falls back to English; an unknown template is an error")
    func fallbackAndUnknown() throws {
        let templates = try MailTemplates(["hello": [.en: MailTemplateSource(subject: "Hi {{name}}", text: "Hi {{name}}", html: "<p>Hi</p>")]])
        let message = try templates.message("hello", to: "a@example.com", language: .ru, values: ["name": "Аня"], metadata: ["purpose": "test"])
        #expect(message.subject == "Hi Аня" && message.language == "en")
        #expect(message.metadata == ["purpose": "test", "template": "hello"])
        #expect(throws: MailError.self) { try templates.render("nope", language: .en, values: [:]) }
        #expect(throws: MailError.self) { try MailTemplates(["x": [.ru: MailTemplateSource(subject: "", text: "", html: "")]]) }
    }

    @Test("every built-in email exists in every language")
    func everyLanguage() {
        for (name, languages) in MailTemplates.builtIn {
            for language in PageLanguage.allCases { #expect(languages[language] != nil, "\(name) has no \(language) version") }
        }
    }
}

@Suite("Retry policy")
struct RetryPolicyTests {
    @Test("retries wait 1, 2, 4, 8 … minutes, capped at an hour")
    func backoff() {
        let policy = RetryPolicy()
        #expect((1...8).map(policy.delay(afterAttempt:)) == [60, 120, 240, 480, 960, 1920, 3600, 3600])
        #expect(policy.delay(afterAttempt: 1000) == 3600)
    }
}
