import Foundation
import TesseraCore

/// A request the app pushed to the provider (RFC 9126): the reference to open in its place.
public struct PushedAuthorizationRequest: Sendable, Equatable {
    /// `request_uri`: works once, for ``expiresIn`` seconds, for this client only.
    public var requestURI: String
    /// Seconds until ``requestURI`` expires (`expires_in`).
    public var expiresIn: Int
    /// The link to open: the authorization endpoint with `client_id` and `request_uri` only. When
    /// the operator's authenticator app is installed it claims this link (a universal link);
    /// otherwise it opens the provider's sign-in page.
    public var url: URL
}

extension OIDCClient {
    /// Pushes `request` to the provider's `pushed_authorization_request_endpoint` (RFC 9126 §2),
    /// authenticating as at the token endpoint. The provider checks the request at once: a
    /// mistake is thrown here, before anything is shown to the person.
    public func pushAuthorizationRequest(_ request: AuthRequest) async throws -> PushedAuthorizationRequest {
        let metadata = try await discover()
        guard let endpoint = metadata.pushedAuthorizationRequestEndpoint else {
            throw AuthError(.discovery, "the provider has no pushed_authorization_request_endpoint (RFC 9126)")
        }
        _ = try request.authorizationURL(metadata: metadata, trustedSSOHosts: configuration.trustedSSOHosts)  // the same checks
        let parameters = request.parameters.filter { $0.name != "client_id" }.map { ($0.name, $0.value) }
        let data = try await post(to: endpoint, parameters, name: "pushed authorization request endpoint", success: 201)
        guard let answer = try? JSONDecoder().decode(PushedRequestAnswer.self, from: data) else {
            throw AuthError.invalidResponse("the pushed authorization request answer has no request_uri and expires_in")
        }
        let requestURI = answer.requestURI, expiresIn = answer.expiresIn
        guard let endpointURL = URL(string: metadata.authorizationEndpoint),
              let url = FormEncoding.appending([("client_id", configuration.clientID), ("request_uri", requestURI)], to: endpointURL) else {
            throw AuthError(.discovery, "authorization_endpoint '\(metadata.authorizationEndpoint)' is not a URL")
        }
        return PushedAuthorizationRequest(requestURI: requestURI, expiresIn: Int(expiresIn), url: url)
    }
}

/// Opens a link only in the app that claims it (a universal link), never in the browser: on iOS
/// `UIApplication.open(_:options: [.universalLinksOnly: true])` (TesseraAuth's
/// `UniversalLinkOpener`). Elsewhere, and in tests, ``ClosureAppLinkOpener`` wraps a closure.
public protocol AppLinkOpener: Sendable {
    /// Opens `url` in the app that claims it; false when no installed app claims it (nothing
    /// opened: the sign-in then falls back to the browser, or ``OIDCClient/signInThroughAuthenticatorAppIfInstalled(_:opener:appRedirect:)``
    /// returns nil).
    func openInApp(_ url: URL) async -> Bool
}

/// An ``AppLinkOpener`` that calls a closure: for tests, and for platforms without universal
/// links (Android glue, a desktop app handing the link to another process).
///
/// ```swift
/// let opener = ClosureAppLinkOpener { url in
///     await linksOpened.append(url)
///     return true            // as if the authenticator app had opened it
/// }
/// ```
public struct ClosureAppLinkOpener: AppLinkOpener {
    private let open: @Sendable (URL) async -> Bool

    /// - Parameter open: opens the link in the app that claims it; false when none does.
    public init(_ open: @escaping @Sendable (URL) async -> Bool) {
        self.open = open
    }

    public func openInApp(_ url: URL) async -> Bool {
        await open(url)
    }
}

extension OIDCClient {
    /// Signs in through the operator's authenticator app: the request is pushed (RFC 9126) and
    /// its link opened in the authenticator app when one is installed, otherwise in `browser`
    /// (the provider's sign-in page).
    ///
    /// - Parameters:
    ///   - request: the sign-in request (``makeRequest(scope:redirectURI:ssoBaseURL:additionalParameters:)``), pushed first.
    ///   - opener: opens the request's link in the authenticator app only (`UniversalLinkOpener` on
    ///     iOS; ``ClosureAppLinkOpener`` elsewhere).
    ///   - appRedirect: waits for the redirect the authenticator app sends back to this app (the
    ///     URL the app receives, e.g. through ``AppRedirectInbox/next(for:timeout:)``); called only
    ///     when the link opened in the app.
    ///   - browser: where the link opens when no installed app claims it
    ///     (`WebAuthenticationSessionAgent` on Apple platforms).
    public func signInThroughAuthenticatorApp(_ request: AuthRequest, opener: any AppLinkOpener,
                                              appRedirect: @Sendable () async throws -> URL,
                                              browser: any ExternalUserAgent) async throws -> AuthorizationResult {
        let pushed = try await pushAuthorizationRequest(request)
        if await opener.openInApp(pushed.url) {
            return try await exchangeCode(from: try await appRedirect(), request: request)
        }
        let callback = try await browser.present(pushed.url, redirectURI: request.redirectURI)
        return try await exchangeCode(from: callback, request: request)
    }

