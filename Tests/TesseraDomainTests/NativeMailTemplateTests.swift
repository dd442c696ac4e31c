import Testing
@testable import TesseraDomain

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
        case .accountExists, .passwordChanged: #expect(!message.text.contains("48213975"))
        case .signInLink: #expect(message.text.contains("oob_code=x"))
        default: #expect(message.text.contains("48213975"))
        }
    }
}
