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

/// An app talking to the native API over HTTP, reading its email from the outbox.
struct NativeApp {
    let provider: Provider
    let browser: Browser
    var clientID = "app"

    @discardableResult
    func post(_ path: String, _ pairs: [(String, String)], headers: HTTPFields = formHeaders) async throws -> TestResponse {
        try await browser.post(path, [("client_id", clientID)] + pairs, headers: headers)
    }

    /// The newest message sent to `email`.
    func lastMail(to email: String) async throws -> OutboxMessage? {
        try await provider.store.outboxMessages(recipient: email, limit: 1).first
    }

    func mailCount(to email: String) async throws -> Int {
        try await provider.store.outboxMessages(recipient: email, limit: 100).count
    }

    /// The code in the newest message to `email`.
    func code(for email: String) async throws -> String {
        let text = try #require(try await lastMail(to: email)).text
        let match = try #require(text.firstMatch(of: /\b(\d{8})\b/))
        return String(match.1)
    }

    /// `start` + `challenge` of a sign-up; returns the token for `continue`.
    func startSignUp(_ email: String, extra: [(String, String)] = []) async throws -> String {
        let start = try await post("/signup/v1.0/start", [("username", email), ("challenge_type", "oob password redirect")] + extra)
        #expect(start.status == .ok, "\(start.body.text)")
        let challenge = try await post("/signup/v1.0/challenge", [("continuation_token", try token(start))])
        #expect(challenge.json["challenge_type"] == "oob", "\(challenge.body.text)")
        return try token(challenge)
    }

    /// `initiate` + `challenge` of a sign-in.
    func startSignIn(_ email: String, challengeTypes: String = "password oob redirect") async throws -> TestResponse {
        let initiate = try await post("/oauth2/v2.0/initiate", [("username", email), ("challenge_type", challengeTypes)])
        #expect(initiate.status == .ok, "\(initiate.body.text)")
        return try await post("/oauth2/v2.0/challenge", [("continuation_token", try token(initiate))])
    }
}

extension TestResponse {
    var errorDescription: String { json["error_description"]?.stringValue ?? "" }
}

func token(_ response: TestResponse) throws -> String {
    try #require(response.json["continuation_token"]?.stringValue, "no continuation_token in \(response.body.text)")
}

func withNativeApp(clock: ManualClock = ManualClock(), configure: (inout ServerConfiguration) -> Void = { _ in },
                   _ body: @escaping @Sendable (NativeApp) async throws -> Void) async throws {
    try await withProvider(clock: clock, configure: configure) { provider async throws in
        var registration = Provider.ClientRegistration(name: "Native App", redirectURIs: ["com.example.app:/callback"])
        registration.id = "app"
        registration.isPublic = true
        registration.firstParty = true
        _ = try await provider.registerClient(registration)
        try await provider.addWebClient(id: "third-party")
        _ = try await provider.createUser(email: "alice@example.com", password: "correct horse battery", name: "Alice")
        let app = Application(router: try buildRouter(provider: provider))
        try await app.test(.router) { client in
            try await body(NativeApp(provider: provider, browser: Browser(client)))
        }
    }
}

func claims(ofJWT jwt: String) throws -> [String: JSONValue] {
    let payload = try #require(Base64URL.decode(jwt.split(separator: ".")[1]))
    return try JSONDecoder().decode([String: JSONValue].self, from: payload)
}

let twoPageAttributes = """
    [{"name": "given_name", "required": true}, {"name": "family_name", "required": false},
     {"name": "city", "required": true, "page": 2, "pattern": "[A-Za-zА-Яа-яЁё -]+"}, {"name": "birthdate"}]
    """

