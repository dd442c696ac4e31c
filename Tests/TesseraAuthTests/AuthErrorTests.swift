import Foundation
import Testing
@testable import TesseraAuthCore
import TesseraAuthFirebase
import TesseraAuthMSAL
import TesseraCore

/// A refusal as the native API, email links or the account API send it.
private func refusal(_ error: String, _ suberror: String? = nil, codes: [Int] = [], description: String? = nil) -> AuthError {
    AuthError(refusal: error, description: description, suberror: suberror, errorCodes: codes, httpStatus: 400)
}

@Suite("AuthError: one error with stable codes")
struct AuthErrorCodeTests {
    @Test("each refusal the SDK recognises gets its code; the wire error stays readable", arguments: [
        (refusal("invalid_grant", codes: [50126]), AuthError.Code.invalidCredentials),
        (refusal("wrong_password"), .invalidCredentials),
        (refusal("invalid_grant", "password_too_short"), .invalidPassword),
        (refusal("invalid_grant", "password_banned", codes: [399246]), .invalidPassword),
        (refusal("password_too_weak"), .invalidPassword),
        (refusal("invalid_grant", "invalid_oob_value"), .invalidCode),
        (refusal("wrong_code"), .invalidCode),
        (refusal("invalid_grant", "attribute_validation_failed"), .invalidAttributes),
        (refusal("user_not_found", codes: [50034]), .userNotFound),
        (refusal("invalid_grant", codes: [50034]), .userNotFound),
        (refusal("user_already_exists"), .userAlreadyExists),
        (refusal("invalid_request", codes: [90100], description: "AADSTS90100: username parameter is empty or not valid."), .invalidEmail),
        (refusal("invalid_request", codes: [90100], description: "The email parameter is not valid."), .invalidEmail),
        (refusal("invalid_address"), .invalidEmail),
        (refusal("invalid_request", codes: [90100], description: "scope is missing"), .oauth),
        (refusal("invalid_client", "nativeauthapi_disabled"), .browserRequired),
        (refusal("invalid_grant", "browser_required", codes: [50076]), .browserRequired),
        (refusal("invalid_grant", "registration_required", codes: [50079]), .browserRequired),
        (refusal("invalid_grant", "mfa_required", codes: [50076]), .oauth),
        (refusal("invalid_grant", "user_locked", codes: [50053]), .accountLocked),
        (refusal("invalid_grant", "user_disabled", codes: [50057]), .accountDisabled),
        (refusal("expired_token"), .flowExpired),
        (refusal("expired_change"), .flowExpired),
        (refusal("slow_down"), .slowDown),
        (refusal("too_many_codes"), .slowDown),
        (refusal("password_throttled"), .slowDown),
        (refusal("invalid_grant", "invalid_oob_code"), .invalidLink),
        (refusal("invalid_grant", "expired_oob_code"), .linkExpired),
        (refusal("invalid_grant", "invalid_email"), .emailMismatch),
        (refusal("credential_already_in_use"), .emailInUse),
        (refusal("user_mismatch"), .userMismatch),
        (refusal("invalid_token"), .invalidToken),
        (refusal("invalid_claims"), .invalidClaims),
        (refusal("insufficient_user_authentication"), .insufficientUserAuthentication),
        (refusal("last_way_in"), .lastWayIn),
        (refusal("invalid_passkey"), .invalidPasskey),
        (refusal("invalid_grant", "invalid_passkey"), .invalidPasskey),
        (refusal("invalid_grant"), .oauth),
        (refusal("server_error"), .oauth),
    ])
    func classified(error: AuthError, expected: AuthError.Code) {
        #expect(error.code == expected, "\(error)")
        #expect(error.serverError == error.oauthError?.code.rawValue && error.serverError != nil)
    }

