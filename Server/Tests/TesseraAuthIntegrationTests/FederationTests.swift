import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing
import TesseraAuth
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain

/// A browser of the downstream provider's router (in process), with a cookie jar.
final class RouterBrowser: @unchecked Sendable {
    let client: any TestClientProtocol
    var cookies: [String: String] = [:]

    init(_ client: any TestClientProtocol) { self.client = client }

    struct Page {
        var status: HTTPResponse.Status
        var location: String?
        var html: String

        func field(_ name: String) -> String? {
            guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
            let rest = html[range.upperBound...]
            return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
        }
    }

    func request(_ uri: String, form: [(String, String)]? = nil) async throws -> Page {
        var headers: HTTPFields = [:]
        if !cookies.isEmpty { headers[.cookie] = cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
        var body: ByteBuffer?
        if let form {
            headers[.contentType] = "application/x-www-form-urlencoded"
            body = ByteBuffer(string: FormEncoding.encode(form))
        }
        let response = try await client.executeRequest(uri: uri, method: form == nil ? .get : .post, headers: headers, body: body)
        for header in response.headers[values: .setCookie] {
            let pair = header.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
            let name = String(pair[0]), value = pair.count > 1 ? String(pair[1]) : ""
            if value.isEmpty || header.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = value }
        }
        return Page(status: response.status, location: response.headers[.location], html: String(buffer: response.body))
    }
}

let downstreamCallback = "http://127.0.0.1:8080/federation/corp/callback"
let shopRedirect = "https://shop.example.com/callback"

/// An upstream Tessera served over loopback HTTP (Alice lives there) and a downstream Tessera
/// (in process) that lets its users sign in with it as "Corp ID".
func withFederation(configure: @Sendable @escaping (inout ServerConfiguration) -> Void = { _ in },
                    _ body: @Sendable @escaping (LiveProvider, Provider, RouterBrowser) async throws -> Void) async throws {
    try await withLiveProvider { upstream in
        var registration = Provider.ClientRegistration(name: "Downstream", redirectURIs: [downstreamCallback])
        registration.id = "downstream"
        registration.secret = webSecret
        registration.firstParty = true
        _ = try await upstream.provider.registerClient(registration)

        var configuration = ServerConfiguration()
        configuration.database = .sqliteMemory
        configuration.passwordHashing = .testing
        configuration.signingAlgorithm = .es256
        configuration.upstreamProviders = try UpstreamProviderSettings.parse("""
            [{"id": "corp", "type": "oidc", "name": "Corp ID", "issuer": "\(upstream.provider.issuer)",
              "client_id": "downstream", "client_secret": "\(webSecret)"}]
            """)
        configure(&configuration)
        var logger = Logger(label: "downstream")
        logger.logLevel = .critical
        try await Provider.with(configuration, logger: logger) { downstream in
            var shop = Provider.ClientRegistration(name: "Shop", redirectURIs: [shopRedirect])
            shop.id = "shop"
            shop.secret = webSecret
            _ = try await downstream.registerClient(shop)
            let app = Application(router: try buildRouter(provider: downstream))
            try await app.test(.router) { client in try await body(upstream, downstream, RouterBrowser(client)) }
        }
    }
}

/// From the downstream login page through the upstream (where Alice signs in) back to the
/// downstream callback; returns the callback's answer.
func signInThroughCorp(_ upstream: LiveProvider, _ browser: RouterBrowser, email: String = aliceEmail,
                       password: String = alicePassword) async throws -> RouterBrowser.Page {
    let login = try await browser.request("/authorize?" + FormEncoding.encode([
        ("response_type", "code"), ("client_id", "shop"), ("redirect_uri", shopRedirect), ("scope", "openid email profile"),
        ("state", "s1"), ("nonce", "n1")]))
    #expect(login.html.contains("action=\"/login/federated/corp\"") && login.html.contains("Continue with Corp ID"))
    let started = try await browser.request("/login/federated/corp", form: [("interaction", login.field("interaction") ?? ""),
                                                                           ("csrf_token", login.field("csrf_token") ?? "")])
    #expect(started.status == .seeOther)
    let authorize = try #require(started.location.flatMap(URL.init(string:)))
    let query = Dictionary(uniqueKeysWithValues: (URLComponents(url: authorize, resolvingAgainstBaseURL: false)?.queryItems ?? [])
        .map { ($0.name, $0.value ?? "") })
    #expect(authorize.absoluteString.hasPrefix(upstream.provider.issuer + "/authorize?"))
    #expect(query["state"] != nil && query["nonce"] != nil && query["code_challenge_method"] == "S256")
    #expect(query["redirect_uri"] == downstreamCallback && query["client_id"] == "downstream")
    let callback = try await HeadlessBrowser(email: email, password: password).signIn(at: authorize, until: downstreamCallback)
    return try await browser.request("/federation/corp/callback?" + (callback.query ?? ""))
}

