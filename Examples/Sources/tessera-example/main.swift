// The SDK's flows from a command-line program, each as the docs show it: a native sign-in, a
// refresh, Native SSO between two apps of a vendor, and a partner's sign-in approved in the
// operator's authenticator app. Every "app" is a client the operator registered
// (Tests/e2e/test_examples.py registers them); the password is read from standard input.
//
//   tessera-example ISSUER EMAIL [--shared FILE] < password
//
// Prints one line per step; exits non-zero, with the SDK's error, at the first step that fails.
import Foundation
import TesseraAuth

let arguments = CommandLine.arguments
guard arguments.count >= 3, let issuer = URL(string: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: tessera-example ISSUER EMAIL [--shared FILE] < password\n".utf8))
    exit(2)
}
let email = arguments[2]
let sharedFile = arguments.firstIndex(of: "--shared").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
    ?? FileManager.default.temporaryDirectory.appendingPathComponent("tessera-example-\(getpid())/device-session.json").path
let password = readLine(strippingNewline: true) ?? ""

/// One line per step, written at once (the e2e test reads them as they come).
@Sendable func step(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

do {
    // 1. Native sign-in (NativeSignIn article): the vendor's mail app, with its password, asking
    //    for device_sso so that its siblings can share the sign-in.
    let mail = NativeAuthClient(issuer: issuer, clientID: "example-mail",
                                scopes: ["openid", "email", "offline_access", "device_sso"])
    let mailSession = AuthState(client: mail.oidc, store: MemoryTokenStore())
    switch await mail.signIn(username: email, password: password) {
    case .completed(let result):
        let user = try await mailSession.adopt(result)
        step("signed in: \(user.email ?? user.uid) (amr \(user.authenticationMethods.joined(separator: " ")))")
    case .error(let error):
        throw error
    default:
        throw AuthError(.invalidResponse, "the account asked for more than a password (a code or a second factor)")
    }

    // 2. A refresh (GettingStarted article): what an app does when its API refuses the token.
    let before = try await mailSession.freshTokens()
    let after = try await mailSession.refresh(staleAccessToken: before.accessToken)
    step("refreshed: \(after.accessToken != before.accessToken ? "new access token" : "same access token")")

    // 3. Native SSO (NativeSSO article): the calendar app signs in from the shared device session.
    let shared = FileTokenStore(fileURL: URL(fileURLWithPath: sharedFile))
    try await mailSession.shareDeviceSession(in: shared)
    let calendar = OIDCClient(configuration: .init(issuer: issuer, clientID: "example-calendar",
                                                   redirectURI: "com.example.calendar:/callback", scope: "openid email"))
    let calendarSession = AuthState(client: calendar, store: MemoryTokenStore())
    guard let sibling = try await calendarSession.signIn(fromDeviceSessionIn: shared) else {
        throw AuthError(.notSignedIn, "no device session was shared")
    }
    step("native sso: calendar signed in as \(sibling.email ?? sibling.uid)")

    // 4. The operator's authenticator app (AuthenticatorApp article): a partner shop pushes its
    //    request and "opens" the link; the authenticator app, signed in natively, approves it.
    let bank = NativeAuthClient(issuer: issuer, clientID: "example-bank")
    let bankSession = AuthState(client: bank.oidc, store: MemoryTokenStore())
    guard case .completed(let bankResult) = await bank.signIn(username: email, password: password) else {
        throw AuthError(.invalidResponse, "the authenticator app could not sign in")
    }
    try await bankSession.adopt(bankResult)
    let approver = AuthorizationApprover(state: bankSession)
    let inbox = AppRedirectInbox()
    let authenticatorApp = ClosureAppLinkOpener { url in
        Task {
            do {
                guard let incoming = try await approver.request(from: url) else { return }
                let details = try await approver.details(of: incoming)
                step("approval: \(details.clientName) asks for \(details.scopes.map(\.scope).joined(separator: " "))")
                await inbox.deliver(try await approver.approve(incoming))
            } catch {
                step("approval failed: \(error)")
            }
        }
        return true                                                  // "installed": the link opened in it
    }
    let shop = OIDCClient(configuration: .init(issuer: issuer, clientID: "example-shop", redirectURI: "com.example.shop:/callback",
                                               scope: "openid email"))
    let request = shop.makeRequest()
    guard let approved = try await shop.signInThroughAuthenticatorAppIfInstalled(
        request, opener: authenticatorApp, appRedirect: { try await inbox.next(for: request.redirectURI, timeout: 30) }) else {
        throw AuthError(.cancelled, "the authenticator app is not installed")
    }
    step("partner signed in: \(approved.user?.email ?? "?")")

    // Signing out everywhere on the device ends the mail and calendar sessions at once.
    try await mailSession.signOutEverywhereOnDevice(shared: shared)
    step("signed out everywhere on the device")
} catch {
    FileHandle.standardError.write(Data("tessera-example: \(error)\n".utf8))
    exit(1)
}
