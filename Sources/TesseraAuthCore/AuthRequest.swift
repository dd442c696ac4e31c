import Foundation
import TesseraCore

/// An OpenID Connect authorization request (OpenID Connect Core §3.1.2.1, RFC 6749 §4.1.1)
/// with PKCE (RFC 7636): what the app sends the user's browser to the provider with.
///
/// Its members are the request's parameters, as in AppAuth's `OIDAuthorizationRequest`. By
/// default `state`, `nonce` and the PKCE verifier are generated, so the shortest correct
/// request is:
///
/// ```swift
/// let request = AuthRequest(clientID: "my-app", redirectURI: "com.example.app:/callback")
/// let url = try await client.authorizationURL(for: request)
/// ```
///
/// Keep the request (it is `Codable`) until the redirect comes back: ``AuthResponse`` checks
/// the answer against it, and the code exchange needs its ``codeVerifier``.
public struct AuthRequest: Sendable, Equatable, Codable {
    /// The only PKCE method the SDK uses: `S256` (RFC 7636 §4.2). `plain` is never sent.
    public static let challengeMethod = "S256"
    /// The default scopes: an ID token, the profile and email claims and a refresh token.
    public static let defaultScope = "openid profile email offline_access"

    /// `client_id` (RFC 6749 §2.2).
    public var clientID: String
    /// `scope`, space-separated (RFC 6749 §3.3). OpenID Connect requests contain `openid`.
    public var scope: String
    /// `state`: an unguessable value bound to this request, checked on the redirect (RFC 6749 §10.12).
    public var state: String
    /// `nonce`: bound into the ID token and checked there (OpenID Connect Core §3.1.2.1, §15.5.2).
    public var nonce: String?
    /// `redirect_uri`: where the provider sends the answer; registered with the client.
    public var redirectURI: String
    /// `code_challenge` (RFC 7636 §4.2).
    public var codeChallenge: String?
    /// `code_challenge_method`: ``challengeMethod`` when ``codeChallenge`` is set.
    public var codeChallengeMethod: String?
    /// The PKCE `code_verifier` (RFC 7636 §4.1). Never sent in the authorization request; the
    /// code exchange sends it. `nil` when the app made the challenge itself and keeps the verifier.
    public var codeVerifier: String?
    /// Seamless sign-in (seed 000): the scheme and host a deep link named (see
    /// ``HandoffLink/ssoBaseURL(in:parameterNames:)``). When set, the authorization
    /// request goes to the provider's authorization path on this base instead of the
    /// discovered endpoint; the base must be a host the app trusts.
    public var ssoBaseURL: String?
    /// `response_mode` (OAuth 2.0 Multiple Response Type Encoding Practices §2.1): `nil` for the
    /// default `query`, or `fragment`. Apps can't receive `form_post`.
    public var responseMode: String?
    /// `prompt` (OpenID Connect Core §3.1.2.1): `none`, `login`, `consent`, `select_account`; `create` opens the
    /// hosted sign-up page instead of the login page (OpenID Connect Initiating User Registration).
    public var prompt: String?
    /// `login_hint`: the email to prefill on the login page.
    public var loginHint: String?
    /// `ui_locales`: preferred page languages, e.g. `"ru en"`.
    public var uiLocales: String?
    /// `max_age` in seconds: the longest time since the user last authenticated.
    public var maxAge: Int?
    /// `claims` (OpenID Connect Core §5.5): individual claims asked for.
    public var claims: ClaimsRequest?
    /// `handoff_ticket`: the ticket an authenticator app handed over in the deep link that opened
    /// this app (``HandoffLink/ticket(in:)``); the provider signs its user in without a page.
    public var handoffTicket: String?
    /// Any other parameter, sent as is. Standard parameters set above win over a duplicate here.
    public var additionalParameters: [String: String]

    /// The stored names: an app may keep a request across a restart, and requests stored
    /// before the `ID`/`URI`/`URL` spellings still decode.
    enum CodingKeys: String, CodingKey {
        case clientID = "clientId", scope, state, nonce, redirectURI = "redirectUri", codeChallenge, codeChallengeMethod
        case codeVerifier, ssoBaseURL = "ssoBaseUrl", responseMode, prompt, loginHint, uiLocales, maxAge, claims, additionalParameters
        case handoffTicket
    }

