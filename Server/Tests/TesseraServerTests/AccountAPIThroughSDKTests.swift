import Foundation
import Hummingbird
import Logging
import Testing
import TesseraAuthCore
import TesseraCore
import TesseraDomain
import TesseraInfrastructure
import TesseraNode

/// The account API driven by the SDK's ``AccountClient`` over real loopback HTTP, against the
/// provider on a SQLite database file, on a clock the test moves.
@Suite("The account API through the SDK against the provider")
struct AccountAPIThroughSDKTests {
    static let email = "alice@example.com"
    static let password = "correct horse battery"
    static let newPassword = "a quite different staple 7"
    static let redirect = "http://127.0.0.1/callback"

    @Test("the profile is the signed-in user's, and a plain claim changes and is removed at once")
    func readAndUpdateProfile() async throws {
        try await AccountLive.run { live in
            let signedIn = try await live.signInNatively()
            let account = live.account(signedIn)
            let profile = try await account.profile()
            #expect(profile.sub == signedIn.idToken?.subject && profile.email == Self.email)
            #expect(profile.emailVerified && profile.hasPassword)
            #expect(profile.claims["given_name"] == "Alice" && profile.claims["family_name"] == "Example")

            live.clock.advance(by: 30)
            let changed = try await account.updateProfile(["given_name": "Alicia", "family_name": .null])
            #expect(changed.claims["given_name"] == "Alicia" && changed.claims["family_name"] == nil)
            #expect(changed.updatedAt == live.clock.clock.now())
            #expect(try await account.profile() == changed, "the change is stored, not only answered")
            #expect(try await account.linkedProviders() == ["password", "email"])
        }
    }

    @Test("removing the password needs a recent sign-in; afterwards the account has no password and email is its way in")
    func removePassword() async throws {
        try await AccountLive.run { live in
            let account = live.account(try await live.signInNatively())
            live.clock.advance(by: 601)
            let refused = try await #require(throws: AuthError.self) { try await account.removePassword() }
            #expect(refused.code == .insufficientUserAuthentication && refused.maxAge == 600)
            #expect(try await account.profile().hasPassword)

            let recent = live.account(try await live.signInNatively())
            try await recent.removePassword()
            #expect(try await recent.profile().hasPassword == false)
            #expect(try await recent.linkedProviders() == ["email"])
        }
    }

    @Test("an address needs a recent sign-in: refused with max_age when the sign-in is old, accepted after signing in again")
    func structuredClaimNeedsRecentSignIn() async throws {
        try await AccountLive.run { live in
            let session = AuthState(client: live.oidc, tokens: try await live.signInNatively().tokens)
            let account = AccountClient(state: session)
            let address: JSONValue = .object(["locality": "Berlin", "country": "DE"])
            live.clock.advance(by: 601)

            let refused = try await #require(throws: AuthError.self) { try await account.updateProfile(["address": address]) }
            #expect(refused.code == .insufficientUserAuthentication && refused.httpStatus == 401)
            #expect(refused.maxAge == 600 && refused.serverError == "insufficient_user_authentication")
            #expect(refused.reason.contains("'address'"))
            #expect(try await account.profile().claims["address"] == nil, "nothing changed")
            // A plain claim needs no recent sign-in, with the same token.
            #expect(try await account.updateProfile(["nickname": "Ally"]).claims["nickname"] == "Ally")

            // Signing in again (as the error says) gives a token with a new auth_time.
            try await session.adopt(try await live.signInNatively())
            let accepted = try await account.updateProfile(["address": address])
            #expect(accepted.claims["address"] == address)
            #expect(try await account.profile().claims["address"] == .object(["locality": "Berlin", "country": "DE"]))
        }
    }

