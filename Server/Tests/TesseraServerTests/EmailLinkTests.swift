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

extension NativeApp {
    /// The sign-in link in the newest message to `email`.
    func link(for email: String) async throws -> String {
        let text = try #require(try await lastMail(to: email)).text
        let match = try #require(text.firstMatch(of: /http:\/\/\S+\/emaillink\/v1\.0\/signin\?\S+/))
        return String(match.0)
    }

    func oobCode(for email: String) async throws -> String {
        try #require(URLComponents(string: try await link(for: email))?.queryItems?.first { $0.name == "oob_code" }?.value)
    }

    /// The link's path and query, for the in-process router.
    func linkPath(for email: String) async throws -> String {
        let url = try #require(URLComponents(string: try await link(for: email)))
        return url.path + "?" + (url.percentEncodedQuery ?? "")
    }

    @discardableResult
    func sendLink(_ email: String, extra: [(String, String)] = []) async throws -> TestResponse {
        try await post("/emaillink/v1.0/send", [("email", email)] + extra)
    }

    func complete(_ email: String, code: String, extra: [(String, String)] = [], headers: HTTPFields = formHeaders) async throws -> TestResponse {
        try await post("/emaillink/v1.0/complete", [("email", email), ("oob_code", code), ("scope", "openid email offline_access")] + extra,
                       headers: headers)
    }
}

func bearer(_ token: String) -> HTTPFields {
    var headers = formHeaders
    headers[.authorization] = "Bearer " + token
    return headers
}

@Suite("Email-link sign-in")
struct EmailLinkTests {
    @Test("the first link creates the account with a verified address; a link works once and only with its address")
    func appSignIn() async throws {
        let clock = ManualClock()
        try await withNativeApp(clock: clock) { app in
            let sent = try await app.sendLink("New@Example.com", extra: [("continue_url", "com.example.app:/callback")])
            #expect(sent.json["suberror"] == "unauthorized_continue_uri", "a custom scheme is no continue URL")
            let ok = try await app.sendLink("New@Example.com")
            #expect(ok.status == .ok && ok.json == ["email": "new@example.com", "expires_in": 3600])
            let mail = try #require(try await app.lastMail(to: "new@example.com"))
            #expect(mail.metadata["template"] == "sign-in-link" && mail.html?.contains("/emaillink/v1.0/signin?mode=signIn") == true)
            let code = try await app.oobCode(for: "new@example.com")

            let wrong = try await app.complete("someone@example.com", code: code)
            #expect(wrong.json["suberror"] == "invalid_email" && wrong.errorDescription.contains("4 attempts left"))
            #expect(try await app.provider.store.user(email: "new@example.com") == nil)
            let link = try await app.link(for: "new@example.com")
            let signedIn = try await app.post("/emaillink/v1.0/complete", [("email", "new@example.com"), ("link", link), ("scope", "openid email")])
            #expect(signedIn.status == .ok, "\(signedIn.body.text)")
            #expect(signedIn.json["is_new_user"] == true && signedIn.json["email"] == "new@example.com")
            let user = try #require(try await app.provider.store.user(email: "new@example.com"))
            #expect(user.emailVerified && user.passwordHash == nil)
            let idToken = try claims(ofJWT: try #require(signedIn.json["id_token"]?.stringValue))
            #expect(idToken["sub"]?.stringValue == user.id && idToken["email_verified"] == true && idToken["amr"] == .array(["email"]))

            let replay = try await app.complete("new@example.com", code: code)
            #expect(replay.json["suberror"] == "invalid_oob_code")
            try await app.sendLink("new@example.com")
            let second = try await app.complete("new@example.com", code: try await app.oobCode(for: "new@example.com"))
            #expect(second.json["is_new_user"] == false)

            try await app.sendLink("new@example.com")
            let late = try await app.oobCode(for: "new@example.com")
            clock.advance(by: 3601)
            #expect(try await app.complete("new@example.com", code: late).json["suberror"] == "expired_oob_code")
        }
    }

    @Test("five wrong addresses and the link stops working")
    func wrongAddressLimit() async throws {
        try await withNativeApp { app in
            try await app.sendLink("alice@example.com")
            let code = try await app.oobCode(for: "alice@example.com")
            for _ in 1...5 { _ = try await app.complete("mallory@example.com", code: code) }
            #expect(try await app.complete("alice@example.com", code: code).json["suberror"] == "invalid_oob_code")
        }
    }

    @Test("send answers the same for addresses with and without an account, and bad settings are refused")
    func sendAnswers() async throws {
        try await withNativeApp { app in
            let known = try await app.sendLink("alice@example.com")
            let unknown = try await app.sendLink("nobody@example.com")
            #expect(known.status == unknown.status && known.json.keys.sorted() == unknown.json.keys.sorted())
            #expect(known.json["expires_in"] == unknown.json["expires_in"])
            let noURL = try await app.sendLink("alice@example.com", extra: [("handle_code_in_app", "true")])
            #expect(noURL.json["error"] == "invalid_request")
            let foreign = try await app.sendLink("alice@example.com", extra: [("continue_url", "https://evil.example/finish")])
            #expect(foreign.json["suberror"] == "unauthorized_continue_uri")
            let bundle = try await app.sendLink("alice@example.com", extra: [("ios_bundle_id", "com.other.app")])
            #expect(bundle.json["error"] == "invalid_request")
            let notAnAddress = try await app.sendLink("alice")
            #expect(notAnAddress.json["error_codes"] == .array([90100]))
        }
    }

    @Test("signing in by link to an unverified account removes its password and ends its sessions and tokens")
    func squatterIsLockedOut() async throws {
        try await withNativeApp { app in
            // Someone registered the victim's address and set a password, without owning the mailbox.
            let squatted = try await app.provider.createUser(email: "victim@example.com", password: "squatter's passphrase",
                                                             emailVerified: false)
            let challenge = try await app.startSignIn("victim@example.com")
            let squatter = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(challenge)), ("grant_type", "password"),
                                                                     ("password", "squatter's passphrase"), ("scope", "openid offline_access")])
            let squatterRefresh = try #require(squatter.json["refresh_token"]?.stringValue)

