import Foundation
import TesseraCore

/// Passwordless sign-in by a link in an email (Firebase's email-link sign-in, seed 004), against
/// Tessera's `/emaillink/v1.0/send` and `/complete` (docs/email-link.md).
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
///     let email = try await auth.pendingEmail() ?? askForTheAddress()          // another device: ask
///     let result = try await auth.signIn(withEmail: email, link: link)
///     try await session.adopt(result.authorization)                            // an AuthState
/// }
/// ```
///
/// Linking the address to the signed-in user and re-authenticating take the ``AuthState`` of
/// the session (``link(with:for:scopes:)``, ``reauthenticate(with:for:scopes:)``), which supplies
/// a fresh access token and receives the new tokens.
///
/// Built on a ``NativeAuthClient``: the same discovery fetch, the same HTTP and error handling,
/// and ID tokens validated as ``OIDCClient`` validates them. Safe to share between tasks.
public final class EmailLinkAuth: Sendable {
    /// The native sign-in client whose `client_id`, provider, scopes and transport are used.
    public let client: NativeAuthClient
    /// Where the address a link was sent to is remembered on this device; `nil` remembers nothing.
    public let pendingEmails: (any PendingEmailStore)?

    /// Email links through `client`, remembering addresses in `pendingEmails`.
    public init(client: NativeAuthClient, pendingEmails: (any PendingEmailStore)? = nil) {
        self.client = client
        self.pendingEmails = pendingEmails
    }

    /// Email links for the first-party client `clientID` at `issuer`.
    ///
    /// - Parameters:
    ///   - issuer: the provider's issuer URL (its discovery document is under it).
    ///   - clientID: the app's client ID, registered `--first-party`.
    ///   - scopes: what sign-ins ask for unless they say otherwise.
    ///   - pendingEmails: where to remember the address a link was sent to.
    ///   - transport: how HTTP is sent (`TesseraAuth`'s initialiser without it uses `URLSessionTransport`).
    ///   - now: the clock for ID-token validation.
    public convenience init(issuer: URL, clientID: String, scopes: [String] = NativeAuthClient.defaultScopes,
                            pendingEmails: (any PendingEmailStore)? = nil, transport: any HTTPTransport,
                            now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(client: NativeAuthClient(issuer: issuer, clientID: clientID, scopes: scopes, transport: transport, now: now),
                  pendingEmails: pendingEmails)
    }

    /// The OpenID Connect client of the same `client_id` and provider, for ``AuthState``.
    public var oidc: OIDCClient { client.oidc }

    /// The email-link endpoints from discovery (`email_link_send_endpoint`,
    /// `email_link_complete_endpoint`), fetched with ``oidc``'s metadata.
    public func endpoints(forceRefresh: Bool = false) async throws -> EmailLinkEndpoints {
        try EmailLinkEndpoints(metadata: try await client.oidc.discover(forceRefresh: forceRefresh))
    }

    // MARK: Sending

    /// Sends a sign-in link to `email` (`/emaillink/v1.0/send`) and remembers the address in
    /// ``pendingEmails``.
    ///
    /// The answer is the same whether or not the address has an account: the first sign-in
    /// creates it. Failing to remember the address does not fail the call (the link is sent).
    ///
    /// - Parameters:
    ///   - email: the address to send the link to.
    ///   - actionCodeSettings: where the link leads back and which apps open it.
    ///   - languageCode: the email's language (`ui_locales`: `en`, `ru`); the device's
    ///     `Accept-Language` otherwise. Firebase's `Auth.languageCode`.
    /// - Returns: the address as the server normalised it and how long the link works.
    @discardableResult
    public func sendSignInLink(toEmail email: String, actionCodeSettings: ActionCodeSettings = ActionCodeSettings(),
                               languageCode: String? = nil) async throws(EmailLinkError) -> EmailLinkSent {
        try await run {
            var parameters = [("email", email)] + actionCodeSettings.parameters
            if let languageCode { parameters.append(("ui_locales", languageCode)) }
            let answer = try await client.post(to: try await endpoints().send, name: "email_link_send_endpoint", parameters)
            let wire = try answer.decode(EmailLinkSendAnswer.self, "email-link answer")
            let sent = EmailLinkSent(email: wire.email, expiresIn: wire.expiresIn.map(TimeInterval.init))
            try? await pendingEmails?.save(sent.email)
            return sent
        }
    }

    // MARK: Recognising a link

    /// Whether `link` is a sign-in link: the provider's `…/emaillink/v1.0/signin?mode=signIn&oob_code=…`,
    /// or a continue URL the link led to, with `mode=signIn&oob_code=…` added (also inside a
    /// `link` parameter that wraps it). Nothing is sent.
    public func isSignIn(withEmailLink link: String) -> Bool {
        EmailLinkParser.oobCode(in: link) != nil
    }