    /// ``signInThroughAuthenticatorApp(_:opener:appRedirect:browser:)`` without the browser, for a
    /// sign-in the app starts by itself rather than from a button: nil when no installed app
    /// claims the link (nothing opened; show the app's own sign-in).
    ///
    /// - Parameters:
    ///   - request: the sign-in request, pushed first.
    ///   - opener: opens the request's link in the authenticator app only.
    ///   - appRedirect: waits for the redirect the authenticator app sends back.
    public func signInThroughAuthenticatorAppIfInstalled(_ request: AuthRequest, opener: any AppLinkOpener,
                                                         appRedirect: @Sendable () async throws -> URL)
        async throws -> AuthorizationResult? {
        let pushed = try await pushAuthorizationRequest(request)
        guard await opener.openInApp(pushed.url) else { return nil }
        return try await exchangeCode(from: try await appRedirect(), request: request)
    }
}

/// What a partner app's pushed request asks for, as the authenticator app shows it.
public struct AuthorizationDetails: Sendable, Equatable {
    /// One scope of the request, described for the person.
    public struct Scope: Sendable, Equatable {
        /// The scope's name (`email`, `passport`, …).
        public var scope: String
        /// In the request's language (or the app's `Accept-Language`).
        public var description: String
        /// Documents, tax numbers, addresses: always needs the person's explicit consent.
        public var sensitive: Bool
        /// The person has not allowed this scope to the partner yet: show it.
        public var consentRequired: Bool
    }

    /// The partner app's client ID.
    public var clientID: String
    /// The partner app's name.
    public var clientName: String
    /// The scopes asked for, space-separated, as in the request.
    public var scope: String
    /// The same scopes, each described for the person.
    public var scopes: [Scope]
    /// Where the partner app receives the answer (``AuthorizationApprover/approve(_:)`` returns it with the code).
    public var redirectURI: String
    /// The request's `prompt` (`login`, `consent`…), if any.
    public var prompt: String?
    /// The request's `max_age` in seconds: how recent the person's sign-in must be.
    public var maxAge: Int?
    /// The request's `login_hint`: who the partner expects to be signed in.
    public var loginHint: String?
    /// Some scope needs the person's consent first: show the scopes and ask.
    public var consentRequired: Bool
    /// The app's sign-in is too old for the request: sign the person in again, then approve.
    public var reauthenticationRequired: Bool
    /// Seconds until the pushed request expires: approve or deny before.
    public var expiresIn: Int
    /// Who is signed in to the authenticator app.
    public var userEmail: String
    /// The language the descriptions are in (`en`, `ru`).
    public var language: String

    /// The answer as the server wrote it (`AuthorizationDetailsAnswer`).
    init(_ answer: AuthorizationDetailsAnswer) {
        clientID = answer.clientID
        clientName = answer.clientName
        scope = answer.scope
        scopes = answer.scopes.map { Scope(scope: $0.scope, description: $0.description, sensitive: $0.sensitive, consentRequired: $0.consentRequired) }
        redirectURI = answer.redirectURI
        prompt = answer.prompt
        maxAge = answer.maxAge.map { Int($0) }
        loginHint = answer.loginHint
        consentRequired = answer.consentRequired
        reauthenticationRequired = answer.reauthenticationRequired
        expiresIn = Int(answer.expiresIn)
        userEmail = answer.userEmail
        language = answer.language
    }
}

/// A partner app's request that opened the authenticator app (the universal link).
public struct IncomingAuthorizationRequest: Sendable, Equatable {
    /// The partner app's client ID.
    public var clientID: String
    /// The pushed request's `request_uri`.
    public var requestURI: String
}

/// The authenticator side of app-to-app sign-in: the operator's own app, registered with
/// `--authenticator`, receives partner apps' requests as universal links, shows them, and
/// approves or denies them for its signed-in user; and hands that user over to partner apps.
///
/// ```swift
/// // In the app delegate, for a universal link:
/// if let incoming = try await approver.request(from: url) {
///     let details = try await approver.details(of: incoming)     // show details.clientName, details.scopes
///     let back = try await approver.approve(incoming)            // or deny(incoming)
///     await UIApplication.shared.open(back)                      // back to the partner app, with the code
/// }
/// ```
public struct AuthorizationApprover: Sendable {
    /// The authenticator app's client.
    let client: OIDCClient
    /// The app's current access token (``AuthState/freshTokens(minimumValidity:)``).
    let accessToken: @Sendable () async throws -> String

