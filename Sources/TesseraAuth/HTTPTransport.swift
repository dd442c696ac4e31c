import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP request the SDK sends to the provider.
public struct HTTPTransportRequest: Sendable, Equatable {
    /// `GET` or `POST`.
    public var method: String
    /// The absolute URL, query included.
    public var url: URL
    /// Header fields by name.
    public var headers: [String: String]
    /// The body, for a POST.
    public var body: Data?

    /// A request; `GET` without a body unless told otherwise.
    public init(method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// The answer to an ``HTTPTransportRequest``.
public struct HTTPTransportResponse: Sendable, Equatable {
    /// The HTTP status code.
    public var status: Int
    /// Header fields by lower-cased name.
    public var headers: [String: String]
    /// The body as received.
    public var body: Data

    /// An answer; header names are lower-cased.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }
}

/// How the SDK talks HTTP. ``URLSessionTransport`` is the default; tests and apps can wrap
/// it (to log, count or stub requests) because the client never reaches for a global session.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the answer, whatever its status. Throws only when no
    /// answer arrived (an ``AuthError`` with code ``AuthError/Code/network`` or ``AuthError/Code/cancelled``).
    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse
}

/// ``HTTPTransport`` over `URLSession` (FoundationNetworking on Linux).
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

    /// Sends `request` through the session, bypassing its cache and cookie store.
    public func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method
        urlRequest.httpShouldHandleCookies = false
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        do {
            let (data, response) = try await session.data(for: urlRequest)
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
