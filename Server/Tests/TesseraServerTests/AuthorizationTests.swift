import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraSQL

/// Runs `body` against the real router of a provider on an in-memory database.
func withApp(clock: ManualClock = ManualClock(), configure: (inout ServerConfiguration) -> Void = { _ in },
             _ body: @escaping @Sendable (Provider, Browser) async throws -> Void) async throws {
    try await withProvider(clock: clock, configure: configure) { provider async throws in
        try await provider.addWebClient()
        _ = try await provider.createUser(email: "alice@example.com", password: "correct horse", name: "Alice")
        let app = Application(router: try buildRouter(provider: provider))
        try await app.test(.router) { client in
            try await body(provider, Browser(client))
        }
    }
}

@Suite("Authorization endpoint")
struct AuthorizationTests {
    @Test("the checks verify the client and its redirect URI first; only the checks after them may redirect")
    func checkOrder() {
        let names = Authorizer.checks.map(\.name)
        #expect(Array(names.prefix(2)) == ["client", "redirect_uri"])
        #expect(Authorizer.checks.prefix(2).allSatisfy { !$0.redirectable })
        #expect(Authorizer.checks.dropFirst(2).allSatisfy { $0.redirectable })
        #expect(Set(names).count == names.count)
    }

    @Test("an unknown client or unregistered redirect URI gets an error page, never a redirect")
    func untrustedRequestsAreNotRedirected() async throws {
        try await withApp { _, browser in
            for uri in [codeRequest(client: "nobody"),
                        authorizeURI([("response_type", "code"), ("client_id", "web"), ("redirect_uri", testRedirect + "/x"), ("scope", "openid")]),
                        authorizeURI([("response_type", "code"), ("client_id", "web"), ("scope", "openid")]),
                        authorizeURI([("client_id", "web"), ("client_id", "web"), ("redirect_uri", testRedirect)])] {
                let response = try await browser.request(uri)
                #expect(response.status == .badRequest)
                #expect(response.location == nil)
                #expect(response.headers[.contentType]?.hasPrefix("text/html") == true)
                #expect(response.body.text.contains("invalid_request"))
            }
        }
    }

