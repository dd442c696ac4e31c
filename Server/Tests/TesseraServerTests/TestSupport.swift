import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraSQL
import TesseraTestSupport

/// A provider on a fresh database (in-memory SQLite unless `backend` says otherwise) with
/// cheap password hashing.
func withProvider<T>(on backend: TestBackend = .sqlite, clock: ManualClock = ManualClock(),
                     configure: (inout ServerConfiguration) -> Void = { _ in },
                     _ body: (Provider) async throws -> T) async throws -> T {
    var configuration = ServerConfiguration()
    configuration.database = try await backend.freshLocation()
    if backend == .postgres { configuration.masterKey = Data(SecureRandom.bytes(32)).base64EncodedString() }
    configuration.passwordHashing = .testing
    // RSA key generation costs ~0.1 s a key; tests that aren't about the algorithm use ES256.
    configuration.signingAlgorithm = .es256
    configure(&configuration)
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    return try await Provider.with(configuration, clock: clock.clock, logger: logger, body)
}

let testRedirect = "https://app.example.com/callback"
let testSecret = "s3cret-s3cret-s3cret-s3cret-s3cret-42"

extension Provider {
    /// A confidential client `web` with secret ``testSecret``.
    @discardableResult
    func addWebClient(id: String = "web", firstParty: Bool = false, grants: [String]? = nil, scopes: [String]? = nil,
                      pairwise: Bool = false) async throws -> Client {
        var registration = ClientRegistration(name: "Web App", redirectURIs: [testRedirect])
        registration.id = id
        registration.secret = testSecret
        registration.firstParty = firstParty
        registration.pairwise = pairwise
        registration.postLogoutRedirectURIs = ["https://app.example.com/bye"]
        if let grants { registration.grantTypes = grants }
        if let scopes { registration.scopes = scopes }
        return try await registerClient(registration).client
    }
}

extension ByteBuffer {
    var text: String { String(buffer: self) }
}

extension TestResponse {
    var json: [String: JSONValue] { (try? JSONDecoder().decode([String: JSONValue].self, from: Data(body.text.utf8))) ?? [:] }
    var location: String? { headers[.location] }
    /// Parameters of the redirect's query or fragment.
    var redirectParameters: RequestParameters {
        guard let location, let components = URLComponents(string: location) else { return RequestParameters() }
        return RequestParameters(urlEncoded: Substring(components.percentEncodedQuery ?? components.percentEncodedFragment ?? ""))
    }
    /// Value of a hidden form field in an HTML page.
    func field(_ name: String) -> String? {
        let html = body.text
        guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        let rest = html[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }
}

func form(_ pairs: [(String, String)]) -> ByteBuffer {
    ByteBuffer(string: RequestParameters.encode(pairs))
}

let formHeaders: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

func basic(_ id: String, _ secret: String) -> HTTPFields {
    var headers = formHeaders
    headers[.authorization] = "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString()
    return headers
}

/// A cookie jar over the router test client: what a browser does between requests.
final class Browser: @unchecked Sendable {
    let client: any TestClientProtocol
    var cookies: [String: String] = [:]

    init(_ client: any TestClientProtocol) { self.client = client }

    func request(_ uri: String, method: HTTPRequest.Method = .get, headers: HTTPFields = [:], body: ByteBuffer? = nil) async throws -> TestResponse {
        var headers = headers
        if !cookies.isEmpty { headers[.cookie] = cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
        let response = try await client.executeRequest(uri: uri, method: method, headers: headers, body: body)
        for header in response.headers[values: .setCookie] {
            let pair = header.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
            let name = String(pair[0]), value = pair.count > 1 ? String(pair[1]) : ""
            if value.isEmpty || header.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = value }
        }
        return response
    }

    func post(_ uri: String, _ pairs: [(String, String)], headers: HTTPFields = formHeaders) async throws -> TestResponse {
        try await request(uri, method: .post, headers: headers, body: form(pairs))
    }

    /// Submits the login page shown by `page`.
    func login(_ page: TestResponse, email: String, password: String) async throws -> TestResponse {
        try await post("/login", [("interaction", page.field("interaction") ?? ""), ("csrf_token", page.field("csrf_token") ?? ""),
                                   ("email", email), ("password", password)])
    }

    func consent(_ page: TestResponse, allow: Bool) async throws -> TestResponse {
        try await post("/consent", [("interaction", page.field("interaction") ?? ""), ("csrf_token", page.field("csrf_token") ?? ""),
                                     ("decision", allow ? "allow" : "deny")])
    }
}

func authorizeURI(_ parameters: [(String, String)]) -> String {
    "/authorize?" + RequestParameters.encode(parameters)
}

func codeRequest(client: String = "web", scope: String = "openid email", extra: [(String, String)] = []) -> String {
    authorizeURI([("response_type", "code"), ("client_id", client), ("redirect_uri", testRedirect), ("scope", scope),
                  ("state", "st-1"), ("nonce", "n-1")] + extra)
}
