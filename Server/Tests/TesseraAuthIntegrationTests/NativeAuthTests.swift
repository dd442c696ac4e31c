import Foundation
import Testing
import TesseraAuth
import TesseraAuthMSAL
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain

/// Attributes the sign-up collects in these tests: a name, and a city of letters.
let nativeSignUpAttributes = #"[{"name": "given_name", "required": true}, {"name": "city", "required": true, "pattern": "[A-Za-z -]+"}]"#
let newPassword = "purple monkey dishwasher 7"

extension LiveProvider {
    /// The SDK's native client for the public first-party client `cli`.
    func nativeClient(challengeTypes: [NativeAuthChallengeType] = [.oob, .password, .redirect]) -> NativeAuthClient {
        NativeAuthClient(issuer: issuer, clientID: "cli", challengeTypes: challengeTypes, transport: transport)
    }

    /// The one-time code in the newest email to `email`, read from the server's outbox.
    func code(for email: String) async throws -> String {
        let message = try #require(try await provider.store.outboxMessages(recipient: email, limit: 1).first)
        let match = try #require(message.text.firstMatch(of: /\b(\d{8})\b/), "no code in: \(message.text)")
        return String(match.1)
    }
}

/// A code that is not `code`.
func wrongCode(_ code: String) -> String { code == "00000000" ? "11111111" : "00000000" }

@Suite("Native sign-in through the SDK against the provider")
struct NativeAuthTests {
    @Test("sign-up by code with required attributes, then sign-in after sign-up gives a validated ID token")
    func signUpByCodeWithAttributes() async throws {
        try await withLiveProvider(configure: { $0.nativeAuth.signUpAttributes = try! SignUpAttributes(json: nativeSignUpAttributes) }) { live in
            let client = live.nativeClient()
            let email = "anna@example.com"
            guard case .error(let invalid) = await client.signUp(username: email, attributes: ["city": "<script>"]) else {
                Issue.record("an invalid attribute at start must fail"); return
            }
            #expect(invalid.code == .invalidAttributes && invalid.invalidAttributes == ["city"])

            guard case .codeRequired(let codeState, let sentTo, let channel, let codeLength) = await client.signUp(username: email) else {
                Issue.record("sign-up must ask for a code"); return
            }
            #expect(sentTo.contains("***") && !sentTo.contains("anna@") && channel == .email && codeLength == 8)
            let code = try await live.code(for: email)
            guard case .error(let wrong, let retry?) = await codeState.submitCode(wrongCode(code)) else {
                Issue.record("a wrong code must fail with a state to retry"); return
            }
            #expect(wrong.code == .invalidCode && wrong.correlationID != nil)

            guard case .attributesRequired(let attributesState, let required) = await retry.submitCode(code) else {
                Issue.record("the right code must lead to the attributes"); return
            }
            #expect(required.map(\.name) == ["given_name", "city"])
            #expect(required.last == AttributeRequirement(name: "city", type: "string", required: true, regex: "[A-Za-z -]+"))
            guard case .attributesRequired(let cityState, let stillRequired) = await attributesState.submitAttributes(["given_name": "Anna"]) else {
                Issue.record("city is still required"); return
            }
            #expect(stillRequired.map(\.name) == ["city"])
            guard case .attributesInvalid(let fixState, let names) = await cityState.submitAttributes(["city": "Lon<don"]) else {
                Issue.record("an invalid city must be refused"); return
            }
            #expect(names == ["city"])
            guard case .completed(let signInState) = await fixState.submitAttributes(["city": "London"]) else {
                Issue.record("the sign-up must complete"); return
            }
            guard case .completed(let result) = await signInState.signIn() else { Issue.record("sign-in after sign-up failed"); return }
            let idToken = try #require(result.idToken)
            #expect(idToken.audience == ["cli"] && idToken.issuer == live.issuer.absoluteString)
            #expect(idToken.claims["given_name"] == "Anna" && idToken.authenticationMethods == ["otp"])
            let user = try #require(result.user)
            #expect(user.email == email && user.emailVerified && user.givenName == "Anna")
            #expect(result.tokens.refreshToken != nil && result.tokens.clientID == "cli")
            // The native endpoints came from the one discovery fetch that ID-token validation uses.
            #expect(live.transport.count("GET", "/.well-known/openid-configuration") == 1)
        }
    }

