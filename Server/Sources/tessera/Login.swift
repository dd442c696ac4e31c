import ArgumentParser
import Foundation
import TesseraAuthCore
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraInfrastructure

/// `tessera login`: the SDK's browser sign-in, run for real from a terminal (RFC 8252 §7.3),
/// or with `--native` its native sign-in (by emailed code, or by password). HTTP goes through the
/// server's AsyncHTTPClient transport, so the binary links no FoundationNetworking.
struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign in through the browser (or the native API) and print the ID token's claims.",
        discussion: """
            Starts a one-shot listener on 127.0.0.1, prints the authorization URL on standard error (and opens \
            a browser unless --no-browser), waits for the redirect, redeems the code with PKCE, validates the ID \
            token, saves the tokens (mode 0600) and prints the ID token's claims as JSON on standard output. \
            The client must be public and registered with the redirect URI http://127.0.0.1/callback \
            (tessera clients add --public --redirect-uri http://127.0.0.1/callback); any port is accepted.

            With --native --email ADDRESS it signs in without a browser, through the native sign-in API (the \
            client must be --first-party): the server emails a one-time code, the prompt "Code sent to ...: " \
            appears on standard error and the code is read from standard input (a line; a wrong one can be \
            retyped up to twice). With --password-stdin the password is read from the first line of standard \
            input instead. The output is the same as the browser sign-in's.

            Cross-app sign-in (docs/cross-app.md), the two sides run as two processes: with --authenticator the \
            request is pushed (RFC 9126) and its link printed on standard error for the operator's authenticator \
            app; the redirect that app sends back is awaited as above. With --approve LINK the command is the \
            authenticator app: with the session a previous tessera login saved in --token-file (the authenticator \
            client's), it shows what the partner asks for, approves (or with --deny denies) it, and opens the \
            partner's redirect (an HTTP GET: the partner's loopback listener). --handoff-for CLIENT_ID --app-link URL \
            prints the partner's deep link with a hand-off ticket; the partner's --handoff-link URL signs in with it \
            (the authorization URL then signs in without a page).
            """)

    @Option(help: "The provider's issuer URL, e.g. http://127.0.0.1:8080.") var issuer: String
    @Option(help: "The public client's id.") var clientID: String
    @Option(help: "The scopes to ask for.") var scope = AuthRequest.defaultScope
    @Flag(help: "Only print the URL; don't try to open a browser.") var noBrowser = false
    @Option(help: "Where to save the tokens (default $XDG_CONFIG_HOME/tessera/tokens.json or ~/.config/tessera/tokens.json).")
    var tokenFile: String?
    @Option(help: "Seconds to wait for the browser.") var timeout = 300
    @Flag(help: "Sign in through the native sign-in API instead of the browser (needs --email).") var native = false
    @Option(help: "With --native: the account's email address.") var email: String?
    @Flag(help: "With --native: read the password from the first line of standard input instead of signing in by code.")
    var passwordStdin = false
    @Flag(help: "Sign in through the operator's authenticator app: push the request and print its link for that app.")
    var authenticator = false
    @Option(help: "Be the authenticator app: approve the partner's request LINK with the session in --token-file.")
    var approve: String?
    @Flag(help: "With --approve: deny the request instead.") var deny = false
    @Option(help: "Be the authenticator app: print a deep link with a hand-off ticket for this partner client (needs --app-link).")
    var handoffFor: String?
    @Option(help: "With --handoff-for: the partner app's deep link to put the ticket in.") var appLink: String?
    @Option(help: "Sign in with the hand-off ticket in this deep link (from the authenticator app), without a page.")
    var handoffLink: String?
    @Option(help: "Native SSO: after signing in (with the device_sso scope), save the device session here for sibling apps.")
    var shareDeviceSession: String?
    @Option(help: "Native SSO: sign in as a sibling app from the device session saved here, without a page.")
    var fromDeviceSession: String?
    @Option(help: "Native SSO: end the device session saved here (every app of the group is signed out), and remove the file.")
    var endDeviceSession: String?

    /// Wrong codes retyped before giving up (the server limits attempts too).
    static let codeAttempts = 3

    func validate() throws {
        if native, email?.isEmpty ?? true { throw ValidationError("--native needs --email ADDRESS") }
        if !native, email != nil || passwordStdin { throw ValidationError("--email and --password-stdin go with --native") }
        let modes = [native, authenticator, approve != nil, handoffFor != nil, handoffLink != nil, fromDeviceSession != nil,
                     endDeviceSession != nil].filter { $0 }.count
        if modes > 1 {
            throw ValidationError("--native, --authenticator, --approve, --handoff-for, --handoff-link, --from-device-session and "
                                  + "--end-device-session exclude each other")
        }
        if shareDeviceSession != nil, approve != nil || handoffFor != nil || endDeviceSession != nil {
            throw ValidationError("--share-device-session goes with a sign-in")
        }
        if deny, approve == nil { throw ValidationError("--deny goes with --approve LINK") }
        if (handoffFor == nil) != (appLink == nil) { throw ValidationError("--handoff-for CLIENT_ID and --app-link URL go together") }
    }

    func run() async throws {
        do {
            if native {
                try await nativeSignIn()
            } else if let approve {
                try await approveRequest(approve)
            } else if let fromDeviceSession {
                try await signInFromDeviceSession(at: fromDeviceSession)
            } else if let endDeviceSession {
                try await end(deviceSessionAt: endDeviceSession)
            } else if let handoffFor, let appLink {
                try await printHandoffLink(for: handoffFor, appLink: appLink)
            } else {
                try await signIn()
            }
        } catch let error as AuthError {
            Self.report("tessera login: error: " + Self.message(for: error, timeout: timeout))
            throw ExitCode.failure
        } catch {
            Self.report("tessera login: error: \(error)")
            throw ExitCode.failure
        }
    }

    func signIn() async throws {
        let issuerURL = try self.issuerURL()
        guard timeout > 0 else { throw AuthError(.configuration, "--timeout must be positive") }
        let listener = try LoopbackRedirectListener()
        defer { listener.close() }
        let client = OIDCClient(configuration: .init(issuer: issuerURL, clientID: clientID, redirectURI: listener.redirectURI,
                                                     scope: scope),
                                transport: AsyncHTTPClientTransport())
        let store = tokenStore
        let state = AuthState(client: client, store: store)
        let openBrowser = !noBrowser
        let agent = LoopbackUserAgent(listener: listener, timeout: .seconds(timeout)) { url in
            Self.report("Open this URL in a browser to sign in:\n\n    \(url.absoluteString)\n\n"
                + "Waiting for the browser to come back to \(listener.redirectURI) ...")
            if openBrowser { Self.openInBrowser(url) }
        }
        var request = client.makeRequest()
        if let handoffLink {
            guard let ticket = HandoffLink.ticket(in: URL(string: handoffLink)) else {
                throw AuthError(.configuration, "--handoff-link has no handoff_ticket")
            }
            request.handoffTicket = ticket
        }
        let user: AuthUser
        if authenticator {
            // The partner side of app-to-app: the authenticator app opens the link and sends the redirect back here.
            let pushed = try await client.pushAuthorizationRequest(request)
            Self.report("Open this link in the authenticator app (it works once, for \(pushed.expiresIn) seconds):\n\n"
                + "    \(pushed.url.absoluteString)\n\nWaiting for the authenticator app to come back to \(listener.redirectURI) ...")
            let callback = try await listener.waitForCallback(timeout: .seconds(timeout), expectedState: request.state)
            user = try await state.handleRedirect(callback, for: request)
        } else {
            user = try await state.signIn(using: agent, request: request)
        }
        try await share(state)
        try await Self.printClaims(of: state, user: user, store: store)
    }

    /// `--share-device-session PATH`: the session's device secret and ID token in PATH (mode 0600),
    /// the file standing for the keychain group a vendor's apps share.
    func share(_ state: AuthState) async throws {
        guard let path = shareDeviceSession else { return }
        try await state.shareDeviceSession(in: FileTokenStore(fileURL: URL(fileURLWithPath: path)))
        Self.report("Device session saved to \(path)")
    }

    /// --issuer, when it is an absolute URL.
    func issuerURL() throws -> URL {
        guard let url = URL(string: issuer), url.scheme != nil, url.host != nil else {
            throw AuthError(.configuration, "--issuer '\(issuer)' is not an absolute URL")
        }
        return url
    }

    /// Where the tokens are saved: --token-file, or the default file.
    var tokenStore: FileTokenStore {
        FileTokenStore(fileURL: tokenFile.map { URL(fileURLWithPath: $0) } ?? FileTokenStore.defaultFileURL)
    }

    /// A client of --issuer and --client-id (no redirect: nothing here opens a browser).
    func pagelessClient() throws -> OIDCClient {
        let issuerURL = try self.issuerURL()
        return OIDCClient(configuration: .init(issuer: issuerURL, clientID: clientID, redirectURI: "http://127.0.0.1/callback",
                                               scope: scope),
                          transport: AsyncHTTPClientTransport())
    }

    /// `--from-device-session PATH`: a sibling app signing in from the shared device session.
    func signInFromDeviceSession(at path: String) async throws {
        let store = tokenStore
        let state = AuthState(client: try pagelessClient(), store: store)
        guard let user = try await state.signIn(fromDeviceSessionIn: FileTokenStore(fileURL: URL(fileURLWithPath: path)), scope: scope) else {
            throw AuthError(.notSignedIn, "no device session in \(path): sign in first with --share-device-session")
        }
        try await Self.printClaims(of: state, user: user, store: store)
    }

    /// `--end-device-session PATH`: signing out of every app of the group on this "device".
    func end(deviceSessionAt path: String) async throws {
        let shared = FileTokenStore(fileURL: URL(fileURLWithPath: path))
        guard let session = try await shared.load() else { throw AuthError(.notSignedIn, "no device session in \(path)") }
        try await pagelessClient().endDeviceSession(session)
        try await shared.remove()
        Self.report("Device session ended: every app that signed in from it is signed out.")
    }

    /// The authenticator app's session, from --token-file (saved by an earlier tessera login of its client).
    func authenticatorSession() async throws -> AuthState {
        let store = tokenStore
        let state = try await AuthState.restore(client: try pagelessClient(), store: store)
        guard await state.isSignedIn else {
            throw AuthError(.notSignedIn, "no session of client \(clientID) in \(store.fileURL.path): run tessera login for it first")
        }
        return state
    }

    /// `--approve LINK`: the authenticator app's side of app-to-app sign-in.
    func approveRequest(_ link: String) async throws {
        let state = try await authenticatorSession()
        let approver = AuthorizationApprover(state: state)
        guard let url = URL(string: link), let incoming = try await approver.request(from: url) else {
            throw AuthError(.configuration, "'\(link)' is not a sign-in request link of \(issuer) (its /authorize with client_id and request_uri)")
        }
        let details = try await approver.details(of: incoming)
        let scopes = details.scopes.map { "  - \($0.description) (\($0.scope))" + ($0.consentRequired ? " [new]" : "") }
        Self.report("\(details.clientName) asks to sign in \(details.userEmail) and to see:\n" + scopes.joined(separator: "\n"))
        let back = deny ? try await approver.deny(incoming) : try await approver.approve(incoming)
        Self.report(deny ? "Denied." : "Approved.")
        print(back.absoluteString)
        // "Opening" the partner app: its redirect URI is the partner's loopback listener here.
        let answer = try await AsyncHTTPClientTransport().send(HTTPTransportRequest(url: back))
        guard answer.status < 400 else { throw AuthError.network("the partner at \(back.host ?? "?") answered HTTP \(answer.status)") }
    }

    /// `--handoff-for CLIENT_ID --app-link URL`: the authenticator app hands its user over.
    func printHandoffLink(for partner: String, appLink: String) async throws {
        guard let app = URL(string: appLink), app.scheme != nil else { throw AuthError(.configuration, "--app-link '\(appLink)' is not a URL") }
        let state = try await authenticatorSession()
        let link = try await AuthorizationApprover(state: state).handoffLink(to: app, for: partner)
        print(link.absoluteString)
    }

    /// `--native`: sign-in by code (asked for on the terminal) or by password (`--password-stdin`).
    func nativeSignIn() async throws {
        let issuerURL = try self.issuerURL()
        let username = email ?? ""
        let client = NativeAuthClient(issuer: issuerURL, clientID: clientID,
                                      challengeTypes: passwordStdin ? [.oob, .password, .redirect] : [.oob, .redirect],
                                      scopes: scope.split(separator: " ").map(String.init), transport: AsyncHTTPClientTransport())
        var password: String?
        if passwordStdin {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                throw AuthError(.configuration, "--password-stdin: no password on standard input")
            }
            password = line
        }
        let result: AuthorizationResult
        switch await client.signIn(username: username, password: password) {
        case .completed(let completed):
            result = completed
        case .mfaRequired(let state):
            result = try await Self.enterSecondFactor(state)
        case .codeRequired(let state, let sentTo, _, _):
            result = try await Self.enterCode(state, sentTo: sentTo.isEmpty ? username : sentTo)
        case .passwordRequired:
            // Only asked for when the app handles passwords, i.e. with --password-stdin, which sent it already.
            throw AuthError.invalidResponse("the server asked for a password although one was sent")
        case .error(let error):
            throw error
        }
        let store = tokenStore
        let state = AuthState(client: client.oidc, store: store)
        let user = try await state.adopt(result)
        try await share(state)
        try await Self.printClaims(of: state, user: user, store: store)
    }

    /// Prompts for the emailed code on standard error and reads it from standard input; a wrong
    /// code is reported and can be retyped. At the end of input, the last refusal is the error.
    static func enterCode(_ state: SignInCodeRequiredState, sentTo: String) async throws -> AuthorizationResult {
        var state = state
        var lastError: AuthError?
        for _ in 0..<codeAttempts {
            FileHandle.standardError.write(Data("Code sent to \(sentTo): ".utf8))
            guard let line = readLine(strippingNewline: true) else {
                FileHandle.standardError.write(Data("\n".utf8))
                if let lastError { throw lastError }
                throw AuthError(.configuration, "no code on standard input")
            }
            switch await state.submitCode(line.trimmingCharacters(in: .whitespaces)) {
            case .completed(let result):
                return result
            case .mfaRequired(let second):
                return try await enterSecondFactor(second)
            case .error(let error, let next?) where error.code == .invalidCode:
                report("tessera login: " + message(for: error, timeout: 0))
                lastError = error
                state = next
            case .error(let error, _):
                throw error
            }
        }
        throw lastError ?? AuthError(.configuration, "no code accepted")
    }

    /// Prompts for the second factor (the authenticator app's code, or a recovery code) and
    /// reads it from standard input; a wrong code can be retyped.
    static func enterSecondFactor(_ state: MFARequiredState) async throws -> AuthorizationResult {
        var submit: (String) async -> MFASubmitChallengeResult = state.submitChallenge
        var lastError: AuthError?
        for _ in 0..<codeAttempts {
            FileHandle.standardError.write(Data("Two-step verification: the code from your authenticator app, or a recovery code: ".utf8))
            guard let line = readLine(strippingNewline: true) else {
                FileHandle.standardError.write(Data("\n".utf8))
                if let lastError { throw lastError }
                throw AuthError(.configuration, "no second-factor code on standard input")
            }
            switch await submit(line.trimmingCharacters(in: .whitespaces)) {
            case .completed(let result):
                return result
            case .error(let error, let next?) where error.code == .invalidCode:
                report("tessera login: " + message(for: error, timeout: 0))
                lastError = error
                submit = next.submitChallenge
            case .error(let error, _):
                throw error
            }
        }
        throw lastError ?? AuthError(.configuration, "no second-factor code accepted")
    }

    /// Prints the session's ID-token claims as JSON on standard output.
    static func printClaims(of state: AuthState, user: AuthUser, store: FileTokenStore) async throws {
        guard let idToken = await state.idToken else { throw AuthError.invalidResponse("no ID token") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let json = try encoder.encode(idToken.claims)
        FileHandle.standardOutput.write(json + Data("\n".utf8))
        report("Signed in as \(user.email ?? user.uid); tokens saved to \(store.fileURL.path)")
    }

    /// What went wrong, in words a person at a terminal can act on.
    static func message(for error: AuthError, timeout: Int) -> String {
        switch error.code {
        case .stateMismatch:
            "the browser came back with the answer to another sign-in (state mismatch); run tessera login again"
        case .issuerMismatch:
            "the answer does not come from the issuer asked for: \(error.reason)"
        case .timeout:
            "no answer from the browser within \(timeout) seconds"
        case .browserRequired:
            "this account can't sign in through the native API (\(error.reason)); run tessera login without --native"
        case _ where error.oauthError != nil && error.code != .oauth:
            "the provider refused: \(error)"
        case .oauth:
            if let oauth = error.oauthError {
                "the provider refused: \(oauth.code)" + (oauth.errorDescription.map { " (\($0))" } ?? "")
            } else {
                error.reason
            }
        case .idTokenInvalid:
            "the ID token is not valid: \(error.reason)"
        case .network:
            "cannot reach the provider: \(error.reason)"
        default:
            error.reason
        }
    }

    static func report(_ text: String) {
        FileHandle.standardError.write(Data("\(text)\n".utf8))
    }

    /// Starts the desktop's browser; failing to is fine, the URL is printed anyway.
    static func openInBrowser(_ url: URL) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        #if os(macOS)
        process.arguments = ["open", url.absoluteString]
        #else
        process.arguments = ["xdg-open", url.absoluteString]
        #endif
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }
}
