import Foundation
@_exported import TesseraAuth
import TesseraAuthCore

// Firebase's email-link sign-in (seed 004) in Firebase's shape, over TesseraAuth's
// `EmailLinkClient`: a team moving from Firebase changes `import FirebaseAuth` to
// `import TesseraAuthFirebase`. A thin layer that only forwards and renames, so the behaviour is
// EmailLinkClient's.

/// Passwordless sign-in by a link in an email, with Firebase's names — `EmailLinkClient` underneath.
///
/// ```swift
/// let auth = EmailLinkAuth(issuer: URL(string: "https://id.example.com")!, clientID: "shop",
///                          pendingEmails: UserDefaultsPendingEmailStore())
/// var settings = ActionCodeSettings(url: URL(string: "https://shop.example.com/finish"), handleCodeInApp: true)
/// settings.setIOSBundleID(Bundle.main.bundleIdentifier!)
/// try await auth.sendSignInLink(toEmail: email, actionCodeSettings: settings)   // remembers the address
///
/// // later, when the app is opened with `link`:
/// if auth.isSignIn(withEmailLink: link) {
///     let email = await auth.pendingEmail() ?? askForTheAddress()              // another device: ask
///     let result = try await auth.signIn(withEmail: email, link: link)
///     try await session.adopt(result.authorization)                            // an AuthState
/// }
/// ```
public final class EmailLinkAuth: Sendable {
    /// The Tessera client every call goes through.
    public let links: EmailLinkClient

    /// Firebase's shape over `links`.
    public init(_ links: EmailLinkClient) {
        self.links = links
    }

    /// Email links through `client`, remembering addresses in `pendingEmails`.
    public convenience init(client: NativeAuthClient, pendingEmails: (any PendingEmailStore)? = nil) {
        self.init(EmailLinkClient(client: client, pendingEmails: pendingEmails))
    }

    /// Email links for the first-party client `clientID` at `issuer`.
    ///
    /// - Parameters:
    ///   - issuer: the provider's issuer URL.
    ///   - clientID: the app's client ID, registered `--first-party`.
    ///   - scopes: what sign-ins ask for unless they say otherwise.
    ///   - pendingEmails: where to remember the address a link was sent to.
    ///   - transport: how HTTP is sent; `URLSessionTransport` when nil.
    ///   - now: the clock for ID-token validation.
    public convenience init(issuer: URL, clientID: String, scopes: [String] = NativeAuthClient.defaultScopes,
                            pendingEmails: (any PendingEmailStore)? = nil, transport: (any HTTPTransport)? = nil,
                            now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(EmailLinkClient(issuer: issuer, clientID: clientID, scopes: scopes, pendingEmails: pendingEmails,
                                  transport: transport ?? URLSessionTransport(), now: now))
    }

    /// The native sign-in client underneath.
    public var client: NativeAuthClient { links.client }
    /// Where the address a link was sent to is remembered.
    public var pendingEmails: (any PendingEmailStore)? { links.pendingEmails }
    /// The OpenID Connect client of the same `client_id` and provider, for `AuthState`.
    public var oidc: OIDCClient { links.oidc }

    /// Firebase's `sendSignInLink(toEmail:actionCodeSettings:)`: `EmailLinkClient.sendSignInLink(to:options:language:)`.
    ///
    /// - Parameters:
    ///   - email: the address to send the link to.
    ///   - actionCodeSettings: where the link leads back and which apps open it.
    ///   - languageCode: the email's language (Firebase's `Auth.languageCode`).
    @discardableResult
    public func sendSignInLink(toEmail email: String, actionCodeSettings: ActionCodeSettings = ActionCodeSettings(),
                               languageCode: String? = nil) async throws(EmailLinkError) -> EmailLinkSent {
        do { return try await links.sendSignInLink(to: email, options: actionCodeSettings.options, language: languageCode) } catch {
            throw EmailLinkError(error)
        }
    }

    /// Firebase's `isSignIn(withEmailLink:)`: whether `link` is a sign-in link.
    public func isSignIn(withEmailLink link: String) -> Bool { links.isSignInLink(link) }

    /// Whether `url` is a sign-in link (the string form).
    public func isSignIn(withEmailLink url: URL) -> Bool { links.isSignInLink(url) }

    /// The address remembered when the link was sent from this device, or `nil`: then ask the user.
    public func pendingEmail() async -> String? { await links.pendingEmail() }

    /// Firebase's `signIn(withEmail:link:)`: signs in with the link sent to `email`.
    ///
    /// - Throws: ``EmailLinkError/Code/invalidEmail`` (not the address the link was sent to),
    ///   ``EmailLinkError/Code/invalidActionCode``, ``EmailLinkError/Code/expiredActionCode``.
    public func signIn(withEmail email: String, link: String, scopes: [String]? = nil) async throws(EmailLinkError) -> AuthDataResult {
        try await signIn(with: EmailAuthProvider.credential(withEmail: email, link: link), scopes: scopes)
    }

