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
    /// What every email may read besides its own values: `product` and `accent`.
    let brand: [String: String]

    /// The emails of `templates`, with `branding`'s product name and accent colour, and each
    /// part its mail folder holds (``MailOverrides``) in place of the built-in one.
    public init(_ templates: [String: [PageLanguage: MailTemplateSource]] = MailTemplates.builtIn,
                branding: Branding = Branding()) throws {
        let registered = try Self.registered(templates, branding: branding)
        library = try CompiledTemplates.shared.library(registered) { name, error in
            ConfigurationError("mail-dir: \(Self.file(of: name)) does not compile: \(error)")
        }
        available = Set(registered.keys.compactMap { $0.hasSuffix(".subject") ? String($0.dropLast(".subject".count)) : nil })
        brand = ["product": branding.name, "accent": branding.accent]
    }

    /// What the library of `templates` registers, by name: the layout's two parts, and each
    /// email's subject, text and HTML (in the layout) in each of its languages.
    static func registered(_ templates: [String: [PageLanguage: MailTemplateSource]],
                           branding: Branding) throws -> [String: String] {
        var templates = templates
        var header = Self.header, footer = Self.footer
        if let folder = branding.mailDirectory, !folder.isEmpty {
            let overrides = try MailOverrides(folder: folder, known: templates)
            header = overrides.header ?? header
            footer = overrides.footer ?? footer
            overrides.apply(to: &templates)
        }
        var registered = ["mail-header": header, "mail-footer": footer]
        for (name, languages) in templates {
            guard languages[.en] != nil else { throw MailError(description: "email template '\(name)' has no English version") }
            for (language, source) in languages {
                let key = "\(name).\(language.rawValue)"
                registered[key + ".subject"] = "{{% CONTENT_TYPE: TEXT}}" + source.subject
                registered[key + ".text"] = "{{% CONTENT_TYPE: TEXT}}" + source.text
                registered[key + ".html"] = "{{> mail-header}}" + source.html + "{{> mail-footer}}"
            }
        }
        return registered
    }

    /// The file of the mail folder a registered template comes from, for its error.
    static func file(of name: String) -> String {
        if name == "mail-header" || name == "mail-footer" { return name + ".html" }
        return name.hasSuffix(".text") ? String(name.dropLast(".text".count)) + ".txt" : name
    }

    /// The built-in emails with `branding`'s overrides, to compile ahead
    /// (``CompiledTemplates/compileAhead(_:)``); nil when they can't be read (the first
    /// ``init(_:branding:)`` says why).
    package static func compileAhead(branding: Branding) -> [String: String]? {
        try? registered(builtIn, branding: branding)
    }

    /// Renders `name` in `language` (English when that language has no version).
    public func render(_ name: String, language: PageLanguage, values: [String: Any]) throws -> RenderedMail {
        let key = available.contains("\(name).\(language.rawValue)") ? "\(name).\(language.rawValue)" : "\(name).en"
        // Mustache treats "" as true in sections: drop empty strings so `{{#x}}` means "x is set".
        var context = values.filter { ($0.value as? String) != "" }.merging(brand) { value, _ in value }
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

    /// Every email, by name, in every language: the sentences from `Resources/mail/mail-<lang>.json`
    /// (one object per email: its `layout` and the sentences the layout places), laid out by
    /// ``codeMail(subject:intro:paragraphs:finePrint:)`` or ``linkMail(subject:before:button:after:finePrint:)``.
    public static let builtIn: [String: [PageLanguage: MailTemplateSource]] = {
        var templates: [String: [PageLanguage: MailTemplateSource]] = [:]
        for (language, file) in [(PageLanguage.en, PackageResources.mail_en_json), (.ru, PackageResources.mail_ru_json)] {
            // The files are part of the build: one that does not parse is a bug a test catches.
            let texts = try! JSONDecoder().decode([String: MailTexts].self, from: Data(file))
            for (name, mail) in texts { templates[name, default: [:]][language] = mail.source }
        }
        return templates
    }()

    /// Email clients ignore style sheets: the layout uses inline styles only.
    static let header = String(decoding: PackageResources.mail_header_html, as: UTF8.self)
    static let footer = String(decoding: PackageResources.mail_footer_html, as: UTF8.self)
}

/// One email's sentences in one language, as `Resources/mail/mail-<lang>.json` holds them.
struct MailTexts: Decodable {
    enum Layout: String, Decodable {
        /// An optional intro with the code set large, paragraphs, fine print.
        case code
        /// A sentence, the link as a button and in full, a sentence, fine print.
        case link
    }

    var layout: Layout
    var subject: String
    var intro: String?
    var paragraphs: [String]?
    var before: String?
    var button: String?
    var after: String?
    var finePrint: String?

    var source: MailTemplateSource {
        switch layout {
        case .code:
            MailTemplates.codeMail(subject: subject, intro: intro, paragraphs: paragraphs ?? [], finePrint: finePrint)
        case .link:
            MailTemplates.linkMail(subject: subject, before: before ?? "", button: button ?? "", after: after ?? "",
                                   finePrint: finePrint ?? "")
        }
    }
}
