import Foundation
import Observation
import TesseraAuth

/// What the example app's screens show and do, without SwiftUI: one phase at a time, and the
/// moves each phase allows. The views (SignInApp) draw ``phase`` and call the methods; the tests
/// drive the same methods against a real Tessera server.
@MainActor @Observable
public final class SignInModel {
    /// What the screen shows.
    public enum Phase: Equatable, Sendable {
        /// Reading the stored session.
        case starting
        /// Nobody is signed in: the sign-in screen.
        case signedOut
        /// A request is under way; the text says which.
        case working(String)
        /// The emailed code is asked for (`to`: the address, masked by the server).
        case codeSent(to: String)
        /// The account has two-step verification: the authenticator app's code or a recovery code.
        case secondFactor
        /// A sign-in link was emailed to the address.
        case linkSent(to: String)
        /// Signed in.
        case signedIn(Account)
        /// A partner app's request waits for the person's decision (this app is the authenticator).
        case approving(Approval)
        /// Something failed; the text is for the person, the phase before is back on a retry.
        case failed(String)
    }

    /// The signed-in person, as the screen shows them.
    public struct Account: Equatable, Sendable {
        /// The account's ID (`sub`).
        public var id: String
        /// The address, when the ID token carries it.
        public var email: String?
        /// The display name, when there is one.
        public var name: String?
    }

    /// A partner's request, as the approval screen shows it.
    public struct Approval: Equatable, Sendable {
        /// The partner app's name.
        public var clientName: String
        /// The scopes it asks for, with the person's words for them.
        public var scopes: [String]
        /// Some scope needs the person's consent: the screen lists them.
        public var consentRequired: Bool
    }

    /// What the screen shows now.
    public private(set) var phase: Phase = .starting
    /// Where the last approval or denial sends the partner app (the app opens it).
    public private(set) var partnerRedirect: URL?

    private let native: NativeAuthClient
    /// The same app, listing only codes: with the server's enumeration protection on, a client
    /// that lists passwords is always asked for one (docs/native-auth.md, "Sign-in").
    private let codeSignIn: NativeAuthClient
    private let emailLinks: EmailLinkClient?
    private let store: any TokenStore
    private var session: AuthState
    private var codeState: SignInCodeRequiredState?
    private var secondFactorState: MFARequiredState?
    private var incoming: IncomingAuthorizationRequest?

    /// A model for the first-party app `native` signs in to, keeping its session in `store`
    /// (a `KeychainTokenStore` on Apple platforms); `emailLinks` when the app offers email links.
    public init(native: NativeAuthClient, store: any TokenStore, emailLinks: EmailLinkClient? = nil) {
        self.native = native
        var codesOnly = native.configuration
        codesOnly.challengeTypes = [.oob, .redirect]
        codeSignIn = NativeAuthClient(configuration: codesOnly)
        self.emailLinks = emailLinks
        self.store = store
        session = AuthState(client: native.oidc, store: store)
    }

    /// Reads the stored session: signed in, or the sign-in screen. Nothing is sent: the tokens
    /// are refreshed when the app next calls its API (`AuthState.freshTokens`), so starting
    /// offline doesn't look like being signed out.
    public func start() async {
        do {
            session = try await AuthState.restore(client: native.oidc, store: store)
            await showSession()
        } catch {
            phase = .failed("The stored session can't be read: sign in again. (\(error))")
        }
    }

    // MARK: Signing in

    /// Signs in with the address and, when the person typed one, the password; without one the
    /// server emails a code (``Phase/codeSent(to:)``, then ``submitCode(_:)``).
    public func signIn(email: String, password: String?) async {
        phase = .working("Signing in…")
        let password = password?.isEmpty == false ? password : nil
        switch await (password == nil ? codeSignIn : native).signIn(username: email, password: password) {
        case .completed(let result): await adopt(result)
        case .codeRequired(let state, let sentTo, _, _):
            codeState = state
            phase = .codeSent(to: sentTo)
        case .passwordRequired:
            phase = .failed("Type your password to sign in.")
        case .mfaRequired(let state):
            secondFactorState = state
            phase = .secondFactor
        case .error(let error):
            phase = .failed(error.code == .invalidCredentials || error.code == .userNotFound ? "The address or the password is wrong." : "\(error)")
        }
    }