    @Test("an invalid claim value is refused with the claim named and the reason, and nothing changes")
    func invalidClaims() async throws {
        try await AccountLive.run { live in
            let account = live.account(try await live.signInNatively())
            let refused = try await #require(throws: AuthError.self) {
                try await account.updateProfile(["birthdate": "yesterday", "email": "mallory@example.com", "given_name": "Ann"])
            }
            #expect(refused.code == .invalidClaims && refused.httpStatus == 400)
            #expect(refused.invalidClaims.keys.sorted() == ["birthdate", "email"])
            #expect(refused.invalidClaims["email"] == "is maintained by the server and can't be set")
            #expect(refused.invalidClaims["birthdate"]?.isEmpty == false)
            let profile = try await account.profile()
            #expect(profile.claims["given_name"] == "Alice" && profile.claims["birthdate"] == nil && profile.email == Self.email)
        }
    }

    @Test("changing the password needs the right current one; then the new password signs in, the old one doesn't, and other sign-ins end")
    func changePassword() async throws {
        try await AccountLive.run { live in
            let elsewhere = live.account(try await live.signInNatively())
            let account = live.account(try await live.signInNatively())
            let wrong = try await #require(throws: AuthError.self) {
                try await account.changePassword(current: "wrong horse battery", new: Self.newPassword)
            }
            #expect(wrong.code == .invalidCredentials && wrong.httpStatus == 403)
            let weak = try await #require(throws: AuthError.self) { try await account.changePassword(current: Self.password, new: "short") }
            #expect(weak.code == .invalidPassword && weak.httpStatus == 400 && !weak.reason.isEmpty)

            try await account.changePassword(current: Self.password, new: Self.newPassword)
            guard case .error(let old) = await live.native.signIn(username: Self.email, password: Self.password) else {
                Issue.record("the old password must no longer sign in"); return
            }
            #expect(old.code == .invalidCredentials)
            guard case .completed(let renewed) = await live.native.signIn(username: Self.email, password: Self.newPassword) else {
                Issue.record("the new password must sign in"); return
            }
            #expect(renewed.idToken?.authenticationMethods == ["pwd"])
            // The app that changed it keeps working; the other sign-in's tokens don't.
            #expect(try await account.profile().hasPassword)
            let ended = try await #require(throws: AuthError.self) { try await elsewhere.profile() }
            #expect(ended.code == .invalidToken && ended.httpStatus == 401)
        }
    }

    @Test("the sessions list shows the browser sign-in; ending it removes it, and an unknown id is not found")
    func sessions() async throws {
        try await AccountLive.run { live in
            let inBrowser = try await live.oidc.authorize(live.oidc.makeRequest(), using: AccountBrowser(email: Self.email, password: Self.password))
            let sid = try #require(inBrowser.idToken?.sessionID)
            let account = live.account(try await live.signInNatively())

            let sessions = try await account.sessions()
            #expect(sessions.map(\.id) == [sid])
            let session = try #require(sessions.first)
            #expect(session.amr == ["pwd"] && session.authTime == live.clock.clock.now() && session.expiresAt > session.authTime)
            #expect(session.ipAddress == "127.0.0.1")

            let unknown = try await #require(throws: AuthError.self) { try await account.endSession(id: "no-such-session") }
            #expect(unknown.code == .notFound && unknown.httpStatus == 404)
            try await account.endSession(id: sid)
            #expect(try await account.sessions().isEmpty)
        }
    }

    @Test("deleting the account needs a recent sign-in; afterwards the access token no longer works and the session is signed out")
    func deleteAccount() async throws {
        try await AccountLive.run { live in
            let first = try await live.signInNatively()
            let session = AuthState(client: live.oidc, tokens: first.tokens)
            let account = AccountClient(state: session)
            live.clock.advance(by: 601)
            let refused = try await #require(throws: AuthError.self) { try await account.deleteAccount() }
            #expect(refused.code == .insufficientUserAuthentication && refused.maxAge == 600)
            #expect(try await live.provider.store.user(email: Self.email) != nil, "nothing was deleted")

            let again = try await live.signInNatively()
            try await session.adopt(again)
            try await account.deleteAccount()
            #expect(await session.isSignedIn == false)
            #expect(try await live.provider.store.user(email: Self.email) == nil)

            let gone = try await #require(throws: AuthError.self) { try await live.account(again).profile() }
            #expect(gone.code == .invalidToken && gone.httpStatus == 401)
            let older = try await #require(throws: AuthError.self) { try await live.account(first).sessions() }
            #expect(older.code == .invalidToken)
        }
    }

    @Test("an address change mails a code to the new address; a wrong code is refused, the right one moves the account (verified) and tells the old address")
    func changeEmail() async throws {
        try await AccountLive.run { live in
            let account = live.account(try await live.signInNatively())
            let started = try await account.startEmailChange(to: "Alice.New@Example.com")
            let newEmail = "alice.new@example.com"
            #expect(started.target.contains("@") && !started.target.contains("alice.new") && started.codeLength > 0 && started.expiresIn > 0)
            let mail = try #require(try await live.lastMail(to: newEmail))
            #expect(mail.metadata["template"] == Email.emailChangeCode(code: "", minutes: 0).templateName)
            let code = try #require(AccountLive.code(in: mail, length: started.codeLength))

            let wrongCode = String(code.dropLast()) + (code.hasSuffix("0") ? "1" : "0")
            let wrong = try await #require(throws: AuthError.self) {
                try await account.confirmEmailChange(id: started.changeID, code: wrongCode)
            }
            #expect(wrong.code == .invalidCode && wrong.httpStatus == 400 && wrong.serverError == "wrong_code")
            #expect(wrong.reason.contains(/\d+ more tr/), "the description says how many tries are left: \(wrong.reason)")
            #expect(try await account.profile().email == Self.email, "a wrong code changes nothing")
            #expect(try await live.lastMail(to: Self.email) == nil)

            live.clock.advance(by: 30)
            let moved = try await account.confirmEmailChange(id: started.changeID, code: " \(code) ")
            #expect(moved.email == newEmail && moved.emailVerified && moved.updatedAt == live.clock.clock.now())
            #expect(try await account.profile() == moved, "the change is stored, not only answered")
            let notice = try #require(try await live.lastMail(to: Self.email), "the old address is told")
            #expect(notice.metadata["template"] == Email.emailChanged(newEmail: "").templateName && notice.text.contains(newEmail))

            let used = try await #require(throws: AuthError.self) { try await account.confirmEmailChange(id: started.changeID, code: code) }
            #expect(used.code == .flowExpired && used.httpStatus == 400, "a change is confirmed once")
            guard case .completed = await live.native.signIn(username: newEmail, password: Self.password) else {
                Issue.record("the new address must sign in"); return
            }
        }
    }

    @Test("an address change to the account's own address or to no address is an invalid address, and nothing is sent")
    func changeEmailToInvalidAddress() async throws {
        try await AccountLive.run { live in
            let account = live.account(try await live.signInNatively())
            for address in [Self.email, " ALICE@example.com", "alice.example.com", "alice@localhost", ""] {
                let refused = try await #require(throws: AuthError.self) { try await account.startEmailChange(to: address) }
                #expect(refused.code == .invalidEmail && refused.httpStatus == 400 && refused.serverError == "invalid_address",
                        "'\(address)': \(refused)")
            }
            #expect(try await live.lastMail(to: Self.email) == nil)
            #expect(try await account.profile().email == Self.email)
        }
    }

    @Test("an address change needs a recent sign-in: refused with max_age when the sign-in is old, and no code is sent")
    func changeEmailNeedsRecentSignIn() async throws {
        try await AccountLive.run { live in
            let account = live.account(try await live.signInNatively())
            live.clock.advance(by: 601)
            let refused = try await #require(throws: AuthError.self) { try await account.startEmailChange(to: "alice.new@example.com") }
            #expect(refused.code == .insufficientUserAuthentication && refused.httpStatus == 401 && refused.maxAge == 600)
            #expect(try await live.lastMail(to: "alice.new@example.com") == nil)

            let recent = live.account(try await live.signInNatively())
            _ = try await recent.startEmailChange(to: "alice.new@example.com")
            #expect(try await live.lastMail(to: "alice.new@example.com") != nil)
        }
    }

    @Test("an address with an account of its own gets the same answer, a notice instead of a code, and no code moves the account there")
    func changeEmailToTakenAddress() async throws {
        try await AccountLive.run { live in
            let bob = try await live.provider.createUser(email: "bob@example.com", password: nil, name: "Bob")
            let account = live.account(try await live.signInNatively())
            let free = try await account.startEmailChange(to: "alice.new@example.com")
            let taken = try await account.startEmailChange(to: "bob@example.com")
            #expect(taken.codeLength == free.codeLength && taken.expiresIn == free.expiresIn && taken.changeID != free.changeID)
            #expect(taken.target.contains("@") && !taken.target.contains("bob"))

            let notice = try #require(try await live.lastMail(to: "bob@example.com"))
            #expect(notice.metadata["template"] == Email.emailChangeTaken.templateName)
            #expect(AccountLive.code(in: notice, length: taken.codeLength) == nil, "the notice holds no code")
            // The code mailed for another change doesn't fit this one either.
            let freeMail = try #require(try await live.lastMail(to: "alice.new@example.com"))
            let other = try #require(AccountLive.code(in: freeMail, length: free.codeLength))
            for code in [String(repeating: "1", count: taken.codeLength), other] {
                let refused = try await #require(throws: AuthError.self) { try await account.confirmEmailChange(id: taken.changeID, code: code) }
                #expect(refused.code == .invalidCode && refused.httpStatus == 400)
            }
            #expect(try await account.profile().email == Self.email, "nothing changed")
            #expect(try await live.provider.store.user(email: "bob@example.com")?.id == bob.id)
            #expect(try await live.lastMail(to: Self.email) == nil, "the old address is told nothing: nothing moved")
        }
    }

    @Test("a provider that announces no account API is unsupported, and nothing is sent")
    func noAccountAPI() async throws {
        try await AccountLive.run { live in
            let signedIn = try await live.signInNatively()
            var metadata = try await live.oidc.discover()
            metadata.accountAPIEndpoint = nil
            var configuration = live.oidc.configuration
            configuration.metadata = metadata
            let transport = RecordingTransport()
            let client = OIDCClient(configuration: configuration, transport: transport, now: live.now)
            let account = AccountClient(client: client) { signedIn.tokens.accessToken }
            let error = try await #require(throws: AuthError.self) { try await account.profile() }
            #expect(error.code == .unsupported && error.httpStatus == nil)
            #expect(await transport.paths.isEmpty)
            // The providers list has its own discovery member.
            #expect(try await account.linkedProviders() == ["password", "email"])
            #expect(await transport.paths == ["GET /account/v1.0/providers"])
        }
    }
}

