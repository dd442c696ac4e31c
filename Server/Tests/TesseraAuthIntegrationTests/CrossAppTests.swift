import Foundation
import Synchronization
import Testing
import TesseraAuth
import TesseraAuthSberID
import TesseraCore
import TesseraDomain
import TesseraServer
import TesseraNode

/// iOS's universal-link opening, stood in for by the SDK's closure opener: with an "installed"
/// authenticator app the link is handed to it (a task, as iOS switches apps) and true returned;
/// without one, false.
func standInOpener(app: (@Sendable (URL) async -> Void)?) -> ClosureAppLinkOpener {
    ClosureAppLinkOpener { url in
        guard let app else { return false }
        Task { await app(url) }
        return true
    }
}

/// A browser that must not be needed.
final class NoBrowser: ExternalUserAgent {
    let opened = Mutex<[URL]>([])
    func present(_ url: URL, redirectURI: String) async throws -> URL {
        opened.withLock { $0.append(url) }
        throw AuthError(.cancelled, "no browser in this test")
    }
}

let bankRedirect = "com.example.bank:/cb"
let partnerShopRedirect = "com.example.shop:/cb"
let mailRedirect = "com.example.mail:/cb"
let calendarRedirect = "com.example.calendar:/cb"

/// The operator's authenticator app, a third-party partner, and two apps of one vendor.
func registerCrossAppClients(_ provider: Provider) async throws {
    var bank = Provider.ClientRegistration(name: "Bank", redirectURIs: [bankRedirect])
    bank.id = "bank"
    bank.isPublic = true
    bank.firstParty = true
    bank.authenticator = true
    _ = try await provider.registerClient(bank)
    var shop = Provider.ClientRegistration(name: "Shop", redirectURIs: [partnerShopRedirect])
    shop.id = "shop"
    shop.isPublic = true
    _ = try await provider.registerClient(shop)
    for (id, redirect) in [("mail", mailRedirect), ("calendar", calendarRedirect)] {
        var sibling = Provider.ClientRegistration(name: id.capitalized, redirectURIs: [redirect])
        sibling.id = id
        sibling.isPublic = true
        sibling.firstParty = true
        sibling.deviceSSOGroup = "acme"
        sibling.scopes = ["openid", "profile", "email", "offline_access", "device_sso"]
        _ = try await provider.registerClient(sibling)
    }
}

@Suite("Cross-app sign-in through the SDK, against the provider")
struct CrossAppTests {
    /// The authenticator app, signed in as Alice.
    func bankSession(_ live: LiveProvider) async throws -> AuthState {
        let state = AuthState(client: live.client("bank", secret: nil, redirectURI: bankRedirect))
        try await state.signIn(using: live.browser)
        return state
    }

    @Test("app-to-app: the partner pushes its request, the authenticator app shows and approves it, the partner redeems the code")
    func approvedInTheAuthenticatorApp() async throws {
        try await withLiveProvider { live in
            try await registerCrossAppClients(live.provider)
            let approver = AuthorizationApprover(state: try await bankSession(live))
            let inbox = AppRedirectInbox()
            let shown = Mutex<AuthorizationDetails?>(nil)
            let authenticatorApp = standInOpener { url in
                do {
                    guard let incoming = try await approver.request(from: url) else { return }
                    let details = try await approver.details(of: incoming)
                    shown.withLock { $0 = details }
                    await inbox.deliver(try await approver.approve(incoming))
                } catch {
                    Issue.record("the authenticator app failed: \(error)")
                }
            }
            let shop = live.client("shop", secret: nil, redirectURI: partnerShopRedirect)
            let request = shop.makeRequest()
            let result = try await shop.signInThroughAuthenticatorApp(request, opener: authenticatorApp,
                                                                      appRedirect: { try await inbox.next(for: request.redirectURI, timeout: 20) },
                                                                      browser: NoBrowser())
            let alice = try await live.provider.userAdministration.user(aliceEmail)
            #expect(result.idToken?.subject == alice.id)
            #expect(result.idToken?.nonce == request.nonce)
            let details = try #require(shown.withLock { $0 })
            #expect(details.clientName == "Shop" && details.userEmail == aliceEmail && details.consentRequired)
            #expect(details.scopes.map(\.scope).contains("email") && details.scopes.allSatisfy { !$0.description.isEmpty })
            // The link iOS was given names only the client and the pushed request.
            #expect(live.transport.count("POST", "/authorize/v1.0/par") == 1)
        }
    }