@Suite("Native sign-in API")
struct NativeAuthTests {
    @Test("sign-up by email code, attributes over two pages, then signed in with the continuation token")
    func signUpWithCodeAndAttributes() async throws {
        try await withNativeApp(configure: { $0.nativeAuth.signUpAttributes = try! SignUpAttributes(json: twoPageAttributes) }) { app in
            let email = "New.User@Example.com"
            var continuation = try await app.startSignUp(email, extra: [("attributes", #"{"family_name": "Liddell", "unknown": "x"}"#)])
            #expect(try await app.lastMail(to: "new.user@example.com")?.metadata["template"] == "sign-up-code")
            let code = try await app.code(for: "new.user@example.com")
            let wrong = code == "00000000" ? "11111111" : "00000000"
            let bad = try await app.post("/signup/v1.0/continue", [("continuation_token", continuation), ("grant_type", "oob"), ("oob", wrong)])
            #expect(bad.status == .badRequest && bad.json["error"] == "invalid_grant" && bad.json["suberror"] == "invalid_oob_value")

            let verified = try await app.post("/signup/v1.0/continue", [("continuation_token", continuation), ("grant_type", "oob"), ("oob", code)])
            #expect(verified.json["error"] == "attributes_required", "\(verified.body.text)")
            #expect(verified.json["required_attributes"] == .array([.object(["name": "given_name", "type": "string", "required": true])]))
            #expect(try await app.provider.store.user(email: "new.user@example.com") == nil, "no account before sign-up completes")
            // The token of a finished step doesn't work twice.
            let replay = try await app.post("/signup/v1.0/continue", [("continuation_token", continuation), ("grant_type", "oob"), ("oob", code)])
            #expect(replay.json["error"] == "invalid_request" && replay.json["error_codes"] == .array([55200]))
            continuation = try token(verified)

            let page1 = try await app.post("/signup/v1.0/continue", [("continuation_token", continuation), ("grant_type", "attributes"),
                                                                     ("attributes", #"{"given_name": "Anna"}"#)])
            #expect(page1.json["error"] == "attributes_required")
            #expect(page1.json["required_attributes"]?.arrayValue?.first?.objectValue?["name"] == "city")
            continuation = try token(page1)
            let invalid = try await app.post("/signup/v1.0/continue", [("continuation_token", continuation), ("grant_type", "attributes"),
                                                                       ("attributes", #"{"city": "<script>", "birthdate": "2001-02-30"}"#)])
            #expect(invalid.json["error"] == "invalid_grant" && invalid.json["suberror"] == "attribute_validation_failed")
            #expect(invalid.json["invalid_attributes"]?.arrayValue?.compactMap { $0.objectValue?["name"]?.stringValue } == ["birthdate", "city"])
            let done = try await app.post("/signup/v1.0/continue", [("continuation_token", continuation), ("grant_type", "attributes"),
                                                                    ("attributes", #"{"city": "Санкт-Петербург"}"#)])
            #expect(done.status == .ok, "\(done.body.text)")
            let user = try #require(try await app.provider.store.user(email: "new.user@example.com"))
            #expect(user.emailVerified && user.passwordHash == nil)
            #expect(user.profile["given_name"] == "Anna" && user.profile["family_name"] == "Liddell")
            #expect(user.profile["address"] == .object(["locality": "Санкт-Петербург"]))

            let tokens = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(done)), ("grant_type", "continuation_token"),
                                                                   ("username", email), ("scope", "openid profile offline_access"),
                                                                   ("client_info", "true")])
            #expect(tokens.status == .ok, "\(tokens.body.text)")
            let idToken = try claims(ofJWT: try #require(tokens.json["id_token"]?.stringValue))
            #expect(idToken["sub"]?.stringValue == user.id && idToken["given_name"] == "Anna" && idToken["aud"] == "app")
            #expect(tokens.json["refresh_token"] != nil && tokens.json["token_type"] == "Bearer" && tokens.json["client_info"] != nil)
            let again = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(done)), ("grant_type", "continuation_token"),
                                                                  ("scope", "openid")])
            #expect(again.json["error"] == "invalid_grant", "the continuation token signs in once")
        }
    }

    @Test("sign-up with a password: policy checked, credential_required when the server insists, then password sign-in")
    func signUpWithPassword() async throws {
        try await withNativeApp(configure: { $0.nativeAuth.signUpPasswordRequired = true }) { app in
            for (password, suberror) in [("short", "password_too_short"), (String(repeating: "x", count: 257), "password_too_long"),
                                         ("password1", "password_banned")] {
                let start = try await app.post("/signup/v1.0/start", [("username", "bob@example.com"), ("challenge_type", "oob password redirect"),
                                                                      ("password", password)])
                #expect(start.json["error"] == "invalid_grant" && start.json["suberror"] == .string(suberror), "\(start.body.text)")
            }
            var continuation = try await app.startSignUp("bob@example.com")
            let verified = try await app.post("/signup/v1.0/continue", [("continuation_token", continuation), ("grant_type", "oob"),
                                                                        ("oob", try await app.code(for: "bob@example.com"))])
            #expect(verified.json["error"] == "credential_required" && verified.json["error_codes"] == .array([55103]))
            let challenge = try await app.post("/signup/v1.0/challenge", [("continuation_token", try token(verified)),
                                                                          ("challenge_type", "oob password redirect")])
            #expect(challenge.json["challenge_type"] == "password")
            continuation = try token(challenge)
            let weak = try await app.post("/signup/v1.0/continue", [("continuation_token", continuation), ("grant_type", "password"),
                                                                    ("password", "bob@example.com")])
            #expect(weak.json["suberror"] == "password_too_weak")
            let done = try await app.post("/signup/v1.0/continue", [("continuation_token", continuation), ("grant_type", "password"),
                                                                    ("password", "a long and unusual passphrase")])
            #expect(done.status == .ok, "\(done.body.text)")

            let challenged = try await app.startSignIn("bob@example.com")
            #expect(challenged.json["challenge_type"] == "password")
            let wrong = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(challenged)), ("grant_type", "password"),
                                                                  ("password", "not the passphrase"), ("scope", "openid")])
            #expect(wrong.json["error"] == "invalid_grant" && wrong.json["error_codes"] == .array([50126]))
            let right = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(challenged)), ("grant_type", "password"),
                                                                  ("password", "a long and unusual passphrase"), ("scope", "openid email")])
            #expect(right.status == .ok, "\(right.body.text)")
            let idToken = try claims(ofJWT: try #require(right.json["id_token"]?.stringValue))
            #expect(idToken["email"] == "bob@example.com" && idToken["amr"] == .array(["pwd"]))
            var bearer = HTTPFields()
            bearer[.authorization] = "Bearer " + (right.json["access_token"]?.stringValue ?? "")
            let userinfo = try await app.browser.request("/userinfo", headers: bearer)
            #expect(userinfo.json["linked_providers"] == nil, "userinfo releases exactly the scopes' claims")
            let providers = try await app.browser.request("/account/v1.0/providers", headers: bearer)
            #expect(providers.json["linked_providers"] == .array(["password", "email"]), "\(providers.body.text)")
            #expect(try await app.browser.request("/account/v1.0/providers").status == .unauthorized)
            #expect(right.json["refresh_token"] == nil, "no offline_access, no refresh token")
        }
    }

    @Test("sign-in by code: wrong codes are counted up to the limit, codes expire, resend waits for the interval")
    func signInWithCode() async throws {
        let clock = ManualClock()
        try await withNativeApp(clock: clock) { app in
            let challenge = try await app.startSignIn("alice@example.com", challengeTypes: "oob redirect")
            #expect(challenge.json["challenge_type"] == "oob" && challenge.json["code_length"] == 8 && challenge.json["challenge_channel"] == "email")
            #expect(challenge.json["challenge_target_label"] == "a***e@e*****e.com" && challenge.json["binding_method"] == "prompt")
            var continuation = try token(challenge)
            let first = try await app.code(for: "alice@example.com")
            // Resending too early is refused; after the interval a new code replaces the old one.
            let early = try await app.post("/oauth2/v2.0/challenge", [("continuation_token", continuation)])
            #expect(early.status == .tooManyRequests && early.json["error"] == "slow_down" && early.headers[.retryAfter] != nil)
            clock.advance(by: 61)
            let resent = try await app.post("/oauth2/v2.0/challenge", [("continuation_token", continuation)])
            #expect(resent.json["challenge_type"] == "oob", "\(resent.body.text)")
            continuation = try token(resent)
            let second = try await app.code(for: "alice@example.com")
            if first != second {
                let old = try await app.post("/oauth2/v2.0/token", [("continuation_token", continuation), ("grant_type", "oob"), ("oob", first),
                                                                    ("scope", "openid")])
                #expect(old.json["suberror"] == "invalid_oob_value", "a resent code replaces the old one")
            }
            for attempt in 1...4 {
                let wrong = try await app.post("/oauth2/v2.0/token", [("continuation_token", continuation), ("grant_type", "oob"),
                                                                      ("oob", "1234567\(attempt)"), ("scope", "openid")])
                #expect(wrong.json["suberror"] == "invalid_oob_value")
            }
            // Five wrong entries in all (counting the old code, if it differed) use the code up.
            if first == second {
                _ = try await app.post("/oauth2/v2.0/token", [("continuation_token", continuation), ("grant_type", "oob"), ("oob", "99999999"), ("scope", "openid")])
            }
            let locked = try await app.post("/oauth2/v2.0/token", [("continuation_token", continuation), ("grant_type", "oob"), ("oob", second),
                                                                   ("scope", "openid")])
            #expect(locked.json["suberror"] == "invalid_oob_value" && locked.errorDescription.contains("new code"))

            clock.advance(by: 61)
            let fresh = try await app.post("/oauth2/v2.0/challenge", [("continuation_token", continuation)])
            continuation = try token(fresh)
            clock.advance(by: 601)
            let expired = try await app.post("/oauth2/v2.0/token", [("continuation_token", continuation), ("grant_type", "oob"),
                                                                    ("oob", try await app.code(for: "alice@example.com")), ("scope", "openid")])
            #expect(expired.json["error"] == "expired_token", "\(expired.body.text)")

            let again = try await app.startSignIn("alice@example.com", challengeTypes: "oob redirect")
            let signedIn = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(again)), ("grant_type", "oob"),
                                                                     ("oob", try await app.code(for: "alice@example.com")), ("scope", "openid")])
            #expect(signedIn.status == .ok, "\(signedIn.body.text)")
            #expect(try claims(ofJWT: try #require(signedIn.json["id_token"]?.stringValue))["amr"] == .array(["otp"]))
        }
    }

    @Test("steps out of order: a password before the code is refused, a password sign-up an app can't finish goes to the browser")
    func stepsOutOfOrder() async throws {
        try await withNativeApp(configure: { $0.nativeAuth.signUpPasswordRequired = true }) { app in
            let continuation = try await app.startSignUp("dan@example.com")
            let early = try await app.post("/signup/v1.0/continue", [("continuation_token", continuation), ("grant_type", "password"),
                                                                     ("password", "a long and unusual passphrase")])
            #expect(early.json["error"] == "invalid_request" && early.errorDescription.contains("Verify the email address first"))
            // The token survived the refused step.
            let verified = try await app.post("/signup/v1.0/continue", [("continuation_token", continuation), ("grant_type", "oob"),
                                                                        ("oob", try await app.code(for: "dan@example.com"))])
            #expect(verified.json["error"] == "credential_required")

            let start = try await app.post("/signup/v1.0/start", [("username", "erin@example.com"), ("challenge_type", "oob redirect")])
            let challenge = try await app.post("/signup/v1.0/challenge", [("continuation_token", try token(start))])
            let codeOnly = try await app.post("/signup/v1.0/continue", [("continuation_token", try token(challenge)), ("grant_type", "oob"),
                                                                        ("oob", try await app.code(for: "erin@example.com"))])
            #expect(codeOnly.status == .ok && codeOnly.json == ["challenge_type": "redirect"], "\(codeOnly.body.text)")
            #expect(try await app.provider.store.user(email: "erin@example.com") == nil)
        }
    }

    @Test("once a sign-in code was sent, asking again sends another code even to an account with a password")
    func resendStaysCode() async throws {
        let clock = ManualClock()
        try await withNativeApp(clock: clock) { app in
            let initiate = try await app.post("/oauth2/v2.0/initiate", [("username", "alice@example.com"), ("challenge_type", "oob password redirect")])
            let code = try await app.post("/oauth2/v2.0/challenge", [("continuation_token", try token(initiate)), ("challenge_type", "oob redirect")])
            #expect(code.json["challenge_type"] == "oob")
            clock.advance(by: 61)
            let resent = try await app.post("/oauth2/v2.0/challenge", [("continuation_token", try token(code)),
                                                                       ("challenge_type", "oob password redirect")])
            #expect(resent.json["challenge_type"] == "oob", "\(resent.body.text)")
        }
    }

    @Test("codes are limited per hour per address")
    func hourlyCodeLimit() async throws {
        let clock = ManualClock()
        try await withNativeApp(clock: clock, configure: { $0.nativeAuth.codesPerEmailPerHour = 2 }) { app in
            for _ in 1...2 {
                let challenge = try await app.startSignIn("alice@example.com", challengeTypes: "oob redirect")
                #expect(challenge.json["challenge_type"] == "oob")
            }
            let third = try await app.startSignIn("alice@example.com", challengeTypes: "oob redirect")
            #expect(third.status == .tooManyRequests && third.json["error"] == "slow_down")
            #expect(try await app.mailCount(to: "alice@example.com") == 2)
            clock.advance(by: 3601)
            #expect(try await app.startSignIn("alice@example.com", challengeTypes: "oob redirect").json["challenge_type"] == "oob")
        }
    }

    @Test("password reset: code, new password, every other session and refresh token ends, sign-in with the new password")
    func passwordReset() async throws {
        try await withNativeApp { app in
            let challenged = try await app.startSignIn("alice@example.com")
            let before = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(challenged)), ("grant_type", "password"),
                                                                   ("password", "correct horse battery"), ("scope", "openid offline_access")])
            let oldRefresh = try #require(before.json["refresh_token"]?.stringValue)

            let start = try await app.post("/resetpassword/v1.0/start", [("username", "alice@example.com"), ("challenge_type", "oob redirect")])
            let challenge = try await app.post("/resetpassword/v1.0/challenge", [("continuation_token", try token(start))])
            #expect(challenge.json["challenge_type"] == "oob")
            #expect(try await app.lastMail(to: "alice@example.com")?.metadata["template"] == "password-reset-code")
            let verified = try await app.post("/resetpassword/v1.0/continue", [("continuation_token", try token(challenge)), ("grant_type", "oob"),
                                                                              ("oob", try await app.code(for: "alice@example.com"))])
            #expect(verified.json["expires_in"] == 600, "\(verified.body.text)")
            let banned = try await app.post("/resetpassword/v1.0/submit", [("continuation_token", try token(verified)), ("new_password", "qwertyuiop")])
            #expect(banned.json["suberror"] == "password_banned")
            let submitted = try await app.post("/resetpassword/v1.0/submit", [("continuation_token", try token(verified)),
                                                                             ("new_password", "a brand new passphrase")])
            #expect(submitted.json["poll_interval"] != nil, "\(submitted.body.text)")
            let poll = try await app.post("/resetpassword/v1.0/poll_completion", [("continuation_token", try token(submitted))])
            #expect(poll.json["status"] == "succeeded")
            #expect(try await app.lastMail(to: "alice@example.com")?.metadata["template"] == "password-changed")

            let refreshed = try await app.post("/oauth2/v2.0/token", [("grant_type", "refresh_token"), ("refresh_token", oldRefresh)])
            #expect(refreshed.json["error"] == "invalid_grant", "the reset ended the old refresh token: \(refreshed.body.text)")
            let signedIn = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(poll)), ("grant_type", "continuation_token"),
                                                                     ("scope", "openid")])
            #expect(signedIn.status == .ok, "\(signedIn.body.text)")
            let old = try await app.startSignIn("alice@example.com")
            let oldPassword = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(old)), ("grant_type", "password"),
                                                                        ("password", "correct horse battery"), ("scope", "openid")])
            #expect(oldPassword.json["error_codes"] == .array([50126]))
        }
    }

    @Test("enumeration protection on: an existing or unknown address gets the answers a new or known one would")
    func enumerationProtectionOn() async throws {
        try await withNativeApp { app in
            let continuation = try await app.startSignUp("alice@example.com")
            let mail = try #require(try await app.lastMail(to: "alice@example.com"))
            #expect(mail.metadata["template"] == "account-exists" && mail.text.firstMatch(of: /\b\d{8}\b/) == nil)
            let guess = try await app.post("/signup/v1.0/continue", [("continuation_token", continuation), ("grant_type", "oob"), ("oob", "12345678")])
            #expect(guess.json["suberror"] == "invalid_oob_value")

            let unknown = try await app.startSignIn("nobody@example.com")
            #expect(unknown.json["challenge_type"] == "password")
            let attempt = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(unknown)), ("grant_type", "password"),
                                                                    ("password", "whatever it is"), ("scope", "openid")])
            #expect(attempt.json["error"] == "invalid_grant" && attempt.json["error_codes"] == .array([50126]))
            let byCode = try await app.startSignIn("nobody@example.com", challengeTypes: "oob redirect")
            #expect(byCode.json["challenge_type"] == "oob" && byCode.json["code_length"] == 8)
            let reset = try await app.post("/resetpassword/v1.0/start", [("username", "nobody@example.com"), ("challenge_type", "oob redirect")])
            #expect(reset.status == .ok)
            #expect(try await app.mailCount(to: "nobody@example.com") == 0, "nothing is sent to an address without an account")
        }
    }

    @Test("enumeration protection off: user_already_exists and user_not_found, as the reference API answers")
    func enumerationProtectionOff() async throws {
        try await withNativeApp(configure: { $0.enumerationProtection = false }) { app in
            let signUp = try await app.post("/signup/v1.0/start", [("username", "alice@example.com"), ("challenge_type", "oob redirect")])
            #expect(signUp.json["error"] == "user_already_exists")
            let signIn = try await app.post("/oauth2/v2.0/initiate", [("username", "nobody@example.com"), ("challenge_type", "oob redirect")])
            #expect(signIn.json["error"] == "user_not_found" && signIn.json["error_codes"] == .array([50034]))
            let reset = try await app.post("/resetpassword/v1.0/start", [("username", "nobody@example.com"), ("challenge_type", "oob redirect")])
            #expect(reset.json["error"] == "user_not_found")
        }
    }

    @Test("clients, challenge types and parameters get the reference's errors")
    func badRequests() async throws {
        try await withNativeApp { app in
            var other = app
            other.clientID = "nobody"
            let unknown = try await other.post("/oauth2/v2.0/initiate", [("username", "alice@example.com"), ("challenge_type", "oob redirect")])
            #expect(unknown.json["error"] == "unauthorized_client")
            other.clientID = "third-party"
            let thirdParty = try await other.post("/oauth2/v2.0/initiate", [("username", "alice@example.com"), ("challenge_type", "oob redirect")])
            #expect(thirdParty.json["error"] == "invalid_client" && thirdParty.json["suberror"] == "nativeauthapi_disabled")

            let noRedirect = try await app.post("/signup/v1.0/start", [("username", "carol@example.com"), ("challenge_type", "oob password")])
            #expect(noRedirect.json["error"] == "unsupported_challenge_type")
            let strange = try await app.post("/signup/v1.0/start", [("username", "carol@example.com"), ("challenge_type", "oob sms redirect")])
            #expect(strange.json["error"] == "invalid_request")
            #expect(strange.errorDescription.contains("The challenge_type list parameter contains an unsupported challenge type"))
            let onlyRedirect = try await app.post("/oauth2/v2.0/initiate", [("username", "alice@example.com"), ("challenge_type", "redirect")])
            #expect(onlyRedirect.status == .ok && onlyRedirect.json == ["challenge_type": "redirect"])
            let badName = try await app.post("/signup/v1.0/start", [("username", "not-an-address"), ("challenge_type", "oob redirect")])
            #expect(badName.json["error"] == "invalid_request" && badName.json["error_codes"] == .array([90100]))
            #expect(badName.errorDescription.contains("username parameter is empty or not valid"))
            let twice = try await app.post("/signup/v1.0/start", [("username", "a@example.com"), ("username", "b@example.com"), ("challenge_type", "oob redirect")])
            #expect(twice.json["error"] == "invalid_request")
            let forged = try await app.post("/signup/v1.0/challenge", [("continuation_token", "forged")])
            #expect(forged.json["error"] == "invalid_grant" && forged.json["correlation_id"] != nil && forged.json["trace_id"] != nil)
            let missing = try await app.post("/signup/v1.0/continue", [("grant_type", "oob")])
            #expect(missing.json["error"] == "invalid_request")
            // A sign-in token is not a sign-up token, and not another client's.
            let initiate = try await app.post("/oauth2/v2.0/initiate", [("username", "alice@example.com"), ("challenge_type", "oob redirect")])
            let crossed = try await app.post("/signup/v1.0/challenge", [("continuation_token", try token(initiate))])
            #expect(crossed.json["error"] == "invalid_grant", "\(crossed.body.text)")
            let json = try await app.browser.request("/oauth2/v2.0/initiate", method: .post, headers: [.contentType: "application/json"],
                                                     body: ByteBuffer(string: "{}"))
            #expect(json.status == .badRequest && json.json["error"] == "invalid_request")
            let sensitive = try await app.startSignIn("alice@example.com")
            let scope = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(sensitive)), ("grant_type", "password"),
                                                                  ("password", "correct horse battery"), ("scope", "openid unknown_scope")])
            #expect(scope.json["error"] == "invalid_scope")
        }
    }

    @Test("discovery names every native endpoint and the OpenAPI document")
    func discovery() async throws {
        try await withNativeApp { app in
            let metadata = try await app.browser.request("/.well-known/openid-configuration").json
            let endpoints = try #require(metadata["native_authentication_endpoints"]?.objectValue)
            #expect(endpoints.count == NativeAuthEndpoint.allCases.count)
            #expect(endpoints["signup_start"]?.stringValue?.hasSuffix("/signup/v1.0/start") == true)
            #expect(metadata["native_authentication_openapi"] != nil)
        }
    }
}

