import Foundation
import TesseraCore

/// The browser, as a protocol (AppAuth's `OIDExternalUserAgent`): something that shows the
/// provider's authorization page and hands back the URL the provider redirected to.
///
/// RFC 8252 §8.12 asks native apps to use an external user agent (the system browser, or
/// `ASWebAuthenticationSession` on Apple platforms), never an embedded web view, so the app
/// never sees the user's password. Tests conform with a headless agent that submits the login
/// form over HTTP; command-line tools use ``LoopbackUserAgent``.
///
/// On iOS and macOS, `TesseraAuth`'s `WebAuthenticationSessionAgent` is this protocol over
/// `ASWebAuthenticationSession` (iOS 15, macOS 12).
public protocol ExternalUserAgent: Sendable {
    /// Shows `url` (an authorization or logout URL) and returns the URL the provider redirected
    /// the browser to at `redirectURI`, query or fragment included.
    ///
    /// Throws ``AuthError`` with ``AuthError/Code/cancelled`` when the user gives up, and
    /// ``AuthError/Code/timeout`` when no redirect arrives in time.
    func present(_ url: URL, redirectURI: String) async throws -> URL
}

/// The user agent of a command-line or desktop program (RFC 8252 §7.3): opens the system
/// browser and receives the redirect on a ``LoopbackRedirectListener``.
///
/// ```swift
/// let listener = try LoopbackRedirectListener()
/// let request = client.makeRequest(redirectURI: listener.redirectURI)
/// let agent = LoopbackUserAgent(listener: listener) { url in openInBrowser(url) }
/// let result = try await client.authorize(request, using: agent)
/// ```
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public struct LoopbackUserAgent: ExternalUserAgent {
    /// The listener whose ``LoopbackRedirectListener/redirectURI`` the request uses.
    public let listener: LoopbackRedirectListener
    /// How long to wait for the browser.
    public var timeout: Duration
    /// Opens a URL in the browser (for instance with `xdg-open` or `open`); the SDK can't, as
    /// it doesn't start processes.
    public var openURL: @Sendable (URL) -> Void

    /// An agent that opens the browser with `openURL` and waits up to `timeout` for the redirect on `listener`.
    public init(listener: LoopbackRedirectListener, timeout: Duration = .seconds(300), openURL: @escaping @Sendable (URL) -> Void) {
        self.listener = listener
        self.timeout = timeout
        self.openURL = openURL
    }

    /// Opens `url`, then waits for the redirect; redirects whose `state` is not the one in `url`
    /// are answered with an error page and ignored, so a stray request can't end the wait.
    public func present(_ url: URL, redirectURI: String) async throws -> URL {
        let state = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery
            .flatMap { FormEncoding.pairs($0).first { $0.0 == "state" }?.1 }
        openURL(url)
        return try await listener.waitForCallback(timeout: timeout, expectedState: state)
    }
}