    @Test("sign-up with a password up front, and with the password asked for after the code; the policy is enforced")
    func signUpWithPassword() async throws {
        try await withLiveProvider(configure: { $0.nativeAuth.signUpPasswordRequired = true }) { live in
            let client = live.nativeClient()
            guard case .error(let weak) = await client.signUp(username: "bob@example.com", password: "short") else {
                Issue.record("a short password must be refused"); return
            }
            #expect(weak.code == .invalidPassword && weak.suberror == "password_too_short")

            guard case .codeRequired(let state, _, _, _) = await client.signUp(username: "bob@example.com", password: newPassword),
                  case .completed(let done) = await state.submitCode(try await live.code(for: "bob@example.com")),
                  case .completed(let signedUp) = await done.signIn() else {
                Issue.record("sign-up with a password failed"); return
            }
            #expect(signedUp.user?.email == "bob@example.com")
            guard case .completed(let signedIn) = await client.signIn(username: "bob@example.com", password: newPassword) else {
                Issue.record("password sign-in after sign-up failed"); return
            }
            #expect(signedIn.idToken?.authenticationMethods == ["pwd"] && signedIn.user?.uid == signedUp.user?.uid)

            // Without a password at start, the server asks for one after the code (credential_required).
            guard case .codeRequired(let carolCode, _, _, _) = await client.signUp(username: "carol@example.com"),
                  case .passwordRequired(let passwordState) = await carolCode.submitCode(try await live.code(for: "carol@example.com")) else {
                Issue.record("the server must ask for a password"); return
            }
            guard case .error(let banned, let retry?) = await passwordState.submitPassword("password") else {
                Issue.record("a common password must be refused with a state to retry"); return
            }
            #expect(banned.code == .invalidPassword && banned.suberror == "password_banned")
            guard case .completed(let carolDone) = await retry.submitPassword(newPassword),
                  case .completed = await carolDone.signIn() else {
                Issue.record("sign-up with the password asked for failed"); return
            }
        }
    }

    @Test("sign-in by password: a wrong password is invalidCredentials; the session refreshes through AuthState")
    func signInByPassword() async throws {
        try await withLiveProvider { live in
            let client = live.nativeClient()
            guard case .error(let wrong) = await client.signIn(username: aliceEmail, password: "wrong horse battery") else {
                Issue.record("a wrong password must fail"); return
            }
            #expect(wrong.code == .invalidCredentials && wrong.errorCodes == [50126] && wrong.serverError == "invalid_grant")

            // Without a password the server asks for it (Alice has one).
            guard case .passwordRequired(let state) = await client.signIn(username: aliceEmail) else {
                Issue.record("the server must ask for Alice's password"); return
            }
            guard case .error(let again, let retry?) = await state.submitPassword("still wrong!") else {
                Issue.record("a wrong password must fail with a state to retry"); return
            }
            #expect(again.code == .invalidCredentials)
            guard case .completed(let result) = await retry.submitPassword(alicePassword) else { Issue.record("sign-in failed"); return }
            #expect(result.user?.email == aliceEmail && result.user?.name == "Alice Example")
            #expect(result.idToken?.authenticationMethods == ["pwd"])

            let session = AuthState(client: client.oidc)
            try await session.adopt(result)
            let refreshed = try await session.refresh()
            #expect(refreshed.refreshToken != result.tokens.refreshToken && refreshed.accessToken != result.tokens.accessToken)
        }
    }

