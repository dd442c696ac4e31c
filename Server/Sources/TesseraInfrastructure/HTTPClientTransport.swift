import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TesseraAuthCore

/// `HTTPTransport` over AsyncHTTPClient (SwiftNIO): how the server talks to upstream identity
/// providers (discovery, JWKS, token, userinfo, revocation) and how `tessera login` talks to the
/// provider, without FoundationNetworking (libcurl and the TLS, Kerberos and LDAP libraries it
/// loads, ~6 MiB of resident memory in an idle server).
///
/// It answers as the SDK's `URLSessionTransport` does on Linux:
/// - every answer is returned, whatever its status; only a missing answer throws: an
///   `AuthError` with code `network` (refused or failed connection, TLS failure, timeout, too
///   many redirects, a body over ``maxBodySize``) or `cancelled` (the task was cancelled);
/// - no cookies and no cache (AsyncHTTPClient has neither);
/// - redirects are followed, at most 20 as URLSession does (a POST answered 301, 302 or 303 goes
///   on as a GET without its body); unlike URLSession, `Authorization` is dropped when a redirect
///   leaves the origin;
/// - response header names are lower-cased; repeated fields are joined with ", ".
///
/// Bodies are small here (discovery documents, key sets, token answers), so an answer larger than
/// ``maxBodySize`` is refused rather than buffered.
public struct AsyncHTTPClientTransport: HTTPTransport {
    /// The largest answer body accepted by default: 1 MiB.
    public static let defaultMaxBodySize = 1 << 20

    /// The client used when none is given: one per process, created on first use and never shut
    /// down (like `HTTPClient.shared`, on the same event loops). Unlike `HTTPClient.shared`, a
    /// refused connection fails the request at once (as URLSession does) instead of being retried
    /// until the request's deadline, redirects stop after 20 (URLSession's limit) and answers are
    /// not decompressed (no `Accept-Encoding` is sent).
    public static let sharedClient: HTTPClient = {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 20, allowCycles: false),
            timeout: .init(connect: .seconds(10)),
            decompression: .disabled)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// ``sharedClient``'s twin that answers redirects as they are, for requests that don't follow
    /// them (``HTTPTransportRequest/followsRedirects``).
    public static let sharedNonRedirectingClient: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10)),
                                                     decompression: .disabled)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// The client given; nil for the shared ones, which are then made at the first request, not
    /// at start (an idle server that never federates doesn't hold their 0.4 MB).
    let client: HTTPClient?
    /// Seconds before a request without a complete answer (head and body) fails.
    public var timeout: TimeInterval
    /// The largest answer body accepted, in bytes; a larger one fails the request.
    public var maxBodySize: Int
    /// Sent as `User-Agent` unless the request has one (some providers refuse requests without).
    public var userAgent: String

    /// A transport over `client` (by default ``sharedClient``, or ``sharedNonRedirectingClient`` for
    /// a request that doesn't follow redirects), failing requests not answered in full within
    /// `timeout` seconds or with a body over `maxBodySize` bytes.
    public init(client: HTTPClient? = nil, timeout: TimeInterval = 30,
                maxBodySize: Int = AsyncHTTPClientTransport.defaultMaxBodySize, userAgent: String = "Tessera") {
        self.client = client
        self.timeout = timeout
        self.maxBodySize = maxBodySize
        self.userAgent = userAgent
    }

    /// Sends `request` and reads the whole answer, within ``timeout``.
    public func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        let what = "\(request.method) \(request.url.absoluteString)"
        let seconds = min(max(timeout, 0), 86_400)
        do {
            // AsyncHTTPClient's deadline covers the request until the answer's head: the body is
            // read within the same time limit by racing it against a timer.
            return try await withThrowingTaskGroup(of: HTTPTransportResponse?.self) { group in
                group.addTask { try await self.exchange(request, deadline: .now() + .nanoseconds(Int64(seconds * 1e9))) }
                group.addTask {
                    try await Task.sleep(for: .nanoseconds(Int64(seconds * 1e9)))
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let response = first else {
                    throw AuthError.network("\(what) failed: no complete answer within \(Self.format(seconds)) seconds")
                }
                return response
            }
        } catch let error as AuthError {
            throw error
        } catch is CancellationError {
            throw AuthError(.cancelled, "the request to \(request.url) was cancelled")
        } catch let error as HTTPClientError where error == .cancelled {
            throw AuthError(.cancelled, "the request to \(request.url) was cancelled")
        } catch is NIOTooManyBytesError {
            throw AuthError.network("\(what) failed: the answer is larger than \(maxBodySize) bytes")
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            throw AuthError.network("\(what) failed: no complete answer within \(Self.format(seconds)) seconds")
        } catch let error as IOError {
            throw AuthError.network("\(what) failed: \(String(cString: strerror(error.errnoCode)))")
        } catch {
            throw AuthError.network("\(what) failed: \(error)")
        }
    }

    private func exchange(_ request: HTTPTransportRequest, deadline: NIODeadline) async throws -> HTTPTransportResponse {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.replaceOrAdd(name: name, value: value) }
        if !outgoing.headers.contains(name: "User-Agent") { outgoing.headers.add(name: "User-Agent", value: userAgent) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let executor = client ?? (request.followsRedirects ? Self.sharedClient : Self.sharedNonRedirectingClient)
        let response = try await executor.execute(outgoing, deadline: deadline)
        // Throws NIOTooManyBytesError at once when Content-Length is over the limit, else once
        // more than the limit arrived.
        let body = try await response.body.collect(upTo: maxBodySize)
        var headers: [String: String] = [:]
        for field in response.headers {
            let name = field.name.lowercased()
            headers[name] = headers[name].map { $0 + ", " + field.value } ?? field.value
        }
        return HTTPTransportResponse(status: Int(response.status.code), headers: headers, body: Data(body.readableBytesView))
    }

    private static func format(_ seconds: TimeInterval) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