    @Test("without the authenticator app the same link opens the web sign-in; the IfInstalled call says no instead")
    func webFallback() async throws {
        try await withLiveProvider { live in
            try await registerCrossAppClients(live.provider)
            let shop = live.client("shop", secret: nil, redirectURI: partnerShopRedirect)
            let notInstalled = standInOpener(app: nil)
            let result = try await shop.signInThroughAuthenticatorApp(shop.makeRequest(), opener: notInstalled,
                                                                      appRedirect: { throw AuthError(.cancelled, "unused") },
                                                                      browser: live.browser)
            #expect(result.user?.email == aliceEmail)
            let none = try await shop.signInThroughAuthenticatorAppIfInstalled(shop.makeRequest(), opener: notInstalled,
                                                                               appRedirect: { throw AuthError(.cancelled, "unused") })
            #expect(none == nil)
        }
    }

    @Test("Sber ID's names (TesseraAuthSberID): auth(with:) falls back to the browser, or throws cancelled without one; autoAuth says no")
    func sberIDNames() async throws {
        try await withLiveProvider { live in
            try await registerCrossAppClients(live.provider)
            let shop = live.client("shop", secret: nil, redirectURI: partnerShopRedirect)
            let notInstalled = standInOpener(app: nil)
            let unused: @Sendable () async throws -> URL = { throw AuthError(.cancelled, "unused") }
            let result = try await shop.auth(with: shop.makeRequest(), opener: notInstalled, appRedirect: unused, webFallback: live.browser)
            #expect(result.user?.email == aliceEmail)
            await #expect { _ = try await shop.auth(with: shop.makeRequest(), opener: notInstalled, appRedirect: unused, webFallback: nil) }
                throws: { ($0 as? AuthError)?.code == .cancelled }
            let none = try await shop.autoAuth(shop.makeRequest(), opener: notInstalled, appRedirect: unused)
            #expect(none == nil)
        }
    }

