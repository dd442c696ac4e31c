/// The native sign-in API's endpoints (Microsoft Entra's native authentication protocol):
/// each by its name in discovery's `native_authentication_endpoints`, with its path under
/// the issuer. The server routes and announces them from here; the SDK reads them back.
public enum NativeAuthEndpoint: String, Sendable, CaseIterable {
    /// `/signup/v1.0/start`: starts a sign-up for an email address.
    case signUpStart = "signup_start"
    /// `/signup/v1.0/challenge`: emails the sign-up code, or asks for the password.
    case signUpChallenge = "signup_challenge"
    /// `/signup/v1.0/continue`: the code, the password or the attributes; the last one completes the sign-up.
    case signUpContinue = "signup_continue"
    /// `/oauth2/v2.0/initiate`: starts a sign-in for an email address.
    case signInInitiate = "signin_initiate"
    /// `/oauth2/v2.0/challenge`: asks for the password or emails a code; with `id`, picks a second factor.
    case signInChallenge = "signin_challenge"
    /// `/oauth2/v2.0/introspect`: the second factors the person can give, after `mfa_required`.
    case signInIntrospect = "signin_introspect"
    /// `/passkey/v1.0/options`: WebAuthn's request options for signing in with a passkey.
    case passkeyOptions = "passkey_options"
    /// `/passkey/v1.0/signin`: a passkey's answer (`credential`) for tokens.
    case passkeySignIn = "passkey_signin"
    /// `/oauth2/v2.0/token`: tokens for a finished step (a password, a code, a second factor, a continuation token) or a refresh token.
    case token = "token"
    /// `/resetpassword/v1.0/start`: starts a password reset for an email address.
    case resetStart = "resetpassword_start"
    /// `/resetpassword/v1.0/challenge`: emails the reset code.
    case resetChallenge = "resetpassword_challenge"
    /// `/resetpassword/v1.0/continue`: the code from the email.
    case resetContinue = "resetpassword_continue"
    /// `/resetpassword/v1.0/submit`: sets the new password.
    case resetSubmit = "resetpassword_submit"
    /// `/resetpassword/v1.0/poll_completion`: whether the reset is done (Tessera always answers `succeeded`).
    case resetPollCompletion = "resetpassword_poll_completion"

    /// The path under the issuer, as Entra names it.
    public var path: String {
        switch self {
        case .signUpStart: "/signup/v1.0/start"
        case .signUpChallenge: "/signup/v1.0/challenge"
        case .signUpContinue: "/signup/v1.0/continue"
        case .signInInitiate: "/oauth2/v2.0/initiate"
        case .signInChallenge: "/oauth2/v2.0/challenge"
        case .signInIntrospect: "/oauth2/v2.0/introspect"
        case .passkeyOptions: "/passkey/v1.0/options"
        case .passkeySignIn: "/passkey/v1.0/signin"
        case .token: "/oauth2/v2.0/token"
        case .resetStart: "/resetpassword/v1.0/start"
        case .resetChallenge: "/resetpassword/v1.0/challenge"
        case .resetContinue: "/resetpassword/v1.0/continue"
        case .resetSubmit: "/resetpassword/v1.0/submit"
        case .resetPollCompletion: "/resetpassword/v1.0/poll_completion"
        }
    }
}

/// Paths under the issuer of Tessera's endpoints beyond OpenID Connect's, each announced in
/// discovery by the ``ProviderMetadata`` member named beside it.
public enum TesseraPath {
    /// `native_authentication_openapi`: the OpenAPI description of the native API.
    public static let nativeAuthOpenAPI = "/openapi/native-auth.json"
    /// The admin API's OpenAPI document.
    public static let adminOpenAPI = "/openapi/admin.json"
    /// `email_link_send_endpoint`.
    public static let emailLinkSend = "/emaillink/v1.0/send"
    /// `email_link_complete_endpoint`.
    public static let emailLinkComplete = "/emaillink/v1.0/complete"
    /// `account_providers_endpoint`: how the signed-in user can sign in (first-party apps).
    public static let accountProviders = "/account/v1.0/providers"
    /// `account_api_endpoint`: the account API's root (docs/account.md); its resources below.
    public static let accountAPI = "/account/v1.0"
    /// The signed-in user's profile: `GET`, `PATCH` (a JSON merge patch of claims).
    public static let accountProfile = "/account/v1.0/profile"
    /// The password: `POST` sets or changes it, `DELETE` removes it.
    public static let accountPassword = "/account/v1.0/password"
    /// The address: `POST` mails a code to a new one; `POST …/email/confirm` with the code moves the account there.
    public static let accountEmail = "/account/v1.0/email"
    /// The browser sessions: `GET` lists them; `DELETE …/sessions/{id}` ends one.
    public static let accountSessions = "/account/v1.0/sessions"
    /// The account's passkeys: list, `/options` to make one, add, `DELETE …/{id}`.
    public static let accountPasskeys = "/account/v1.0/passkeys"
    /// The account itself: `DELETE` deletes it (a recent sign-in required).
    public static let account = "/account/v1.0/account"
    /// `pushed_authorization_request_endpoint` (RFC 9126).
    public static let pushedAuthorizationRequest = "/authorize/v1.0/par"
    /// `pushed_request_details_endpoint`: what a pushed request asks for, for an authenticator app.
    public static let authorizationDetails = "/authorize/v1.0/details"
    /// `authorization_approval_endpoint`: an authenticator app approves or denies a pushed request.
    public static let authorizationApproval = "/authorize/v1.0/approve"
    /// `handoff_endpoint`: an authenticator app asks for a hand-off ticket for a partner app.
    public static let handoff = "/authorize/v1.0/handoff"
}
