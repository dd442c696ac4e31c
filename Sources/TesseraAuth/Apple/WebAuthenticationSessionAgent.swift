#if canImport(AuthenticationServices) && (os(iOS) || os(macOS))
import AuthenticationServices
import Foundation
import TesseraAuthCore

/// The system browser sheet as an `ExternalUserAgent`: `ASWebAuthenticationSession` (iOS 15,
/// macOS 12 and later), the user agent RFC 8252 asks native apps to use. Every decision is in
/// ``WebAuthenticationCallback``; this file only calls Apple's API.
///
/// ```swift
/// let agent = WebAuthenticationSessionAgent(anchor: view.window!)
/// let result = try await client.authorize(client.makeRequest(), using: agent)
/// ```
public final class WebAuthenticationSessionAgent: NSObject, ExternalUserAgent, ASWebAuthenticationPresentationContextProviding,
                                                  @unchecked Sendable {
    // Touched on the main actor only.
    private let anchor: ASPresentationAnchor
    private var session: ASWebAuthenticationSession?
    /// `prefersEphemeralWebBrowserSession`: true shares no cookies with Safari (no silent SSO,
    /// and no "wants to use ... to sign in" prompt).
    public let prefersEphemeralWebBrowserSession: Bool

    /// An agent presenting over `anchor` (the window the sheet belongs to).
    @MainActor
    public init(anchor: ASPresentationAnchor, prefersEphemeralWebBrowserSession: Bool = false) {
        self.anchor = anchor
        self.prefersEphemeralWebBrowserSession = prefersEphemeralWebBrowserSession
    }

    /// Shows `url` in the sheet and returns the redirect to `redirectURI`'s custom scheme.
    public func present(_ url: URL, redirectURI: String) async throws -> URL {
        let scheme = try WebAuthenticationCallback.scheme(of: redirectURI)
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<URL, any Error>) in
            Task { @MainActor in
                let session = ASWebAuthenticationSession(url: url, callbackURLScheme: scheme) { [weak self] callback, error in
                    let cancelled = (error as? ASWebAuthenticationSessionError)?.code == .canceledLogin
                    continuation.resume(with: WebAuthenticationCallback.result(callback: callback, cancelled: cancelled,
                                                                                failure: error?.localizedDescription))
                    Task { @MainActor in self?.session = nil }
                }
                session.presentationContextProvider = self
                session.prefersEphemeralWebBrowserSession = self.prefersEphemeralWebBrowserSession
                self.session = session
                if !session.start() {
                    self.session = nil
                    continuation.resume(throwing: AuthError(.configuration, "ASWebAuthenticationSession could not start"))
                }
            }
        }
    }

    /// The window the sheet is presented over.
    public func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor {
        anchor
    }
}
#endif