/// The provider served over loopback HTTP, with the public first-party client `app` and Alice.
struct AccountLive: Sendable {
    let provider: Provider
    let clock: ManualClock
    let oidc: OIDCClient
    let native: NativeAuthClient

    /// The SDK's clock: the provider's, so tokens are fresh by both.
    var now: @Sendable () -> Date {
        let clock = clock
        return { Date(timeIntervalSince1970: TimeInterval(clock.clock.now())) }
    }

    /// Alice's tokens from a native password sign-in (auth_time now).
    func signInNatively() async throws -> AuthorizationResult {
        guard case .completed(let result) = await native.signIn(username: AccountAPIThroughSDKTests.email,
                                                                password: AccountAPIThroughSDKTests.password) else {
            throw BrowserFailure("Alice's password sign-in failed")
        }
        return result
    }

    /// The newest message the provider's outbox holds for `address`.
    func lastMail(to address: String) async throws -> OutboxMessage? {
        try await provider.store.outboxMessages(recipient: address, limit: 1).first
    }

    /// The one-time code of `length` digits in `message`'s text, if it has one.
    static func code(in message: OutboxMessage, length: Int) -> String? {
        message.text.split(whereSeparator: { !$0.isNumber }).first { $0.count == length }.map(String.init)
    }

    /// The account API with the access token of `result`.
    func account(_ result: AuthorizationResult) -> AccountClient {
        AccountClient(client: oidc) { result.tokens.accessToken }
    }