    @Test("other errors go back to the client with state and iss", arguments: [
        ([("response_type", "token")], "unsupported_response_type"),
        ([("response_type", "code"), ("scope", "openid phone")], "invalid_scope"),
        ([("response_type", "code"), ("code_challenge", PKCE.createChallenge(PKCE.createVerifier())), ("code_challenge_method", "plain")], "invalid_request"),
        ([("response_type", "code"), ("prompt", "none")], "login_required"),
        ([("response_type", "code"), ("prompt", "none login")], "invalid_request"),
        ([("response_type", "code"), ("request", "eyJ.e30.")], "request_not_supported"),
        ([("response_type", "code"), ("max_age", "-1")], "invalid_request"),
        ([("response_type", "code"), ("state", "again")], "invalid_request"),
        ([("response_type", "code"), ("id_token_hint", "not-a-token")], "invalid_request"),
    ] as [([(String, String)], String)])
    func redirectedErrors(extra: [(String, String)], expected: String) async throws {
        try await withApp { provider, browser in
            var parameters = [("client_id", "web"), ("redirect_uri", testRedirect), ("state", "s1")] + extra
            if !extra.contains(where: { $0.0 == "scope" }) { parameters.append(("scope", "openid")) }
            let response = try await browser.request(authorizeURI(parameters))
            #expect(response.status == .found)
            #expect(response.location?.hasPrefix(testRedirect + "?") == true)
            let answer = response.redirectParameters
            #expect(answer["error"] == expected)
            #expect(answer["iss"] == provider.issuer)
            if expected != "invalid_request" || !extra.contains(where: { $0.0 == "state" }) { #expect(answer["state"] == "s1") }
            #expect(answer["code"] == nil)
        }
    }

    @Test("public clients must use PKCE")
    func publicClientsNeedPKCE() async throws {
        try await withApp { provider, browser in
            var registration = Provider.ClientRegistration(name: "Phone", redirectURIs: ["com.example.app:/cb"])
            registration.id = "phone"
            registration.isPublic = true
            _ = try await provider.registerClient(registration)
            let response = try await browser.request(authorizeURI([("response_type", "code"), ("client_id", "phone"),
                                                                   ("redirect_uri", "com.example.app:/cb"), ("scope", "openid")]))
            #expect(response.redirectParameters["error"] == "invalid_request")
            #expect(response.location?.hasPrefix("com.example.app:/cb?") == true)
        }
    }

    @Test("sign-in, consent and the code: the whole browser flow")
    func fullFlow() async throws {
        try await withApp { provider, browser in
            let page = try await browser.request(codeRequest())
            #expect(page.status == .ok)
            #expect(page.body.text.contains("Web App"))
            #expect(page.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            #expect(page.headers[.init("X-Frame-Options")!] == "DENY")
            // Browsers apply form-action to the redirect that answers the form: the client's origin must be allowed.
            #expect(page.headers[.contentSecurityPolicy]?.contains("form-action 'self' https://app.example.com") == true)
            let consent = try await browser.login(page, email: "alice@example.com", password: "correct horse")
            #expect(consent.status == .ok)
            #expect(consent.body.text.contains("Your email address"))
            let done = try await browser.consent(consent, allow: true)
            #expect(done.status == .seeOther)
            let answer = done.redirectParameters
            #expect(answer["code"] != nil)
            #expect(answer["state"] == "st-1")
            #expect(answer["iss"] == provider.issuer)

            // A live session and remembered consent: straight back with a code.
            let silent = try await browser.request(codeRequest(extra: [("prompt", "none")]))
            #expect(silent.status == .found)
            #expect(silent.redirectParameters["code"] != nil)
            // prompt=login and max_age=0 ask for the password again.
            #expect(try await browser.request(codeRequest(extra: [("prompt", "login")])).field("interaction") != nil)
            #expect(try await browser.request(codeRequest(extra: [("max_age", "0")])).field("interaction") != nil)
            // New scopes need consent again; with prompt=none that is consent_required.
            let more = try await browser.request(codeRequest(scope: "openid email profile", extra: [("prompt", "none")]))
            #expect(more.redirectParameters["error"] == "consent_required")
        }
    }

    @Test("the session cookie is HttpOnly and SameSite=Lax, and __Host- prefixed and Secure for an https issuer")
    func sessionCookie() async throws {
        for issuer in ["http://127.0.0.1:8080", "https://id.example.com"] {
            try await withApp(configure: { $0.issuer = issuer }) { _, browser in
                let page = try await browser.request(codeRequest())
                let response = try await browser.login(page, email: "alice@example.com", password: "correct horse")
                let name = issuer.hasPrefix("https") ? "__Host-tessera_session=" : "tessera_session="
                let cookie = response.headers[values: .setCookie].first { $0.hasPrefix(name) } ?? ""
                #expect(cookie.contains("HttpOnly"))
                #expect(cookie.contains("SameSite=Lax"))
                #expect(cookie.contains("Path=/"))
                #expect(!cookie.contains("Domain="))
                #expect(cookie.contains("Secure") == issuer.hasPrefix("https"))
            }
        }
    }

    @Test("denying consent returns access_denied")
    func deny() async throws {
        try await withApp { _, browser in
            let page = try await browser.request(codeRequest())
            let consent = try await browser.login(page, email: "alice@example.com", password: "correct horse")
            #expect(try await browser.consent(consent, allow: false).redirectParameters["error"] == "access_denied")
        }
    }

    @Test("first-party clients skip consent; fragment and form_post response modes")
    func responseModes() async throws {
        try await withApp { provider, browser in
            try await provider.addWebClient(id: "mine", firstParty: true)
            let page = try await browser.request(codeRequest(client: "mine", extra: [("response_mode", "fragment")]))
            let done = try await browser.login(page, email: "alice@example.com", password: "correct horse")
            #expect(done.location?.hasPrefix(testRedirect + "#code=") == true)
            let posted = try await browser.request(codeRequest(client: "mine", extra: [("response_mode", "form_post")]))
            #expect(posted.status == .ok)
            #expect(posted.body.text.contains("action=\"\(testRedirect)\""))
            #expect(posted.field("code") != nil && posted.field("state") == "st-1" && posted.field("iss") == provider.issuer)
            let csp = posted.headers[.contentSecurityPolicy] ?? ""
            #expect(csp.contains("form-action 'self' https://app.example.com;"))
            #expect(csp.contains("script-src 'self' 'nonce-"))
        }
    }

    @Test("wrong email and wrong password read the same; repeated failures are throttled")
    func credentials() async throws {
        try await withApp(configure: { $0.loginLimits.perAccountAndAddress = 3 }) { _, browser in
            let page = try await browser.request(codeRequest())
            let unknown = try await browser.login(page, email: "nobody@example.com", password: "correct horse")
            let wrong = try await browser.login(page, email: "alice@example.com", password: "wrong")
            #expect(unknown.status == .unauthorized && wrong.status == .unauthorized)
            #expect(unknown.body.text.contains("The email or password is incorrect."))
            #expect(wrong.body.text.contains("The email or password is incorrect."))
            _ = try await browser.login(page, email: "alice@example.com", password: "wrong")
            _ = try await browser.login(page, email: "alice@example.com", password: "wrong")
            let blocked = try await browser.login(page, email: "alice@example.com", password: "correct horse")
            #expect(blocked.status == .tooManyRequests)
        }
    }

    @Test("a form without the CSRF cookie's token is refused")
    func csrf() async throws {
        try await withApp { _, browser in
            let page = try await browser.request(codeRequest())
            let forged = try await browser.post("/login", [("interaction", page.field("interaction") ?? ""), ("csrf_token", "x"),
                                                           ("email", "alice@example.com"), ("password", "correct horse")])
            #expect(forged.status == .badRequest)
            #expect(browser.cookies["tessera_session"] == nil)
        }
    }

    @Test("pages speak Russian when asked")
    func russian() async throws {
        try await withApp { _, browser in
            let page = try await browser.request(codeRequest(extra: [("ui_locales", "ru")]))
            #expect(page.body.text.contains("Войти"))
            #expect(page.body.text.contains("lang=\"ru\""))
            let accept = try await browser.request(codeRequest(), headers: [.acceptLanguage: "ru-RU,ru;q=0.9,en;q=0.5"])
            #expect(accept.body.text.contains("Вход"))
        }
    }
}
