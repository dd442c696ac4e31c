import Testing
@testable import TesseraServer
@testable import TesseraDomain
@testable import TesseraSQL

@Suite("Native sign-in emails")
struct NativeMailTemplateTests {
    static let codeTemplates = ["sign-up-code", "sign-in-code", "password-reset-code"]
    static let noticeTemplates = ["account-exists", "password-changed"]
    static let all = codeTemplates + noticeTemplates

    let templates = try! MailTemplates()
    let values: [String: Any] = ["code": "48213975", "minutes": 10, "issuer_host": "login.example.com", "email": "alice@example.com"]

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
