/// The two layouts of Tessera's emails. The sentences come from `Resources/mail/` (see
/// ``MailTemplates/builtIn``); these place them, in plain text and in HTML with inline styles.
extension MailTemplates {
    /// Builds the text and HTML of one email from the same sentences: the `intro` followed by
    /// the code set large (when there is an intro), the paragraphs, then the fine print set small.
    static func codeMail(subject: String, intro: String? = nil, paragraphs: [String], finePrint: String? = nil) -> MailTemplateSource {
        var text: [String] = []
        var html: [String] = []
        if let intro {
            text.append("\(intro) {{code}}")
            html.append(#"<p style="margin:0 0 16px">\#(intro)</p>"#)
            html.append(#"<p style="margin:0 0 24px;font-size:32px;font-weight:700;letter-spacing:4px">{{code}}</p>"#)
        }
        for (index, paragraph) in paragraphs.enumerated() {
            text.append(paragraph)
            let margin = index == paragraphs.count - 1 && finePrint == nil ? "0" : "0 0 16px"
            html.append(#"<p style="margin:\#(margin)">\#(paragraph)</p>"#)
        }
        if let finePrint {
            text.append(finePrint)
            html.append(#"<p style="margin:0;color:#5c6370;font-size:14px">\#(finePrint)</p>"#)
        }
        return MailTemplateSource(subject: subject, text: text.joined(separator: "\n\n") + "\n", html: html.joined(separator: "\n") + "\n")
    }

    /// A sentence, the link as a button (and in full, for clients that hide buttons), a sentence, the fine print.
    static func linkMail(subject: String, before: String, button: String, after: String, finePrint: String) -> MailTemplateSource {
        let text = "\(before)\n\n{{link}}\n\n\(after)\n\n\(finePrint)\n"
        let html = """
            <p style="margin:0 0 16px">\(before)</p>
            <p style="margin:0 0 24px"><a href="{{link}}" style="display:inline-block;padding:12px 24px;background:{{accent}};color:#ffffff;border-radius:8px;font-weight:600;text-decoration:none">\(button)</a></p>
            <p style="margin:0 0 16px;font-size:14px;word-break:break-all">{{link}}</p>
            <p style="margin:0 0 16px">\(after)</p>
            <p style="margin:0;color:#5c6370;font-size:14px">\(finePrint)</p>

            """
        return MailTemplateSource(subject: subject, text: text, html: html)
    }
}