    /// The emailed code, after ``signIn(email:password:)`` without a password.
    public func submitCode(_ code: String) async {
        guard let state = codeState else { return }
        phase = .working("Checking the code…")
        switch await state.submitCode(code) {
        case .completed(let result): await adopt(result)
        case .mfaRequired(let next):
            secondFactorState = next
            phase = .secondFactor
        case .error(let error, let retry):
            codeState = retry
            phase = retry == nil ? .failed("\(error)") : .failed("That code is not right. Try again.")
        }
    }

    /// The second factor: the authenticator app's six digits or a recovery code.
    public func submitSecondFactor(_ code: String) async {
        guard let state = secondFactorState else { return }
        phase = .working("Checking the code…")
        switch await state.submitChallenge(code) {
        case .completed(let result): await adopt(result)
        case .error(let error, _): phase = .failed("\(error)")
        }
    }

    /// Signs in in the browser sheet (`WebAuthenticationSessionAgent` on Apple platforms).
    public func signInInBrowser(using agent: any ExternalUserAgent) async {
        phase = .working("Signing in…")
        do {
            phase = .signedIn(Account(try await session.signIn(using: agent)))
        } catch let error as AuthError where error.code == .cancelled {
            phase = .signedOut
        } catch {
            phase = .failed("\(error)")
        }
    }

    /// Emails a sign-in link that leads back to `continueURL` (a universal link of the app).
    public func sendEmailLink(to email: String, continueURL: URL) async {
        guard let emailLinks else { return }
        phase = .working("Sending the link…")
        do {
            let sent = try await emailLinks.sendSignInLink(to: email, options: EmailLinkOptions(continueURL: continueURL))
            phase = .linkSent(to: sent.email)
        } catch {
            phase = .failed("\(error)")
        }
    }

    /// Signs in with what the platform's passkey API answered (on Apple platforms
    /// `PasskeyAssertion(credential)` from `ASAuthorizationController`).
    public func signIn(passkey: PasskeyAssertion) async {
        phase = .working("Signing in…")
        do {
            await adopt(try await native.signIn(passkey: passkey))
        } catch {
            phase = .failed("\(error)")
        }
    }

    // MARK: Links the app receives

    /// A URL the app was opened with (`onOpenURL`): an email sign-in link, or a partner's request
    /// for the authenticator app. False when it is neither: the app handles it itself.
    @discardableResult
    public func open(_ url: URL) async -> Bool {
        if let emailLinks, emailLinks.isSignInLink(url) {
            guard let email = await emailLinks.pendingEmail() else {
                phase = .failed("Open the link on the device you asked for it from.")
                return true
            }
            phase = .working("Signing in…")
            do {
                await adopt(try await emailLinks.signIn(email: email, link: url))
            } catch {
                phase = .failed("\(error)")
            }
            return true
        }
        guard await session.isSignedIn else { return false }
        let approver = AuthorizationApprover(state: session)
        do {
            guard let request = try await approver.request(from: url) else { return false }
            let details = try await approver.details(of: request)
            incoming = request
            phase = .approving(Approval(clientName: details.clientName, scopes: details.scopes.map(\.description),
                                        consentRequired: details.consentRequired))
        } catch {
            phase = .failed("\(error)")
        }
        return true
    }

    /// Approves the partner's request on the approval screen; ``partnerRedirect`` is where to send it.
    public func approve() async { await decide(approve: true) }

    /// Denies it; the partner app is told `access_denied`.
    public func deny() async { await decide(approve: false) }

    private func decide(approve: Bool) async {
        guard let request = incoming else { return }
        incoming = nil
        let approver = AuthorizationApprover(state: session)
        do {
            partnerRedirect = approve ? try await approver.approve(request) : try await approver.deny(request)
            await showSession()
        } catch {
            phase = .failed("\(error)")
        }
    }

    // MARK: Signing out

    /// Signs out: the grant is revoked at the server and the stored tokens forgotten.
    public func signOut() async {
        try? await session.signOut()
        phase = .signedOut
    }

    private func adopt(_ result: AuthorizationResult) async {
        do {
            phase = .signedIn(Account(try await session.adopt(result)))
        } catch {
            phase = .failed("\(error)")
        }
    }

    private func showSession() async {
        phase = await session.currentUser.map { .signedIn(Account($0)) } ?? .signedOut
    }
}

extension SignInModel.Account {
    init(_ user: AuthUser) {
        self.init(id: user.uid, email: user.email, name: user.name)
    }
}