    /// Runs `body` against a provider listening on a port picked first (the issuer must be the
    /// URL the SDK reaches), on a SQLite file removed afterwards.
    static func run(_ body: @Sendable (AccountLive) async throws -> Void) async throws {
        var logger = Logger(label: "account-api-tests")
        logger.logLevel = .critical
        let directory = FileManager.default.temporaryDirectory.appending(path: "tessera-account-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var lastError: (any Error)?
        // A port picked here could be taken before the server binds it: try a few.
        for attempt in 0..<3 {
            let clock = ManualClock()
            var configuration = ServerConfiguration()
            configuration.database = .sqliteFile(directory.appending(path: "tessera-\(attempt).sqlite").path)
            configuration.passwordHashing = .testing
            configuration.signingAlgorithm = .es256
            configuration.host = "127.0.0.1"
            configuration.port = try { let listener = try LoopbackRedirectListener(); defer { listener.close() }; return Int(listener.port) }()
            do {
                try await Provider.with(configuration, clock: clock.clock, logger: logger) { provider in
                    var app = Provider.ClientRegistration(name: "The App", redirectURIs: [AccountAPIThroughSDKTests.redirect])
                    app.id = "app"
                    app.isPublic = true
                    app.firstParty = true
                    _ = try await provider.registerClient(app)
                    _ = try await provider.createUser(email: AccountAPIThroughSDKTests.email, password: AccountAPIThroughSDKTests.password,
                                                      name: "Alice Example", profile: ["given_name": "Alice", "family_name": "Example"])
                    try await serve(provider, clock: clock, body)
                }
                return
            } catch {
                lastError = error
                guard error is BrowserFailure || "\(error)".contains("Address already in use") else { throw error }
            }
        }
        throw lastError ?? BrowserFailure("the provider did not start")
    }

    private static func serve(_ provider: Provider, clock: ManualClock, _ body: @Sendable (AccountLive) async throws -> Void) async throws {
        let (ready, readyContinuation) = AsyncStream<Void>.makeStream()
        let app = try buildApplication(provider: provider) { _ in readyContinuation.yield() }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { readyContinuation.finish() }
                try await app.runService(gracefulShutdownSignals: [])
            }
            var started = false
            for await _ in ready { started = true; break }
            guard started else {
                try await tasks.waitForAll()
                throw BrowserFailure("the provider stopped before listening")
            }
            let issuer = try #require(URL(string: provider.issuer))
            let transport = AsyncHTTPClientTransport()
            let now: @Sendable () -> Date = { Date(timeIntervalSince1970: TimeInterval(clock.clock.now())) }
            let live = AccountLive(
                provider: provider, clock: clock,
                oidc: OIDCClient(configuration: .init(issuer: issuer, clientID: "app", redirectURI: AccountAPIThroughSDKTests.redirect),
                                 transport: transport, now: now),
                native: NativeAuthClient(issuer: issuer, clientID: "app", transport: transport, now: now))
            defer { tasks.cancelAll() }
            try await body(live)
        }
    }
}

