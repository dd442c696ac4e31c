import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization
import TesseraAuth
import TesseraAuthMSAL
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let aliceEmail = "alice@example.com"
let alicePassword = "correct horse battery"
let webRedirect = "https://app.example.com/callback"
let webSecret = "s3cret-s3cret-s3cret-s3cret-s3cret-42"
let loopbackRedirect = "http://127.0.0.1/callback"

/// The provider on an in-memory database, served over real loopback HTTP, with:
/// - `web`: a confidential first-party client (no consent page) redirecting to ``webRedirect``;
/// - `cli`: a public first-party client registered with ``loopbackRedirect`` (any port, RFC 8252);
/// - `third`: a confidential client that is not first-party (consent page);
/// - Alice, with a verified email and a name.
///
/// The issuer must be the URL clients reach, so the server listens on a port picked before the
/// provider starts (HummingbirdTesting's `.live` always binds port 0, which the issuer can't know).
struct LiveProvider: Sendable {
    let provider: Provider
    let issuer: URL
    let transport: CountingTransport

    /// A client of `id` over the counting transport.
    func client(_ id: String = "web", secret: String? = webSecret, redirectURI: String = webRedirect,
                now: @escaping @Sendable () -> Date = { Date() }) -> OIDCClient {
        OIDCClient(configuration: .init(issuer: issuer, clientID: id, clientSecret: secret, redirectURI: redirectURI),
                   transport: transport, now: now)
    }

    var browser: HeadlessBrowser { HeadlessBrowser(email: aliceEmail, password: alicePassword) }
}

func withLiveProvider(configure: @Sendable (inout ServerConfiguration) -> Void = { _ in },
                      _ body: @Sendable (LiveProvider) async throws -> Void) async throws {
    var logger = Logger(label: "tessera-auth-tests")
    logger.logLevel = .critical
    var lastError: (any Error)?
    // A port picked here could be taken before the server binds it: try a few.
    for _ in 0..<3 {
        var configuration = ServerConfiguration()
        configuration.database = .sqliteMemory
        configuration.passwordHashing = .testing
        configuration.signingAlgorithm = .es256
        configuration.host = "127.0.0.1"
        configuration.port = try freeLoopbackPort()
        configure(&configuration)
        do {
            try await Provider.with(configuration, logger: logger) { provider in
                try await registerFixtures(provider)
                let (ready, readyContinuation) = AsyncStream<Void>.makeStream()
                let app = try buildApplication(provider: provider) { _ in readyContinuation.yield() }
                let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask {
                        defer { readyContinuation.finish() }
                        try await group.run()
                    }
                    var started = false
                    for await _ in ready { started = true; break }
                    guard started else {
                        try await tasks.waitForAll()
                        throw BindFailure()
                    }
                    let live = LiveProvider(provider: provider, issuer: URL(string: provider.issuer)!, transport: CountingTransport())
                    do {
                        try await body(live)
                    } catch {
                        await group.triggerGracefulShutdown()
                        throw error
                    }
                    await group.triggerGracefulShutdown()
                    try await tasks.waitForAll()
                }
            }
            return
        } catch {
            lastError = error
            guard error is BindFailure || "\(error)".contains("Address already in use") else { throw error }
        }
    }
    throw lastError ?? BindFailure()
}

struct BindFailure: Error {}

func registerFixtures(_ provider: Provider) async throws {
    var web = Provider.ClientRegistration(name: "Web App", redirectURIs: [webRedirect])
    web.id = "web"
    web.secret = webSecret
    web.firstParty = true
    web.postLogoutRedirectURIs = ["https://app.example.com/bye"]
    _ = try await provider.registerClient(web)

    var cli = Provider.ClientRegistration(name: "Command line", redirectURIs: [loopbackRedirect])
    cli.id = "cli"
    cli.isPublic = true
    cli.firstParty = true
    _ = try await provider.registerClient(cli)

    var third = Provider.ClientRegistration(name: "Third Party", redirectURIs: [webRedirect])
    third.id = "third"
    third.secret = webSecret
    _ = try await provider.registerClient(third)

    _ = try await provider.createUser(email: aliceEmail, password: alicePassword, name: "Alice Example",
                                      profile: ["given_name": "Alice", "family_name": "Example"])
}

/// A port nobody listens on right now.
func freeLoopbackPort() throws -> Int {
    let listener = try LoopbackRedirectListener()
    defer { listener.close() }
    return Int(listener.port)
}

