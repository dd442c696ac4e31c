import TesseraCore

/// The native sign-in API's grants at `/oauth2/v2.0/token` (Entra's native authentication):
/// `password` (the password of a sign-in flow), `oob` (the one-time code it sent),
/// `continuation_token` (the sign-in after a completed sign-up or reset) and `mfa_oob` (the
/// second factor's code, when the first was answered `mfa_required`). Each reads its
/// parameters, finishes a ``SignIn`` and issues the signed-in user's tokens; failures are
/// ``FlowFailure``s, which only the native API's endpoint (the one that registers these)
/// knows how to word.
package struct NativeFlowGrant: TokenGrant {
    package let grantType: String
    let signIn: SignIn
    let tokens: UserGrantTokens
    /// The second factor's own grant: nothing more is asked after it.
    var isSecondFactor = false
    let finish: @Sendable (_ token: String, TokenRequest) async throws -> SignedIn

    /// The grants of `signIn`: the first factor's three, and `mfa_oob` (the second factor's code).
    package static func all(_ signIn: SignIn, tokens: UserGrantTokens) -> [NativeFlowGrant] {
        [NativeFlowGrant(grantType: "password", signIn: signIn, tokens: tokens) { token, request in
            try await signIn.password(token: token, password: try request.required("password"), caller: request.caller)
         },
         NativeFlowGrant(grantType: "oob", signIn: signIn, tokens: tokens) { token, request in
             try await signIn.code(token: token, code: try request.required("oob"), caller: request.caller)
         },
         NativeFlowGrant(grantType: "continuation_token", signIn: signIn, tokens: tokens) { token, request in
             try await signIn.afterCompletedFlow(token: token, username: request.parameters["username"], caller: request.caller)
         },
         NativeFlowGrant(grantType: "mfa_oob", signIn: signIn, tokens: tokens, isSecondFactor: true) { token, request in
             try await signIn.secondFactor(token: token, code: try request.required("oob"), caller: request.caller)
         }]
    }

    package func exchange(_ request: TokenRequest) async throws -> TokenResponse {
        let token = try request.required("continuation_token")
        // The native API signs in without a page: never a scope that needs the consent page.
        let scope = try ScopePolicy.flowScope(request.parameters["scope"], client: request.client)
        let signedIn = try await finish(token, request)
        if !isSecondFactor { try await signIn.requireSecondFactor(signedIn, caller: request.caller) }
        return try await tokens.issue(userID: signedIn.userID, amr: signedIn.amr, scope: scope, client: request.client)
    }
}

extension TokenRequest {
    /// The parameter `name`, or ``FlowFailure/missingParameter(_:)``.
    func required(_ name: String) throws -> String {
        guard let value = parameters[name] else { throw FlowFailure.missingParameter(name) }
        return value
    }

    /// Who asks, as the flows know them.
    var caller: FlowCaller { FlowCaller(client: client, address: address, language: language) }
}
