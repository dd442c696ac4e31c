import Foundation
import TesseraAuthCore

/// Makes email-link credentials (Firebase's `EmailAuthProvider`).
public enum EmailAuthProvider {
    /// The provider's identifier, as Firebase names the email provider.
    public static let id = "password"
    /// The sign-in method of an email link, as Firebase names it.
    public static let emailLinkSignInMethod = "emailLink"

    /// A credential of the address a sign-in link was sent to and the link (the URL the app
    /// was opened with), for ``EmailLinkAuth/signIn(with:scopes:)``,
    /// ``EmailLinkAuth/link(with:for:scopes:)`` and ``EmailLinkAuth/reauthenticate(with:for:scopes:)``.
    public static func credential(withEmail email: String, link: String) -> EmailAuthCredential {
        EmailAuthCredential(email: email, link: link)
    }
}

/// An email address and the sign-in link sent to it: what proves the user owns the address.
///
/// The address is required even though the link carries a code, as seed 004's security
/// section says: a forwarded or intercepted link alone must not sign anyone in. The server
/// compares it with the address the link was sent to.
public struct EmailAuthCredential: Sendable, Equatable {
    /// The address the link was sent to.
    public var email: String
    /// The link as received: the provider's `…/emaillink/v1.0/signin?mode=signIn&oob_code=…`,
    /// or the app's continue URL with `mode=signIn&oob_code=…` added.
    public var link: String
    /// ``EmailAuthProvider/id``.
    public var provider: String { EmailAuthProvider.id }

    /// A credential of `email` and `link`.
    public init(email: String, link: String) {
        self.email = email
        self.link = link
    }

    /// The link's one-time code, when it is a sign-in link.
    public var oobCode: String? { EmailLinkParser.oobCode(in: link) }
}
