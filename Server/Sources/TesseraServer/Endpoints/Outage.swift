import Foundation
import Hummingbird
import TesseraCore
import TesseraDomain

/// What a request gets when the database can't be reached in time (``DatabaseUnavailable``):
/// `503 Service Unavailable` with `Retry-After`, in the shape its caller reads. The database
/// layer has logged the reason (with its SQLSTATE) once; nothing was done for the request.
///
/// The endpoints with an error format of their own answer it themselves (`/token` and the
/// other OAuth endpoints: `temporarily_unavailable`; the native API: its error shape; the admin
/// API: a problem document); ``OutageMiddleware`` answers it for every other route.
enum Outage {
    /// Seconds a client should wait: short, since the node recovers as soon as the database does.
    static let retryAfter = 2

    static let oauthError = OAuthError(.temporarilyUnavailable, "The server can't reach its database right now. Try again in a few seconds.")

    /// RFC 6749 §5.2's JSON error, `temporarily_unavailable`, with `Retry-After`.
    static func oauth() -> Response {
        var response = Responses.error(oauthError)
        response.headers[.retryAfter] = String(retryAfter)
        return response
    }

    /// A page for a browser, the OAuth JSON error for anything else.
    static func response(for request: Request, pages: PageRenderer) -> Response {
        let accept = request.headers[.accept] ?? ""
        guard accept.contains("text/html") else { return oauth() }
        let language = PageLanguage.negotiate(uiLocales: [], acceptLanguage: request.headers[.acceptLanguage])
        var response = Responses.html(pages.message(language: language, title: .unavailableTitle, message: .unavailable),
                                      status: .serviceUnavailable)
        response.headers[.retryAfter] = String(retryAfter)
        return response
    }
}

/// Answers ``DatabaseUnavailable`` escaping any route as ``Outage`` says, rather than as a 500.
struct OutageMiddleware: RouterMiddleware {
    typealias Context = TesseraRequestContext
    let pages: PageRenderer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch is DatabaseUnavailable {
            return Outage.response(for: request, pages: pages)
        }
    }
}
