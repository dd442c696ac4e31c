import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraSQL

@Suite("Security: browser sessions and headers")
struct BrowserSecurityTests {
    @Test("signing in again ends the browser's previous session: its old cookie opens nothing")
    func signInReplacesSession() async throws {
        try await withApp { provider, browser in
            _ = try await browser.code()
            let first = try #require(browser.cookies[BrowserSessions.cookieName(secure: false)])
            _ = try await browser.code(extra: [("prompt", "login")])
            let second = try #require(browser.cookies[BrowserSessions.cookieName(secure: false)])
            #expect(first != second)
            let now = provider.clock.now()
            #expect(try await provider.store.session(tokenHash: tokenHash(first), now: now) == nil, "the old row is ended")
            #expect(try await provider.store.session(tokenHash: tokenHash(second), now: now) != nil)
        }
    }

    @Test("with an https issuer every response carries HSTS; with http none does")
    func strictTransportSecurity() async throws {
        try await withApp(configure: { $0.issuer = "https://id.example.com" }) { _, browser async throws in
            for path in ["/.well-known/openid-configuration", "/health", "/no-such-page"] {
                #expect(try await browser.request(path).headers[.strictTransportSecurity] == "max-age=31536000", "\(path)")
            }
        }
        try await withApp { _, browser async throws in
            #expect(try await browser.request("/health").headers[.strictTransportSecurity] == nil)
        }
    }
}

@Suite("Security: CSRF")
struct CSRFTests {
    @Test("a planted CSRF cookie is useless: the form token is the server's MAC of it, bound to the session")
    func plantedCookie() async throws {
        try await withApp { _, browser in
            // A sibling subdomain planted a cookie of its choice and forges a form echoing it (plain double-submit).
            browser.cookies["tessera_csrf"] = String(repeating: "p", count: 43)
            let page = try await browser.request(codeRequest())
            let interaction = try #require(page.field("interaction"))
            let forged = try await browser.post("/login", [("interaction", interaction), ("csrf_token", String(repeating: "p", count: 43)),
                                                           ("email", "alice@example.com"), ("password", "correct horse")])
            #expect(forged.status == .badRequest && browser.cookies[BrowserSessions.cookieName(secure: false)] == nil)
            // The page's own token, made by the server for this cookie, works.
            let real = try await browser.login(page, email: "alice@example.com", password: "correct horse")
            #expect(real.status == .ok && real.body.text.contains("action=\"/consent\"") && browser.cookies[BrowserSessions.cookieName(secure: false)] != nil)
        }
    }

    @Test("a token made for one session doesn't work in another")
    func boundToSession() async throws {
        try await withApp { provider, browser in
            let csrf = provider.csrf
            let cookie = String(repeating: "c", count: 43)
            #expect(csrf.formToken(cookie, session: "session-a") != csrf.formToken(cookie, session: "session-b"))
            #expect(csrf.formToken(cookie, session: nil) != csrf.formToken(cookie, session: "session-a"))
            _ = try await browser.code()
            // The attacker's token for the victim's cookie but the attacker's own session.
            let stolen = csrf.formToken(try #require(browser.cookies["tessera_csrf"]), session: "the attacker's session")
            let revoke = try await browser.post("/account/consents/revoke", [("csrf_token", stolen), ("client_id", "web")])
            #expect(revoke.status == .badRequest)
        }
    }

    @Test("a form token made for a crafted CSRF cookie is not a device cookie's signature (each has its own key)")
    func keysAreSeparate() async throws {
        try await withApp { provider, _ in
            let user = try #require(try await provider.store.user(email: "alice@example.com"))
            // An attacker sets their own CSRF cookie to the device cookie's signed text and
            // their session cookie to anything; the page then shows them the MAC of it.
            let session = "the attacker's own session cookie"
            let planted = "device-cookie|\(user.id)"
            let head = HTTPRequest(method: .get, scheme: "http", authority: "x", path: "/",
                                   headerFields: [.cookie: "tessera_csrf=\(planted); \(BrowserSessions.cookieName(secure: false))=\(session)"])
            let (token, _) = provider.csrf.token(for: Request(head: head, body: .init(buffer: ByteBuffer())))
            let forged = "\(user.id).\(tokenHash(session)).\(token)"
            let deviceRequest = Request(head: .init(method: .get, scheme: "http", authority: "x", path: "/",
                                                    headerFields: [.cookie: "tessera_device=\(forged)"]),
                                        body: .init(buffer: ByteBuffer()))
            #expect(provider.deviceCookies.device(in: deviceRequest) == nil, "a forged device cookie proves nothing")
        }
    }

    @Test("with an https issuer the CSRF cookie is __Host- prefixed and Secure")
    func hostPrefix() async throws {
        try await withApp(configure: { $0.issuer = "https://id.example.com" }) { _, browser async throws in
            let page = try await browser.request(codeRequest())
            let cookie = try #require(page.headers[values: .setCookie].first { $0.hasPrefix("__Host-tessera_csrf=") })
            #expect(cookie.contains("Secure") && cookie.contains("Path=/") && !cookie.contains("Domain"))
            // A cookie without the prefix (which a sibling could have set) doesn't count.
            browser.cookies["tessera_csrf"] = browser.cookies["__Host-tessera_csrf"]
            browser.cookies["__Host-tessera_csrf"] = nil
            let forged = try await browser.login(page, email: "alice@example.com", password: "correct horse")
            #expect(forged.status == .badRequest)
        }
    }
}
