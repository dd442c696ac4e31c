import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TesseraCore
import TesseraDomain

/// The request context of every Tessera route: Hummingbird's core plus the client's address
/// (for throttling): the peer's, or — from a trusted proxy — the one its headers name
/// (``ClientAddressMiddleware``).
public struct TesseraRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var clientAddress: IPAddress?
    /// The event loop of the request's connection.
    public let eventLoop: any EventLoop

    public init(source: ApplicationRequestContextSource) {
        self.init(source: source, peer: Self.peer(of: source.channel))
    }

    /// With the peer's address already known (read once per connection by ``PublicDocumentHandler``).
    init(source: ApplicationRequestContextSource, peer: IPAddress?) {
        coreContext = .init(source: source)
        clientAddress = peer
        eventLoop = source.channel.eventLoop
    }

    /// The address of the connection's peer.
    static func peer(of channel: any Channel) -> IPAddress? {
        channel.remoteAddress?.ipAddress.flatMap { IPAddress($0) }
    }

    /// What the client's requests are counted under: its IPv4 address, or its IPv6 /64.
    public var addressKey: String { clientAddress?.throttleKey ?? "unknown" }
}

/// Replaces the peer's address by the client's one named in `Forwarded` / `X-Forwarded-For`
/// when the peer is a trusted proxy (`--trusted-proxy`); from anyone else those headers are ignored.
/// The address is also the request's ``RequestOrigin/address`` while it is handled.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = TesseraRequestContext
    let trustedProxies: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if !trustedProxies.ranges.isEmpty {
            context.clientAddress = trustedProxies.clientAddress(peer: context.clientAddress, forwarded: request.headers[.forwarded],
                                                                 xForwardedFor: request.headers[.xForwardedFor])
        }
        return try await RequestOrigin.$address.withValue(context.clientAddress?.description) {
            try await next(request, context)
        }
    }
}

/// The client's address of the request being handled, for what a request leaves behind to be
/// recognised later (a browser session's device on the account page), without handing the
/// context to every step between the route and the session.
enum RequestOrigin {
    @TaskLocal static var address: String?
}

/// Largest form body accepted.
package let maxFormBody = 64 * 1024

extension Request {
    /// Query parameters, keeping duplicates aside.
    var queryParameters: RequestParameters {
        RequestParameters(urlEncoded: Substring(uri.query ?? ""))
    }

    /// The form body of a POST. Anything but `application/x-www-form-urlencoded` is refused.
    mutating func formParameters() async throws -> RequestParameters {
        let type = headers[.contentType]?.lowercased() ?? ""
        guard type.hasPrefix("application/x-www-form-urlencoded") else {
            throw OAuthError.invalidRequest("The request body must be application/x-www-form-urlencoded.")
        }
        let buffer: ByteBuffer
        do { buffer = try await collectBody(upTo: maxFormBody) } catch {
            throw OAuthError.invalidRequest("The request body is too large.")
        }
        return RequestParameters(urlEncoded: Substring(String(buffer: buffer)))
    }

    /// Parameters from the query (GET) or the form body (POST), as the authorization
    /// and logout endpoints accept both.
    mutating func queryOrFormParameters() async throws -> RequestParameters {
        method == .post ? try await formParameters() : queryParameters
    }

    /// The `Authorization: Basic` pair, form-urlencoded-decoded as RFC 6749 §2.3.1 requires,
    /// and as sent, for the many clients that don't encode it.
    func basicCredentials() throws -> BasicCredentials? {
        guard let header = headers[.authorization] else { return nil }
        guard header.count > 6, header.prefix(6).lowercased() == "basic " else { return nil }
        guard let data = Data(base64Encoded: String(Self.trimmed(header.dropFirst(6)))),
              let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":") else {
            throw OAuthError.invalidClient("The Basic credentials are malformed.")
        }
        let rawID = String(text[..<colon]), rawSecret = String(text[text.index(after: colon)...])
        let credentials = BasicCredentials(id: RequestParameters.decode(Substring(rawID)), secret: RequestParameters.decode(Substring(rawSecret)),
                                           rawID: rawID, rawSecret: rawSecret)
        guard !credentials.id.isEmpty else { throw OAuthError.invalidClient("The Basic credentials are malformed.") }
        return credentials
    }

    /// A bearer token from the Authorization header (RFC 6750 §2.1).
    var bearerToken: String? {
        guard let header = headers[.authorization], header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return String(Self.trimmed(header.dropFirst(7)))
    }

    /// `value` without the spaces and tabs around it (RFC 9110's optional whitespace), without
    /// Foundation's `trimmingCharacters`, which bridges the string to an `NSString` on Linux.
    static func trimmed(_ value: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = value.firstIndex(where: { !isSpace($0) }), let last = value.lastIndex(where: { !isSpace($0) }) else { return "" }
        return value[first...last]
    }
}

/// Header names HTTPTypes does not predefine, validated once rather than per response.
extension HTTPField.Name {
    static let pragma = HTTPField.Name("Pragma")!
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    static let forwarded = HTTPField.Name("Forwarded")!
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let xRequestID = HTTPField.Name("X-Request-Id")!
}