@Suite("Federation with an upstream OpenID provider")
struct FederationTests {
    @Test("the first sign-in creates an account from the upstream's claims, the next one finds it, a state works once")
    func signInCreatesThenFinds() async throws {
        try await withFederation { upstream, downstream, browser in
            let consent = try await signInThroughCorp(upstream, browser)
            #expect(consent.status == .ok && consent.html.contains("action=\"/consent\""), "\(consent.status) \(consent.html.prefix(400))")
            let done = try await browser.request("/consent", form: [("interaction", consent.field("interaction") ?? ""),
                                                                     ("csrf_token", consent.field("csrf_token") ?? ""), ("decision", "allow")])
            #expect(done.location?.hasPrefix(shopRedirect + "?code=") == true)
            let user = try #require(try await downstream.store.user(email: aliceEmail))
            #expect(user.emailVerified && user.passwordHash == nil && user.profile["name"] == "Alice Example")
            let identities = try await downstream.store.identities(userID: user.id)
            #expect(identities.count == 1 && identities.first?.providerID == "corp" && identities.first?.proven == true)

            let fresh = RouterBrowser(browser.client)
            let again = try await signInThroughCorp(upstream, fresh)
            // Consent is remembered: straight back to the shop, through a page (the upstream's CSP form-action
            // would apply to a redirect here).
            #expect(again.status == .ok && again.html.contains("http-equiv=\"refresh\" content=\"0;url=\(shopRedirect)?code="),
                    "\(again.html.prefix(600))")
            #expect(try await downstream.store.identities(userID: user.id).count == 1, "the same account, no second identity")
        }
    }

    @Test("a state is used once, and an upstream error is shown, not followed")
    func stateOnce() async throws {
        try await withFederation { upstream, _, browser in
            let login = try await browser.request("/authorize?" + FormEncoding.encode([
                ("response_type", "code"), ("client_id", "shop"), ("redirect_uri", shopRedirect), ("scope", "openid"), ("state", "s")]))
            let started = try await browser.request("/login/federated/corp", form: [("interaction", login.field("interaction") ?? ""),
                                                                                   ("csrf_token", login.field("csrf_token") ?? "")])
            let authorize = try #require(started.location.flatMap(URL.init(string:)))
            let callback = try await HeadlessBrowser(email: aliceEmail, password: alicePassword).signIn(at: authorize, until: downstreamCallback)
            let first = try await browser.request("/federation/corp/callback?" + (callback.query ?? ""))
            #expect(first.status == .ok)
            let replay = try await browser.request("/federation/corp/callback?" + (callback.query ?? ""))
            #expect(replay.status == .badRequest && replay.location == nil)
            let forged = try await browser.request("/federation/corp/callback?code=x&state=forged")
            #expect(forged.status == .badRequest)
            let unknown = try await browser.request("/federation/nobody/callback?code=x&state=y")
            #expect(unknown.status == .notFound)
        }
    }

    @Test("an address that is an existing account's is never linked by itself: its owner signs in first")
    func existingAccountNeedsProof() async throws {
        try await withFederation { upstream, downstream, browser in
            let owner = try await downstream.createUser(email: aliceEmail, password: "downstream passphrase")
            let page = try await signInThroughCorp(upstream, browser)
            #expect(page.status == .ok && page.html.contains("action=\"/federation/link\""), "\(page.html.prefix(500))")
            #expect(try await downstream.store.identities(userID: owner.id).isEmpty)
            let wrong = try await browser.request("/federation/link", form: [("link_token", page.field("link_token") ?? ""),
                                                                             ("csrf_token", page.field("csrf_token") ?? ""),
                                                                             ("password", "not it")])
            #expect(wrong.status == .unauthorized)
            #expect(try await downstream.store.identities(userID: owner.id).isEmpty)
            let right = try await browser.request("/federation/link", form: [("link_token", page.field("link_token") ?? ""),
                                                                             ("csrf_token", page.field("csrf_token") ?? ""),
                                                                             ("password", "downstream passphrase")])
            #expect(right.status == .ok && right.html.contains("action=\"/consent\""))
            #expect(try await downstream.store.identities(userID: owner.id).map(\.providerID) == ["corp"])
        }
    }

    @Test("the account page connects and disconnects providers, never the last way to sign in, and deletes the account")
    func accountPage() async throws {
        try await withFederation { upstream, downstream, browser in
            let consent = try await signInThroughCorp(upstream, browser)
            _ = try await browser.request("/consent", form: [("interaction", consent.field("interaction") ?? ""),
                                                             ("csrf_token", consent.field("csrf_token") ?? ""), ("decision", "allow")])
            let account = try await browser.request("/account")
            #expect(account.html.contains("Corp ID") && account.html.contains("action=\"/account/identities/remove\""))
            let csrf = try #require(account.field("csrf_token"))
            #expect(account.html.components(separatedBy: "name=\"csrf_token\" value=\"\(csrf)\"").count - 1
                    == account.html.components(separatedBy: "name=\"csrf_token\"").count - 1, "every form carries the token")
            // Corp ID is the only way this account has signed in: it stays.
            let refused = try await browser.request("/account/identities/remove", form: [("csrf_token", csrf), ("provider", "corp")])
            #expect(refused.status == .conflict)
            let user = try #require(try await downstream.store.user(email: aliceEmail))
            #expect(try await downstream.store.identities(userID: user.id).count == 1)
            // With a password it may go.
            try await downstream.store.updatePasswordHash(userID: user.id, hash: try await downstream.passwords.hash("a fresh passphrase"),
                                                         now: downstream.clock.now())
            let removed = try await browser.request("/account/identities/remove", form: [("csrf_token", csrf), ("provider", "corp")])
            #expect(removed.status == .seeOther)
            #expect(try await downstream.store.identities(userID: user.id).isEmpty)

            let mistyped = try await browser.request("/account/delete", form: [("csrf_token", csrf), ("confirm", "delete")])
            #expect(mistyped.status == .badRequest)
            let deleted = try await browser.request("/account/delete", form: [("csrf_token", csrf), ("confirm", "DELETE")])
            #expect(deleted.status == .ok)
            #expect(try await downstream.store.user(email: aliceEmail) == nil)
        }
    }

    @Test("connecting an identity long after the sign-in asks to sign in again instead of going to the provider")
    func connectNeedsRecentSignIn() async throws {
        try await withFederation(configure: { $0.reauthenticateAfter = 1 }) { upstream, downstream, browser in
            let consent = try await signInThroughCorp(upstream, browser)
            _ = try await browser.request("/consent", form: [("interaction", consent.field("interaction") ?? ""),
                                                             ("csrf_token", consent.field("csrf_token") ?? ""), ("decision", "allow")])
            let account = try await browser.request("/account")
            let csrf = try #require(account.field("csrf_token"))
            try await Task.sleep(for: .milliseconds(2100))
            let connect = try await browser.request("/account/identities/connect/corp", form: [("csrf_token", csrf)])
            #expect(connect.status == .ok && connect.html.contains("action=\"/account/reauth\""), "\(connect.status)")
            let delete = try await browser.request("/account/delete", form: [("csrf_token", csrf), ("confirm", "DELETE")])
            #expect(delete.html.contains("action=\"/account/reauth\""))
            #expect(try await downstream.store.user(email: aliceEmail) != nil)
        }
    }

    @Test("Sign in with Apple's client secret is an ES256 JWT from the team's key, as Apple specifies")
    func appleClientSecret() throws {
        let key = try JWSSigningKey.generate(.es256, kid: "KEY1234567")
        let secret = try Upstream.appleClientSecret(key: key, teamID: "ABCDE12345", clientID: "com.example.web", now: 1_800_000_000)
        let jwt = try JWT(parsing: secret)
        try jwt.verify(with: [key.publicKey])
        #expect(jwt.algorithm == "ES256" && jwt.kid == "KEY1234567")
        #expect(jwt.issuer == "ABCDE12345" && jwt.subject == "com.example.web" && jwt.audience == ["https://appleid.apple.com"])
        #expect(jwt.issuedAt == 1_800_000_000 && (jwt.expiresAt ?? 0) - 1_800_000_000 <= 15_777_000)
    }

    @Test("Apple's one-time user JSON fills the name; its string email_verified counts")
    func appleClaims() throws {
        let signer = try JWSSigningKey.generate(.es256, kid: "k")
        let raw = try JWT.sign(["iss": "https://appleid.apple.com", "sub": "001234.abc", "aud": "com.example.web", "exp": 2_000_000_000,
                                "iat": 1_800_000_000, "email": "X@privaterelay.appleid.com", "email_verified": "true",
                                "is_private_email": "true"], with: signer)
        let claims = UpstreamClaims(idToken: try IDToken(parsing: raw),
                                    appleUser: #"{"name": {"firstName": "Анна", "lastName": "Иванова"}, "email": "x@privaterelay.appleid.com"}"#)
        #expect(claims.subject == "001234.abc" && claims.email == "x@privaterelay.appleid.com" && claims.emailVerified)
        #expect(claims.profile == ["given_name": "Анна", "family_name": "Иванова", "name": "Анна Иванова"])
    }
}
