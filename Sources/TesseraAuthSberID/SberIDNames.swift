import Foundation
@_exported import TesseraAuth
import TesseraAuthCore

// The Sber ID SDK's names (seed 000) for TesseraAuth's calls, for teams moving from it: a thin
// layer that only forwards, so the behaviour is TesseraAuth's and tested there.

extension OIDCClient {
    /// Sber ID's `auth(withSberId:)`: sign-in through the operator's authenticator app, in the
    /// browser when it isn't installed —
    /// `signInThroughAuthenticatorApp(_:opener:appRedirect:browser:)`.
    ///
    /// - Parameters:
    ///   - request: the sign-in request, pushed first.
    ///   - opener: opens the request's link in the authenticator app only.
    ///   - appRedirect: waits for the redirect the authenticator app sends back.
    ///   - webFallback: the browser when no app claims the link; nil throws `AuthError`
    ///     `.cancelled` instead (``autoAuth(_:opener:appRedirect:)`` returns nil).
    public func auth(with request: AuthRequest, opener: any AppLinkOpener, appRedirect: @Sendable () async throws -> URL,
                     webFallback: (any ExternalUserAgent)?) async throws -> AuthorizationResult {
        if let webFallback {
            return try await signInThroughAuthenticatorApp(request, opener: opener, appRedirect: appRedirect, browser: webFallback)
        }
        guard let result = try await signInThroughAuthenticatorAppIfInstalled(request, opener: opener, appRedirect: appRedirect) else {
            throw AuthError(.cancelled, "the authenticator app is not installed")
        }
        return result
    }

    /// Sber ID's `autoAuth`: the sign-in the app starts by itself, without a web fallback (it
    /// means "no browser", not "automatic"); nil when the authenticator app isn't installed —
    /// `signInThroughAuthenticatorAppIfInstalled(_:opener:appRedirect:)`.
    ///
    /// - Parameters:
    ///   - request: the sign-in request, pushed first.
    ///   - opener: opens the request's link in the authenticator app only.
    ///   - appRedirect: waits for the redirect the authenticator app sends back.
    public func autoAuth(_ request: AuthRequest, opener: any AppLinkOpener,
                         appRedirect: @Sendable () async throws -> URL) async throws -> AuthorizationResult? {
        try await signInThroughAuthenticatorAppIfInstalled(request, opener: opener, appRedirect: appRedirect)
    }
}
