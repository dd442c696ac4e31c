import Foundation
import TesseraCore

/// The provider's answer to an ``AuthRequest``, read from the redirect URL
/// (RFC 6749 §4.1.2 and §4.1.2.1, RFC 9207 §2).
///
/// Mirrors Sber ID's `SIDAuthResponse` (`state`, `authCode`, `error`, `isSuccess`, `nonce`).
/// Reading a URL checks nothing (``init(url:)``, like the seed's `getResponseFrom`); checking it
/// against the request is a separate, required step (``init(url:request:expectedIssuer:requireIssuer:)`` or
/// ``validate(against:expectedIssuer:requireIssuer:)``).
public struct AuthResponse: Sendable, Equatable {
    /// The redirect URL as received.
    public var url: URL
    /// `state` echoed by the provider.
    public var state: String?
    /// `code`: the authorization code to redeem at the token endpoint.
    public var authCode: String?
    /// `error`: the protocol error code, e.g. `access_denied` (RFC 6749 §4.1.2.1).
    public var error: String?
    /// `error_description`: human-readable detail from the provider.
    public var errorDescription: String?
    /// `error_uri`.
    public var errorURI: String?
    /// `iss`: the issuer that sent the answer (RFC 9207 §2).
    public var iss: String?
    /// The `nonce` the ID token must carry: copied from the request when validated (as the seed's
    /// `SIDAuthResponse.nonce`); the redirect itself doesn't carry one.
    public var nonce: String?
    /// Parameters other than the ones above (e.g. `session_state`).
    public var additionalParameters: [String: String]

    /// Whether the answer carries a code and no error. Says nothing about `state` or `iss`:
    /// only a validated response may be trusted.
    public var isSuccess: Bool { authCode != nil && error == nil }

    /// The ``error`` as an `OAuthError` (with its description), if the answer is an error.
    public var oauthError: OAuthError? {
        error.map { OAuthError(OAuthError.Code(rawValue: $0), errorDescription) }
    }

    /// Reads a redirect URL's parameters from its query, or from its fragment for
    /// `response_mode=fragment`. Nothing is checked.
    public init(url: URL) {
        self.url = url
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var text = components?.percentEncodedQuery ?? ""
        if text.isEmpty { text = components?.percentEncodedFragment ?? "" }
        var values: [String: String] = [:]
        for (name, value) in FormEncoding.pairs(text) where values[name] == nil && !value.isEmpty {
            values[name] = value
        }
        state = values.removeValue(forKey: "state")
        authCode = values.removeValue(forKey: "code")
        error = values.removeValue(forKey: "error")
        errorDescription = values.removeValue(forKey: "error_description")
        errorURI = values.removeValue(forKey: "error_uri")
        iss = values.removeValue(forKey: "iss")
        additionalParameters = values
        duplicates = Set(FormEncoding.pairs(text).map(\.0).reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
            .filter { $0.value > 1 }.keys)
    }

    /// Reads and validates a redirect URL against its request: see ``validate(against:expectedIssuer:requireIssuer:)``.
    /// Throws the provider's error (``AuthError/Code/oauth``) for an error response.
    public init(url: URL, request: AuthRequest, expectedIssuer: String?, requireIssuer: Bool = false) throws {
        self.init(url: url)
        try validate(against: request, expectedIssuer: expectedIssuer, requireIssuer: requireIssuer)
        nonce = request.nonce
    }

    /// Parameter names that came more than once; such a response is refused.
    var duplicates: Set<String> = []

    /// Checks the response before anything in it is used:
    ///
    /// 1. the URL is the request's redirect URI (scheme, host, port and path);
    /// 2. `iss`, when present or required, is `expectedIssuer` (RFC 9207 §2.4) — required when
    ///    discovery says `authorization_response_iss_parameter_supported`;
    /// 3. `state` is the request's (RFC 6749 §10.12), so a forged or stale answer, error or not, is ignored;
    /// 4. then an `error` is thrown as ``AuthError/Code/oauth``, and a success must have a `code`.
    public func validate(against request: AuthRequest, expectedIssuer: String?, requireIssuer: Bool = false) throws {
        guard duplicates.isEmpty else {
            throw AuthError.invalidResponse("the redirect repeats \(duplicates.sorted().joined(separator: ", "))")
        }
        guard Self.sameEndpoint(url, request.redirectURI) else {
            throw AuthError(.configuration, "the callback \(url.absoluteString) is not for the redirect URI \(request.redirectURI)")
        }
        if let expectedIssuer {
            if let iss {
                guard iss == expectedIssuer else {
                    throw AuthError(.issuerMismatch, "the response comes from issuer '\(iss)', expected '\(expectedIssuer)' (RFC 9207)")
                }
            } else if requireIssuer {
                throw AuthError(.issuerMismatch, "the response has no iss parameter, which the provider promised (RFC 9207 §2.4)")
            }
        }
        guard let state else { throw AuthError(.stateMismatch, "the response has no state parameter") }
        guard constantTimeEquals(Array(state.utf8), Array(request.state.utf8)) else {
            throw AuthError(.stateMismatch, "the response's state is not the request's: a forged or stale redirect")
        }
        if let oauthError { throw AuthError.oauth(oauthError) }
        guard authCode != nil else { throw AuthError.invalidResponse("the response has neither a code nor an error") }
    }

    /// Whether `url` is at the redirect URI: same scheme, host, port and path; the query
    /// carries the answer. A loopback redirect URI without a port matches any port (RFC 8252 §7.3).
    static func sameEndpoint(_ url: URL, _ redirectURI: String) -> Bool {
        guard let actual = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let expected = URLComponents(string: redirectURI) else { return false }
        let anyPort = expected.port == nil && HandoffLink.isLoopback(host: expected.host)
        func path(_ c: URLComponents) -> String { c.percentEncodedPath.isEmpty ? "/" : c.percentEncodedPath }
        return actual.scheme?.lowercased() == expected.scheme?.lowercased()
            && actual.host?.lowercased() == expected.host?.lowercased()
            && (anyPort || actual.port == expected.port)
            && path(actual) == path(expected)
    }
}