    @Test("only the token endpoint's invalid_grant ends a session")
    func invalidGrant() {
        #expect(AuthError.oauth(OAuthError(.invalidGrant, "revoked")).isInvalidGrant)
        #expect(!refusal("invalid_grant", codes: [50126]).isInvalidGrant, "a wrong password is no revoked session")
    }

    @Test("the description names the code, the wire error, the suberror and the codes")
    func description() {
        let error = refusal("invalid_grant", "invalid_oob_value", codes: [50181], description: "The code is wrong.")
        #expect(error.description == "invalidCode: invalid_grant (invalid_oob_value) [50181]: The code is wrong.")
        #expect(AuthError(.stateAlreadyUsed, "used").description == "stateAlreadyUsed: used")
    }

    @Test("a native error body fills every detail")
    func nativeBody() throws {
        let body = #"{"error":"slow_down","error_description":"Wait.","error_codes":[50196],"correlation_id":"c-1","trace_id":"t-1","retry_after":7,"continuation_token":"ct"}"#
        let answer = try JSONDecoder().decode(NativeAuthErrorAnswer.self, from: Data(body.utf8))
        let error = AuthError(serverError: answer, status: 400, headers: ["retry-after": "30"], correlationID: "header-id")
        #expect(error.code == .slowDown && error.retryAfter == 7 && error.correlationID == "c-1" && error.traceID == "t-1")
        #expect(error.errorCodes == [50196] && error.httpStatus == 400 && error.continuationToken == "ct" && error.keepsFlow)
    }

    @Test("anything else thrown inside a flow becomes an AuthError")
    func wrapping() {
        #expect(AuthError(CancellationError()).code == .cancelled)
        #expect(AuthError(AuthError(.network, "offline")).code == .network)
        struct Odd: Error {}
        #expect(AuthError(Odd()).code == .invalidResponse)
    }
}

@Suite("The vendor layers read AuthError")
struct VendorErrorViewTests {
    @Test("Firebase's EmailLinkError codes", arguments: [
        (refusal("invalid_grant", "invalid_oob_code"), EmailLinkError.Code.invalidActionCode),
        (refusal("invalid_grant", "expired_oob_code"), .expiredActionCode),
        (refusal("invalid_grant", "invalid_email"), .invalidEmail),
        (refusal("credential_already_in_use"), .credentialAlreadyInUse),
        (refusal("user_mismatch"), .userMismatch),
        (refusal("invalid_token"), .invalidUserToken),
        (AuthError(.notSignedIn, "signed out"), .invalidUserToken),
        (refusal("invalid_request", "unauthorized_continue_uri"), .unauthorizedContinueURI),
        (refusal("invalid_request"), .invalidRequest),
        (refusal("slow_down"), .tooManyRequests),
        (refusal("unauthorized_client"), .invalidClient),
        (AuthError(.network, "offline"), .networkError),
        (AuthError(.cancelled, "cancelled"), .cancelled),
        (refusal("server_error"), .internalError),
    ])
    func firebase(error: AuthError, expected: EmailLinkError.Code) {
        let view = EmailLinkError(error)
        #expect(view.code == expected && view.underlying == error)
    }

    @Test("MSAL's predicates")
    func msal() {
        #expect(SignInStartError(refusal("invalid_grant", codes: [50126])).isInvalidCredentials)
        #expect(SignInStartError(refusal("invalid_grant", codes: [50126])).isInvalidPassword, "MSAL's sign-in calls a wrong password invalid too")
        #expect(SignUpStartError(refusal("invalid_grant", "password_too_short")).isInvalidPassword)
        #expect(!SignUpStartError(refusal("invalid_grant", "password_too_short")).isUserAlreadyExists)
        #expect(ResetPasswordStartError(refusal("user_not_found")).isUserNotFound)
        #expect(VerifyCodeError(refusal("invalid_grant", "invalid_oob_value")).isInvalidCode)
        #expect(MFAError(refusal("invalid_grant", "invalid_oob_value")).isInvalidChallenge)
        #expect(PasswordRequiredError(AuthError(.passwordResetFailed, "failed")).isPasswordResetFailed)
        let slow = ResendCodeError(refusal("slow_down"))
        #expect(slow.isSlowDown && slow.error == "slow_down")
        let redirect = SignInStartError(AuthError(.browserRequired, "continue in the browser"))
        #expect(redirect.isBrowserRequired && redirect.error == "browserRequired")
    }
}

