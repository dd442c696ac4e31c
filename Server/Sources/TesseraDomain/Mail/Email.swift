/// An email Tessera sends, and what it says: the typed way to choose a built-in template
/// (``MailTemplates/builtIn``) and fill it in.
public enum Email: Sendable, Equatable {
    /// A generic one-time code, valid `minutes` when given.
    case oneTimeCode(code: String, minutes: Int?)
    /// The native API's codes: signing up, signing in, resetting the password.
    case signUpCode(code: String, minutes: Int)
    case signInCode(code: String, minutes: Int)
    case passwordResetCode(code: String, minutes: Int)
    /// Sent instead of a sign-up code when the address already has an account.
    case accountExists
    /// After a password reset.
    case passwordChanged
    /// An email sign-in link, valid `minutes`.
    case signInLink(link: String, minutes: Int)
    /// A code that proves a new address an account is moving to.
    case emailChangeCode(code: String, minutes: Int)
    /// Sent instead of the code when the new address has an account of its own.
    case emailChangeTaken
    /// Tells the old address that the account moved to `newEmail`.
    case emailChanged(newEmail: String)

    /// The template's name in ``MailTemplates/builtIn``.
    public var templateName: String {
        switch self {
        case .oneTimeCode: "one-time-code"
        case .signUpCode: "sign-up-code"
        case .signInCode: "sign-in-code"
        case .passwordResetCode: "password-reset-code"
        case .accountExists: "account-exists"
        case .passwordChanged: "password-changed"
        case .signInLink: "sign-in-link"
        case .emailChangeCode: "email-change-code"
        case .emailChangeTaken: "email-change-taken"
        case .emailChanged: "email-changed"
        }
    }

    /// The name of every template an ``Email`` can choose: what `Resources/mail/` must hold.
    package static let everyTemplateName = [Email.oneTimeCode(code: "", minutes: nil), .signUpCode(code: "", minutes: 0),
                                    .signInCode(code: "", minutes: 0), .passwordResetCode(code: "", minutes: 0), .accountExists,
                                    .passwordChanged, .signInLink(link: "", minutes: 0), .emailChangeCode(code: "", minutes: 0), .emailChangeTaken,
                                    .emailChanged(newEmail: "")].map(\.templateName)

    /// The values the template reads, besides `email` and `issuer_host`, which every email has.
    var values: [String: Any] {
        switch self {
        case .oneTimeCode(let code, let minutes): minutes.map { ["code": code, "minutes": $0] } ?? ["code": code]
        case .signUpCode(let code, let minutes), .signInCode(let code, let minutes), .passwordResetCode(let code, let minutes),
             .emailChangeCode(let code, let minutes):
            ["code": code, "minutes": minutes]
        case .accountExists, .passwordChanged, .emailChangeTaken: [:]
        case .emailChanged(let newEmail): ["new_email": newEmail]
        case .signInLink(let link, let minutes): ["link": link, "minutes": minutes]
        }
    }
}

extension MailTemplates {
    /// `email` to `address`, in `language`, from the server at `issuerHost`.
    public func message(_ email: Email, to address: String, language: PageLanguage, issuerHost: String,
                        metadata: [String: String] = [:], expiresAt: Int64? = nil) throws -> MailMessage {
        var values = email.values
        values["email"] = address
        values["issuer_host"] = issuerHost
        return try message(email.templateName, to: address, language: language, values: values, metadata: metadata, expiresAt: expiresAt)
    }
}
