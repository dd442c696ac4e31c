// The example app's screens: SwiftUI over `SignInModel`, which decides everything (and is tested
// on Linux). Replace the issuer and client ID with yours; register the app with
// `tessera clients add --name "Example" --public --first-party --authenticator \
//     --redirect-uri com.example.signin:/callback --ios-app TEAMID.com.example.signin`.
#if canImport(SwiftUI) && canImport(AuthenticationServices)
import AuthenticationServices
import SignInModel
import SwiftUI
import TesseraAuth
#if os(iOS)
import UIKit
#else
import AppKit
#endif

@main
struct SignInApp: App {
    @State private var model = SignInModel(
        native: NativeAuthClient(issuer: URL(string: "https://id.example.com")!, clientID: "example-app"),
        store: KeychainTokenStore(service: "com.example.signin"),
        emailLinks: EmailLinkClient(issuer: URL(string: "https://id.example.com")!, clientID: "example-app",
                                    pendingEmails: UserDefaultsPendingEmailStore()))

    var body: some Scene {
        WindowGroup {
            ContentView(model: model)
                .task { await model.start() }
                .onOpenURL { url in Task { await model.open(url) } }   // email links, partners' requests
        }
    }
}

struct ContentView: View {
    let model: SignInModel
    @State private var email = ""
    @State private var password = ""
    @State private var code = ""
    @Environment(\.openURL) private var openURL

    var body: some View {
        Form {
            switch model.phase {
            case .starting, .working:
                ProgressView(progressText)
            case .signedOut, .failed:
                if case .failed(let message) = model.phase { Text(message).foregroundStyle(.red) }
                TextField("Email", text: $email).textContentType(.username)
                SecureField("Password (or none for a code)", text: $password).textContentType(.password)
                Button("Sign in") { Task { await model.signIn(email: email, password: password) } }
                Button("Email me a sign-in link") {
                    Task { await model.sendEmailLink(to: email, continueURL: URL(string: "https://example.com/signin")!) }
                }
                Button("Sign in in the browser") {
                    Task { await model.signInInBrowser(using: WebAuthenticationSessionAgent(anchor: presentationAnchor)) }
                }
            case .codeSent(let to), .linkSent(let to):
                Text("We sent it to \(to).")
                if case .codeSent = model.phase {
                    TextField("Code", text: $code).textContentType(.oneTimeCode)
                    Button("Continue") { Task { await model.submitCode(code) } }
                }
            case .secondFactor:
                TextField("Code from your authenticator app", text: $code).textContentType(.oneTimeCode)
                Button("Continue") { Task { await model.submitSecondFactor(code) } }
            case .signedIn(let account):
                Text("Signed in as \(account.name ?? account.email ?? account.id)")
                Button("Sign out") { Task { await model.signOut() } }
            case .approving(let approval):
                Text("\(approval.clientName) asks to sign you in").font(.headline)
                ForEach(approval.scopes, id: \.self) { Text($0) }
                Button("Allow") { Task { await model.approve(); backToPartner() } }
                Button("Deny", role: .destructive) { Task { await model.deny(); backToPartner() } }
            }
        }
    }

    /// The partner app, with its code (or `access_denied`).
    private func backToPartner() {
        if let url = model.partnerRedirect { openURL(url) }
    }

    /// The window the browser sheet is presented over.
    private var presentationAnchor: ASPresentationAnchor {
        #if os(iOS)
        UIApplication.shared.connectedScenes.compactMap { ($0 as? UIWindowScene)?.keyWindow }.first ?? ASPresentationAnchor()
        #else
        NSApplication.shared.keyWindow ?? ASPresentationAnchor()
        #endif
    }

    private var progressText: String {
        if case .working(let text) = model.phase { return text }
        return "Starting…"
    }
}
#else
/// SwiftUI is not on this platform: the app's decisions are `SignInModel`'s (and its tests').
@main
enum SignInApp {
    static func main() {
        print("The SwiftUI example runs on iOS and macOS; on this platform, see SignInModel and its tests.")
    }
}
#endif