enum Responses {
    /// RFC 6749 §5.1: responses carrying tokens or credentials must not be cached.
    static func addNoStore(_ headers: inout HTTPFields) {
        headers[.cacheControl] = "no-store"
        headers[.pragma] = "no-cache"
    }

    static func json(_ data: Data, status: HTTPResponse.Status = .ok, cache: Bool = false) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if !cache { addNoStore(&headers) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
    }

    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        json(try CanonicalJSON.encode(value), status: status)
    }

    /// Every grant's answer, written without `JSONEncoder` (``TokenResponse/serialized``).
    static func json(_ response: TokenResponse) -> Response {
        json(response.serialized)
    }

    /// An OAuth error as JSON (RFC 6749 §5.2); `invalid_client` gets 401 and a challenge.
    static func error(_ error: OAuthError) -> Response {
        var response = json((try? CanonicalJSON.encode(error.responseBody)) ?? Data(), status: .init(code: error.status))
        if error.code == .invalidClient {
            response.headers[.wwwAuthenticate] = "Basic realm=\"tessera\", error=\"invalid_client\""
        }
        return response
    }

    /// A bearer-token error (RFC 6750 §3).
    static func bearerError(_ error: OAuthError) -> Response {
        var response = json((try? CanonicalJSON.encode(error.responseBody)) ?? Data(), status: .init(code: error.status))
        var challenge = "Bearer realm=\"tessera\", error=\"\(error.code.rawValue)\""
        if let description = error.errorDescription { challenge += ", error_description=\"\(description.replacingOccurrences(of: "\"", with: "'"))\"" }
        response.headers[.wwwAuthenticate] = challenge
        return response
    }

    static func redirect(_ location: String, status: HTTPResponse.Status = .found) -> Response {
        var headers: HTTPFields = [.location: location]
        addNoStore(&headers)
        return Response(status: status, headers: headers)
    }

    /// An HTML page with the strict security headers of the hosted pages.
    ///
    /// `formTargets` are URLs a form on the page may end up at: browsers apply CSP
    /// `form-action` to the redirects that follow a form submission too, so a login form
    /// whose answer is a redirect to the client must allow the client's origin.
    static func html(_ html: String, status: HTTPResponse.Status = .ok, scriptNonce: String? = nil, formTargets: [String] = []) -> Response {
        var csp = "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'; "
        csp += "form-action " + (["'self'"] + formTargets.map(cspSource(for:))).joined(separator: " ")
        // Scripts: the provider's own files (/assets/passkeys.js), and an inline one only with its nonce; they may
        // call back only here (connect-src).
        csp += "; script-src 'self'" + (scriptNonce.map { " 'nonce-\($0)'" } ?? "") + "; connect-src 'self'"
        var headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8",
            .contentSecurityPolicy: csp,
            .xFrameOptions: "DENY",
            .xContentTypeOptions: "nosniff",
            .referrerPolicy: "no-referrer",
        ]
        addNoStore(&headers)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}

/// The CSP source expression that matches a URL: `scheme://host[:port]` for web URLs,
/// `scheme:` for an app's custom scheme.
func cspSource(for uri: String) -> String {
    guard let components = URLComponents(string: uri), let scheme = components.scheme else { return "'none'" }
    guard ["http", "https"].contains(scheme.lowercased()), let host = components.host else { return scheme + ":" }
    return "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
}

/// Appends parameters to a URL's query or fragment.
func appending(_ parameters: [(String, String)], to uri: String, inFragment: Bool) -> String {
    RequestParameters.appending(parameters, to: uri, inFragment: inFragment)
}

/// A sign-in on a hosted page (an email link, a code, an upstream provider) found the account
/// disabled: a page that says so, in both languages, since the error reaches no page of its own.
extension AccountDisabled: HTTPResponseError {
    public var status: HTTPResponse.Status { .forbidden }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let english = PageLanguage.en.text(.accountDisabled), russian = PageLanguage.ru.text(.accountDisabled)
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">\
            <title>Account disabled</title><link rel="stylesheet" href="/assets/tessera.css"></head>\
            <body><main class="card"><h1>Account disabled</h1><p>\(english)</p><p lang="ru">\(russian)</p></main></body></html>
            """
        return Responses.html(html, status: .forbidden)
    }
}

extension TokenResponse {
    /// The bytes `CanonicalJSON.encode` makes of the response (sorted keys, unescaped slashes,
    /// absent members left out), written directly: `JSONEncoder` took 1.5 % of the server's CPU
    /// in a refresh on PostgreSQL (docs/performance.md).
    package var serialized: Data {
        var members: [String: JSONValue] = ["access_token": .string(accessToken), "token_type": .string(tokenType)]
        if let expiresIn { members["expires_in"] = .int(Int64(expiresIn)) }
        if let refreshToken { members["refresh_token"] = .string(refreshToken) }
        if let idToken { members["id_token"] = .string(idToken) }
        if let scope { members["scope"] = .string(scope) }
        if let issuedTokenType { members["issued_token_type"] = .string(issuedTokenType) }
        if let isNewUser { members["is_new_user"] = .bool(isNewUser) }
        if let email { members["email"] = .string(email) }
        if let deviceSecret { members["device_secret"] = .string(deviceSecret) }
        return JSONValue.object(members).serialized
    }
}
