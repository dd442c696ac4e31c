import Foundation
import TesseraCore

/// A logout request (OpenID Connect RP-Initiated Logout 1.0 §2): what the app sends the browser
/// to the provider's `end_session_endpoint` with, to end the provider's session too.
///
/// The logout half of the request/response pairs (AppAuth's `OIDEndSessionRequest`); the redirect
/// back to ``postLogoutRedirectURI`` is read into an ``EndSessionResponse``, checked against this
/// request's ``state``.
///
/// ```swift
/// let request = client.makeEndSessionRequest(idTokenHint: tokens.idToken,
///                                            postLogoutRedirectURI: "com.example.app:/signed-out")
/// let response = try await client.endSession(request, using: userAgent)   // state checked
/// ```
///
/// It is `Codable`, so an app that receives the redirect in its app delegate can keep it until then.
public struct EndSessionRequest: Sendable, Equatable, Codable {
    /// `id_token_hint` (§2): the ID token of the session to end, a compact JWS, so the provider can
    /// log out without asking whom; nil sends none (the provider may then ask the person).
    public var idTokenHint: String?
    /// `post_logout_redirect_uri` (§2): where the provider sends the browser after logging out;
    /// registered for the client. nil sends none: the browser stays on the provider's page, and
    /// there is no ``EndSessionResponse``.
    public var postLogoutRedirectURI: String?
    /// `state` (§2): an unguessable value the provider passes back to ``postLogoutRedirectURI``
    /// (§3), checked by ``EndSessionResponse/init(url:request:)``; nil sends none.
    public var state: String?
    /// `ui_locales` (§2): preferred languages of the logout page, space-separated BCP 47 tags,
    /// e.g. `"ru en"`; nil sends none.
    public var uiLocales: String?
    /// `client_id` (§2): required by the provider with a ``postLogoutRedirectURI`` and no
    /// ``idTokenHint``; nil sends none.
    public var clientID: String?
    /// Any other parameter (`logout_hint`, for example), sent after the standard ones in name
    /// order; a name that is one of the parameters above is not sent from here.
    public var additionalParameters: [String: String]

    /// A logout request. With a ``postLogoutRedirectURI`` and no `state`, a fresh `state` is
    /// made (32 random bytes, base64url; set ``state`` to nil afterwards to send none).
    ///
    /// - Parameters:
    ///   - idTokenHint: `id_token_hint`, the session's ID token; nil sends none.
    ///   - postLogoutRedirectURI: `post_logout_redirect_uri`; nil sends none.
    ///   - state: `state`; nil makes a fresh one when `postLogoutRedirectURI` is set, and sends none otherwise.
    ///   - uiLocales: `ui_locales`; nil sends none.
    ///   - clientID: `client_id`; nil sends none.
    ///   - additionalParameters: other parameters (see ``additionalParameters``).
    public init(idTokenHint: String?, postLogoutRedirectURI: String? = nil, state: String? = nil, uiLocales: String? = nil,
                clientID: String? = nil, additionalParameters: [String: String] = [:]) {
        self.idTokenHint = idTokenHint
        self.postLogoutRedirectURI = postLogoutRedirectURI
        self.state = state ?? postLogoutRedirectURI.map { _ in SecureRandom.token(bytes: 32) }
        self.uiLocales = uiLocales
        self.clientID = clientID
        self.additionalParameters = additionalParameters
    }

    /// The query parameters, in a stable order: `id_token_hint`, `client_id`,
    /// `post_logout_redirect_uri`, `state`, `ui_locales` (each when set), then
    /// ``additionalParameters`` by name (RP-Initiated Logout 1.0 §2).
    public var parameters: [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        if let idTokenHint { pairs.append((name: "id_token_hint", value: idTokenHint)) }
        if let clientID { pairs.append((name: "client_id", value: clientID)) }
        if let postLogoutRedirectURI { pairs.append((name: "post_logout_redirect_uri", value: postLogoutRedirectURI)) }
        if let state { pairs.append((name: "state", value: state)) }
        if let uiLocales { pairs.append((name: "ui_locales", value: uiLocales)) }
        let standard: Set<String> = ["id_token_hint", "client_id", "post_logout_redirect_uri", "state", "ui_locales"]
        for (name, value) in additionalParameters.sorted(by: { $0.key < $1.key }) where !standard.contains(name) {
            pairs.append((name: name, value: value))
        }
        return pairs
    }