    /// A request with fresh `state`, `nonce` and PKCE verifier (S256).
    public init(clientID: String, scope: String = AuthRequest.defaultScope, redirectURI: String,
                state: String = SecureRandom.token(bytes: 32), nonce: String? = SecureRandom.token(bytes: 32),
                codeVerifier: String = PKCE.createVerifier(), ssoBaseURL: String? = nil,
                additionalParameters: [String: String] = [:]) {
        self.clientID = clientID
        self.scope = scope
        self.redirectURI = redirectURI
        self.state = state
        self.nonce = nonce
        self.codeVerifier = codeVerifier
        self.codeChallenge = PKCE.createChallenge(codeVerifier)
        self.codeChallengeMethod = Self.challengeMethod
        self.ssoBaseURL = ssoBaseURL
        self.additionalParameters = additionalParameters
    }

    /// A request whose every value the app chose, the PKCE challenge included (made with
    /// `PKCE.createChallenge(_:)`, or by another component that keeps the verifier). Pass ``codeVerifier`` too if the SDK should redeem the code.
    public init(clientID: String, scope: String, state: String, nonce: String?, ssoBaseURL: String? = nil, redirectURI: String,
                codeChallenge: String?, codeChallengeMethod: String?, codeVerifier: String? = nil) {
        self.clientID = clientID
        self.scope = scope
        self.state = state
        self.nonce = nonce
        self.ssoBaseURL = ssoBaseURL
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.codeChallengeMethod = codeChallengeMethod
        self.codeVerifier = codeVerifier
        self.additionalParameters = [:]
    }

    /// The query parameters of the request, in a stable order (RFC 6749 §4.1.1, OpenID Connect Core §3.1.2.1).
    public var parameters: [(name: String, value: String)] {
        var pairs: [(String, String)] = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI), ("scope", scope), ("state", state),
        ]
        if let nonce { pairs.append(("nonce", nonce)) }
        if let codeChallenge {
            pairs.append(("code_challenge", codeChallenge))
            pairs.append(("code_challenge_method", codeChallengeMethod ?? Self.challengeMethod))
        }
        if let responseMode { pairs.append(("response_mode", responseMode)) }
        if let prompt { pairs.append(("prompt", prompt)) }
        if let loginHint { pairs.append(("login_hint", loginHint)) }
        if let uiLocales { pairs.append(("ui_locales", uiLocales)) }
        if let maxAge { pairs.append(("max_age", String(maxAge))) }
        if let claims, let data = try? CanonicalJSON.encode(claims) { pairs.append(("claims", String(decoding: data, as: UTF8.self))) }
        if let handoffTicket { pairs.append(("handoff_ticket", handoffTicket)) }
        let standard = Set(pairs.map(\.0))
        for (name, value) in additionalParameters.sorted(by: { $0.key < $1.key }) where !standard.contains(name) {
            pairs.append((name, value))
        }
        return pairs.map { (name: $0.0, value: $0.1) }
    }

    /// The authorization URL: `endpoint` with the request's parameters added to its query.
    ///
    /// Refuses an endpoint that isn't `https` (or `http` on a loopback address, for development)
    /// and a PKCE method other than S256 (RFC 9700 §2.1.1).
    public func authorizationURL(endpoint: URL) throws -> URL {
        try Self.checkEndpoint(endpoint, name: "authorization endpoint")
        if let codeChallengeMethod, codeChallengeMethod != Self.challengeMethod {
            throw AuthError(.configuration, "code_challenge_method must be S256 (RFC 7636 §4.2); got \(codeChallengeMethod)")
        }
        guard let url = FormEncoding.appending(parameters.map { ($0.name, $0.value) }, to: endpoint) else {
            throw AuthError(.configuration, "cannot add parameters to \(endpoint)")
        }
        return url
    }

    /// The authorization URL from discovery: the provider's `authorization_endpoint`, or, when
    /// ``ssoBaseURL`` is set, that endpoint's path on the SSO base.
    ///
    /// A deep link can carry any URL, so an SSO base is used only when its host is the issuer's
    /// or one of `trustedSSOHosts`; otherwise this throws rather than send the user to a page
    /// that could phish their password.
    public func authorizationURL(metadata: ProviderMetadata, trustedSSOHosts: Set<String> = []) throws -> URL {
        guard let endpoint = URL(string: metadata.authorizationEndpoint) else {
            throw AuthError(.discovery, "authorization_endpoint '\(metadata.authorizationEndpoint)' is not a URL")
        }
        guard let ssoBaseURL, !ssoBaseURL.isEmpty else { return try authorizationURL(endpoint: endpoint) }
        guard let base = URLComponents(string: ssoBaseURL), let host = base.host?.lowercased(), base.scheme != nil else {
            throw AuthError(.configuration, "ssoBaseURL '\(ssoBaseURL)' is not an absolute URL")
        }
        let issuerHost = URL(string: metadata.issuer)?.host?.lowercased()
        guard host == issuerHost || trustedSSOHosts.contains(where: { $0.lowercased() == host }) else {
            throw AuthError(.configuration, "ssoBaseURL host '\(host)' is neither the issuer's nor a trusted SSO host")
        }
        guard var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false) else {
            throw AuthError(.discovery, "authorization_endpoint '\(endpoint)' is not a URL")
        }
        components.scheme = base.scheme
        components.host = base.host
        components.port = base.port
        var prefix = base.percentEncodedPath
        while prefix.hasSuffix("/") { prefix.removeLast() }
        components.percentEncodedPath = prefix + components.percentEncodedPath
        guard let url = components.url else { throw AuthError(.configuration, "cannot combine ssoBaseURL with \(endpoint)") }
        return try authorizationURL(endpoint: url)
    }

    static func checkEndpoint(_ url: URL, name: String) throws {
        let scheme = url.scheme?.lowercased()
        guard scheme == "https" || (scheme == "http" && HandoffLink.isLoopback(host: url.host)) else {
            throw AuthError(.configuration, "the \(name) \(url) must use https (http only on a loopback address)")
        }
    }
}

