import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TesseraAuthCore

/// `HTTPTransport` over `URLSession` (FoundationNetworking on Linux).
///
/// Every request bypasses the URL cache and the cookie store: the SDK caches discovery and keys
/// itself and must see a rotated JWKS when it asks again, and the provider's endpoints for apps
/// use no cookies.
public struct URLSessionTransport: HTTPTransport {
    let session: URLSession
    /// Seconds before a request without an answer fails.
    public var timeout: TimeInterval

    /// A transport over `session`, failing requests unanswered after `timeout` seconds.
    public init(session: URLSession = .shared, timeout: TimeInterval = 30) {
        self.session = session
        self.timeout = timeout
    }

    /// The session of requests that don't follow redirects: its delegate answers every redirect
    /// with the redirect itself.
    static let nonRedirectingSession: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        return URLSession(configuration: configuration, delegate: RedirectRefuser(), delegateQueue: nil)
    }()

    /// Sends `request` through the session, bypassing its cache and cookie store.
    public func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method
        urlRequest.httpShouldHandleCookies = false
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        do {
            let (data, response) = request.followsRedirects
                ? try await session.data(for: urlRequest)
                : try await Self.nonRedirectingSession.data(for: urlRequest)
            guard let http = response as? HTTPURLResponse else {
                throw AuthError.network("\(request.url) did not answer over HTTP")
            }
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name] = value }
            }
            return HTTPTransportResponse(status: http.statusCode, headers: headers, body: data)
        } catch let error as AuthError {
            throw error
        } catch is CancellationError {
            throw AuthError(.cancelled, "the request to \(request.url) was cancelled")
        } catch let error as URLError where error.code == .cancelled {
            throw AuthError(.cancelled, "the request to \(request.url) was cancelled")
        } catch {
            throw AuthError.network("\(request.method) \(request.url) failed: \(error.localizedDescription)")
        }
    }
}

/// Hands a redirect back as the answer instead of following it.
private final class RedirectRefuser: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