    /// The logout URL: `endpoint` with the request's parameters added to its query (an endpoint's
    /// own query is kept).
    ///
    /// - Throws: ``AuthError/Code/configuration`` when `endpoint` isn't `https` (or `http` on a
    ///   loopback address, for development).
    public func url(endpoint: URL) throws -> URL {
        try AuthRequest.checkEndpoint(endpoint, name: "end_session_endpoint")
        guard let url = FormEncoding.appending(parameters.map { ($0.name, $0.value) }, to: endpoint) else {
            throw AuthError(.configuration, "cannot add parameters to \(endpoint)")
        }
        return url
    }

    /// The logout URL at the provider's `end_session_endpoint` (RP-Initiated Logout 1.0 §2.1).
    ///
    /// - Throws: ``AuthError/Code/discovery`` when the metadata announces no `end_session_endpoint`
    ///   or it is not a URL; ``AuthError/Code/configuration`` as ``url(endpoint:)`` does.
    public func url(metadata: ProviderMetadata) throws -> URL {
        guard let endpoint = metadata.endSessionEndpoint else {
            throw AuthError(.discovery, "the provider has no end_session_endpoint")
        }
        guard let url = URL(string: endpoint) else {
            throw AuthError(.discovery, "end_session_endpoint '\(endpoint)' is not a URL")
        }
        return try self.url(endpoint: url)
    }
}

/// The provider's redirect to the ``EndSessionRequest/postLogoutRedirectURI`` after logging out
/// (OpenID Connect RP-Initiated Logout 1.0 §3), checked against its request.
///
/// The logout half of the request/response pairs (AppAuth's `OIDEndSessionResponse`). The
/// redirect carries only `state`; a value of this type has passed ``init(url:request:)``'s checks.
public struct EndSessionResponse: Sendable, Equatable {
    /// The redirect URL as received.
    public var url: URL
    /// `state` passed back by the provider (§3): the request's; nil when the request sent none.
    public var state: String?
    /// The query's other parameters, first value of each.
    public var additionalParameters: [String: String]

    /// Reads the redirect `url` and checks it against `request`:
    ///
    /// 1. the request names a ``EndSessionRequest/postLogoutRedirectURI`` and `url` is at it (scheme,
    ///    host, port and path; a loopback redirect URI without a port matches any port, RFC 8252 §7.3);
    /// 2. no parameter comes twice;
    /// 3. `state` is the request's (§3), compared in constant time; a `state` where the request sent
    ///    none, or none where it sent one, is a mismatch too.
    ///
    /// - Throws: ``AuthError/Code/configuration`` (1), ``AuthError/Code/invalidResponse`` (2),
    ///   ``AuthError/Code/stateMismatch`` (3): a forged or stale redirect, to ignore.
    public init(url: URL, request: EndSessionRequest) throws {
        guard let redirectURI = request.postLogoutRedirectURI else {
            throw AuthError(.configuration, "the logout request names no post_logout_redirect_uri, so nothing comes back to check")
        }
        guard AuthResponse.sameEndpoint(url, redirectURI) else {
            throw AuthError(.configuration, "the callback \(url.absoluteString) is not for the post-logout redirect URI \(redirectURI)")
        }
        let pairs = FormEncoding.pairs(URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? "")
        var values: [String: String] = [:]
        var repeated: Set<String> = []
        for (name, value) in pairs {
            if values[name] != nil { repeated.insert(name) } else { values[name] = value }
        }
        guard repeated.isEmpty else {
            throw AuthError.invalidResponse("the redirect repeats \(repeated.sorted().joined(separator: ", "))")
        }
        let state = values.removeValue(forKey: "state")
        switch (state, request.state) {
        case (nil, nil):
            break
        case (let received?, let sent?) where constantTimeEquals(Array(received.utf8), Array(sent.utf8)):
            break
        default:
            throw AuthError(.stateMismatch, "the logout redirect's state is not the request's: a forged or stale redirect "
                                + "(RP-Initiated Logout 1.0 §3)")
        }
        self.url = url
        self.state = state
        additionalParameters = values
    }
}