            try await app.sendLink("victim@example.com")
            let owner = try await app.complete("victim@example.com", code: try await app.oobCode(for: "victim@example.com"))
            #expect(owner.json["is_new_user"] == false)
            let secured = try #require(try await app.provider.store.user(id: squatted.id))
            #expect(secured.emailVerified && secured.passwordHash == nil)
            let refreshed = try await app.post("/oauth2/v2.0/token", [("grant_type", "refresh_token"), ("refresh_token", squatterRefresh)])
            #expect(refreshed.json["error"] == "invalid_grant")
            let again = try await app.startSignIn("victim@example.com")
            let old = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(again)), ("grant_type", "password"),
                                                                ("password", "squatter's passphrase"), ("scope", "openid")])
            #expect(old.json["error_codes"] == .array([50126]), "the squatter's password is gone")
        }
    }

    @Test("linking adds the address to the signed-in account, unless another account has it")
    func linking() async throws {
        try await withNativeApp { app in
            try await app.sendLink("anna@example.com")
            let anna = try await app.complete("anna@example.com", code: try await app.oobCode(for: "anna@example.com"))
            let access = try #require(anna.json["access_token"]?.stringValue)

            try await app.sendLink("alice@example.com")
            let taken = try await app.oobCode(for: "alice@example.com")
            let refused = try await app.complete("alice@example.com", code: taken, extra: [("operation", "link")], headers: bearer(access))
            #expect(refused.json["error"] == "credential_already_in_use")
            #expect(try await app.complete("alice@example.com", code: taken).status == .ok, "the refused link stays unused")

            let noToken = try await app.complete("anna.new@example.com", code: "x", extra: [("operation", "link")])
            #expect(noToken.status == .unauthorized || noToken.json["suberror"] == "invalid_oob_code")
            try await app.sendLink("anna.new@example.com")
            let linked = try await app.complete("anna.new@example.com", code: try await app.oobCode(for: "anna.new@example.com"),
                                                extra: [("operation", "link")], headers: bearer(access))
            #expect(linked.status == .ok, "\(linked.body.text)")
            let annaID = try claims(ofJWT: try #require(anna.json["id_token"]?.stringValue))["sub"]?.stringValue
            #expect(try await app.provider.store.user(email: "anna.new@example.com")?.id == annaID)
        }
    }

    @Test("re-authentication gives fresh tokens with a new auth_time, and only for the signed-in user's address")
    func reauthentication() async throws {
        let clock = ManualClock()
        try await withNativeApp(clock: clock) { app in
            try await app.sendLink("alice@example.com")
            let first = try await app.complete("alice@example.com", code: try await app.oobCode(for: "alice@example.com"))
            let access = try #require(first.json["access_token"]?.stringValue)
            let firstAuth = try claims(ofJWT: try #require(first.json["id_token"]?.stringValue))["auth_time"]
            clock.advance(by: 300)
            try await app.sendLink("bob@example.com")
            let other = try await app.complete("bob@example.com", code: try await app.oobCode(for: "bob@example.com"),
                                               extra: [("operation", "reauthenticate")], headers: bearer(access))
            #expect(other.json["error"] == "user_mismatch")
            try await app.sendLink("alice@example.com")
            let again = try await app.complete("alice@example.com", code: try await app.oobCode(for: "alice@example.com"),
                                               extra: [("operation", "reauthenticate")], headers: bearer(access))
            let auth = try claims(ofJWT: try #require(again.json["id_token"]?.stringValue))["auth_time"]
            #expect(auth != nil && auth != firstAuth && auth?.intValue == (firstAuth?.intValue ?? 0) + 300)
        }
    }

    @Test("hosted login: email me a link, open it in the same browser, and the client gets its code")
    func hostedLoginSameDevice() async throws {
        try await withNativeApp { app in
            let browser = app.browser
            let login = try await browser.request(codeRequest(client: "third-party"))
            #expect(login.body.text.contains("formaction=\"/login/emaillink\""))
            let sent = try await browser.post("/login/emaillink", [("interaction", login.field("interaction") ?? ""),
                                                                   ("csrf_token", login.field("csrf_token") ?? ""), ("email", "alice@example.com")])
            #expect(sent.status == .ok && sent.body.text.contains("alice@example.com"))
            #expect(browser.cookies[EmailLinkEndpoints.deviceCookie] != nil)
            let path = try await app.linkPath(for: "alice@example.com")
            let page = try await browser.request(path)
            #expect(page.status == .ok && page.body.text.contains("alice@example.com") && page.field("oob_code") != nil)
            #expect(!page.body.text.contains("name=\"email\""), "the same browser is not asked for the address")
            _ = try await browser.request(path) // opening twice (a mail scanner) uses nothing
            let done = try await browser.post(EmailLinks.linkPath, [("oob_code", page.field("oob_code") ?? ""),
                                                                    ("csrf_token", page.field("csrf_token") ?? "")])
            #expect(done.status == .ok || done.status == .seeOther, "\(done.body.text)")
            // The third-party client asks for consent, then gets its code.
            let consent = done.status == .ok ? try await browser.consent(done, allow: true) : done
            #expect(consent.location?.hasPrefix(testRedirect + "?code=") == true, "\(consent.body.text)")
            #expect(try await browser.request(path).status == .badRequest, "a used link shows the expired page")
        }
    }

    @Test("a link opened on another device asks for the address first")
    func hostedLoginOtherDevice() async throws {
        try await withNativeApp { app in
            let login = try await app.browser.request(codeRequest(client: "third-party"))
            _ = try await app.browser.post("/login/emaillink", [("interaction", login.field("interaction") ?? ""),
                                                                ("csrf_token", login.field("csrf_token") ?? ""), ("email", "alice@example.com")])
            let phone = Browser(app.browser.client)
            let path = try await app.linkPath(for: "alice@example.com")
            let page = try await phone.request(path)
            #expect(page.body.text.contains("name=\"email\"") && !page.body.text.contains("alice@example.com"))
            let mismatch = try await phone.post(EmailLinks.linkPath, [("oob_code", page.field("oob_code") ?? ""),
                                                                      ("csrf_token", page.field("csrf_token") ?? ""), ("email", "eve@example.com")])
            #expect(mismatch.status == .badRequest && mismatch.body.text.contains("not the address"))
            let done = try await phone.post(EmailLinks.linkPath, [("oob_code", page.field("oob_code") ?? ""),
                                                                  ("csrf_token", page.field("csrf_token") ?? ""), ("email", "Alice@Example.com")])
            #expect(done.status == .ok && done.body.text.contains("consent"), "\(done.status)")
        }
    }

    @Test("an app's link opened in a browser goes on to its continue_url with the code")
    func handleInApp() async throws {
        try await withNativeApp { app in
            var registration = Provider.ClientRegistration(name: "Shop", redirectURIs: ["https://shop.example.com/callback"])
            registration.id = "shop"
            registration.isPublic = true
            registration.firstParty = true
            registration.appLinks.appleAppIDs = ["ABCDE12345.com.example.shop"]
            registration.appLinks.androidApps = [.init(packageName: "com.example.shop",
                                                       certificateFingerprints: [Array(repeating: "AB", count: 32).joined(separator: ":")])]
            registration.appLinks.linkDomains = ["links.example.com"]
            _ = try await app.provider.registerClient(registration)
            var shop = app
            shop.clientID = "shop"
            let sent = try await shop.sendLink("alice@example.com", extra: [
                ("continue_url", "https://links.example.com/finish?cart=1"), ("handle_code_in_app", "true"),
                ("ios_bundle_id", "com.example.shop"), ("android_package_name", "com.example.shop"), ("android_install_app", "true"),
            ])
            #expect(sent.status == .ok, "\(sent.body.text)")
            let link = try await app.link(for: "alice@example.com")
            #expect(link.contains("ios_bundle_id=com.example.shop") && link.contains("android_install_app=true"))
            let opened = try await app.browser.request(try await app.linkPath(for: "alice@example.com"))
            #expect(opened.status == .seeOther)
            #expect(opened.location?.hasPrefix("https://links.example.com/finish?cart=1&mode=signIn&oob_code=") == true)

            let aasa = try await app.browser.request("/.well-known/apple-app-site-association").json
            let details = aasa["applinks"]?.objectValue?["details"]?.arrayValue?.first?.objectValue
            #expect(details?["appIDs"] == .array(["ABCDE12345.com.example.shop"]))
            let assetLinks = try await app.browser.request("/.well-known/assetlinks.json")
            #expect(assetLinks.body.text.contains("com.example.shop") && assetLinks.headers[.contentType] == "application/json")
        }
    }

    @Test("app registrations with malformed ids are refused")
    func badRegistrations() async throws {
        try await withProvider { provider in
            for links in [ClientAppLinks(linkDomains: ["https://x.example"]), ClientAppLinks(appleAppIDs: ["com.example.app"]),
                          ClientAppLinks(androidApps: [.init(packageName: "com.example.app", certificateFingerprints: ["AB:CD"])])] {
                var registration = Provider.ClientRegistration(name: "App", redirectURIs: ["https://app.example.com/cb"])
                registration.appLinks = links
                await #expect(throws: ConfigurationError.self) { try await provider.registerClient(registration) }
            }
        }
    }
}

extension ClientAppLinks {
    init(linkDomains: [String] = [], appleAppIDs: [String] = [], androidApps: [AndroidApp] = []) {
        self.init()
        self.linkDomains = linkDomains
        self.appleAppIDs = appleAppIDs
        self.androidApps = androidApps
    }
}

@Suite("Sign-in by email code on the hosted login")
struct HostedCodeSignInTests {
    @Test("the login page's 'Email me a code': the code page, a wrong code counted, the right one signs in and the request goes on")
    func signsIn() async throws {
        try await withNativeApp { app in
            let browser = app.browser
            let login = try await browser.request(codeRequest(client: "third-party"))
            #expect(login.body.text.contains("formaction=\"\(LoginCodeEndpoints.startPath)\""))
            let page = try await browser.post(LoginCodeEndpoints.startPath, [("interaction", login.field("interaction") ?? ""),
                                                                              ("csrf_token", login.field("csrf_token") ?? ""),
                                                                              ("email", "Alice@Example.com")])
            #expect(page.status == .ok && page.body.text.contains("a***e@e*****e.com"), "\(page.body.text)")
            #expect(page.body.text.contains("autocomplete=\"one-time-code\""))
            let code = try await app.code(for: "alice@example.com")
            let form = { (page: TestResponse, code: String) in
                [("interaction", page.field("interaction") ?? ""), ("csrf_token", page.field("csrf_token") ?? ""),
                 ("flow", page.field("flow") ?? ""), ("target", page.field("target") ?? ""), ("code", code)]
            }
            let wrong = try await browser.post(LoginCodeEndpoints.verifyPath, form(page, code == "00000000" ? "11111111" : "00000000"))
            #expect(wrong.status == .badRequest && wrong.body.text.contains("Attempts left: 4."), "\(wrong.body.text)")
            #expect(wrong.field("flow") == page.field("flow"), "a wrong code leaves the flow where it was")
            let done = try await browser.post(LoginCodeEndpoints.verifyPath, form(wrong, code))
            #expect(done.status == .ok && done.body.text.contains("consent"), "\(done.status) \(done.body.text)")
            let consent = try await browser.consent(done, allow: true)
            #expect(consent.location?.hasPrefix(testRedirect + "?code=") == true, "\(consent.body.text)")
            // The flow is over: its token signs nobody in again.
            let again = try await browser.post(LoginCodeEndpoints.verifyPath, form(page, code))
            #expect(again.status == .badRequest && !again.body.text.contains("name=\"flow\""))
        }
    }

    @Test("an address without an account gets the same code page and no mail; a resend too soon waits")
    func unknownAddress() async throws {
        try await withNativeApp { app in
            let browser = app.browser
            let login = try await browser.request(codeRequest(client: "third-party"))
            let page = try await browser.post(LoginCodeEndpoints.startPath, [("interaction", login.field("interaction") ?? ""),
                                                                              ("csrf_token", login.field("csrf_token") ?? ""),
                                                                              ("email", "nobody@example.com")])
            #expect(page.status == .ok && page.body.text.contains("n****y@e*****e.com"))
            #expect(try await app.mailCount(to: "nobody@example.com") == 0)
            let resend = try await browser.post(LoginCodeEndpoints.resendPath, [
                ("interaction", page.field("interaction") ?? ""), ("csrf_token", page.field("csrf_token") ?? ""),
                ("flow", page.field("flow") ?? ""), ("target", page.field("target") ?? "")])
            #expect(resend.status == .tooManyRequests && resend.body.text.contains("You can ask for another in 60 s"), "\(resend.body.text)")
        }
    }
}