/// The deep link that opened this app, read for a seamless sign-in: the hand-off ticket an
/// authenticator app put in it, and the SSO base URL some providers add.
///
/// ```swift
/// // the app was opened with `url`:
/// if let ticket = HandoffLink.ticket(in: url) {
///     var request = client.makeRequest()
///     request.handoffTicket = ticket        // or simply: client.signIn(handoffFrom: url, using: browser)
/// }
/// ```
public enum HandoffLink {
    /// The hand-off ticket an authenticator app put in the deep link that opened this app (query
    /// or fragment member `handoff_ticket`, at most 128 characters), for
    /// ``AuthRequest/handoffTicket``; nil when there is none.
    public static func ticket(in url: URL?) -> String? {
        guard let ticket = pairs(of: url).first(where: { $0.0 == "handoff_ticket" })?.1, !ticket.isEmpty, ticket.count <= 128 else {
            return nil
        }
        return ticket
    }

    /// The SSO base URL (scheme, host and port) a deep link carries, for
    /// ``AuthRequest/ssoBaseURL``; nil when the link has none.
    ///
    /// The value is looked for in the query (then the fragment) under `parameterNames`, in order.
    /// Only an `https` URL (or `http` on a loopback address) is accepted; its path, query and
    /// credentials are dropped.
    ///
    /// - Parameters:
    ///   - url: the deep link.
    ///   - parameterNames: the members that may carry the URL, tried in order.
    public static func ssoBaseURL(in url: URL?, parameterNames: [String] = ["ssoBaseUrl", "sso_base_url", "sberIDRedirect"]) -> String? {
        let pairs = pairs(of: url)
        for name in parameterNames {
            guard let value = pairs.first(where: { $0.0 == name })?.1,
                  let candidate = URLComponents(string: value), let scheme = candidate.scheme?.lowercased(),
                  let host = candidate.host, !host.isEmpty else { continue }
            guard scheme == "https" || (scheme == "http" && isLoopback(host: host)) else { continue }
            var base = URLComponents()
            base.scheme = scheme
            base.host = host.lowercased()
            base.port = candidate.port
            if let string = base.string { return string }
        }
        return nil
    }

    /// The query's members, then the fragment's.
    private static func pairs(of url: URL?) -> [(String, String)] {
        guard let url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return [] }
        return FormEncoding.pairs(components.percentEncodedQuery ?? "") + FormEncoding.pairs(components.percentEncodedFragment ?? "")
    }

    /// Whether `host` is a loopback address literal or `localhost` (RFC 8252 §7.3, §8.3).
    static func isLoopback(host: String?) -> Bool {
        guard let host = host?.lowercased() else { return false }
        return ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)
    }
}