@Suite("Native sign-in settings")
struct NativeAuthSettingsTests {
    @Test("sign-up attributes come from the config file as a JSON array, or from the environment as JSON text")
    func attributesFromConfiguration() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"signup_attributes": [{"name": "givenName", "required": true}, {"name": "city", "page": 2}], "otp_length": 6}"#.utf8)
            .write(to: file)
        let configuration = try ConfigurationLoader(flags: ["config": file.path], environment: [:]).configuration()
        #expect(configuration.nativeAuth.codeLength == 6)
        #expect(configuration.nativeAuth.signUpAttributes.attributes.map(\.claim) == ["given_name", "address.locality"])
        #expect(configuration.nativeAuth.signUpAttributes.attributes.map(\.required) == [true, false])

        let fromEnvironment = try ConfigurationLoader(flags: [:], environment: [
            "TESSERA_SIGNUP_ATTRIBUTES": #"[{"name": "birthdate", "required": true}]"#, "TESSERA_SIGNUP_PASSWORD": "required",
            "TESSERA_OTP_RESEND_INTERVAL": "2m",
        ]).configuration()
        let birthdate = try #require(fromEnvironment.nativeAuth.signUpAttributes.attributes.first)
        #expect(birthdate.name == "birthdate" && birthdate.type == "date" && birthdate.required && birthdate.pattern == nil)
        #expect(fromEnvironment.nativeAuth.signUpPasswordRequired && fromEnvironment.nativeAuth.resendInterval == 120)
    }

    @Test("attributes that can't be stored, and out-of-range code settings, are refused at start with a reason")
    func badSettings() {
        for (json, reason) in [(#"[{"name": "email"}]"#, "not a profile claim"), (#"[{"name": "pet"}]"#, "not a profile claim"),
                               (#"[{"name": "given_name"}, {"name": "givenName"}]"#, "two attributes fill"),
                               (#"[{"name": "city", "pattern": "("}]"#, "not a valid regular expression"),
                               (#"{"name": "city"}"#, "JSON array"), (#"[{"name": "city", "page": 0}]"#, "start at 1")] {
            #expect(throws: ConfigurationError.self, "\(json)") {
                do { _ = try SignUpAttributes(json: json) } catch let error as ConfigurationError {
                    #expect(error.description.contains(reason), "\(error)")
                    throw error
                }
            }
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader(flags: [:], environment: ["TESSERA_OTP_LENGTH": "4"]).configuration()
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader(flags: [:], environment: ["TESSERA_SIGNUP_PASSWORD": "sometimes"]).configuration()
        }
    }
}
