/// A successful token response (RFC 6749 §5.1, OpenID Connect Core §3.1.3.3).
public struct TokenResponse: Codable, Sendable, Equatable {
    /// `access_token` (RFC 6749 §5.1).
    public var accessToken: String
    /// `token_type` (RFC 6749 §5.1, §7.1): `Bearer` for Tessera's tokens.
    public var tokenType: String
    /// `expires_in` (RFC 6749 §5.1): the access token's lifetime in seconds; nil when not stated.
    public var expiresIn: Int?
    /// `refresh_token` (RFC 6749 §5.1); nil when none was issued.
    public var refreshToken: String?
    /// `id_token` (OpenID Connect Core §3.1.3.3): the ID token, a compact JWS; nil when none was issued.
    public var idToken: String?
    /// `scope` (RFC 6749 §5.1): the granted scopes, space-delimited; nil when they are the ones requested.
    public var scope: String?
    /// RFC 8693 §2.2.1, in token-exchange answers.
    public var issuedTokenType: String?
    /// Tessera's token-exchange and email-link answers: whether the sign-in created the account.
    public var isNewUser: Bool?
    /// Tessera's email-link answers: the address of the account signed in.
    public var email: String?
    /// OpenID Connect Native SSO: the secret of the device session, which the vendor's other
    /// apps on the device exchange (with the ID token) for their own tokens.
    public var deviceSecret: String?

    /// Makes a token response; `token_type` defaults to `Bearer`.
    public init(accessToken: String, tokenType: String = "Bearer", expiresIn: Int? = nil,
                refreshToken: String? = nil, idToken: String? = nil, scope: String? = nil) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scope = scope
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case scope
        case issuedTokenType = "issued_token_type"
        case isNewUser = "is_new_user"
        case email
        case deviceSecret = "device_secret"
    }
}