    /// Whether `url` is a sign-in link (the string form).
    public func isSignIn(withEmailLink url: URL) -> Bool {
        isSignIn(withEmailLink: url.absoluteString)
    }

    /// The address remembered when the link was sent from this device, or `nil` (another
    /// device, or no ``pendingEmails``): then ask the user for it.
    public func pendingEmail() async -> String? {
        try? await pendingEmails?.load()
    }

    // MARK: Completing

    /// Signs in with the link sent to `email` (`operation=signIn`): to the account of that
    /// address, created with the address verified on its first link. The ID token's `amr` is
    /// `["email"]`. Forgets the pending address.
    ///
    /// - Throws: ``EmailLinkError/Code/invalidEmail`` (not the address the link was sent to),
    ///   ``EmailLinkError/Code/invalidActionCode`` (used, unknown, or no sign-in link),
    ///   ``EmailLinkError/Code/expiredActionCode``.
    public func signIn(withEmail email: String, link: String, scopes: [String]? = nil) async throws(EmailLinkError) -> AuthDataResult {
        try await signIn(with: EmailAuthProvider.credential(withEmail: email, link: link), scopes: scopes)
    }

    /// Signs in with an email-link credential (``signIn(withEmail:link:scopes:)``).
    public func signIn(with credential: EmailAuthCredential, scopes: [String]? = nil) async throws(EmailLinkError) -> AuthDataResult {
        try await complete(credential, operation: .signIn, accessToken: nil, scopes: scopes)
    }

    /// Adds the credential's address to the signed-in user of `accessToken` (`operation=link`):
    /// it becomes the account's verified address. The answer carries new tokens for that user.
    ///
    /// - Throws: ``EmailLinkError/Code/credentialAlreadyInUse`` when another account has the
    ///   address (nothing changes; the link stays usable), ``EmailLinkError/Code/invalidUserToken``
    ///   without a valid access token of this client.
    public func link(with credential: EmailAuthCredential, accessToken: String,
                     scopes: [String]? = nil) async throws(EmailLinkError) -> AuthDataResult {
        try await complete(credential, operation: .link, accessToken: accessToken, scopes: scopes)
    }

    /// Links the credential's address to the user of `session` (Firebase's
    /// `currentUser.link(with:)`): uses a fresh access token of the session, and makes the
    /// answer's tokens — whose ID token has the new address — the session's, revoking the
    /// tokens they replace.
    public func link(with credential: EmailAuthCredential, for session: AuthState,
                     scopes: [String]? = nil) async throws(EmailLinkError) -> AuthDataResult {
        try await completeInSession(credential, operation: .link, session: session, scopes: scopes)
    }

    /// Proves again that the user of `accessToken` holds the credential's address
    /// (`operation=reauthenticate`), before a sensitive action: new tokens with a new `auth_time`.
    ///
    /// - Throws: ``EmailLinkError/Code/userMismatch`` when the link was sent to another address
    ///   than the user's (the link stays unused), ``EmailLinkError/Code/invalidUserToken``.
    public func reauthenticate(with credential: EmailAuthCredential, accessToken: String,
                               scopes: [String]? = nil) async throws(EmailLinkError) -> AuthDataResult {
        try await complete(credential, operation: .reauthenticate, accessToken: accessToken, scopes: scopes)
    }

    /// Re-authenticates the user of `session` (Firebase's `currentUser.reauthenticate(with:)`)
    /// and makes the fresh tokens the session's, revoking the tokens they replace.
    public func reauthenticate(with credential: EmailAuthCredential, for session: AuthState,
                               scopes: [String]? = nil) async throws(EmailLinkError) -> AuthDataResult {
        try await completeInSession(credential, operation: .reauthenticate, session: session, scopes: scopes)
    }

    // MARK: Internals

    /// `/emaillink/v1.0/complete` with the credential's address and code.
    func complete(_ credential: EmailAuthCredential, operation: EmailLinkOperation, accessToken: String?,
                  scopes: [String]?) async throws(EmailLinkError) -> AuthDataResult {
        guard let code = credential.oobCode else { throw EmailLinkError.notSignInLink }
        return try await run {
            var scopes = scopes ?? client.configuration.scopes
            if !scopes.contains("openid") { scopes.insert("openid", at: 0) }
            let headers = accessToken.map { ["Authorization": "Bearer " + $0] } ?? [:]
            let receivedAt = oidc.now()
            let answer = try await client.post(to: try await endpoints().complete, name: "email_link_complete_endpoint", [
                ("email", credential.email), ("oob_code", code), ("scope", scopes.joined(separator: " ")), ("operation", operation.rawValue),
            ], headers: headers)
            let tokens = try answer.decode(TokenResponse.self, "token response")
            let authorization = try await client.authorizationResult(from: tokens, receivedAt: receivedAt)
            if let pending = try? await pendingEmails?.load(), Self.sameAddress(pending, credential.email) {
                try? await pendingEmails?.remove()
            }
            return AuthDataResult(authorization: authorization, isNewUser: tokens.isNewUser ?? false,
                                  email: tokens.email ?? credential.email, operation: operation)
        }
    }