@Suite("EmailLinkOptions")
struct EmailLinkOptionsTests {
    @Test("the form of /emaillink/v1.0/send, and Firebase's ActionCodeSettings map onto it")
    func parameters() {
        let url = URL(string: "https://shop.example.com/finish?cart=1")!
        let options = EmailLinkOptions(continueURL: url, iOSBundleID: "com.example.shop", androidPackageName: "com.example.shop",
                                       androidMinimumVersion: "12")
        #expect(options.handledInApp, "a continue URL means the app completes the sign-in")
        #expect(options.parameters.map { "\($0.0)=\($0.1)" } == [
            "continue_url=https://shop.example.com/finish?cart=1", "handle_code_in_app=true", "ios_bundle_id=com.example.shop",
            "android_package_name=com.example.shop", "android_install_app=false", "android_minimum_version=12",
        ])
        #expect(EmailLinkOptions().parameters.map { "\($0.0)=\($0.1)" } == ["handle_code_in_app=false"])
        var settings = ActionCodeSettings(url: url, handleCodeInApp: true)
        settings.setIOSBundleID("com.example.shop")
        settings.setAndroidPackageName("com.example.shop", installIfNotAvailable: false, minimumVersion: "12")
        #expect(settings.options == options)
    }

    @Test("Firebase's User spellings read the user's claims")
    func userSpellings() throws {
        let user = try #require(AuthUser(idToken: nil, userInfo: UserInfo(claims: ["sub": "u-1", "email_verified": true, "name": "Ann"])))
        #expect(user.isEmailVerified == user.emailVerified && user.isEmailVerified && user.displayName == "Ann")
    }
}

@Suite("The account API's refusals are AuthErrors")
struct AccountRefusalTests {
    @Test("a JSON refusal keeps its claims and max_age; a bare bearer challenge is read too; a refused refresh ends the session")
    func refusals() {
        let body = #"{"error":"invalid_claims","error_description":"Some claims are not valid.","invalid_claims":{"birthdate":"must be a date"}}"#
        let claims = AccountClient.refusal(HTTPTransportResponse(status: 400, headers: [:], body: Data(body.utf8)), "PATCH /profile")
        #expect(claims.code == .invalidClaims && claims.invalidClaims == ["birthdate": "must be a date"] && claims.httpStatus == 400)
        let recent = #"{"error":"insufficient_user_authentication","error_description":"Sign in again.","max_age":600}"#
        let stale = AccountClient.refusal(HTTPTransportResponse(status: 401, headers: [:], body: Data(recent.utf8)), "DELETE /account")
        #expect(stale.code == .insufficientUserAuthentication && stale.maxAge == 600 && stale.reason == "Sign in again.")
        let challenge = AccountClient.refusal(HTTPTransportResponse(status: 401, headers: ["www-authenticate": #"Bearer error="invalid_token""#],
                                                                    body: Data()), "GET /profile")
        #expect(challenge.code == .invalidToken && challenge.serverError == "invalid_token")
        let html = AccountClient.refusal(HTTPTransportResponse(status: 502, headers: [:], body: Data("<html>".utf8)), "GET /profile")
        #expect(html.code == .invalidResponse && html.httpStatus == 502)
        #expect(AccountClient.sessionError(AuthError.oauth(OAuthError(.invalidGrant, "revoked"))).code == .notSignedIn)
        #expect(AccountClient.sessionError(AuthError(.network, "offline")).code == .network)
    }
}