/// Authorization server metadata (RFC 8414 §2, OpenID Connect Discovery §3).
public struct ProviderMetadata: Codable, Sendable, Equatable {
    /// `issuer` (OpenID Connect Discovery §3, RFC 8414 §2): the issuer identifier, an https URL.
    public var issuer: String
    /// `authorization_endpoint` (OpenID Connect Discovery §3).
    public var authorizationEndpoint: String
    /// `token_endpoint` (OpenID Connect Discovery §3).
    public var tokenEndpoint: String
    /// `userinfo_endpoint` (OpenID Connect Discovery §3); nil when not announced.
    public var userinfoEndpoint: String?
    /// `jwks_uri` (OpenID Connect Discovery §3): where the JWK Set of the signing keys is served.
    public var jwksURI: String
    /// `revocation_endpoint` (RFC 8414 §2, RFC 7009); nil when not announced.
    public var revocationEndpoint: String?
    /// `introspection_endpoint` (RFC 8414 §2, RFC 7662); nil when not announced.
    public var introspectionEndpoint: String?
    /// `end_session_endpoint` (OpenID Connect RP-Initiated Logout 1.0 §2.1); nil when not announced.
    public var endSessionEndpoint: String?
    /// `scopes_supported` (OpenID Connect Discovery §3).
    public var scopesSupported: [String]?
    /// `response_types_supported` (OpenID Connect Discovery §3), e.g. `code`.
    public var responseTypesSupported: [String]
    /// `response_modes_supported` (OpenID Connect Discovery §3); nil means `query` and `fragment`.
    public var responseModesSupported: [String]?
    /// `grant_types_supported` (OpenID Connect Discovery §3); nil means `authorization_code` and `implicit`.
    public var grantTypesSupported: [String]?
    /// `subject_types_supported` (OpenID Connect Discovery §3): `public` and/or `pairwise`.
    public var subjectTypesSupported: [String]?
    /// `id_token_signing_alg_values_supported` (OpenID Connect Discovery §3): the JWS `alg` values ID tokens
    /// are signed with.
    public var idTokenSigningAlgValuesSupported: [String]?
    /// `token_endpoint_auth_methods_supported` (OpenID Connect Discovery §3); nil means `client_secret_basic`.
    public var tokenEndpointAuthMethodsSupported: [String]?
    /// `token_endpoint_auth_signing_alg_values_supported` (OpenID Connect Discovery §3): the `alg` values
    /// accepted for `private_key_jwt` and `client_secret_jwt`.
    public var tokenEndpointAuthSigningAlgValuesSupported: [String]?
    /// `revocation_endpoint_auth_methods_supported` (RFC 8414 §2); nil means `client_secret_basic`.
    public var revocationEndpointAuthMethodsSupported: [String]?
    /// `introspection_endpoint_auth_methods_supported` (RFC 8414 §2).
    public var introspectionEndpointAuthMethodsSupported: [String]?
    /// `code_challenge_methods_supported` (RFC 8414 §2): the PKCE methods, e.g. `S256`; nil means PKCE is not
    /// supported.
    public var codeChallengeMethodsSupported: [String]?
    /// `claims_supported` (OpenID Connect Discovery §3): the claim names the provider may release.
    public var claimsSupported: [String]?
    /// `claim_types_supported` (OpenID Connect Discovery §3); nil means `normal` only.
    public var claimTypesSupported: [String]?
    /// `prompt_values_supported` (OpenID Connect Initiating User Registration 1.0): the `prompt` values
    /// accepted, e.g. `create`.
    public var promptValuesSupported: [String]?
    /// `ui_locales_supported` (OpenID Connect Discovery §3): the BCP 47 language tags of the hosted pages.
    public var uiLocalesSupported: [String]?
    /// `claims_parameter_supported` (OpenID Connect Discovery §3): whether the `claims` parameter is
    /// accepted; nil means false.
    public var claimsParameterSupported: Bool?
    /// `request_parameter_supported` (OpenID Connect Discovery §3): whether the `request` parameter is
    /// accepted; nil means false.
    public var requestParameterSupported: Bool?
    /// `request_uri_parameter_supported` (OpenID Connect Discovery §3): whether the `request_uri` parameter
    /// is accepted; nil means true.
    public var requestURIParameterSupported: Bool?
    /// `authorization_response_iss_parameter_supported` (RFC 9207 §3): whether authorization responses carry
    /// `iss`; nil means false.
    public var authorizationResponseIssParameterSupported: Bool?
    /// `frontchannel_logout_supported` (OpenID Connect Front-Channel Logout 1.0 §3); nil means false.
    public var frontchannelLogoutSupported: Bool?
    /// `backchannel_logout_supported` (OpenID Connect Back-Channel Logout 1.0 §2.1); nil means false.
    public var backchannelLogoutSupported: Bool?

    // Tessera's own members.

    /// The native sign-in API's endpoint URLs by ``NativeAuthEndpoint`` name.
    public var nativeAuthenticationEndpoints: [String: String]?
    /// Where the native API's OpenAPI description is served.
    public var nativeAuthenticationOpenAPI: String?
    /// `email_link_send_endpoint`: where a sign-in link is mailed to an address.
    public var emailLinkSendEndpoint: String?
    /// `email_link_complete_endpoint`: where the address and the link's `oob_code` are exchanged for tokens.
    public var emailLinkCompleteEndpoint: String?
    /// How the signed-in user can sign in; first-party apps only.
    public var accountProvidersEndpoint: String?
    /// Tessera's account API (profile, password, sessions, deletion) for first-party apps.
    public var accountAPIEndpoint: String?
    /// OpenID Connect Discovery §3.
    public var acrValuesSupported: [String]?
    /// RFC 9126 §5.
    public var pushedAuthorizationRequestEndpoint: String?
    /// `require_pushed_authorization_requests` (RFC 9126 §5): whether every authorization request must be
    /// pushed first; nil means false.
    public var requirePushedAuthorizationRequests: Bool?
    /// OpenID Connect Native SSO for Mobile Apps.
    public var nativeSSOSupported: Bool?
    /// Tessera's app-to-app authorization: where an authenticator app reads, approves and
    /// denies a pushed request, and asks for hand-off tickets.
    public var pushedRequestDetailsEndpoint: String?
    /// `authorization_approval_endpoint`: where an authenticator app approves or denies a pushed request.
    public var authorizationApprovalEndpoint: String?
    /// `handoff_endpoint`: where an authenticator app asks for a one-minute, single-use ticket for a partner app.
    public var handoffEndpoint: String?

