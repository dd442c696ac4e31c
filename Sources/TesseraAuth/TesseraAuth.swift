@_exported import TesseraAuthCore
// The wire types the SDK's API speaks (PasskeyAssertion, JSONValue, OAuthError…): an app writes
// `import TesseraAuth` and nothing else.
@_exported import TesseraCore
import Foundation

// The SDK for apps: everything of `TesseraAuthCore` (re-exported, so `import TesseraAuth` is all an
// app writes), plus HTTP over URLSession and the initialisers that default to it. A server that
// must not link FoundationNetworking imports `TesseraAuthCore` and passes its own `HTTPTransport`.

extension OIDCClient {
    /// A client of `configuration` that sends HTTP through a ``URLSessionTransport``.
    ///
    /// - Parameters:
    ///   - now: the clock, injectable so expiry can be tested without waiting.
    public convenience init(configuration: Configuration, now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(configuration: configuration, transport: URLSessionTransport(), now: now)
    }
}

extension NativeAuthClient {
    /// A client of `clientID` at `issuer` that sends HTTP through a ``URLSessionTransport``.
    ///
    /// - Parameters:
    ///   - challengeTypes: what the app's screens handle; `[.oob, .password, .redirect]` by default.
    ///   - scopes: what sign-ins ask for unless they say otherwise.
    ///   - now: the clock for ID-token validation.
    public convenience init(issuer: URL, clientID: String, challengeTypes: [NativeAuthChallengeType] = [.oob, .password, .redirect],
                            scopes: [String] = NativeAuthClient.defaultScopes, now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(issuer: issuer, clientID: clientID, challengeTypes: challengeTypes, scopes: scopes, transport: URLSessionTransport(),
                  now: now)
    }

    /// A client of `configuration` that sends HTTP through a ``URLSessionTransport``.
    public convenience init(configuration: Configuration, now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(configuration: configuration, transport: URLSessionTransport(), now: now)
    }
}

extension EmailLinkClient {
    /// Email links for the first-party client `clientID` at `issuer`, over a ``URLSessionTransport``.
    ///
    /// - Parameters:
    ///   - scopes: what sign-ins ask for unless they say otherwise.
    ///   - pendingEmails: where to remember the address a link was sent to.
    ///   - now: the clock for ID-token validation.
    public convenience init(issuer: URL, clientID: String, scopes: [String] = NativeAuthClient.defaultScopes,
                            pendingEmails: (any PendingEmailStore)? = nil, now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(issuer: issuer, clientID: clientID, scopes: scopes, pendingEmails: pendingEmails, transport: URLSessionTransport(),
                  now: now)
    }
}