    @Test("approval refused: a denial reaches the partner as access_denied, a non-authenticator app is refused")
    func refusals() async throws {
        try await withLiveProvider { live in
            try await registerCrossAppClients(live.provider)
            let approver = AuthorizationApprover(state: try await bankSession(live))
            let shop = live.client("shop", secret: nil, redirectURI: partnerShopRedirect)
            let request = shop.makeRequest()
            let pushed = try await shop.pushAuthorizationRequest(request)
            let incoming = try #require(try await approver.request(from: pushed.url))
            let back = try await approver.deny(incoming)
            await #expect { try await shop.exchangeCode(from: back, request: request) } throws: {
                ($0 as? AuthError)?.oauthError?.code == .accessDenied
            }
            #expect(try await approver.request(from: URL(string: "https://elsewhere.example/authorize?client_id=a&request_uri=b")!) == nil)
            let mail = AuthState(client: live.client("mail", secret: nil, redirectURI: mailRedirect))
            try await mail.signIn(using: live.browser)
            let stranger = AuthorizationApprover(state: mail)
            let another = try await shop.pushAuthorizationRequest(shop.makeRequest())
            await #expect { try await stranger.approve(try #require(try await stranger.request(from: another.url))) } throws: {
                ($0 as? AuthError)?.oauthError?.code == .unauthorizedClient
            }
        }
    }

    @Test("hand-off: a first-party app is signed in from the deep link without a page; the ticket works once")
    func handoffWithoutAPage() async throws {
        try await withLiveProvider { live in
            try await registerCrossAppClients(live.provider)
            let approver = AuthorizationApprover(state: try await bankSession(live))
            let link = try await approver.handoffLink(to: URL(string: "com.example.mail:/welcome")!, for: "mail")
            #expect(HandoffLink.ticket(in: link) != nil)
            #expect(HandoffLink.ssoBaseURL(in: link) == live.issuer.absoluteString)
            let mail = live.client("mail", secret: nil, redirectURI: mailRedirect)
            let browser = NoBrowser()
            let result = try #require(try await mail.signIn(handoffFrom: link, using: browser))
            #expect(result.user?.email == aliceEmail)
            #expect(browser.opened.withLock { $0.isEmpty })
            await #expect { try await mail.signIn(handoffFrom: link, using: browser) } throws: {
                ($0 as? AuthError)?.oauthError?.code == .loginRequired
            }
            #expect(try await mail.signIn(handoffFrom: URL(string: "com.example.mail:/welcome")!, using: browser) == nil)
        }
    }

    @Test("hand-off to a partner that needs consent: only the consent page is shown, with the same ticket")
    func handoffWithConsent() async throws {
        try await withLiveProvider { live in
            try await registerCrossAppClients(live.provider)
            let approver = AuthorizationApprover(state: try await bankSession(live))
            let link = try await approver.handoffLink(to: URL(string: "com.example.shop:/welcome")!, for: "shop")
            let shop = live.client("shop", secret: nil, redirectURI: partnerShopRedirect)
            // A browser that can consent but has no password: a login page would fail it.
            let consentOnly = HeadlessBrowser(email: aliceEmail, password: "not the password")
            let result = try #require(try await shop.signIn(handoffFrom: link, using: consentOnly))
            #expect(result.user?.email == aliceEmail)
        }
    }

    @Test("Native SSO never upgrades a device session: a sibling requiring a second factor refuses a one-factor session")
    func nativeSSORequiringMFA() async throws {
        try await withLiveProvider { live in
            try await registerCrossAppClients(live.provider)
            var vault = Provider.ClientRegistration(name: "Vault", redirectURIs: [calendarRedirect])
            vault.id = "vault"
            vault.isPublic = true
            vault.firstParty = true
            vault.requireMFA = true
            vault.deviceSSOGroup = "acme"
            vault.scopes = ["openid", "profile", "email", "offline_access", "device_sso"]
            _ = try await live.provider.registerClient(vault)
            let shared = MemoryTokenStore()
            let mail = AuthState(client: live.client("mail", secret: nil, redirectURI: mailRedirect))
            try await mail.signIn(using: live.browser, request: mail.client.makeRequest(scope: "openid email offline_access device_sso"))
            try await mail.shareDeviceSession(in: shared)
            let sibling = AuthState(client: live.client("vault", secret: nil, redirectURI: calendarRedirect))
            await #expect { _ = try await sibling.signIn(fromDeviceSessionIn: shared) } throws: { error in
                let oauth = (error as? AuthError)?.oauthError
                return oauth?.code == .invalidGrant && oauth?.errorDescription?.contains("second factor") == true
            }
        }
    }

    @Test("Native SSO set up wrong says what is missing: a sign-in without device_sso has nothing to share; an app outside every group is pointed to --device-sso-group")
    func nativeSSOMisconfigured() async throws {
        try await withLiveProvider { live in
            try await registerCrossAppClients(live.provider)
            let shared = MemoryTokenStore()
            let calendar = AuthState(client: live.client("calendar", secret: nil, redirectURI: calendarRedirect))
            await #expect { try await calendar.shareDeviceSession(in: shared) } throws: { error in
                (error as? AuthError)?.code == .notSignedIn
            }
            try await calendar.signIn(using: live.browser, request: calendar.client.makeRequest(scope: "openid email offline_access"))
            await #expect { try await calendar.shareDeviceSession(in: shared) } throws: { error in
                let error = error as? AuthError
                return error?.code == .configuration && error?.reason.contains("device_sso scope") == true
            }
            #expect(try await shared.load() == nil)

            let mail = AuthState(client: live.client("mail", secret: nil, redirectURI: mailRedirect))
            try await mail.signIn(using: live.browser, request: mail.client.makeRequest(scope: "openid email offline_access device_sso"))
            try await mail.shareDeviceSession(in: shared)
            let shop = AuthState(client: live.client("shop", secret: nil, redirectURI: partnerShopRedirect))
            await #expect { _ = try await shop.signIn(fromDeviceSessionIn: shared, scope: "openid") } throws: { error in
                let oauth = (error as? AuthError)?.oauthError
                return oauth?.code == .unauthorizedClient && oauth?.errorDescription?.contains("--device-sso-group") == true
            }
        }
    }

    @Test("Native SSO: a sibling app signs in from the shared device session; signing out on the device ends both")
    func nativeSSO() async throws {
        try await withLiveProvider { live in
            try await registerCrossAppClients(live.provider)
            let shared = MemoryTokenStore()
            let mail = AuthState(client: live.client("mail", secret: nil, redirectURI: mailRedirect))
            let mailClient = mail.client
            try await mail.signIn(using: live.browser,
                                  request: mailClient.makeRequest(scope: "openid profile email offline_access device_sso"))
            try await mail.shareDeviceSession(in: shared)
            let session = try #require(try await shared.load())
            #expect(session.refreshToken == nil && session.accessToken.isEmpty && session.deviceSecret != nil)

            let calendar = AuthState(client: live.client("calendar", secret: nil, redirectURI: calendarRedirect))
            let user = try #require(try await calendar.signIn(fromDeviceSessionIn: shared))
            #expect(user.email == aliceEmail)
            #expect(await calendar.idToken?.sessionID == (await mail.idToken?.sessionID))
            _ = try await calendar.refresh()

            try await mail.signOutEverywhereOnDevice(shared: shared)
            #expect(try await shared.load() == nil)
            await #expect { try await calendar.refresh() } throws: { ($0 as? AuthError)?.oauthError?.code == .invalidGrant }
            let empty = AuthState(client: live.client("calendar", secret: nil, redirectURI: calendarRedirect))
            #expect(try await empty.signIn(fromDeviceSessionIn: shared) == nil)
        }
    }
}

