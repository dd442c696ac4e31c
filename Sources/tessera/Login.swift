import ArgumentParser
import Foundation
import TesseraAuth
import TesseraCore

/// `tessera login`: the SDK's browser sign-in, run for real from a terminal (RFC 8252 §7.3).
struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign in through the browser and print the ID token's claims.",
        discussion: """
            Starts a one-shot listener on 127.0.0.1, prints the authorization URL on standard error (and opens \
            a browser unless --no-browser), waits for the redirect, redeems the code with PKCE, validates the ID \
            token, saves the tokens (mode 0600) and prints the ID token's claims as JSON on standard output. \
            The client must be public and registered with the redirect URI http://127.0.0.1/callback \
            (tessera clients add --public --redirect-uri http://127.0.0.1/callback); any port is accepted.
            """)

    @Option(help: "The provider's issuer URL, e.g. http://127.0.0.1:8080.") var issuer: String
    @Option(help: "The public client's id.") var clientId: String
    @Option(help: "The scopes to ask for.") var scope = AuthRequest.defaultScope
    @Flag(help: "Only print the URL; don't try to open a browser.") var noBrowser = false
    @Option(help: "Where to save the tokens (default $XDG_CONFIG_HOME/tessera/tokens.json or ~/.config/tessera/tokens.json).")
    var tokenFile: String?
    @Option(help: "Seconds to wait for the browser.") var timeout = 300

    func run() async throws {
        do {
            try await signIn()
        } catch let error as AuthError {
            Self.report("tessera login: error: " + Self.message(for: error, timeout: timeout))
            throw ExitCode.failure
        } catch {
            Self.report("tessera login: error: \(error)")
            throw ExitCode.failure
        }
    }

    func signIn() async throws {
        guard let issuerURL = URL(string: issuer), issuerURL.scheme != nil, issuerURL.host != nil else {
            throw AuthError(.configuration, "--issuer '\(issuer)' is not an absolute URL")
        }
        guard timeout > 0 else { throw AuthError(.configuration, "--timeout must be positive") }
        let listener = try LoopbackRedirectListener()
        defer { listener.close() }
        let client = OIDCClient(configuration: .init(issuer: issuerURL, clientId: clientId, redirectUri: listener.redirectUri,
                                                     scope: scope))
        let store = FileTokenStore(fileURL: tokenFile.map { URL(fileURLWithPath: $0) } ?? FileTokenStore.defaultFileURL)
        let state = AuthState(client: client, store: store)
        let openBrowser = !noBrowser
        let agent = LoopbackUserAgent(listener: listener, timeout: .seconds(timeout)) { url in
            Self.report("Open this URL in a browser to sign in:\n\n    \(url.absoluteString)\n\n"
                + "Waiting for the browser to come back to \(listener.redirectUri) ...")
            if openBrowser { Self.openInBrowser(url) }
        }
        let user = try await state.signIn(using: agent)
        guard let idToken = await state.idToken else { throw AuthError.invalidResponse("no ID token") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let json = try encoder.encode(idToken.claims)
        FileHandle.standardOutput.write(json + Data("\n".utf8))
        Self.report("Signed in as \(user.email ?? user.uid); tokens saved to \(store.fileURL.path)")
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