    /// Makes metadata with these members; every other member is nil.
    public init(issuer: String, authorizationEndpoint: String, tokenEndpoint: String, jwksURI: String,
                responseTypesSupported: [String]) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.jwksURI = jwksURI
        self.responseTypesSupported = responseTypesSupported
    }

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case userinfoEndpoint = "userinfo_endpoint"
        case jwksURI = "jwks_uri"
        case revocationEndpoint = "revocation_endpoint"
        case introspectionEndpoint = "introspection_endpoint"
        case endSessionEndpoint = "end_session_endpoint"
        case scopesSupported = "scopes_supported"
        case responseTypesSupported = "response_types_supported"
        case responseModesSupported = "response_modes_supported"
        case grantTypesSupported = "grant_types_supported"
        case subjectTypesSupported = "subject_types_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case tokenEndpointAuthSigningAlgValuesSupported = "token_endpoint_auth_signing_alg_values_supported"
        case revocationEndpointAuthMethodsSupported = "revocation_endpoint_auth_methods_supported"
        case introspectionEndpointAuthMethodsSupported = "introspection_endpoint_auth_methods_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case claimsSupported = "claims_supported"
        case claimTypesSupported = "claim_types_supported"
        case promptValuesSupported = "prompt_values_supported"
        case uiLocalesSupported = "ui_locales_supported"
        case claimsParameterSupported = "claims_parameter_supported"
        case requestParameterSupported = "request_parameter_supported"
        case requestURIParameterSupported = "request_uri_parameter_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
        case frontchannelLogoutSupported = "frontchannel_logout_supported"
        case backchannelLogoutSupported = "backchannel_logout_supported"
        case nativeAuthenticationEndpoints = "native_authentication_endpoints"
        case nativeAuthenticationOpenAPI = "native_authentication_openapi"
        case emailLinkSendEndpoint = "email_link_send_endpoint"
        case emailLinkCompleteEndpoint = "email_link_complete_endpoint"
        case accountProvidersEndpoint = "account_providers_endpoint"
        case accountAPIEndpoint = "account_api_endpoint"
        case acrValuesSupported = "acr_values_supported"
        case pushedAuthorizationRequestEndpoint = "pushed_authorization_request_endpoint"
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests"
        case nativeSSOSupported = "native_sso_supported"
        case pushedRequestDetailsEndpoint = "pushed_request_details_endpoint"
        case authorizationApprovalEndpoint = "authorization_approval_endpoint"
        case handoffEndpoint = "handoff_endpoint"
    }
}

/// `grant_type` values (RFC 6749 §4).
public enum GrantType {
    /// `authorization_code` (RFC 6749 §4.1.3): redeems an authorization code.
    public static let authorizationCode = "authorization_code"
    /// `refresh_token` (RFC 6749 §6): redeems a refresh token for new tokens.
    public static let refreshToken = "refresh_token"
    /// `client_credentials` (RFC 6749 §4.4.2): a token for the client itself, with no user.
    public static let clientCredentials = "client_credentials"
    /// RFC 8693 token exchange: Tessera exchanges an upstream identity token (native Sign in with Apple).
    public static let tokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
}

/// `client_assertion_type` for JWT client authentication (RFC 7523 §2.2).
public let jwtBearerClientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