/// A browser without a screen over the SDK's transport: follows the provider's redirects with
/// its cookies, fills in the login form, and stops at the redirect URI.
struct AccountBrowser: ExternalUserAgent {
    let email: String
    let password: String
    let transport = AsyncHTTPClientTransport()
    let cookies = CookieJar()

    func present(_ url: URL, redirectURI: String) async throws -> URL {
        var page = try await request(url)
        for _ in 0..<10 {
            if let location = page.headers["location"].flatMap({ URL(string: $0, relativeTo: page.url)?.absoluteURL }) {
                if location.absoluteString.hasPrefix(redirectURI) { return location }
                page = try await request(location)
                continue
            }
            let html = String(decoding: page.body, as: UTF8.self)
            guard page.status == 200, html.contains("name=\"password\""),
                  let interaction = Self.field("interaction", in: html), let csrf = Self.field("csrf_token", in: html) else {
                throw BrowserFailure("HTTP \(page.status) at \(page.url) is no login page: \(html.prefix(300))")
            }
            page = try await request(URL(string: "/login", relativeTo: page.url)!.absoluteURL,
                                     form: [("interaction", interaction), ("csrf_token", csrf), ("email", email), ("password", password)])
        }
        throw BrowserFailure("too many steps")
    }

    struct Page {
        var url: URL
        var status: Int
        var headers: [String: String]
        var body: Data
    }

    func request(_ url: URL, form: [(String, String)]? = nil) async throws -> Page {
        var headers: [String: String] = [:]
        if let cookie = await cookies.header { headers["Cookie"] = cookie }
        var request = HTTPTransportRequest(url: url, headers: headers)
        if let form {
            request.method = "POST"
            request.headers["Content-Type"] = "application/x-www-form-urlencoded"
            request.body = Data(FormEncoding.encode(form).utf8)
        }
        request.followsRedirects = false
        let response = try await transport.send(request)
        if let setCookie = response.headers["set-cookie"] { await cookies.take(setCookie) }
        return Page(url: url, status: response.status, headers: response.headers, body: response.body)
    }

    static func field(_ name: String, in html: String) -> String? {
        guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        let rest = html[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }
}

/// The SDK's transport, remembering what it sent.
struct RecordingTransport: HTTPTransport {
    actor Log {
        var paths: [String] = []
        func add(_ path: String) { paths.append(path) }
    }
    let inner = AsyncHTTPClientTransport()
    let log = Log()

    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        await log.add("\(request.method) \(request.url.path)")
        return try await inner.send(request)
    }

    /// The requests sent, as `METHOD /path`.
    var paths: [String] { get async { await log.paths } }
}

/// The browser's cookies, by name.
actor CookieJar {
    private var cookies: [String: String] = [:]

    var header: String? {
        cookies.isEmpty ? nil : cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
    }

    /// Takes `Set-Cookie` fields as the transport joins them (", " between fields, which an
    /// `Expires` date also contains: a field starts where a `name=` follows the comma).
    func take(_ joined: String) {
        for field in joined.split(separator: /, (?=[A-Za-z0-9_.-]+=)/) {
            let pair = field.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
            guard let name = pair.first.map({ String($0).trimmingCharacters(in: .whitespaces) }) else { continue }
            let value = pair.count > 1 ? String(pair[1]) : ""
            let expired = value.isEmpty || field.lowercased().contains("max-age=0")
            cookies[name] = expired ? nil : value
        }
    }
}

struct BrowserFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
