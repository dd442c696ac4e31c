/// The email of email-link sign-in. Values: `link` (the sign-in URL), `email`,
/// `issuer_host`, `minutes` (how long the link works).
extension MailTemplates {
    static let signInLink: [PageLanguage: MailTemplateSource] = [
        .en: linkMail(
            subject: "Sign in to {{issuer_host}}",
            before: "Open this link to sign in to {{issuer_host}} as {{email}}:",
            button: "Sign in",
            after: "The link works once, for {{minutes}} min. Open it on the device where you asked for it.",
            finePrint: "Don't forward this email: anyone with the link can sign in as you. If you didn't ask to sign in, ignore it."),
        .ru: linkMail(
            subject: "Вход на {{issuer_host}}",
            before: "Откройте эту ссылку, чтобы войти на {{issuer_host}} как {{email}}:",
            button: "Войти",
            after: "Ссылка сработает один раз и действует {{minutes}} мин. Откройте её на том устройстве, где вы её запросили.",
            finePrint: "Не пересылайте это письмо: по ссылке можно войти в вашу учётную запись. Если вы не запрашивали вход, просто проигнорируйте его."),
    ]

    static func linkMail(subject: String, before: String, button: String, after: String, finePrint: String) -> MailTemplateSource {
        let text = "\(before)\n\n{{link}}\n\n\(after)\n\n\(finePrint)\n"
        let html = """
            <p style="margin:0 0 16px">\(before)</p>
            <p style="margin:0 0 24px"><a href="{{link}}" style="display:inline-block;padding:12px 24px;background:#1f6f43;color:#ffffff;border-radius:8px;font-weight:600;text-decoration:none">\(button)</a></p>
            <p style="margin:0 0 16px;font-size:14px;word-break:break-all">{{link}}</p>
            <p style="margin:0 0 16px">\(after)</p>
            <p style="margin:0;color:#5c6370;font-size:14px">\(finePrint)</p>

            """
        return MailTemplateSource(subject: subject, text: text, html: html)
    }
}