@Suite("Cross-app pieces without a provider")
struct CrossAppPieceTests {
    @Test("the redirect inbox: a URL delivered before or after the wait reaches it; others are left to the app")
    func inbox() async throws {
        let inbox = AppRedirectInbox()
        let early = URL(string: "com.example.app:/cb?code=1&state=s")!
        #expect(await inbox.deliver(early) == false)
        #expect(try await inbox.next(for: "com.example.app:/cb") == early)
        async let waited = inbox.next(for: "com.example.app:/cb", timeout: 10)
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(await inbox.deliver(URL(string: "com.example.app:/cbx?code=2")!) == false)
        #expect(await inbox.deliver(URL(string: "com.example.app:/cb#code=3")!) == true)
        #expect(try await waited.absoluteString == "com.example.app:/cb#code=3")
        await #expect { try await inbox.next(for: "com.example.app:/other", timeout: 0.1) } throws: { ($0 as? AuthError)?.code == .timeout }
    }

    @Test("ASWebAuthenticationSession's decisions: a custom scheme is required; the outcome is a URL, cancelled, or the system's error")
    func webAuthenticationDecisions() throws {
        #expect(try WebAuthenticationCallback.scheme(of: "com.example.app:/callback") == "com.example.app")
        #expect(throws: AuthError.self) { try WebAuthenticationCallback.scheme(of: "https://app.example.com/callback") }
        #expect(throws: AuthError.self) { try WebAuthenticationCallback.scheme(of: "no scheme") }
        let url = URL(string: "com.example.app:/callback?code=x")!
        #expect(try WebAuthenticationCallback.result(callback: url, cancelled: false, failure: nil).get() == url)
        #expect(throws: AuthError.self) { try WebAuthenticationCallback.result(callback: nil, cancelled: true, failure: nil).get() }
        if case .failure(let error) = WebAuthenticationCallback.result(callback: nil, cancelled: true, failure: nil) { #expect(error.code == .cancelled) }
        if case .failure(let error) = WebAuthenticationCallback.result(callback: nil, cancelled: false, failure: "offline") {
            #expect(error.code == .network && error.reason.contains("offline"))
        }
    }

    @Test("a hand-off ticket is read from the deep link's query or fragment, and goes into the request")
    func ticketFromDeepLink() throws {
        #expect(HandoffLink.ticket(in: URL(string: "com.example.app:/welcome?handoff_ticket=abc&x=1")) == "abc")
        #expect(HandoffLink.ticket(in: URL(string: "https://app.example.com/open#handoff_ticket=def")) == "def")
        #expect(HandoffLink.ticket(in: URL(string: "com.example.app:/welcome?ticket=abc")) == nil)
        #expect(HandoffLink.ticket(in: URL(string: "com.example.app:/welcome?handoff_ticket=" + String(repeating: "a", count: 129))) == nil)
        var request = AuthRequest(clientID: "a", redirectURI: "com.example.app:/cb")
        request.handoffTicket = "abc"
        #expect(request.parameters.contains { $0.name == "handoff_ticket" && $0.value == "abc" })
        let decoded = try JSONDecoder().decode(AuthRequest.self, from: JSONEncoder().encode(request))
        #expect(decoded.handoffTicket == "abc")
    }

    @Test("the brand mark's tiles: four squares inside the logo frame, the same the SVG draws")
    func markTiles() {
        let layout = LoginButton(type: .green).layout()
        #expect(layout.markTiles.count == 4)
        for tile in layout.markTiles {
            #expect(tile.x >= layout.logoFrame.x && tile.x + tile.width <= layout.logoFrame.x + layout.logoFrame.width + 0.001)
            #expect(tile.width == tile.height && tile.width > 0)
        }
        let svg = LoginButton(type: .green).svg()
        #expect(svg.components(separatedBy: "<rect").count - 1 == 5)  // the background and the four tiles
        #expect(LoginButtonLayout.components(.white) == (1, 1, 1))
    }

    @Test("a device session carries the ID token and the device secret, never this app's access and refresh tokens")
    func deviceSessionShape() throws {
        var tokens = TokenSet(accessToken: "at", refreshToken: "rt", idToken: "id", issuer: "https://id.example.com", clientID: "mail")
        #expect(tokens.deviceSession == nil)
        tokens.deviceSecret = "ds"
        let session = try #require(tokens.deviceSession)
        #expect(session.accessToken == "" && session.refreshToken == nil && session.idToken == "id" && session.deviceSecret == "ds")
        let stored = try JSONDecoder().decode(TokenSet.self, from: JSONEncoder().encode(tokens))
        #expect(stored.deviceSecret == "ds")
    }
}