/// The SDK's transport, counting requests by method and path and optionally slowing the token
/// endpoint down so concurrent callers surely overlap.
final class CountingTransport: HTTPTransport {
    private let inner = URLSessionTransport()
    private let counts = Mutex<[String: Int]>([:])
    private let bodies = Mutex<[String]>([])
    let tokenDelay = Mutex<Duration>(.zero)

    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        let key = "\(request.method) \(request.url.path)"
        counts.withLock { $0[key, default: 0] += 1 }
        if request.url.path == "/token" {
            bodies.withLock { $0.append(String(decoding: request.body ?? Data(), as: UTF8.self)) }
            let delay = tokenDelay.withLock { $0 }
            if delay > .zero { try await Task.sleep(for: delay) }
        }
        return try await inner.send(request)
    }

    func count(_ method: String, _ path: String) -> Int { counts.withLock { $0["\(method) \(path)"] ?? 0 } }

    /// The form bodies posted to the token endpoint.
    var tokenBodies: [String] { bodies.withLock { $0 } }
}

/// A browser without a screen: follows the provider's redirects, fills in the login form
/// (and the consent form, when there is one), and stops at the redirect URI.
final class HeadlessBrowser: ExternalUserAgent {
    let email: String
    let password: String
    let allowConsent: Bool
    private let cookies = Mutex<[String: String]>([:])
    private let session: URLSession

    init(email: String, password: String, allowConsent: Bool = true) {
        self.email = email
        self.password = password
        self.allowConsent = allowConsent
        session = URLSession(configuration: .ephemeral, delegate: NoRedirects(), delegateQueue: nil)
    }

    func present(_ url: URL, redirectURI: String) async throws -> URL {
        try await signIn(at: url, until: redirectURI)
    }

    /// Drives the provider's pages from `url` until a redirect to `redirectURI`, and returns it
    /// without requesting it.
    func signIn(at url: URL, until redirectURI: String) async throws -> URL {
        var response = try await request(url)
        for _ in 0..<10 {
            if let location = response.location {
                if location.absoluteString.hasPrefix(redirectURI) { return location }
                response = try await request(location)
                continue
            }
            guard response.status == 200 else { throw BrowserError("HTTP \(response.status) at \(response.url): \(response.html.prefix(300))") }
            let html = response.html
            guard let interaction = field("interaction", in: html), let csrf = field("csrf_token", in: html) else {
                throw BrowserError("no form at \(response.url)")
            }
            let origin = URL(string: "/", relativeTo: response.url)!.absoluteURL
            if html.contains("name=\"password\"") {
                response = try await request(URL(string: "login", relativeTo: origin)!.absoluteURL, form: [
                    ("interaction", interaction), ("csrf_token", csrf), ("email", email), ("password", password)])
            } else {
                response = try await request(URL(string: "consent", relativeTo: origin)!.absoluteURL, form: [
                    ("interaction", interaction), ("csrf_token", csrf), ("decision", allowConsent ? "allow" : "deny")])
            }
        }
        throw BrowserError("too many steps")
    }

    struct Page {
        var url: URL
        var status: Int
        var location: URL?
        var html: String
    }

    /// One request with the cookie jar; redirects are not followed.
    func request(_ url: URL, form: [(String, String)]? = nil) async throws -> Page {
        var request = URLRequest(url: url)
        request.httpShouldHandleCookies = false
        let jar = cookies.withLock { $0 }
        if !jar.isEmpty { request.setValue(jar.map { "\($0.key)=\($0.value)" }.joined(separator: "; "), forHTTPHeaderField: "Cookie") }
        if let form {
            request.httpMethod = "POST"
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(form.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&").utf8)
        }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields { if let name = name as? String, let value = value as? String { headers[name] = value } }
        for cookie in HTTPCookie.cookies(withResponseHeaderFields: headers, for: url) {
            cookies.withLock { $0[cookie.name] = cookie.value.isEmpty ? nil : cookie.value }
        }
        let location = (http.value(forHTTPHeaderField: "Location")).flatMap { URL(string: $0, relativeTo: url)?.absoluteURL }
        return Page(url: url, status: http.statusCode, location: location, html: String(decoding: data, as: UTF8.self))
    }

    private func field(_ name: String, in html: String) -> String? {
        guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        let rest = html[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    private func escape(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}

struct BrowserError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}

/// The POSIX permission bits of a file.
func permissions(_ path: String) -> Int {
    var info = stat()
    guard stat(path, &info) == 0 else { return -1 }
    return Int(info.st_mode) & 0o777
}

// Also in the SDK package's tests (Tests/TesseraAuthTests): test code doesn't cross packages.

/// A folder under the system's temporary one that doesn't exist yet.
func temporaryDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("tessera-auth-\(UUID().uuidString)", isDirectory: true)
}

/// Tokens to store: nothing reads them as tokens.
let sampleTokens = TokenSet(accessToken: "at-1", expiresAt: Date(timeIntervalSince1970: 1_800_000_900), refreshToken: "rt-1",
                            idToken: "id.token.here", scope: "openid email", issuer: "https://id.example.com", clientID: "app")

/// A URL's query as a dictionary, `+` read as a space.
func queryItems(_ url: URL) -> [String: String] {
    Dictionary(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.map {
        ($0.name, $0.value?.replacingOccurrences(of: "+", with: " ") ?? "")
    } ?? [], uniquingKeysWith: { _, last in last })
}
