import Foundation
import Mustache

/// One email in one language, as Mustache templates. The subject and text are plain text
/// (values inserted as they are); the HTML escapes every `{{value}}` and is wrapped in
/// the shared layout (`mail-header` / `mail-footer`).
public struct MailTemplateSource: Sendable {
    public var subject: String
    public var text: String
    public var html: String

    public init(subject: String, text: String, html: String) {
        self.subject = subject
        self.text = text
        self.html = html
    }
}

/// A rendered email, ready for a ``MailMessage``.
public struct RenderedMail: Sendable, Equatable {
    public var subject: String
    public var text: String
    public var html: String
}

/// The emails Tessera sends, in every ``PageLanguage``, compiled in like the hosted pages.
/// A feature that sends mail adds its entry to ``MailTemplates/builtIn`` (English is
/// required; other languages fall back to it) and renders it by name.
public struct MailTemplates: Sendable {
    let library: MustacheLibrary
    let available: Set<String>

    public init(_ templates: [String: [PageLanguage: MailTemplateSource]] = MailTemplates.builtIn) throws {
        var library = MustacheLibrary()
        try library.register(Self.header, named: "mail-header")
        try library.register(Self.footer, named: "mail-footer")
        for (name, languages) in templates {
            guard languages[.en] != nil else { throw MailError(description: "email template '\(name)' has no English version") }
            for (language, source) in languages {
                let key = "\(name).\(language.rawValue)"
                try library.register("{{% CONTENT_TYPE: TEXT}}" + source.subject, named: key + ".subject")
                try library.register("{{% CONTENT_TYPE: TEXT}}" + source.text, named: key + ".text")
                try library.register("{{> mail-header}}" + source.html + "{{> mail-footer}}", named: key + ".html")
            }
        }
        self.library = library
        available = Set(templates.flatMap { name, languages in languages.keys.map { "\(name).\($0.rawValue)" } })
    }

    /// Renders `name` in `language` (English when that language has no version).
    public func render(_ name: String, language: PageLanguage, values: [String: Any]) throws -> RenderedMail {
        let key = available.contains("\(name).\(language.rawValue)") ? "\(name).\(language.rawValue)" : "\(name).en"
        // Mustache treats "" as true in sections: drop empty strings so `{{#x}}` means "x is set".
        var context = values.filter { ($0.value as? String) != "" }
        context["lang"] = available.contains("\(name).\(language.rawValue)") ? language.rawValue : PageLanguage.en.rawValue
        guard let subject = library.render(context, withTemplate: key + ".subject") else { throw MailError.unknownTemplate(name) }
        context["subject"] = subject
        guard let text = library.render(context, withTemplate: key + ".text"),
              let html = library.render(context, withTemplate: key + ".html") else { throw MailError.unknownTemplate(name) }
        return RenderedMail(subject: subject.trimmingCharacters(in: .whitespacesAndNewlines), text: text, html: html)
    }

    /// A message to `to`, rendered from template `name`.
    public func message(_ name: String, to: String, language: PageLanguage, values: [String: Any],
                        metadata: [String: String] = [:], expiresAt: Int64? = nil) throws -> MailMessage {
        let mail = try render(name, language: language, values: values)
        let lang = available.contains("\(name).\(language.rawValue)") ? language : .en
        var metadata = metadata
        if metadata["template"] == nil { metadata["template"] = name }
        return MailMessage(to: to, subject: mail.subject, text: mail.text, html: mail.html, language: lang.rawValue,
                           metadata: metadata, expiresAt: expiresAt)
    }

    /// Every email, by name.
    public static let builtIn: [String: [PageLanguage: MailTemplateSource]] = [
        "one-time-code": oneTimeCode,
        // Native sign-in API (NativeAuthMailTemplates.swift).
        "sign-up-code": signUpCode,
        "sign-in-code": signInCode,
        "password-reset-code": passwordResetCode,
        "account-exists": accountExists,
        "password-changed": passwordChanged,
        // Email-link sign-in (EmailLinkMailTemplates.swift).
        "sign-in-link": signInLink,
    ]

    // MARK: Templates

    /// A generic one-time code. Values: `code`, optional `minutes` (how long it is valid).
    static let oneTimeCode: [PageLanguage: MailTemplateSource] = [
        .en: MailTemplateSource(
            subject: "Your code is {{code}}",
            text: """
            Your code is {{code}}

            Enter it in the app to continue.{{#minutes}} It is valid for {{minutes}} min.{{/minutes}}

            If you didn't ask for this code, you can ignore this email.

            """,
            html: """
            <p style="margin:0 0 16px">Your code is</p>
            <p style="margin:0 0 24px;font-size:32px;font-weight:700;letter-spacing:4px">{{code}}</p>
            <p style="margin:0 0 16px">Enter it in the app to continue.{{#minutes}} It is valid for {{minutes}} min.{{/minutes}}</p>
            <p style="margin:0;color:#5c6370;font-size:14px">If you didn't ask for this code, you can ignore this email.</p>

            """),
        .ru: MailTemplateSource(
            subject: "Ваш код: {{code}}",
            text: """
            Ваш код: {{code}}

            Введите его в приложении, чтобы продолжить.{{#minutes}} Код действует {{minutes}} мин.{{/minutes}}

            Если вы не запрашивали код, просто проигнорируйте это письмо.

            """,
            html: """
            <p style="margin:0 0 16px">Ваш код:</p>
            <p style="margin:0 0 24px;font-size:32px;font-weight:700;letter-spacing:4px">{{code}}</p>
            <p style="margin:0 0 16px">Введите его в приложении, чтобы продолжить.{{#minutes}} Код действует {{minutes}} мин.{{/minutes}}</p>
            <p style="margin:0;color:#5c6370;font-size:14px">Если вы не запрашивали код, просто проигнорируйте это письмо.</p>

            """),
    ]

    /// Email clients ignore style sheets: the layout uses inline styles only.
    static let header = """
    <!doctype html>
    <html lang="{{lang}}">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>{{subject}}</title>
    </head>
    <body style="margin:0;padding:24px;background:#f4f5f7;color:#1b1d21;font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif">
    <div style="max-width:480px;margin:0 auto;background:#ffffff;border:1px solid #c9ced6;border-radius:12px;padding:32px">
    <p style="margin:0 0 16px;font-weight:700;letter-spacing:.04em;color:#1f6f43">Tessera</p>

    """

    static let footer = """
    </div>
    </body>
    </html>

    """
}
