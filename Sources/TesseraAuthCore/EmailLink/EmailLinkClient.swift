import Foundation
import TesseraCore

/// Passwordless sign-in by a link in an email, against Tessera's `/emaillink/v1.0/send` and
/// `/complete` (docs/email-link.md).
///
/// ```swift
/// let links = EmailLinkClient(issuer: URL(string: "https://id.example.com")!, clientID: "shop",
///                             pendingEmails: UserDefaultsPendingEmailStore())
/// try await links.sendSignInLink(to: email, options: EmailLinkOptions(continueURL: finishURL, iOSBundleID: bundleID))
///
/// // later, when the app is opened with `url`:
/// if links.isSignInLink(url) {
///     let email = await links.pendingEmail() ?? askForTheAddress()      // another device: ask
///     let result = try await links.signIn(email: email, link: url)
///     try await session.adopt(result)                                   // an AuthState
/// }
/// ```
///
/// Every call throws ``AuthError``: ``AuthError/Code/invalidLink``, ``AuthError/Code/linkExpired``,
/// ``AuthError/Code/emailMismatch``, ``AuthError/Code/emailInUse``, ``AuthError/Code/userMismatch``,
/// ``AuthError/Code/invalidToken``, ``AuthError/Code/invalidEmail``, ``AuthError/Code/slowDown``,
/// or a code of the transport and validation.
///
/// Adding the address to the signed-in user and re-authenticating take the ``AuthState`` of the
/// session (``addEmail(_:link:to:scopes:)``, ``reauthenticate(email:link:in:scopes:)``), which
/// supplies a fresh access token and receives the new tokens.
///
/// Built on a ``NativeAuthClient``: the same discovery fetch, the same HTTP and error handling,
/// and ID tokens validated as ``OIDCClient`` validates them. Safe to share between tasks.
public final class EmailLinkClient: Sendable {
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
    ///   - options: where the link leads back and which apps open it.
    ///   - language: the email's language (`ui_locales`: `en`, `ru`); the device's
    ///     `Accept-Language` otherwise.
    /// - Returns: the address as the server normalised it and how long the link works.
    /// - Throws: ``AuthError/Code/invalidEmail``, ``AuthError/Code/slowDown``, or `.oauth` with
    ///   `invalid_request` + suberror `unauthorized_continue_uri` for a continue URL the client
    ///   may not use.
    @discardableResult
    public func sendSignInLink(to email: String, options: EmailLinkOptions = EmailLinkOptions(),
                               language: String? = nil) async throws(AuthError) -> EmailLinkSent {
        try await run {
            var parameters = [("email", email)] + options.parameters
            if let language { parameters.append(("ui_locales", language)) }
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
    public func isSignInLink(_ link: String) -> Bool {
        EmailLinkParser.oobCode(in: link) != nil
    }

    /// Whether `url` is a sign-in link (``isSignInLink(_:)-(String)``).
    public func isSignInLink(_ url: URL) -> Bool {
        isSignInLink(url.absoluteString)
    }

    /// The address remembered when the link was sent from this device, or `nil` (another
    /// device, or no ``pendingEmails``): then ask the user for it.
    public func pendingEmail() async -> String? {
        try? await pendingEmails?.load()
    }

    // MARK: Completing

    /// Signs in with the link sent to `email`: to the account of that address, created with the
    /// address verified on its first link (``AuthorizationResult/isNewUser``). The ID token's
    /// `amr` is `["email"]`. Forgets the pending address.
    ///
    /// - Parameters:
    ///   - email: the address the link was sent to (a forwarded link alone signs nobody in).
    ///   - link: the URL the app was opened with.
    ///   - scopes: what to ask for; the client's default scopes when nil.
    /// - Throws: ``AuthError/Code/emailMismatch`` (not the address the link was sent to),
    ///   ``AuthError/Code/invalidLink`` (used, unknown, or no sign-in link),
    ///   ``AuthError/Code/linkExpired``.
    public func signIn(email: String, link: URL, scopes: [String]? = nil) async throws(AuthError) -> AuthorizationResult {
        try await complete(.signIn, email: email, link: link.absoluteString, accessToken: nil, scopes: scopes).authorization
    }

    /// Adds `email` to the signed-in user of `accessToken` with the link sent to it: it becomes
    /// the account's verified address. The answer carries new tokens for that user.
    ///
    /// - Throws: ``AuthError/Code/emailInUse`` when another account has the address (nothing
    ///   changes; the link stays usable), ``AuthError/Code/invalidToken`` without a valid access
    ///   token of this client.
    @discardableResult
    public func addEmail(_ email: String, link: URL, accessToken: String, scopes: [String]? = nil) async throws(AuthError) -> AuthorizationResult {
        try await complete(.link, email: email, link: link.absoluteString, accessToken: accessToken, scopes: scopes).authorization
    }

    /// Adds `email` to the user of `session` with the link sent to it: uses a fresh access token
    /// of the session, and makes the answer's tokens — whose ID token has the new address — the
    /// session's, revoking the tokens they replace.
    @discardableResult
    public func addEmail(_ email: String, link: URL, to session: AuthState, scopes: [String]? = nil) async throws(AuthError) -> AuthorizationResult {
        try await completeInSession(.link, email: email, link: link.absoluteString, session: session, scopes: scopes).authorization
    }

    /// Proves again that the user of `accessToken` holds `email`, before a sensitive action: new
    /// tokens with a new `auth_time`.
    ///
    /// - Throws: ``AuthError/Code/userMismatch`` when the link was sent to another address than
    ///   the user's (the link stays unused), ``AuthError/Code/invalidToken``.
    @discardableResult
    public func reauthenticate(email: String, link: URL, accessToken: String, scopes: [String]? = nil) async throws(AuthError) -> AuthorizationResult {
        try await complete(.reauthenticate, email: email, link: link.absoluteString, accessToken: accessToken, scopes: scopes).authorization
    }

    /// Re-authenticates the user of `session` with the link sent to `email`, and makes the fresh
    /// tokens the session's, revoking the tokens they replace.
    @discardableResult
    public func reauthenticate(email: String, link: URL, in session: AuthState, scopes: [String]? = nil) async throws(AuthError) -> AuthorizationResult {
        try await completeInSession(.reauthenticate, email: email, link: link.absoluteString, session: session, scopes: scopes).authorization
    }

    // MARK: Internals

    /// A completion's result and the account's address after it (`email` of the answer).
    package struct Completion: Sendable {
        /// The validated tokens.
        package var authorization: AuthorizationResult
        /// The account's address after the operation.
        package var email: String
    }

    /// `/emaillink/v1.0/complete` with the address and the link's code.
    package func complete(_ operation: EmailLinkOperation, email: String, link: String, accessToken: String?,
                          scopes: [String]?) async throws(AuthError) -> Completion {
        guard let code = EmailLinkParser.oobCode(in: link) else {
            throw AuthError(.invalidLink, "the link is not a sign-in link: it has no mode=signIn and oob_code")
        }
        return try await run {
            var scopes = scopes ?? client.configuration.scopes
            if !scopes.contains("openid") { scopes.insert("openid", at: 0) }
            let headers = accessToken.map { ["Authorization": "Bearer " + $0] } ?? [:]
            let receivedAt = oidc.now()
            let answer = try await client.post(to: try await endpoints().complete, name: "email_link_complete_endpoint", [
                ("email", email), ("oob_code", code), ("scope", scopes.joined(separator: " ")), ("operation", operation.rawValue),
            ], headers: headers)
            let tokens = try answer.decode(TokenResponse.self, "token response")
            let authorization = try await client.authorizationResult(from: tokens, receivedAt: receivedAt)
            if let pending = try? await pendingEmails?.load(), Self.sameAddress(pending, email) {
                try? await pendingEmails?.remove()
            }
            return Completion(authorization: authorization, email: tokens.email ?? email)
        }
    }

    /// ``complete(_:email:link:accessToken:scopes:)`` for the user of `session`; the answer must
    /// be about the same user before it replaces the session's tokens.
    package func completeInSession(_ operation: EmailLinkOperation, email: String, link: String, session: AuthState,
                                   scopes: [String]?) async throws(AuthError) -> Completion {
        let current: TokenSet
        do {
            guard session.client.configuration.issuerIdentifier == oidc.configuration.issuerIdentifier,
                  session.client.configuration.clientID == client.configuration.clientID else {
                throw AuthError(.configuration, "the session belongs to another provider or client than this EmailLinkClient")
            }
            current = try await session.freshTokens()
        } catch {
            throw AuthError(error)
        }
        let result = try await complete(operation, email: email, link: link, accessToken: current.accessToken, scopes: scopes)
        try await run {
            let before = await session.idToken?.subject
            guard before == nil || result.authorization.idToken?.subject == before else {
                throw AuthError.invalidResponse("the \(operation.rawValue) answer is about another user than the session's")
            }
            try await session.adopt(result.authorization)
            if let replaced = current.refreshToken, replaced != result.authorization.tokens.refreshToken {
                try? await oidc.revoke(replaced, typeHint: .refreshToken)
            }
        }
        return result
    }

    /// Runs `body`, turning whatever it throws into an ``AuthError``.
    private func run<T>(_ body: () async throws -> T) async throws(AuthError) -> T {
        do { return try await body() } catch { throw AuthError(error) }
    }

    static func sameAddress(_ first: String, _ second: String) -> Bool {
        first.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == second.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }
}

/// How the sign-in link is built: where it leads back and which app opens it. Sent with
/// ``EmailLinkClient/sendSignInLink(to:options:language:)``.
///
/// ```swift
/// let options = EmailLinkOptions(continueURL: URL(string: "https://shop.example.com/finish-sign-in"),
///                                iOSBundleID: Bundle.main.bundleIdentifier)
/// ```
///
/// The server checks every value against the client's registration (docs/email-link.md):
/// ``continueURL`` must be https (http on loopback) on the host of a redirect URI or a
/// `--link-domain`, the bundle one of its `--ios-app`s, the package one of its `--android-app`s.
public struct EmailLinkOptions: Sendable, Equatable {
    /// `continue_url`: where the link leads back, with any state the app wants carried along.
    /// Opened in a browser (the app not installed), a link the app handles goes on to this URL
    /// with `mode=signIn&oob_code=…` for the web fallback to complete. Required when
    /// ``handledInApp``.
    public var continueURL: URL?
    /// `handle_code_in_app`: the app (or the web page at ``continueURL``) completes the sign-in,
    /// rather than the provider's own page. Needs a ``continueURL``.
    public var handledInApp: Bool
    /// `ios_bundle_id`: the iOS app that should open the link.
    public var iOSBundleID: String?
    /// `android_package_name`: the Android app that should open the link.
    public var androidPackageName: String?
    /// `android_install_app`: whether to offer installing the Android app when it is missing.
    public var androidInstallsApp: Bool
    /// `android_minimum_version`: the lowest version of the Android app that handles the link.
    public var androidMinimumVersion: String?

    /// Options of a continue URL and the apps that open the link.
    ///
    /// - Parameters:
    ///   - continueURL: where the link leads back.
    ///   - handledInApp: whether the app (or the page at `continueURL`) completes the sign-in;
    ///     by default, when there is a continue URL. False lets the provider's page complete it.
    ///   - iOSBundleID: the iOS app that opens the link.
    ///   - androidPackageName: the Android app that opens the link.
    ///   - androidInstallsApp: offer installing the Android app when it is missing.
    ///   - androidMinimumVersion: the lowest Android app version that handles the link.
    public init(continueURL: URL? = nil, handledInApp: Bool? = nil, iOSBundleID: String? = nil, androidPackageName: String? = nil,
                androidInstallsApp: Bool = false, androidMinimumVersion: String? = nil) {
        self.continueURL = continueURL
        self.handledInApp = handledInApp ?? (continueURL != nil)
        self.iOSBundleID = iOSBundleID
        self.androidPackageName = androidPackageName
        self.androidInstallsApp = androidInstallsApp
        self.androidMinimumVersion = androidMinimumVersion
    }

    /// The form parameters of `/emaillink/v1.0/send` these options stand for.
    var parameters: [(String, String)] {
        var parameters: [(String, String)] = []
        if let continueURL { parameters.append(("continue_url", continueURL.absoluteString)) }
        parameters.append(("handle_code_in_app", handledInApp ? "true" : "false"))
        if let iOSBundleID { parameters.append(("ios_bundle_id", iOSBundleID)) }
        if let androidPackageName {
            parameters.append(("android_package_name", androidPackageName))
            parameters.append(("android_install_app", androidInstallsApp ? "true" : "false"))
            if let androidMinimumVersion { parameters.append(("android_minimum_version", androidMinimumVersion)) }
        }
        return parameters
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

/// The answer of ``EmailLinkClient/sendSignInLink(to:options:language:)``.
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