    /// Signs in with an email-link credential (``signIn(withEmail:link:scopes:)``).
    public func signIn(with credential: EmailAuthCredential, scopes: [String]? = nil) async throws(EmailLinkError) -> AuthDataResult {
        try await run(.signIn) { () async throws(AuthError) -> EmailLinkClient.Completion in try await links.complete(.signIn, email: credential.email, link: credential.link, accessToken: nil, scopes: scopes) }
    }

    /// Adds the credential's address to the signed-in user of `accessToken`.
    ///
    /// - Throws: ``EmailLinkError/Code/credentialAlreadyInUse``, ``EmailLinkError/Code/invalidUserToken``.
    public func link(with credential: EmailAuthCredential, accessToken: String,
                     scopes: [String]? = nil) async throws(EmailLinkError) -> AuthDataResult {
        try await run(.link) { () async throws(AuthError) -> EmailLinkClient.Completion in
            try await links.complete(.link, email: credential.email, link: credential.link, accessToken: accessToken, scopes: scopes)
        }
    }

    /// Firebase's `currentUser.link(with:)`: links the credential's address to the user of
    /// `session`, whose tokens become the answer's.
    public func link(with credential: EmailAuthCredential, for session: AuthState,
                     scopes: [String]? = nil) async throws(EmailLinkError) -> AuthDataResult {
        try await run(.link) { () async throws(AuthError) -> EmailLinkClient.Completion in
            try await links.completeInSession(.link, email: credential.email, link: credential.link, session: session, scopes: scopes)
        }
    }

    /// Proves again that the user of `accessToken` holds the credential's address.
    ///
    /// - Throws: ``EmailLinkError/Code/userMismatch``, ``EmailLinkError/Code/invalidUserToken``.
    public func reauthenticate(with credential: EmailAuthCredential, accessToken: String,
                               scopes: [String]? = nil) async throws(EmailLinkError) -> AuthDataResult {
        try await run(.reauthenticate) { () async throws(AuthError) -> EmailLinkClient.Completion in
            try await links.complete(.reauthenticate, email: credential.email, link: credential.link, accessToken: accessToken, scopes: scopes)
        }
    }

    /// Firebase's `currentUser.reauthenticate(with:)`: re-authenticates the user of `session`,
    /// whose tokens become the fresh ones.
    public func reauthenticate(with credential: EmailAuthCredential, for session: AuthState,
                               scopes: [String]? = nil) async throws(EmailLinkError) -> AuthDataResult {
        try await run(.reauthenticate) { () async throws(AuthError) -> EmailLinkClient.Completion in
            try await links.completeInSession(.reauthenticate, email: credential.email, link: credential.link, session: session,
                                              scopes: scopes)
        }
    }

    /// Runs a completion, giving its answer Firebase's shape and its error Firebase's codes.
    private func run(_ operation: EmailLinkOperation,
                     _ body: () async throws(AuthError) -> EmailLinkClient.Completion) async throws(EmailLinkError) -> AuthDataResult {
        do {
            let completion = try await body()
            return AuthDataResult(authorization: completion.authorization, isNewUser: completion.authorization.isNewUser,
                                  email: completion.email, operation: operation)
        } catch {
            throw EmailLinkError(error)
        }
    }
}

/// A completed email-link sign-in, link or re-authentication (Firebase's `AuthDataResult`):
/// validated tokens, and whether the link created the account.
public struct AuthDataResult: Sendable, Equatable {
    /// The tokens and the validated ID token; `AuthState.adopt(_:)` makes them a session.
    public var authorization: AuthorizationResult
    /// `is_new_user`: this sign-in created the account (Firebase's `additionalUserInfo.isNewUser`).
    public var isNewUser: Bool
    /// The account's address after the operation.
    public var email: String
    /// What was done.
    public var operation: EmailLinkOperation

    /// A result from its parts.
    public init(authorization: AuthorizationResult, isNewUser: Bool, email: String, operation: EmailLinkOperation) {
        self.authorization = authorization
        self.isNewUser = isNewUser
        self.email = email
        self.operation = operation
    }

    /// The signed-in user, from the ID token.
    public var user: AuthUser? { authorization.user }
    /// The tokens, ready to store.
    public var tokens: TokenSet { authorization.tokens }
}


extension AuthUser {
    /// Firebase's `User.isEmailVerified`: `emailVerified`.
    public var isEmailVerified: Bool { emailVerified }
    /// Firebase's `User.displayName`: `name`.
    public var displayName: String? { name }
}
