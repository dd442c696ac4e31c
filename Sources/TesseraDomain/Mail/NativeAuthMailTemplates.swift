/// The emails of the native sign-in API (sign-up, sign-in with a code, password reset).
///
/// Values, all strings unless noted: `email` (the account's address), `issuer_host` (the
/// provider's host, e.g. "login.example.com"); the code emails also take `code` and `minutes`
/// (how long the code is valid, a number).
extension MailTemplates {
    /// A code to confirm the address when creating an account.
    static let signUpCode: [PageLanguage: MailTemplateSource] = [
        .en: mail(
            subject: "Your verification code",
            intro: "Your verification code is",
            paragraphs: ["Enter it to confirm {{email}} and finish creating your account at {{issuer_host}}.{{#minutes}} It is valid for {{minutes}} min.{{/minutes}}"],
            finePrint: "If you didn't try to create an account, you can ignore this email: no account will be created."),
        .ru: mail(
            subject: "Код подтверждения",
            intro: "Ваш код подтверждения:",
            paragraphs: ["Введите его, чтобы подтвердить адрес {{email}} и завершить создание учётной записи на {{issuer_host}}.{{#minutes}} Код действует {{minutes}} мин.{{/minutes}}"],
            finePrint: "Если вы не создавали учётную запись, просто проигнорируйте это письмо: она не будет создана."),
    ]

    /// A code to sign in instead of a password.
    static let signInCode: [PageLanguage: MailTemplateSource] = [
        .en: mail(
            subject: "Your sign-in code",
            intro: "Your sign-in code is",
            paragraphs: ["Enter it to sign in to your account {{email}} at {{issuer_host}}.{{#minutes}} It is valid for {{minutes}} min.{{/minutes}}"],
            finePrint: "Don't share this code with anyone. If you didn't try to sign in, you can ignore this email."),
        .ru: mail(
            subject: "Код для входа",
            intro: "Ваш код для входа:",
            paragraphs: ["Введите его, чтобы войти в учётную запись {{email}} на {{issuer_host}}.{{#minutes}} Код действует {{minutes}} мин.{{/minutes}}"],
            finePrint: "Никому не сообщайте этот код. Если вы не пытались войти, просто проигнорируйте это письмо."),
    ]

    /// A code to set a new password.
    static let passwordResetCode: [PageLanguage: MailTemplateSource] = [
        .en: mail(
            subject: "Your password reset code",
            intro: "Your password reset code is",
            paragraphs: ["Enter it to set a new password for your account {{email}} at {{issuer_host}}.{{#minutes}} It is valid for {{minutes}} min.{{/minutes}}"],
            finePrint: "Don't share this code with anyone. If you didn't ask to reset your password, ignore this email: your password is unchanged."),
        .ru: mail(
            subject: "Код для сброса пароля",
            intro: "Код для сброса пароля:",
            paragraphs: ["Введите его, чтобы задать новый пароль для учётной записи {{email}} на {{issuer_host}}.{{#minutes}} Код действует {{minutes}} мин.{{/minutes}}"],
            finePrint: "Никому не сообщайте этот код. Если вы не запрашивали сброс пароля, просто проигнорируйте это письмо: ваш пароль остался прежним."),
    ]

    /// Sent instead of a sign-up code when the address already has an account, so that the
    /// sign-up response can be the same either way and does not reveal who has an account.
    static let accountExists: [PageLanguage: MailTemplateSource] = [
        .en: mail(
            subject: "You already have an account",
            paragraphs: [
                "Someone (maybe you) tried to create an account at {{issuer_host}} with this address, {{email}}.",
                "You already have an account with this address. Sign in instead, or reset your password if you've forgotten it.",
            ],
            finePrint: "If it wasn't you, you can ignore this email: nothing has changed in your account."),
        .ru: mail(
            subject: "У вас уже есть учётная запись",
            paragraphs: [
                "Кто-то (возможно, вы) пытался создать учётную запись на {{issuer_host}} с адресом {{email}}.",
                "У вас уже есть учётная запись с этим адресом. Войдите в неё, а если забыли пароль, сбросьте его.",
            ],
            finePrint: "Если это были не вы, просто проигнорируйте это письмо: в вашей учётной записи ничего не изменилось."),
    ]

    /// Sent after a password reset succeeded.
    static let passwordChanged: [PageLanguage: MailTemplateSource] = [
        .en: mail(
            subject: "Your password was changed",
            paragraphs: [
                "The password for your account {{email}} at {{issuer_host}} has been changed. All other sessions were signed out.",
                "If you did this, there is nothing else to do.",
                "If this wasn't you, reset your password again right away and contact the administrator of {{issuer_host}}.",
            ]),
        .ru: mail(
            subject: "Ваш пароль изменён",
            paragraphs: [
                "Пароль от учётной записи {{email}} на {{issuer_host}} изменён. Выполнен выход из всех остальных сеансов.",
                "Если это сделали вы, больше ничего делать не нужно.",
                "Если это были не вы, немедленно сбросьте пароль ещё раз и свяжитесь с администратором {{issuer_host}}.",
            ]),
    ]

    /// Builds the text and HTML of one email from the same sentences: the `intro` followed by
    /// the code set large (when there is an intro), the paragraphs, then the fine print set small.
    static func mail(subject: String, intro: String? = nil, paragraphs: [String], finePrint: String? = nil) -> MailTemplateSource {
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
}