    /// An approver for the app `client`, calling with the access token `accessToken` gives.
    public init(client: OIDCClient, accessToken: @escaping @Sendable () async throws -> String) {
        self.client = client
        self.accessToken = accessToken
    }

    /// An approver with the token of the app's session `state`, refreshed when near expiry.
    public init(state: AuthState) {
        self.init(client: state.client) { try await state.freshTokens().accessToken }
    }

    /// The partner request a link carries, when it is this provider's authorization endpoint with
    /// `client_id` and a pushed `request_uri`; nil for any other link.
    public func request(from url: URL) async throws -> IncomingAuthorizationRequest? {
        let metadata = try await client.discover()
        guard let endpoint = URLComponents(string: metadata.authorizationEndpoint),
              let link = URLComponents(url: url, resolvingAgainstBaseURL: false),
              link.scheme?.lowercased() == endpoint.scheme?.lowercased(), link.host?.lowercased() == endpoint.host?.lowercased(),
              link.port == endpoint.port, link.path == endpoint.path else { return nil }
        let pairs = FormEncoding.pairs(link.percentEncodedQuery ?? "")
        guard let clientID = pairs.first(where: { $0.0 == "client_id" })?.1,
              let requestURI = pairs.first(where: { $0.0 == "request_uri" })?.1 else { return nil }
        return IncomingAuthorizationRequest(clientID: clientID, requestURI: requestURI)
    }

    /// What the partner asks for; the request stays usable.
    public func details(of request: IncomingAuthorizationRequest) async throws -> AuthorizationDetails {
        let data = try await call(\.pushedRequestDetailsEndpoint, [("request_uri", request.requestURI)], name: "authorization details endpoint")
        do { return AuthorizationDetails(try JSONDecoder().decode(AuthorizationDetailsAnswer.self, from: data)) } catch {
            throw AuthError.invalidResponse("the authorization details are not valid JSON: \(error)")
        }
    }

    /// Approves the request for the app's user; returns the partner's redirect URI with the code,
    /// for the app to open. ``AuthError`` with OAuth `login_required` when the app's sign-in is too
    /// old for the request: sign in again and approve again.
    public func approve(_ request: IncomingAuthorizationRequest) async throws -> URL {
        try await decide(request, "allow")
    }

    /// Denies the request; returns the partner's redirect URI with `access_denied`.
    public func deny(_ request: IncomingAuthorizationRequest) async throws -> URL {
        try await decide(request, "deny")
    }

    /// A one-minute, single-use ticket that signs the app's user in to `clientID`; put it in the
    /// deep link that opens the partner app with ``handoffLink(to:for:)``.
    public func handoffTicket(for clientID: String) async throws -> String {
        let data = try await call(\.handoffEndpoint, [("client_id", clientID)], name: "hand-off endpoint")
        guard let answer = try? JSONDecoder().decode(HandoffAnswer.self, from: data) else {
            throw AuthError.invalidResponse("the hand-off answer has no handoff_ticket")
        }
        return answer.handoffTicket
    }

    /// `appLink` (the partner app's deep link) carrying a fresh ticket for `clientID` and the
    /// provider's issuer as `sso_base_url`.
    public func handoffLink(to appLink: URL, for clientID: String) async throws -> URL {
        let ticket = try await handoffTicket(for: clientID)
        let issuer = try await client.discover().issuer
        guard let url = FormEncoding.appending([("handoff_ticket", ticket), ("sso_base_url", issuer)], to: appLink) else {
            throw AuthError(.configuration, "cannot add the ticket to \(appLink)")
        }
        return url
    }

    func decide(_ request: IncomingAuthorizationRequest, _ decision: String) async throws -> URL {
        let data = try await call(\.authorizationApprovalEndpoint, [("request_uri", request.requestURI), ("decision", decision)],
                                  name: "authorization approval endpoint")
        guard let answer = try? JSONDecoder().decode(ApprovalAnswer.self, from: data), let url = URL(string: answer.redirectTo) else {
            throw AuthError.invalidResponse("the approval answer has no redirect_to URL")
        }
        return url
    }

    func call(_ endpoint: KeyPath<ProviderMetadata, String?>, _ parameters: [(String, String)], name: String) async throws -> Data {
        let metadata = try await client.discover()
        guard let address = metadata[keyPath: endpoint], let url = URL(string: address) else {
            throw AuthError(.discovery, "the provider has no \(name)")
        }
        try AuthRequest.checkEndpoint(url, name: name)
        let response = try await client.transport.send(HTTPTransportRequest(
            method: "POST", url: url,
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json",
                      "Authorization": "Bearer " + (try await accessToken())],
            body: Data(FormEncoding.encode(parameters).utf8)))
        guard response.status == 200 else { throw OIDCClient.protocolError(response, name: name) }
        return response.body
    }
}
