import Foundation
import Testing
import TesseraAuth
import TesseraAuthFirebase
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain

extension LiveProvider {
    /// The SDK's email-link client for the public first-party client `cli` (or `clientID`).
    func emailLinkAuth(clientID: String = "cli", pendingEmails: (any PendingEmailStore)? = nil) -> EmailLinkAuth {
        EmailLinkAuth(client: NativeAuthClient(issuer: issuer, clientID: clientID, transport: transport), pendingEmails: pendingEmails)
    }

    /// The sign-in link in the newest email to `email`, read from the server's outbox.
    func signInLink(for email: String) async throws -> String {
        let message = try #require(try await provider.store.outboxMessages(recipient: email, limit: 1).first)
        let match = try #require(message.text.firstMatch(of: /https?:\/\/\S+\/emaillink\/v1\.0\/signin\?\S+/), "no link in: \(message.text)")
        return String(match.0)
    }

    /// A session of Alice's, signed in by password through the native API of `auth`'s client.
    func aliceSession(_ auth: EmailLinkAuth) async throws -> AuthState {
        guard case .completed(let result) = await auth.client.signIn(username: aliceEmail, password: alicePassword) else {
            throw BrowserError("Alice could not sign in")
        }
        let session = AuthState(client: auth.oidc)
        try await session.adopt(result)
        return session
    }
}

/// The code of the ``AuthError`` thrown by `body`, or nil when it succeeds.
func authErrorCode<T>(_ body: () async throws -> T) async -> AuthError.Code? {
    do { _ = try await body(); return nil } catch let error as AuthError { return error.code } catch {
        Issue.record("not an AuthError: \(error)")
        return nil
    }
}

@Suite("Email-link sign-in with EmailLinkClient, TesseraAuth's names")
struct EmailLinkClientTests {
    @Test("sign in (isNewUser), a wrong address, a used link and no link at all; an address added to a session; re-authentication")
    func tesseraNames() async throws {
        try await withLiveProvider { live in
            let links = EmailLinkClient(client: NativeAuthClient(issuer: live.issuer, clientID: "cli", transport: live.transport))
            let sent = try await links.sendSignInLink(to: "Carol@Example.com")
            #expect(sent.email == "carol@example.com")
            let carolLink = try #require(URL(string: try await live.signInLink(for: "carol@example.com")))
            #expect(links.isSignInLink(carolLink) && !links.isSignInLink(URL(string: "https://app.example.com/")!))
            #expect(await authErrorCode { try await links.signIn(email: "mallory@example.com", link: carolLink) } == .emailMismatch)
            let carol = try await links.signIn(email: "carol@example.com", link: carolLink)
            #expect(carol.isNewUser && carol.user?.email == "carol@example.com" && carol.idToken?.authenticationMethods == ["email"])
            #expect(await authErrorCode { try await links.signIn(email: "carol@example.com", link: carolLink) } == .invalidLink)
            let posts = live.transport.count("POST", "/emaillink/v1.0/complete")
            #expect(await authErrorCode { try await links.signIn(email: "carol@example.com", link: URL(string: "https://app.example.com/")!) }
                    == .invalidLink)
            #expect(live.transport.count("POST", "/emaillink/v1.0/complete") == posts, "no link, no request")
            #expect(await authErrorCode { try await links.sendSignInLink(to: "not an address") } == .invalidEmail)

            // Alice adds an address of her own; Carol's is taken.
            let session = try await live.aliceSession(EmailLinkAuth(links))
            try await links.sendSignInLink(to: "carol@example.com")
            let taken = try #require(URL(string: try await live.signInLink(for: "carol@example.com")))
            #expect(await authErrorCode { try await links.addEmail("carol@example.com", link: taken, to: session) } == .emailInUse)
            try await links.sendSignInLink(to: "alice.second@example.com")
            let second = try #require(URL(string: try await live.signInLink(for: "alice.second@example.com")))
            let added = try await links.addEmail("alice.second@example.com", link: second, to: session)
            #expect(!added.isNewUser && added.user?.email == "alice.second@example.com")
            #expect(await session.currentUser?.email == "alice.second@example.com", "the session has the new tokens")

            // Re-authenticating takes a link to the session's own address.
            #expect(await authErrorCode { try await links.reauthenticate(email: "carol@example.com", link: taken, in: session) } == .userMismatch)
            try await links.sendSignInLink(to: "alice.second@example.com")
            let again = try #require(URL(string: try await live.signInLink(for: "alice.second@example.com")))
            let fresh = try await links.reauthenticate(email: "alice.second@example.com", link: again, in: session)
            #expect(fresh.user?.uid == added.user?.uid && !fresh.isNewUser)
            let expired = AuthState(client: links.oidc)
            #expect(await authErrorCode { try await links.addEmail("x@example.com", link: again, to: expired) } == .notSignedIn)
        }
    }
}

