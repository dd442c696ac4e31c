import Foundation
import Testing
import TesseraDomain

@Suite("Native sign-in emails")
struct NativeMailTemplateTests {
    static let codeTemplates = ["sign-up-code", "sign-in-code", "password-reset-code"]
    static let noticeTemplates = ["account-exists", "password-changed"]
    static let all = codeTemplates + noticeTemplates

    let templates = try! MailTemplates()
    let values: [String: Any] = ["code": "48213975", "minutes": 10, "issuer_host": "login.example.com", "email": "alice@example.com"]

    @Test("the mail files hold every email in every language, and nothing else")
    func everyLanguage() {
        let names = Set(Email.everyTemplateName)
        #expect(Set(MailTemplates.builtIn.keys) == names)
        for (name, languages) in MailTemplates.builtIn {
            #expect(Set(languages.keys) == Set(PageLanguage.allCases), "\(name)")
        }
    }

    @Test("each email renders in English and Russian with every value filled in", arguments: all, PageLanguage.allCases)
    func renders(_ name: String, _ language: PageLanguage) throws {
        let languages = try #require(MailTemplates.builtIn[name])
        #expect(languages[language] != nil, "a \(language) version of its own, not the fallback")
        let mail = try templates.render(name, language: language, values: values)
        #expect(!mail.subject.isEmpty && !mail.subject.contains("\n"))
        #expect(mail.html.contains("<html lang=\"\(language.rawValue)\">"))
        #expect(mail.html.contains("<title>\(mail.subject)</title>"))
        for part in [mail.subject, mail.text, mail.html] {
            #expect(!part.contains("{{") && !part.contains("}}"), "no tag left unrendered")
        }
        for part in [mail.text, mail.html] {
            #expect(part.contains("alice@example.com") && part.contains("login.example.com"))
        }
        let cyrillic = mail.text.unicodeScalars.contains { (0x0400...0x04FF).contains($0.value) }
        #expect(cyrillic == (language == .ru))
    }

    @Test("code emails show the code and how long it is valid", arguments: codeTemplates, PageLanguage.allCases)
    func code(_ name: String, _ language: PageLanguage) throws {
        let mail = try templates.render(name, language: language, values: values)
        #expect(mail.text.contains("48213975"))
        #expect(mail.html.contains(">48213975</p>"))
        #expect(!mail.subject.contains("48213975"), "the code stays out of notification previews")
        #expect(mail.text.contains(language == .ru ? "Код действует 10 мин." : "It is valid for 10 min."))
    }

    @Test("the account-exists and password-changed emails carry no code", arguments: noticeTemplates)
    func noCode(_ name: String) throws {
        for language in PageLanguage.allCases {
            let mail = try templates.render(name, language: language, values: values)
            #expect(!mail.text.contains("48213975") && !mail.html.contains("48213975"))
        }
    }

    @Test("the reset email says an unrequested reset leaves the password unchanged")
    func resetReassures() throws {
        let en = try templates.render("password-reset-code", language: .en, values: values)
        #expect(en.text.contains("your password is unchanged"))
        let ru = try templates.render("password-reset-code", language: .ru, values: values)
        #expect(ru.text.contains("ваш пароль остался прежним"))
    }

    @Test("values are HTML-escaped in the HTML part and left as they are in the text", arguments: all)
    func escaping(_ name: String) throws {
        let hostile: [String: Any] = ["code": "<i>1&2</i>", "minutes": 10, "issuer_host": "a&b.example", "email": "\"<b>\"@example.com"]
        for language in PageLanguage.allCases {
            let mail = try templates.render(name, language: language, values: hostile)
            #expect(mail.text.contains("\"<b>\"@example.com") && mail.text.contains("a&b.example"))
            #expect(mail.html.contains("&quot;&lt;b&gt;&quot;@example.com") && !mail.html.contains("<b>"))
            #expect(mail.html.contains("a&amp;b.example") && !mail.html.contains("a&b.example"))
            #expect(!mail.html.contains("<i>"))
        }
    }

    @Test("a message for the outbox records its template and language")
    func message() throws {
        let message = try templates.message("sign-in-code", to: "alice@example.com", language: .ru, values: values)
        #expect(message.subject == "Код для входа")
        #expect(message.language == "ru" && message.metadata["template"] == "sign-in-code")
    }
}

@Suite("Emails by type")
struct TypedEmailTests {
    static let all: [Email] = [
        .oneTimeCode(code: "48213975", minutes: 10), .signUpCode(code: "48213975", minutes: 10),
        .signInCode(code: "48213975", minutes: 10), .passwordResetCode(code: "48213975", minutes: 10), .accountExists,
        .passwordChanged, .signInLink(link: "https://login.example.com/emaillink/v1.0/signin?oob_code=x", minutes: 60),
        .emailChangeCode(code: "48213975", minutes: 10), .emailChangeTaken, .emailChanged(newEmail: "ann@example.org"),
    ]

    @Test("every email names a built-in template and fills it in, in each language", arguments: all, PageLanguage.allCases)
    func renders(_ email: Email, _ language: PageLanguage) throws {
        #expect(MailTemplates.builtIn[email.templateName] != nil)
        let message = try MailTemplates().message(email, to: "alice@example.com", language: language, issuerHost: "login.example.com")
        #expect(message.metadata["template"] == email.templateName && message.language == language.rawValue)
        for part in [message.subject, message.text, message.html ?? ""] {
            #expect(!part.contains("{{") && !part.contains("}}"), "no tag left unrendered")
        }
        if email.templateName != "one-time-code" {  // the generic code names neither
            #expect(message.text.contains("alice@example.com") && message.text.contains("login.example.com"))
        }
        switch email {
        case .accountExists, .passwordChanged, .emailChangeTaken: #expect(!message.text.contains("48213975"))
        case .emailChanged: #expect(message.text.contains("ann@example.org") && !message.text.contains("48213975"))
        case .signInLink: #expect(message.text.contains("oob_code=x"))
        default: #expect(message.text.contains("48213975"))
        }
    }
}

