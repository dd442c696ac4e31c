import Foundation

/// The decisions of the Apple-only glue (`TesseraAuth`'s `WebAuthenticationSessionAgent`), made
/// here so they are tested on every platform: the glue only moves values between these and
/// `ASWebAuthenticationSession`.
public enum WebAuthenticationCallback {
    /// The `callbackURLScheme` for a redirect URI. `ASWebAuthenticationSession` on iOS 15 to 17.3
    /// and macOS 12 to 14.3 hands back only custom-scheme redirects, so an app registers one
    /// (a reverse domain name, RFC 8252 §7.1) for its sign-in; an `https` redirect URI is refused
    /// here with a message that says so, rather than never returning.
    public static func scheme(of redirectURI: String) throws -> String {
        guard let scheme = URLComponents(string: redirectURI)?.scheme?.lowercased(), !scheme.isEmpty else {
            throw AuthError(.configuration, "the redirect URI '\(redirectURI)' has no scheme")
        }
        guard scheme != "https", scheme != "http" else {
            throw AuthError(.configuration, "ASWebAuthenticationSession returns only custom-scheme redirects before iOS 17.4: "
                                + "register a redirect URI such as com.example.app:/callback for the app's sign-in")
        }
        return scheme
    }

    /// What the session's completion handler means: the callback URL, the person closing the
    /// sheet (``AuthError/Code/cancelled``), or a failure with the system's words.
    public static func result(callback: URL?, cancelled: Bool, failure: String?) -> Result<URL, AuthError> {
        if let callback { return .success(callback) }
        if cancelled { return .failure(AuthError(.cancelled, "the user closed the sign-in page")) }
        return .failure(AuthError(.network, failure ?? "the sign-in page ended without an answer"))
    }
}

/// Where the redirects an app receives (the app delegate's `open url`, a scene's
/// `onOpenURL`) meet the sign-in waiting for them: the `appRedirect` of
/// ``OIDCClient/signInThroughAuthenticatorApp(_:opener:appRedirect:browser:)``.
///
/// ```swift
/// let inbox = AppRedirectInbox()
/// // SwiftUI: .onOpenURL { url in Task { await inbox.deliver(url) } }
/// let result = try await client.signInThroughAuthenticatorApp(request, opener: UniversalLinkOpener(),
///                                                             appRedirect: { try await inbox.next(for: request.redirectURI) },
///                                                             browser: agent)
/// ```
public actor AppRedirectInbox {
    private var waiting: [(prefix: String, continuation: CheckedContinuation<URL, any Error>)] = []
    private var unclaimed: [URL] = []

    /// An empty inbox; keep one for the app's lifetime.
    public init() {}

    /// Hands a URL the app received to the sign-in waiting for its redirect URI. False when no
    /// sign-in waits for it: the app handles the URL itself. The inbox still keeps the last
    /// **four** such URLs (older ones are dropped), for a sign-in that starts waiting right after
    /// its redirect arrived; ``next(for:timeout:)`` takes a kept one first.
    @discardableResult
    public func deliver(_ url: URL) -> Bool {
        if let index = waiting.firstIndex(where: { Self.matches(url, $0.prefix) }) {
            waiting.remove(at: index).continuation.resume(returning: url)
            return true
        }
        unclaimed = Array((unclaimed + [url]).suffix(4))
        return false
    }

    /// Waits for the next URL at `redirectURI` (its query or fragment may follow), for at most
    /// `timeout` seconds (default 300), and takes it: a kept unclaimed URL at `redirectURI` first.
    /// - Throws: ``AuthError/Code/timeout`` when none comes in time; ``AuthError/Code/cancelled``
    ///   when the waiting task is cancelled.
    public func next(for redirectURI: String, timeout: TimeInterval = 300) async throws -> URL {
        if let index = unclaimed.firstIndex(where: { Self.matches($0, redirectURI) }) { return unclaimed.remove(at: index) }
        let id = UUID().uuidString
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiting.append((redirectURI + "#" + id, continuation))
                Task { [weak self] in
                    try? await Task.sleep(nanoseconds: UInt64(max(0, timeout) * 1_000_000_000))
                    await self?.expire(id, with: AuthError(.timeout, "no redirect to \(redirectURI) within \(Int(timeout)) seconds"))
                }
            }
        } onCancel: {
            Task { await self.expire(id, with: AuthError(.cancelled, "the sign-in was cancelled")) }
        }
    }

    private func expire(_ id: String, with error: AuthError) {
        guard let index = waiting.firstIndex(where: { $0.prefix.hasSuffix("#" + id) }) else { return }
        waiting.remove(at: index).continuation.resume(throwing: error)
    }

    /// Whether `url` is at `redirectURI` (a waiter's key carries `#id` after it).
    static func matches(_ url: URL, _ key: String) -> Bool {
        let redirectURI = key.split(separator: "#", maxSplits: 1).first.map(String.init) ?? key
        let text = url.absoluteString
        guard text.hasPrefix(redirectURI) else { return false }
        let rest = text.dropFirst(redirectURI.count)
        return rest.isEmpty || rest.first == "?" || rest.first == "#"
    }
}