/// The code of an ``EmailLinkError`` thrown by `body`, or nil when it succeeds.
func emailLinkErrorCode<T>(_ body: () async throws -> T) async -> EmailLinkError.Code? {
    do { _ = try await body(); return nil } catch let error as EmailLinkError { return error.code } catch {
        Issue.record("not an EmailLinkError: \(error)")
        return nil
    }
}

@Suite("Email-link sign-in through the SDK against the provider")
struct EmailLinkTests {
    @Test("the first link creates the account (isNewUser), a second signs in again, and a link works once")
    func signInCreatesThenSignsIn() async throws {
        try await withLiveProvider { live in
            let pending = MemoryPendingEmailStore()
            let auth = live.emailLinkAuth(pendingEmails: pending)
            let sent = try await auth.sendSignInLink(toEmail: "New.User@Example.com", actionCodeSettings: ActionCodeSettings())
            #expect(sent.email == "new.user@example.com" && sent.expiresIn == 3600)
            #expect(try await pending.load() == "new.user@example.com", "the address is remembered on this device")

            let link = try await live.signInLink(for: "new.user@example.com")
            let linkURL = try #require(URL(string: link))
            #expect(auth.isSignIn(withEmailLink: link) && auth.isSignIn(withEmailLink: linkURL))
            let email = try #require(await auth.pendingEmail())
            let first = try await auth.signIn(withEmail: email, link: link)
            #expect(first.isNewUser && first.operation == .signIn && first.email == "new.user@example.com")
            let user = try #require(first.user)
            #expect(user.email == "new.user@example.com" && user.emailVerified)
            #expect(first.authorization.idToken?.authenticationMethods == ["email"] && first.authorization.idToken?.audience == ["cli"])
            #expect(first.tokens.refreshToken != nil && first.tokens.clientID == "cli")
            #expect(try await pending.load() == nil, "the remembered address is forgotten after the sign-in")

            #expect(await emailLinkErrorCode { try await auth.signIn(withEmail: email, link: link) } == .invalidActionCode,
                    "a link works once")

            try await auth.sendSignInLink(toEmail: email)
            let second = try await auth.signIn(with: EmailAuthProvider.credential(withEmail: email, link: try await live.signInLink(for: email)))
            #expect(!second.isNewUser && second.user?.uid == user.uid)

            // The tokens make a session that refreshes like any other.
            let session = AuthState(client: auth.oidc)
            try await session.adopt(second.authorization)
            #expect(try await session.refresh().refreshToken != second.tokens.refreshToken)
            // Discovery was fetched once for the email-link endpoints and ID-token validation alike.
            #expect(live.transport.count("GET", "/.well-known/openid-configuration") == 1)
        }
    }

    @Test("the wrong address is invalidEmail and leaves the link usable with the right one")
    func wrongAddress() async throws {
        try await withLiveProvider { live in
            let auth = live.emailLinkAuth()
            try await auth.sendSignInLink(toEmail: aliceEmail)
            let link = try await live.signInLink(for: aliceEmail)
            do throws(EmailLinkError) {
                _ = try await auth.signIn(withEmail: "mallory@example.com", link: link)
                Issue.record("another address must not complete the link")
            } catch {
                #expect(error.code == .invalidEmail && error.error == "invalid_grant" && error.suberror == "invalid_email")
                #expect(error.correlationID != nil && (error.errorDescription ?? "").contains("4 attempts left"))
            }
            let result = try await auth.signIn(withEmail: aliceEmail, link: link)
            #expect(!result.isNewUser && result.user?.name == "Alice Example")
        }
    }

    @Test("a URL that is no sign-in link is refused without a request")
    func notALink() async throws {
        try await withLiveProvider { live in
            let auth = live.emailLinkAuth()
            let issuer = live.issuer.absoluteString
            #expect(auth.isSignIn(withEmailLink: issuer + "/emaillink/v1.0/signin?mode=signIn&oob_code=abc&client_id=cli"))
            #expect(auth.isSignIn(withEmailLink: "https://app.example.com/finish?cart=1&mode=signIn&oob_code=abc&lang=en"))
            #expect(auth.isSignIn(withEmailLink: "https://app.example.com/finish#mode=signIn&oob_code=abc"))
            let wrapped = "https://app.example.com/open?link=" + (issuer + "/emaillink/v1.0/signin?mode=signIn&oob_code=abc")
                .addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(auth.isSignIn(withEmailLink: wrapped))
            #expect(!auth.isSignIn(withEmailLink: issuer + "/emaillink/v1.0/signin?mode=resetPassword&oob_code=abc"))
            #expect(!auth.isSignIn(withEmailLink: "https://app.example.com/finish?mode=signIn&oob_code="))
            #expect(!auth.isSignIn(withEmailLink: "https://app.example.com/finish?cart=1"))
            #expect(!auth.isSignIn(withEmailLink: "not a link"))

            let posts = live.transport.count("POST", "/emaillink/v1.0/complete")
            #expect(await emailLinkErrorCode { try await auth.signIn(withEmail: aliceEmail, link: "https://app.example.com/") } == .invalidActionCode)
            #expect(live.transport.count("POST", "/emaillink/v1.0/complete") == posts)
            #expect(await emailLinkErrorCode {
                try await auth.signIn(withEmail: aliceEmail, link: issuer + "/emaillink/v1.0/signin?mode=signIn&oob_code=forged")
            } == .invalidActionCode)
        }
    }

    @Test("ActionCodeSettings reach the link; opened in a browser it leads to the continue URL, which completes the sign-in")
    func actionCodeSettings() async throws {
        try await withLiveProvider { live in
            var shop = Provider.ClientRegistration(name: "Shop", redirectURIs: ["https://shop.example.com/callback"])
            shop.id = "shop"
            shop.isPublic = true
            shop.firstParty = true
            shop.appLinks.linkDomains = ["links.shop.example.com"]
            shop.appLinks.appleAppIDs = ["ABCDE12345.com.example.shop"]
            shop.appLinks.androidApps = [.init(packageName: "com.example.shop", certificateFingerprints: [
                "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"])]
            _ = try await live.provider.registerClient(shop)
            let auth = live.emailLinkAuth(clientID: "shop")

            var settings = ActionCodeSettings()
            settings.url = URL(string: "https://links.shop.example.com/finish?cart=7")
            settings.handleCodeInApp = true
            settings.setIOSBundleID("com.example.shop")
            settings.setAndroidPackageName("com.example.shop", installIfNotAvailable: true, minimumVersion: "12")
            #expect(settings.iOSBundleID == "com.example.shop" && settings.androidInstallIfNotAvailable && settings.androidMinimumVersion == "12")
            try await auth.sendSignInLink(toEmail: "buyer@example.com", actionCodeSettings: settings, languageCode: "ru")

            let link = try await live.signInLink(for: "buyer@example.com")
            let items = try #require(URLComponents(string: link)?.queryItems)
            func item(_ name: String) -> String? { items.first { $0.name == name }?.value }
            #expect(item("continue_url") == "https://links.shop.example.com/finish?cart=7" && item("lang") == "ru")
            #expect(item("ios_bundle_id") == "com.example.shop" && item("android_package_name") == "com.example.shop")
            #expect(item("android_install_app") == "true" && item("android_minimum_version") == "12" && item("client_id") == "shop")

            // Without the app, the link opens in a browser and goes on to the continue URL.
            let page = try await live.browser.request(try #require(URL(string: link)))
            let fallback = try #require(page.location?.absoluteString)
            #expect(page.status == 303 && fallback.hasPrefix("https://links.shop.example.com/finish?cart=7&"))
            #expect(auth.isSignIn(withEmailLink: fallback))
            let result = try await auth.signIn(withEmail: "buyer@example.com", link: fallback)
            #expect(result.isNewUser && result.user?.email == "buyer@example.com" && result.authorization.idToken?.audience == ["shop"])

            // The server checks the settings against the client's registration.
            settings.url = URL(string: "https://evil.example.net/finish")
            #expect(await emailLinkErrorCode { try await auth.sendSignInLink(toEmail: "buyer@example.com", actionCodeSettings: settings) }
                    == .unauthorizedContinueURI)
            let cli = live.emailLinkAuth()
            var unregistered = ActionCodeSettings(url: URL(string: "http://127.0.0.1/done"), handleCodeInApp: true)
            unregistered.setIOSBundleID("com.example.shop")
            #expect(await emailLinkErrorCode { try await cli.sendSignInLink(toEmail: "buyer@example.com", actionCodeSettings: unregistered) }
                    == .invalidRequest)
            #expect(await emailLinkErrorCode { try await cli.sendSignInLink(toEmail: "not-an-address") } == .invalidEmail)
        }
    }

    @Test("linking: another account's address is credentialAlreadyInUse; a new address becomes the user's; the session follows")
    func linkToCurrentUser() async throws {
        try await withLiveProvider { live in
            let auth = live.emailLinkAuth()
            // Carol gets an account by her first link.
            try await auth.sendSignInLink(toEmail: "carol@example.com")
            let carol = try await auth.signIn(withEmail: "carol@example.com", link: try await live.signInLink(for: "carol@example.com"))
            #expect(carol.isNewUser)

            let session = try await live.aliceSession(auth)
            let aliceID = try #require(await session.currentUser?.uid)
            let before = try #require(await session.tokens)

            try await auth.sendSignInLink(toEmail: "carol@example.com")
            let carolLink = try await live.signInLink(for: "carol@example.com")
            let taken = EmailAuthProvider.credential(withEmail: "carol@example.com", link: carolLink)
            #expect(await emailLinkErrorCode { try await auth.link(with: taken, for: session) } == .credentialAlreadyInUse)
            #expect(await session.currentUser?.email == aliceEmail, "nothing changed")
            // The refused link is still good for Carol herself.
            #expect(try await auth.signIn(with: taken).user?.uid == carol.user?.uid)

            #expect(await emailLinkErrorCode {
                try await auth.link(with: EmailAuthProvider.credential(withEmail: "carol@example.com", link: carolLink), accessToken: "not-a-token")
            } == .invalidUserToken)

            try await auth.sendSignInLink(toEmail: "alice.new@example.com")
            let credential = EmailAuthProvider.credential(withEmail: "alice.new@example.com",
                                                          link: try await live.signInLink(for: "alice.new@example.com"))
            let linked = try await auth.link(with: credential, for: session)
            #expect(linked.operation == .link && !linked.isNewUser && linked.email == "alice.new@example.com")
            let user = try #require(await session.currentUser)
            #expect(user.uid == aliceID && user.email == "alice.new@example.com" && user.emailVerified)
            // The session runs on the new grant; the tokens it replaced were revoked.
            #expect(try await session.refresh().refreshToken != linked.tokens.refreshToken)
            await #expect(throws: AuthError.self) { try await auth.oidc.refresh(before) }
        }
    }

    @Test("re-authentication: the user's own address gives fresh tokens; another address is userMismatch")
    func reauthenticate() async throws {
        try await withLiveProvider { live in
            let auth = live.emailLinkAuth()
            let session = try await live.aliceSession(auth)
            let signedInAt = try #require(await session.idToken?.authTime)

            try await auth.sendSignInLink(toEmail: "someone.else@example.com")
            let other = EmailAuthProvider.credential(withEmail: "someone.else@example.com",
                                                     link: try await live.signInLink(for: "someone.else@example.com"))
            #expect(await emailLinkErrorCode { try await auth.reauthenticate(with: other, for: session) } == .userMismatch)
            #expect(try await auth.signIn(with: other).isNewUser, "the refused link stays unused")

            try await Task.sleep(for: .milliseconds(1100))
            try await auth.sendSignInLink(toEmail: aliceEmail)
            let own = EmailAuthProvider.credential(withEmail: aliceEmail, link: try await live.signInLink(for: aliceEmail))
            let result = try await auth.reauthenticate(with: own, for: session)
            #expect(result.operation == .reauthenticate && !result.isNewUser)
            let idToken = try #require(await session.idToken)
            #expect(idToken.authenticationMethods == ["email"] && idToken.subject == result.authorization.idToken?.subject)
            #expect(try #require(idToken.authTime) > signedInAt)
        }
    }

    @Test("pending email stores keep one address and forget it")
    func pendingEmailStores() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-pending-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = FilePendingEmailStore(fileURL: directory.appendingPathComponent("sub").appendingPathComponent("pending-email"))
        var stores: [any PendingEmailStore] = [MemoryPendingEmailStore(), file]
        #if canImport(Darwin)
        stores.append(UserDefaultsPendingEmailStore(suiteName: "tessera-tests-\(UUID().uuidString)"))
        #endif
        for store in stores {
            #expect(try await store.load() == nil)
            try await store.save("first@example.com")
            try await store.save("second@example.com")
            #expect(try await store.load() == "second@example.com")
            try await store.remove()
            #expect(try await store.load() == nil)
            try await store.remove()
        }
        try await file.save("private@example.com")
        #expect(permissions(file.fileURL.path) == 0o600 && permissions(file.fileURL.deletingLastPathComponent().path) == 0o700)
        #expect(FilePendingEmailStore.defaultFileURL.lastPathComponent == "pending-email")
    }
}
