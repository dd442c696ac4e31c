/// A successful token response (RFC 6749 §5.1, OpenID Connect Core §3.1.3.3).
public struct TokenResponse: Codable, Sendable, Equatable {
    public var accessToken: String
    public var tokenType: String
    public var expiresIn: Int?
    public var refreshToken: String?
    public var idToken: String?
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
    public var issuer: String
    public var authorizationEndpoint: String
    public var tokenEndpoint: String
    public var userinfoEndpoint: String?
    public var jwksURI: String
    public var revocationEndpoint: String?
    public var introspectionEndpoint: String?
    public var endSessionEndpoint: String?
    public var scopesSupported: [String]?
    public var responseTypesSupported: [String]
    public var responseModesSupported: [String]?
    public var grantTypesSupported: [String]?
    public var subjectTypesSupported: [String]?
    public var idTokenSigningAlgValuesSupported: [String]?
    public var tokenEndpointAuthMethodsSupported: [String]?
    public var tokenEndpointAuthSigningAlgValuesSupported: [String]?
    public var revocationEndpointAuthMethodsSupported: [String]?
    public var introspectionEndpointAuthMethodsSupported: [String]?
    public var codeChallengeMethodsSupported: [String]?
    public var claimsSupported: [String]?
    public var claimTypesSupported: [String]?
    public var promptValuesSupported: [String]?
    public var uiLocalesSupported: [String]?
    public var claimsParameterSupported: Bool?
    public var requestParameterSupported: Bool?
    public var requestURIParameterSupported: Bool?
    public var authorizationResponseIssParameterSupported: Bool?
    public var frontchannelLogoutSupported: Bool?
    public var backchannelLogoutSupported: Bool?

    // Tessera's own members.

    /// The native sign-in API's endpoint URLs by ``NativeAuthEndpoint`` name.
    public var nativeAuthenticationEndpoints: [String: String]?
    /// Where the native API's OpenAPI description is served.
    public var nativeAuthenticationOpenAPI: String?
    public var emailLinkSendEndpoint: String?
    public var emailLinkCompleteEndpoint: String?
    /// How the signed-in user can sign in; first-party apps only.
    public var accountProvidersEndpoint: String?
    /// Tessera's account API (profile, password, sessions, deletion) for first-party apps.
    public var accountAPIEndpoint: String?
    /// OpenID Connect Discovery §3.
    public var acrValuesSupported: [String]?
    /// RFC 9126 §5.
    public var pushedAuthorizationRequestEndpoint: String?
    public var requirePushedAuthorizationRequests: Bool?
    /// OpenID Connect Native SSO for Mobile Apps.
    public var nativeSSOSupported: Bool?
    /// Tessera's app-to-app authorization: where an authenticator app reads, approves and
    /// denies a pushed request, and asks for hand-off tickets.
    public var pushedRequestDetailsEndpoint: String?
    public var authorizationApprovalEndpoint: String?
    public var handoffEndpoint: String?

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
    public static let authorizationCode = "authorization_code"
    public static let refreshToken = "refresh_token"
    public static let clientCredentials = "client_credentials"
    /// RFC 8693 token exchange: Tessera exchanges an upstream identity token (native Sign in with Apple).
    public static let tokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
}

/// `client_assertion_type` for JWT client authentication (RFC 7523 §2.2).
public let jwtBearerClientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