    @Test("two-step verification: the password answers mfaRequired; the methods, the app's code (a wrong one retried), both factors in amr")
    func secondFactor() async throws {
        try await withLiveProvider { live in
            // Alice sets up an authenticator app, as the account page does.
            let alice = try #require(try await live.provider.store.user(email: aliceEmail))
            let enrolment = try await live.provider.secondFactors.startTOTP(for: alice)
            let app = TOTP(secret: try #require(TOTPSecret(base32: enrolment.secret)))
            let now = Int64(Date().timeIntervalSince1970)
            _ = try await live.provider.secondFactors.confirmTOTP(for: alice, code: app.code(forStep: app.step(at: now)))

            let client = live.nativeClient()
            guard case .mfaRequired(let required) = await client.signIn(username: aliceEmail, password: alicePassword) else {
                Issue.record("a right password must ask for the second factor"); return
            }
            #expect(required.username == aliceEmail)
            guard case .selectionRequired(let methods, let chooser) = await required.getAuthMethods() else {
                Issue.record("the methods must be listed"); return
            }
            #expect(methods == [.authenticatorApp, .recoveryCode])
            guard case .error(let spent, nil) = await required.getAuthMethods() else { Issue.record("a state works once"); return }
            #expect(spent.code == .stateAlreadyUsed)
            guard case .verificationRequired(let awaiting, let channel, let codeLength) = await chooser.requestChallenge(authMethod: .authenticatorApp) else {
                Issue.record("choosing the app must ask for its code"); return
            }
            #expect(channel == .authenticatorApp && codeLength == 6)
            let right = app.code(forStep: app.step(at: now) + 1)
            guard case .error(let wrong, let retry?) = await awaiting.submitChallenge(right == "000000" ? "111111" : "000000") else {
                Issue.record("a wrong code must fail with a state to retry"); return
            }
            #expect(wrong.code == .invalidCode)
            guard case .completed(let result) = await retry.submitChallenge(right) else { Issue.record("the right code must sign in"); return }
            #expect(result.user?.email == aliceEmail)
            #expect(result.idToken?.authenticationMethods == ["pwd", "otp", "mfa"])
        }
    }

    @Test("sign-in by code: a wrong code is invalidCode, then the right code signs in")
    func signInByCode() async throws {
        try await withLiveProvider { live in
            let client = live.nativeClient(challengeTypes: [.oob, .redirect])
            guard case .codeRequired(let state, _, let channel, let codeLength) = await client.signIn(username: aliceEmail) else {
                Issue.record("sign-in must ask for a code"); return
            }
            #expect(channel == .email && codeLength == 8)
            let code = try await live.code(for: aliceEmail)
            guard case .error(let wrong, let retry?) = await state.submitCode(wrongCode(code)) else {
                Issue.record("a wrong code must fail with a state to retry"); return
            }
            #expect(wrong.code == .invalidCode && wrong.suberror == "invalid_oob_value")
            guard case .completed(let result) = await retry.submitCode(code) else { Issue.record("the right code must sign in"); return }
            #expect(result.user?.email == aliceEmail && result.idToken?.authenticationMethods == ["otp"])
        }
    }

    @Test("resend: too early is slow_down with retryAfter; after the interval a new code replaces the old one")
    func resendCode() async throws {
        // Three seconds: the server counts whole seconds, and a loaded machine may take one between two requests.
        try await withLiveProvider(configure: { $0.nativeAuth.resendInterval = 3 }) { live in
            let client = live.nativeClient(challengeTypes: [.oob, .redirect])
            guard case .codeRequired(let state, _, _, _) = await client.signIn(username: aliceEmail) else {
                Issue.record("sign-in must ask for a code"); return
            }
            let first = try await live.code(for: aliceEmail)
            guard case .error(let early, let waiting?) = await state.resendCode() else {
                Issue.record("an immediate resend must be slow_down with a state to retry"); return
            }
            #expect(early.code == .slowDown && (1...3).contains(early.retryAfter ?? 0))
            try await Task.sleep(for: .milliseconds(3200))
            let after = await waiting.resendCode()
            guard case .codeRequired(let resent, _, _, let codeLength) = after else {
                Issue.record("a resend after the interval must send a code, not \(after)"); return
            }
            #expect(codeLength == 8)
            let second = try await live.code(for: aliceEmail)
            var current = resent
            if second != first {
                guard case .error(let old, let retry?) = await resent.submitCode(first) else {
                    Issue.record("the old code must no longer work"); return
                }
                #expect(old.code == .invalidCode)
                current = retry
            }
            guard case .completed = await current.submitCode(second) else { Issue.record("the new code must sign in"); return }
        }
    }

    @Test("password reset end to end, then sign-in after reset and with the new password; the old one fails")
    func resetPassword() async throws {
        try await withLiveProvider { live in
            let client = live.nativeClient()
            guard case .codeRequired(let codeState, let sentTo, _, _) = await client.resetPassword(username: aliceEmail) else {
                Issue.record("the reset must ask for a code"); return
            }
            #expect(!sentTo.isEmpty)
            guard case .passwordRequired(let passwordState) = await codeState.submitCode(try await live.code(for: aliceEmail)) else {
                Issue.record("the right code must ask for the new password"); return
            }
            guard case .error(let weak, let retry?) = await passwordState.submitPassword("aaaaaaaaaa") else {
                Issue.record("a weak password must be refused with a state to retry"); return
            }
            #expect(weak.code == .invalidPassword && weak.suberror == "password_too_weak")
            guard case .completed(let afterReset) = await retry.submitPassword(newPassword) else {
                Issue.record("the reset must complete"); return
            }
            guard case .completed(let signedIn) = await afterReset.signIn() else { Issue.record("sign-in after reset failed"); return }
            #expect(signedIn.user?.email == aliceEmail)

            guard case .completed = await client.signIn(username: aliceEmail, password: newPassword) else {
                Issue.record("the new password must work"); return
            }
            guard case .error(let old) = await client.signIn(username: aliceEmail, password: alicePassword) else {
                Issue.record("the old password must fail"); return
            }
            #expect(old.code == .invalidCredentials)
        }
    }

    @Test("with enumeration protection off: userAlreadyExists and userNotFound; a bad address is invalidEmail")
    func enumerationProtectionOff() async throws {
        try await withLiveProvider(configure: { $0.enumerationProtection = false }) { live in
            let client = live.nativeClient()
            guard case .error(let exists) = await client.signUp(username: aliceEmail) else { Issue.record("Alice exists"); return }
            #expect(exists.code == .userAlreadyExists && exists.errorCodes == [1003037])
            guard case .error(let notFound) = await client.signIn(username: "nobody@example.com", password: "whatever it is") else {
                Issue.record("nobody has no account"); return
            }
            #expect(notFound.code == .userNotFound)
            guard case .error(let resetNotFound) = await client.resetPassword(username: "nobody@example.com") else {
                Issue.record("nobody has no account to reset"); return
            }
            #expect(resetNotFound.code == .userNotFound)
            guard case .error(let badName) = await client.signUp(username: "not an address") else { Issue.record("not an address"); return }
            #expect(badName.code == .invalidEmail && badName.serverError == "invalid_request")
        }
    }

    @Test("a flow the app can't finish without a browser says browserRequired")
    func browserRequired() async throws {
        try await withLiveProvider { live in
            // Sign-up always proves the address by code; an app that only handles passwords must use the browser.
            guard case .error(let error) = await live.nativeClient(challengeTypes: [.password]).signUp(username: "dan@example.com",
                                                                                                     password: newPassword) else {
                Issue.record("the sign-up must need the browser"); return
            }
            #expect(error.code == .browserRequired && error.serverError == nil)
        }
    }

    @Test("a spent state refuses reuse without sending its continuation token again, even to concurrent callers")
    func spentStateRefusesReuse() async throws {
        try await withLiveProvider { live in
            let client = live.nativeClient()
            guard case .codeRequired(let state, _, _, _) = await client.signUp(username: "erin@example.com") else {
                Issue.record("sign-up must ask for a code"); return
            }
            let code = try await live.code(for: "erin@example.com")
            guard case .completed(let done) = await state.submitCode(code) else { Issue.record("the code must complete the sign-up"); return }
            let continues = live.transport.count("POST", "/signup/v1.0/continue")
            guard case .error(let reused, let none) = await state.submitCode(code) else { Issue.record("a spent state must refuse"); return }
            #expect(reused.code == .stateAlreadyUsed && none == nil)
            guard case .error(let resend, nil) = await state.resendCode() else { Issue.record("a spent state must refuse a resend"); return }
            #expect(resend.code == .stateAlreadyUsed)
            #expect(live.transport.count("POST", "/signup/v1.0/continue") == continues)

            // Two callers at once on one state: one request, one refusal.
            async let first = done.signIn()
            async let second = done.signIn()
            let results = await [first, second]
            let completed = results.filter { if case .completed = $0 { true } else { false } }.count
            let refused = results.filter { if case .error(let error) = $0 { error.code == .stateAlreadyUsed } else { false } }.count
            #expect(completed == 1 && refused == 1)
            #expect(live.transport.count("POST", "/oauth2/v2.0/token") == 1)
        }
    }

    @Test("the MSAL-style delegates get the right callbacks for one sign-up")
    func delegateSignUp() async throws {
        try await withLiveProvider(configure: { $0.nativeAuth.signUpAttributes = try! SignUpAttributes(json: nativeSignUpAttributes) }) { live in
            let client = live.nativeClient()
            let recorder = await SignUpRecorder()
            await client.signUp(parameters: NativeAuthSignUpParameters(username: "fay@example.com", attributes: ["city": "1"]),
                                delegate: recorder).value
            var parameters = MSALNativeAuthSignUpParameters(username: "fay@example.com")
            parameters.attributes = ["given_name": "Fay", "city": "Paris"]
            await client.signUp(parameters: parameters, delegate: recorder).value
            let codeState = try #require(await recorder.codeState)
            let code = try await live.code(for: "fay@example.com")
            await codeState.submitCode(code: wrongCode(code), delegate: recorder).value
            let retry = try #require(await recorder.retryState)
            await retry.submitCode(code: code, delegate: recorder).value
            let done = try #require(await recorder.completedState)
            await done.signIn(delegate: recorder).value
            #expect(await recorder.events == ["attributesInvalid [\"city\"]", "codeRequired 8", "verifyCodeError invalidCode=true",
                                              "signUpCompleted", "signInCompleted fay@example.com"])
        }
    }
}

