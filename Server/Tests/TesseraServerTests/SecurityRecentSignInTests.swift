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

@Suite("Security: sensitive changes need a recent sign-in")
struct RecentSignInTests {
    /// Signs `browser` in on the account page.
    static func signIn(_ browser: Browser, password: String = "correct horse") async throws {
        let page = try await browser.request("/account")
        let signedIn = try await browser.post("/account/login", [("csrf_token", try #require(page.field("csrf_token"))),
                                                                 ("email", "alice@example.com"), ("password", password)])
        #expect(signedIn.status == .seeOther)
    }

    static func delete(_ browser: Browser) async throws -> TestResponse {
        let account = try await browser.request("/account")
        return try await browser.post("/account/delete", [("csrf_token", try #require(account.field("csrf_token"))), ("confirm", "DELETE")])
    }

    @Test("deleting the account ten minutes after signing in asks for the password again; then it works")
    func deleteNeedsRecentSignIn() async throws {
        let clock = ManualClock()
        try await withApp(clock: clock) { provider, browser in
            try await Self.signIn(browser)
            clock.advance(by: 601)
            let asked = try await Self.delete(browser)
            #expect(asked.status == .ok && asked.body.text.contains("action=\"/account/reauth\""))
            #expect(asked.body.text.contains("sign in again") && asked.body.text.contains("readonly"))
            #expect(try await provider.store.user(email: "alice@example.com") != nil, "nothing was deleted")
            let csrf = try #require(asked.field("csrf_token"))
            let wrong = try await browser.post("/account/reauth", [("csrf_token", csrf), ("email", "alice@example.com"), ("password", "nope")])
            #expect(wrong.status == .unauthorized && wrong.body.text.contains("action=\"/account/reauth\""))
            // The form's address is ignored: the session's account is the one confirmed.
            let confirmed = try await browser.post("/account/reauth", [("csrf_token", csrf), ("email", "mallory@example.com"),
                                                                       ("password", "correct horse")])
            #expect(confirmed.status == .seeOther && confirmed.location == "/account")
            let deleted = try await Self.delete(browser)
            #expect(deleted.status == .ok && !deleted.body.text.contains("/account/reauth"))
            #expect(try await provider.store.user(email: "alice@example.com") == nil)
        }
    }

    @Test("within ten minutes of the sign-in nothing more is asked")
    func recentSignInIsEnough() async throws {
        let clock = ManualClock()
        try await withApp(clock: clock) { provider, browser in
            try await Self.signIn(browser)
            clock.advance(by: 590)
            #expect(try await Self.delete(browser).status == .ok)
            #expect(try await provider.store.user(email: "alice@example.com") == nil)
        }
    }

    @Test("without a password, a sign-in link to the account's address confirms it and comes back to the account page")
    func confirmByLink() async throws {
        let clock = ManualClock()
        try await withApp(clock: clock) { provider, browser in
            try await Self.signIn(browser)
            let user = try #require(try await provider.store.user(email: "alice@example.com"))
            try await provider.store.removePassword(userID: user.id, now: provider.clock.now())
            clock.advance(by: 3600)
            let asked = try await Self.delete(browser)
            let sent = try await browser.post("/account/reauth/link", [("csrf_token", try #require(asked.field("csrf_token"))),
                                                                       ("email", "someone-else@example.com")])
            #expect(sent.status == .ok)
            let mail = try #require(try await provider.store.outboxMessages(recipient: "alice@example.com", limit: 1).first)
            #expect(try await provider.store.outboxMessages(recipient: "someone-else@example.com", limit: 1).isEmpty)
            let link = try #require(mail.text.firstMatch(of: /https?:\/\/\S+emaillink\/v1.0\/signin\S+/)).output
            let components = try #require(URLComponents(string: String(link)))
            let opened = try await browser.request(components.path + "?" + (components.percentEncodedQuery ?? ""))
            #expect(opened.status == .ok)
            let code = try #require(components.queryItems?.first { $0.name == "oob_code" }?.value)
            let confirmed = try await browser.post("/emaillink/v1.0/signin", [("csrf_token", try #require(opened.field("csrf_token"))),
                                                                              ("oob_code", code)])
            #expect(confirmed.status == .seeOther && confirmed.location?.hasSuffix("/account") == true, "\(confirmed.status)")
            #expect(try await Self.delete(browser).status == .ok)
            #expect(try await provider.store.user(email: "alice@example.com") == nil)
        }
    }
}
