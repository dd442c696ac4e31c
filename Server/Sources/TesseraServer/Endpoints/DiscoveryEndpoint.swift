import Foundation
import Hummingbird
import TesseraCore
import TesseraDomain

/// `/.well-known/openid-configuration` (OpenID Connect Discovery §4) and
/// `/.well-known/oauth-authorization-server` (RFC 8414 §3), one document for both.
package struct DiscoveryEndpoint {
    package let document: Data

    package init(services: Services) throws {
        let issuer = services.issuer
        func url(_ endpoint: Endpoint) -> String { issuer + endpoint.path }
        var metadata = ProviderMetadata(issuer: issuer, authorizationEndpoint: url(.authorization), tokenEndpoint: url(.token),
                                        jwksURI: url(.jwks), responseTypesSupported: ["code"])
        metadata.userinfoEndpoint = url(.userinfo)
        metadata.revocationEndpoint = url(.revocation)
        metadata.introspectionEndpoint = url(.introspection)
        metadata.endSessionEndpoint = url(.endSession)
        metadata.scopesSupported = ScopeCatalogue.all.map(\.name)
        metadata.responseModesSupported = ResponseMode.allCases.map(\.rawValue)
        metadata.grantTypesSupported = services.grants.supported
        metadata.subjectTypesSupported = ["public", "pairwise"]
        metadata.idTokenSigningAlgValuesSupported = [try services.keys.signingAlgorithm.rawValue]
        let authMethods = ClientAuthMethod.allCases.map(\.rawValue)
        metadata.tokenEndpointAuthMethodsSupported = authMethods
        metadata.tokenEndpointAuthSigningAlgValuesSupported = JWSAlgorithm.allCases.map(\.rawValue)
        metadata.revocationEndpointAuthMethodsSupported = authMethods
        metadata.introspectionEndpointAuthMethodsSupported = authMethods.filter { $0 != "none" }
        metadata.codeChallengeMethodsSupported = ["S256"]
        metadata.claimsSupported = ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "amr", "azp", "sid", "at_hash", "ds_hash", "acr"]
            + ScopeCatalogue.claimsSupported.filter { $0 != "sub" }
        metadata.claimTypesSupported = ["normal"]
        metadata.promptValuesSupported = ["none", "login", "consent", "select_account", "create"]
        metadata.uiLocalesSupported = PageLanguage.allCases.map(\.rawValue)
        metadata.claimsParameterSupported = true
        metadata.requestParameterSupported = false
        metadata.requestURIParameterSupported = false
        metadata.authorizationResponseIssParameterSupported = true
        metadata.frontchannelLogoutSupported = false
        metadata.backchannelLogoutSupported = false
        // Tessera's own members: where the native sign-in API and its description live.
        metadata.nativeAuthenticationEndpoints = Dictionary(uniqueKeysWithValues: NativeAuthEndpoint.allCases.map {
            ($0.rawValue, issuer + $0.path)
        })
        metadata.nativeAuthenticationOpenAPI = issuer + TesseraPath.nativeAuthOpenAPI
        metadata.emailLinkSendEndpoint = issuer + TesseraPath.emailLinkSend
        metadata.emailLinkCompleteEndpoint = issuer + TesseraPath.emailLinkComplete
        metadata.accountProvidersEndpoint = issuer + TesseraPath.accountProviders
        metadata.accountAPIEndpoint = issuer + TesseraPath.accountAPI
        metadata.acrValuesSupported = AuthenticationContext.supported
        metadata.pushedAuthorizationRequestEndpoint = issuer + TesseraPath.pushedAuthorizationRequest
        metadata.requirePushedAuthorizationRequests = false
        metadata.nativeSSOSupported = true
        metadata.pushedRequestDetailsEndpoint = issuer + TesseraPath.authorizationDetails
        metadata.authorizationApprovalEndpoint = issuer + TesseraPath.authorizationApproval
        metadata.handoffEndpoint = issuer + TesseraPath.handoff
        document = try CanonicalJSON.encode(metadata)
    }

    /// Where the discovery document is (OpenID Connect Discovery §4, RFC 8414 §3).
    static let discoveryPaths = ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"]
    /// The JWKS's media type (RFC 7517 §8.5.1).
    static let jwksContentType = "application/jwk-set+json"

    func register(on router: Router<TesseraRequestContext>, services: Services) {
        let document = self.document
        for path in Self.discoveryPaths {
            router.get(RouterPath(path)) { _, _ in Self.publicJSON(document) }
        }
        router.get(RouterPath(Endpoint.jwks.path)) { _, _ in
            Self.publicJSON(try services.keys.jwksDocument, contentType: Self.jwksContentType)
        }
    }

    static func publicJSON(_ data: Data, contentType: String = "application/json") -> Response {
        var response = Responses.json(data, cache: true)
        response.headers[.contentType] = contentType
        response.headers[.cacheControl] = "public, max-age=300"
        response.headers[.accessControlAllowOrigin] = "*"
        return response
    }
}