/// An app's view controller, as MSAL's tutorial writes it: one object implementing the delegates.
@MainActor
final class SignUpRecorder: SignUpStartDelegate, SignUpVerifyCodeDelegate, SignInAfterSignUpDelegate {
    var events: [String] = []
    var codeState: SignUpCodeRequiredState?
    var retryState: SignUpCodeRequiredState?
    var completedState: SignInAfterSignUpState?

    init() {}

    func onSignUpStartError(error: SignUpStartError) { events.append("startError \(error.error)") }

    func onSignUpCodeRequired(newState: SignUpCodeRequiredState, sentTo: String, channelTargetType: MSALNativeAuthChannelType, codeLength: Int) {
        codeState = newState
        events.append("codeRequired \(codeLength)")
    }

    func onSignUpAttributesInvalid(attributeNames: [String]) { events.append("attributesInvalid \(attributeNames)") }

    func onSignUpVerifyCodeError(error: VerifyCodeError, newState: SignUpCodeRequiredState?) {
        retryState = newState
        events.append("verifyCodeError invalidCode=\(error.isInvalidCode)")
    }

    func onSignUpCompleted(newState: SignInAfterSignUpState) {
        completedState = newState
        events.append("signUpCompleted")
    }

    func onSignInAfterSignUpError(error: SignInAfterSignUpError) { events.append("signInError \(error.error)") }

    func onSignInCompleted(result: AuthorizationResult) { events.append("signInCompleted \(result.user?.email ?? "")") }
}
