import Foundation

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
    /// Whether a redirect is followed (the default) or answered as it is, `Location` and all: the
    /// SDK reads an authorization endpoint's redirect itself when nothing needs a page.
    public var followsRedirects = true

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

/// How the SDK talks HTTP. The clients take one explicitly: apps get `URLSessionTransport` (from
/// the `TesseraAuth` module, the default of its initialisers), a server brings its own HTTP client.
/// Tests and apps can wrap a transport (to log, count or stub requests) because the clients never
/// reach for a global session.
///
/// A transport bypasses HTTP caches and cookie stores: the SDK caches discovery and keys itself and
/// must see a rotated JWKS when it asks again, and the provider's endpoints for apps use no cookies.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the answer, whatever its status. Throws only when no
    /// answer arrived (an ``AuthError`` with code ``AuthError/Code/network`` or ``AuthError/Code/cancelled``).
    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse
}
