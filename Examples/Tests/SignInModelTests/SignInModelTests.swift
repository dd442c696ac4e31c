import Foundation
import SignInModel
import Testing
import TesseraAuth

/// The example app's model against a real server: what each screen shows after each move.
@Suite("The SwiftUI example's model", .serialized)
@MainActor
struct SignInModelTests {
    static let password = "correct horse battery staple"

    /// A server with the app (first-party, the operator's authenticator app), a partner app and Erin.
    func withServer(_ body: @MainActor (LocalServer, String) async throws -> Void) async throws {
        let server = try await LocalServer()
        defer { server.stop() }
        try server.admin(["clients", "add", "--name", "Example App", "--id", "example-app", "--public", "--first-party",
                          "--authenticator", "--redirect-uri", "com.example.signin:/callback",
                          "--redirect-uri", "https://app.example.com/callback"])
        try server.admin(["clients", "add", "--name", "Example Partner", "--id", "example-partner", "--public",
                          "--redirect-uri", "com.example.partner:/callback"])
        let email = "erin@example.com"
        try server.admin(["users", "add", email, "--name", "Erin Example", "--password-stdin"], input: Self.password + "\n")
        try await body(server, email)
    }

    func model(_ server: LocalServer, store: any TokenStore = MemoryTokenStore()) -> SignInModel {
        SignInModel(native: NativeAuthClient(issuer: server.issuer, clientID: "example-app"), store: store,
                    emailLinks: EmailLinkClient(issuer: server.issuer, clientID: "example-app", pendingEmails: nil))
    }

    @Test("a password signs in; the next start finds the session; signing out forgets it")
    func passwordSession() async throws {
        try await withServer { server, email async throws in
            let store = MemoryTokenStore()
            let first = model(server, store: store)
            await first.start()
            #expect(first.phase == .signedOut)
            await first.signIn(email: email, password: Self.password)
            guard case .signedIn(let account) = first.phase else { Issue.record("not signed in: \(first.phase)"); return }
            #expect(account.email == email && account.name == "Erin Example")

            let relaunched = model(server, store: store)
            await relaunched.start()
            #expect(relaunched.phase == first.phase)
            await relaunched.signOut()
            #expect(relaunched.phase == .signedOut)
            let left = try await store.load()
            #expect(left == nil)
        }
    }

    @Test("a wrong password and an unknown address get the same words")
    func wrongPassword() async throws {
        try await withServer { server, email async throws in
            let app = model(server)
            await app.signIn(email: email, password: "not the password at all")
            #expect(app.phase == .failed("The address or the password is wrong."))
            await app.signIn(email: "nobody@example.com", password: "not the password at all")
            #expect(app.phase == .failed("The address or the password is wrong."))
        }
    }

    @Test("without a password the server emails a code, and the screen asks for it")
    func codeAsked() async throws {
        try await withServer { server, email async throws in
            let app = model(server)
            await app.signIn(email: email, password: "")
            guard case .codeSent(let to) = app.phase else { Issue.record("no code asked: \(app.phase)"); return }
            #expect(to.contains("@") && to != email)   // masked
            await app.submitCode("00000000")
            #expect(app.phase == .failed("That code is not right. Try again."))
        }
    }

    @Test("as the authenticator app: a partner's request opens the approval screen; approving sends the partner a code")
    func approval() async throws {
        try await withServer { server, email async throws in
            let app = model(server)
            await app.signIn(email: email, password: Self.password)
            let partner = OIDCClient(configuration: .init(issuer: server.issuer, clientID: "example-partner",
                                                          redirectURI: "com.example.partner:/callback", scope: "openid email"))
            let request = partner.makeRequest()
            let pushed = try await partner.pushAuthorizationRequest(request)
            #expect(await app.open(pushed.url))
            guard case .approving(let approval) = app.phase else { Issue.record("no approval screen: \(app.phase)"); return }
            #expect(approval.clientName == "Example Partner" && approval.consentRequired && !approval.scopes.isEmpty)
            await app.approve()
            let redirect = try #require(app.partnerRedirect)
            #expect(redirect.absoluteString.hasPrefix("com.example.partner:/callback?") && redirect.absoluteString.contains("code="))
            let result = try await partner.exchangeCode(from: redirect, request: request)
            #expect(result.user?.email == email)
            guard case .signedIn = app.phase else { Issue.record("not back to the signed-in screen: \(app.phase)"); return }
        }
    }

    @Test("an email link is sent; a link for another device asks to open it where it was asked for; other URLs are the app's")
    func emailLinks() async throws {
        try await withServer { server, email async throws in
            let app = model(server)
            await app.sendEmailLink(to: email, continueURL: URL(string: "https://app.example.com/signin")!)
            #expect(app.phase == .linkSent(to: email))
            let foreign = URL(string: server.issuer.absoluteString + "/emaillink/v1.0/signin?mode=signIn&oob_code=abc&apiKey=example-app")!
            #expect(await app.open(foreign))
            #expect(app.phase == .failed("Open the link on the device you asked for it from."))
            #expect(!(await app.open(URL(string: "https://app.example.com/orders/42")!)))
        }
    }
}
