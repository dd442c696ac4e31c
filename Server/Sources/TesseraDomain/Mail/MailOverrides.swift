import Foundation

/// The operator's replacements for parts of the emails, read from the `mail-dir` folder at
/// start (docs/configuration.md, "Branding"):
/// - `mail-header.html`, `mail-footer.html`: the layout around every email's HTML;
/// - `NAME.LANG.subject`, `NAME.LANG.txt`, `NAME.LANG.html`: one part of one email in one
///   language (`sign-in-code.ru.html`); the parts left out stay the built-in ones.
///
/// A file of any other name is refused with the list of names, so a typo does not go unseen.
struct MailOverrides {
    var header: String?
    var footer: String?
    /// Replacements by email and language: `subject`, `txt` or `html` → text.
    var parts: [String: [PageLanguage: [String: String]]] = [:]

    init(folder: String, known: [String: [PageLanguage: MailTemplateSource]]) throws {
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            throw ConfigurationError("mail-dir '\(folder)' is not a folder this server can read")
        }
        for file in files.sorted() where !file.hasPrefix(".") {
            guard let data = FileManager.default.contents(atPath: (folder as NSString).appendingPathComponent(file)) else {
                throw ConfigurationError("mail-dir: cannot read \(file)")
            }
            let text = String(decoding: data, as: UTF8.self)
            switch file {
            case "mail-header.html": header = text
            case "mail-footer.html": footer = text
            default:
                let pieces = file.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                guard pieces.count == 3, known[pieces[0]] != nil, let language = PageLanguage(rawValue: pieces[1]),
                      ["subject", "txt", "html"].contains(pieces[2]) else {
                    throw ConfigurationError("mail-dir: \(file) is not an email part: use mail-header.html, mail-footer.html "
                        + "or NAME.LANG.subject|txt|html with NAME one of \(known.keys.sorted().joined(separator: ", ")) "
                        + "and LANG one of \(PageLanguage.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                parts[pieces[0], default: [:]][language, default: [:]][pieces[2]] = text
            }
        }
    }

    func apply(to templates: inout [String: [PageLanguage: MailTemplateSource]]) {
        for (name, languages) in parts {
            for (language, replaced) in languages {
                var source = templates[name]?[language] ?? templates[name]![.en]!
                if let subject = replaced["subject"] { source.subject = subject }
                if let text = replaced["txt"] { source.text = text }
                if let html = replaced["html"] { source.html = html }
                templates[name]![language] = source
            }
        }
    }
}
