import TesseraCore

/// The native sign-in API's grants at `/oauth2/v2.0/token` (Entra's native authentication):
/// `password` (the password of a sign-in flow), `oob` (the one-time code it sent) and
/// `continuation_token` (the sign-in after a completed sign-up or reset). Each ends a flow of
/// ``NativeAuthenticator`` and mints the user's grant; they answer in the native API's
/// error shape (``NativeAuthError``), and only that endpoint registers them.
package struct NativeFlowGrant: TokenGrant {
    package let grantType: String
    let step: @Sendable (RequestParameters, NativeAuthenticator.Caller) async throws -> TokenResponse

    /// The three grants of `native`.
    package static func all(_ native: NativeAuthenticator) -> [NativeFlowGrant] {
        [NativeFlowGrant(grantType: "password", step: native.passwordToken),
         NativeFlowGrant(grantType: "oob", step: native.codeToken),
         NativeFlowGrant(grantType: "continuation_token", step: native.continuationToken)]
    }

    package func exchange(_ request: TokenRequest) async throws -> TokenResponse {
        try await step(request.parameters, NativeAuthenticator.Caller(client: request.client, address: request.address,
                                                                         language: request.language))
    }
}