@Suite("Branded emails")
struct BrandedMailTests {
    let values: [String: Any] = ["code": "48213975", "minutes": 10, "issuer_host": "login.example.com", "email": "alice@example.com",
                                 "link": "https://login.example.com/x"]

    /// A folder of its own for a test's files.
    func folder(_ files: [String: String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-mail-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for (name, text) in files { try text.write(toFile: path + "/" + name, atomically: true, encoding: .utf8) }
        return path
    }

    @Test("the product name and accent colour in every email; a mail folder's part in place of the built-in one, the rest kept")
    func branded() throws {
        var branding = Branding()
        branding.productName = "Acme ID"
        branding.accentColor = "#aa3300"
        branding.mailDirectory = try folder([
            "sign-in-code.ru.subject": "{{product}}: вход",
            "sign-in-code.en.txt": "Your {{product}} code: {{code}}\n",
            "mail-footer.html": "<p>Acme Inc.</p></div></body></html>",
        ])
        let templates = try MailTemplates(branding: branding)
        let link = try templates.render("sign-in-link", language: .en, values: values)
        #expect(link.html.contains(">Acme ID</p>") && link.html.contains("background:#aa3300") && link.html.contains("<p>Acme Inc.</p>"))
        #expect(!link.html.contains("Tessera") && !link.html.contains("#1f6f43"))
        let english = try templates.render("sign-in-code", language: .en, values: values)
        #expect(english.text == "Your Acme ID code: 48213975\n")
        #expect(english.subject == (try MailTemplates().render("sign-in-code", language: .en, values: values)).subject, "the subject kept")
        let russian = try templates.render("sign-in-code", language: .ru, values: values)
        #expect(russian.subject == "Acme ID: вход" && russian.text.contains("48213975") && russian.text.contains("Код действует"))
        let plain = try MailTemplates().render("sign-in-link", language: .en, values: values)
        #expect(plain.html.contains(">Tessera</p>") && plain.html.contains("background:#1f6f43"))
        #expect(MailAddress.defaultSender(issuer: "https://id.example.com", product: "Acme ID").displayName == "Acme ID")
    }

    @Test("a mail folder refused at start, with the reason: an unknown file, a part that doesn't compile, no folder")
    func refused() throws {
        func refusal(_ files: [String: String]?) -> String? {
            var branding = Branding()
            do {
                branding.mailDirectory = try files.map(folder) ?? "/no/such/folder"
                _ = try MailTemplates(branding: branding)
                return nil
            } catch { return "\(error)" }
        }
        #expect(refusal(["sign-in-kode.en.txt": "x"])?.contains("sign-in-kode.en.txt is not an email part") == true)
        #expect(refusal(["sign-in-code.de.txt": "x"])?.contains("LANG one of en, ru") == true)
        #expect(refusal(["sign-in-code.en.html": "{{#code}} never closed"])?.contains("sign-in-code.en.html does not compile") == true)
        #expect(refusal(["mail-header.html": "{{/nothing}}"])?.contains("mail-header.html does not compile") == true)
        #expect(refusal(["sign-in-code.en.txt": "{{#code}} never closed"])?.contains("sign-in-code.en.txt does not compile") == true)
        #expect(refusal(["sign-in-code.ru.subject": "{{/code}}"])?.contains("sign-in-code.ru.subject does not compile") == true)
        #expect(refusal(nil)?.contains("not a folder") == true)
    }
}

@Suite("Templates compiled once per process")
struct CompiledTemplatesTests {
    struct Refused: Error { var name: String }

    @Test("a set is compiled once, ahead or at its first use, and one that doesn't compile is tried again")
    func once() throws {
        let templates = CompiledTemplates()
        let greeting = ["greeting": "Hello {{name}}", "farewell": "{{> greeting}}, goodbye"]
        let first = try templates.library(greeting) { name, _ in Refused(name: name) }
        let again = try templates.library(greeting) { name, _ in Refused(name: name) }
        #expect(templates.compiled == 1)
        #expect(first.render(["name": "Ann"], withTemplate: "farewell") == "Hello Ann, goodbye")
        #expect(again.render(["name": "Bo"], withTemplate: "greeting") == "Hello Bo")

        // Another text is another set, whatever its names.
        _ = try templates.library(["greeting": "Hi {{name}}"]) { name, _ in Refused(name: name) }
        #expect(templates.compiled == 2)

        let broken = ["fine": "{{x}}", "broken": "{{#open}} never closed"]
        for attempt in 1...2 {
            #expect(throws: Refused.self) { try templates.library(broken) { name, _ in Refused(name: name) } }
            #expect(templates.compiled == 2 + attempt)
        }
    }

    @Test("a set asked for while it compiles ahead waits for it instead of compiling it again")
    func ahead() async throws {
        let templates = CompiledTemplates()
        // Long enough that the first ask comes while the thread still compiles it.
        let page = (0..<400).map { "<p>{{line\($0)}}</p>" }.joined(separator: "\n")
        let set = ["page": page, "other": "{{> page}}"]
        templates.compileAhead { [set] }
        let library = try templates.library(set) { name, _ in Refused(name: name) }
        // Whichever began first, the other found it compiling (or compiled) and didn't begin again.
        try await Task.sleep(for: .milliseconds(300))
        #expect(templates.compiled == 1)
        #expect(library.render(["line7": "seven"], withTemplate: "other")?.contains("<p>seven</p>") == true)
    }
}