    /// ``complete(_:operation:accessToken:scopes:)`` for the user of `session`; the answer must
    /// be about the same user before it replaces the session's tokens.
    func completeInSession(_ credential: EmailAuthCredential, operation: EmailLinkOperation, session: AuthState,
                           scopes: [String]?) async throws(EmailLinkError) -> AuthDataResult {
        let current: TokenSet
        do {
            guard session.client.configuration.issuerIdentifier == oidc.configuration.issuerIdentifier,
                  session.client.configuration.clientID == client.configuration.clientID else {
                throw AuthError(.configuration, "the session belongs to another provider or client than this EmailLinkAuth")
            }
            current = try await session.freshTokens()
        } catch let error as AuthError where error.code == .notSignedIn {
            throw EmailLinkError(.invalidUserToken, failure: NativeAuthFailure(.invalidResponse, "not_signed_in", error.reason, underlying: error))
        } catch {
            throw EmailLinkError(NativeAuthFailure(error))
        }
        let result = try await complete(credential, operation: operation, accessToken: current.accessToken, scopes: scopes)
        try await run {
            let before = await session.idToken?.subject
            guard before == nil || result.authorization.idToken?.subject == before else {
                throw NativeAuthFailure.invalidResponse("the \(operation.rawValue) answer is about another user than the session's")
            }
            try await session.adopt(result.authorization)
            if let replaced = current.refreshToken, replaced != result.tokens.refreshToken {
                try? await oidc.revoke(replaced, typeHint: .refreshToken)
            }
        }
        return result
    }

    /// Runs `body`, turning whatever it throws into an ``EmailLinkError``.
    private func run<T>(_ body: () async throws -> T) async throws(EmailLinkError) -> T {
        do { return try await body() } catch let error as EmailLinkError { throw error } catch {
            throw EmailLinkError(NativeAuthFailure(error))
        }
    }

    static func sameAddress(_ first: String, _ second: String) -> Bool {
        first.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == second.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }
}

/// What a completion of an email link does (`operation` of `/emaillink/v1.0/complete`).
public enum EmailLinkOperation: String, Sendable, Hashable {
    /// `signIn`: sign in to (or create) the address's account.
    case signIn
    /// `link`: add the address to the signed-in account.
    case link
    /// `reauthenticate`: prove the signed-in user holds the address again.
    case reauthenticate
}

/// The answer of ``EmailLinkAuth/sendSignInLink(toEmail:actionCodeSettings:languageCode:)``.
public struct EmailLinkSent: Sendable, Equatable {
    /// The address as the server normalised it (lower case).
    public var email: String
    /// Seconds the link works (`expires_in`).
    public var expiresIn: TimeInterval?

    /// An answer of `email` and `expiresIn`.
    public init(email: String, expiresIn: TimeInterval?) {
        self.email = email
        self.expiresIn = expiresIn
    }
}

/// A completed email-link sign-in, link or re-authentication (Firebase's `AuthDataResult`):
/// validated tokens, and whether the link created the account.
public struct AuthDataResult: Sendable, Equatable {
    /// The tokens and the validated ID token; ``AuthState/adopt(_:)`` makes them a session.
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

/// The email-link endpoints by their discovery names.
public struct EmailLinkEndpoints: Sendable, Equatable {
    /// `email_link_send_endpoint`: `/emaillink/v1.0/send`.
    public let send: URL
    /// `email_link_complete_endpoint`: `/emaillink/v1.0/complete`.
    public let complete: URL

    /// The endpoints a provider announces; each must be https (http on loopback only).
    public init(metadata: ProviderMetadata) throws {
        func endpoint(_ text: String?, _ name: String) throws -> URL {
            guard let text else { throw AuthError(.discovery, "the provider does not announce \(name): it has no email-link sign-in") }
            guard let url = URL(string: text) else { throw AuthError(.discovery, "\(name) '\(text)' is not a URL") }
            try AuthRequest.checkEndpoint(url, name: name)
            return url
        }
        send = try endpoint(metadata.emailLinkSendEndpoint, "email_link_send_endpoint")
        complete = try endpoint(metadata.emailLinkCompleteEndpoint, "email_link_complete_endpoint")
    }

    /// The endpoints of a discovery document.
    public init(discovery document: Data) throws {
        let metadata: ProviderMetadata
        do { metadata = try JSONDecoder().decode(ProviderMetadata.self, from: document) } catch {
            throw AuthError(.discovery, "the discovery document is not valid metadata: \(error)")
        }
        try self.init(metadata: metadata)
    }
}
