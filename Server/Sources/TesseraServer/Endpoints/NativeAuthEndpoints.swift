import Crypto
import Foundation
import Hummingbird
import TesseraCore
import TesseraDomain

/// The native sign-in API over HTTP (Microsoft Entra's native authentication wire
/// protocol): form-encoded POSTs, JSON answers, errors in the reference's shape.
struct NativeAuthEndpoints {
    let services: Services

    func register(on router: Router<TesseraRequestContext>) {
        let flows = services.flows
        typealias Step = @Sendable (RequestParameters, FlowCaller) async throws -> FlowStep
        let wire = NativeAuthWire.self
        let routes: [(NativeAuthEndpoint, Step)] = [
            (.signUpStart, { parameters, caller in
                let challenges = try wire.challenges(parameters)
                return try await flows.signUp.start(username: try wire.required(parameters, "username"), challenges: challenges,
                                                    password: parameters["password"],
                                                    attributes: try parameters["attributes"].map(wire.attributes), caller: caller)
            }),
            (.signUpChallenge, { parameters, caller in
                try await flows.signUp.challenge(token: try wire.required(parameters, "continuation_token"),
                                                 challenges: try wire.optionalChallenges(parameters), caller: caller)
            }),
            (.signUpContinue, { parameters, caller in
                let grantType = try wire.required(parameters, "grant_type")
                let token = try wire.required(parameters, "continuation_token")
                switch grantType {
                case "oob":
                    return try await flows.signUp.submitCode(token: token, code: try wire.required(parameters, "oob"), caller: caller)
                case "password":
                    return try await flows.signUp.submitPassword(token: token, password: try wire.required(parameters, "password"),
                                                                 caller: caller)
                case "attributes":
                    return try await flows.signUp.submitAttributes(token: token, attributes: try wire.attributes(
                        try wire.required(parameters, "attributes")), caller: caller)
                default:
                    throw NativeAuthError("invalid_grant", "grant_type must be oob, password or attributes here.")
                }
            }),
            (.signInInitiate, { parameters, caller in
                let challenges = try wire.challenges(parameters)
                return try await flows.signIn.initiate(username: try wire.required(parameters, "username"), challenges: challenges,
                                                       caller: caller)
            }),
            (.signInChallenge, { parameters, caller in
                // With `id`: the second factor the app chose after `mfa_required`.
                if let method = parameters["id"] {
                    return try await flows.signIn.secondFactorChallenge(token: try wire.required(parameters, "continuation_token"),
                                                                        method: method, caller: caller)
                }
                return try await flows.signIn.challenge(token: try wire.required(parameters, "continuation_token"),
                                                        challenges: try wire.optionalChallenges(parameters), caller: caller)
            }),
            (.signInIntrospect, { parameters, caller in
                try await flows.signIn.secondFactorMethods(token: try wire.required(parameters, "continuation_token"), caller: caller)
            }),
            (.resetStart, { parameters, caller in
                let challenges = try wire.challenges(parameters)
                return try await flows.passwordReset.start(username: try wire.required(parameters, "username"), challenges: challenges,
                                                           caller: caller)
            }),
            (.resetChallenge, { parameters, caller in
                try await flows.passwordReset.challenge(token: try wire.required(parameters, "continuation_token"),
                                                        challenges: try wire.optionalChallenges(parameters), caller: caller)
            }),
            (.resetContinue, { parameters, caller in
                guard try wire.required(parameters, "grant_type") == "oob" else {
                    throw NativeAuthError("invalid_grant", "grant_type must be oob here.")
                }
                return try await flows.passwordReset.submitCode(token: try wire.required(parameters, "continuation_token"),
                                                                code: try wire.required(parameters, "oob"), caller: caller)
            }),
            (.resetSubmit, { parameters, caller in
                try await flows.passwordReset.submitPassword(token: try wire.required(parameters, "continuation_token"),
                                                             password: try wire.required(parameters, "new_password"), caller: caller)
            }),
            (.resetPollCompletion, { parameters, caller in
                try await flows.passwordReset.pollCompletion(token: try wire.required(parameters, "continuation_token"), caller: caller)
            }),
        ]
        for (endpoint, step) in routes {
            router.post(RouterPath(endpoint.path)) { request, context in
                await answer(request, context, at: endpoint) { parameters, caller in
                    Responses.json(try CanonicalJSON.encode(try wire.answer(try await step(parameters, caller))))
                }
            }
        }
        router.post(RouterPath(NativeAuthEndpoint.token.path)) { request, context in
            await answer(request, context, at: .token) { parameters, caller in try await token(parameters, caller: caller) }
        }
        router.post(RouterPath(NativeAuthEndpoint.passkeyOptions.path)) { request, context in
            await answer(request, context, at: .passkeyOptions) { _, caller in
                // Each challenge is a stored row: counted as a sign-in started (WorkLimits).
                do {
                    try await services.workLimits.admit(.flow, address: caller.address, client: caller.client.id, now: services.clock.now())
                } catch let exceeded as WorkLimits.Exceeded {
                    throw FlowFailure.tooMuchWork(.flow, retryAfter: exceeded.retryAfter)
                }
                return try Responses.json(try await services.passkeys.requestOptions(binding: Self.passkeyBinding(caller.client)))
            }
        }
        router.post(RouterPath(NativeAuthEndpoint.passkeySignIn.path)) { request, context in
            await answer(request, context, at: .passkeySignIn) { parameters, caller in try await passkeySignIn(parameters, caller: caller) }
        }
        router.get(RouterPath(TesseraPath.nativeAuthOpenAPI)) { _, _ in
            Responses.json(Data(NativeAuthOpenAPI.document.utf8), cache: true)
        }
    }

    /// `/oauth2/v2.0/token`: the native grants, and `refresh_token` as at `/token`.
    func token(_ parameters: RequestParameters, caller: FlowCaller) async throws -> Response {
        guard let grantType = parameters["grant_type"] else { throw NativeAuthError.missing("grant_type") }
        guard let grant = services.nativeGrants.grant(for: grantType) else {
            throw NativeAuthError("unsupported_grant_type", "The grant type '\(grantType)' is not supported here "
                                    + "(\(services.nativeGrants.supported.joined(separator: ", "))).")
        }
        // refresh_token is one of /token's grants: the client must be allowed it, and its
        // OAuth errors are answered in the native API's shape.
        if grantType == GrantType.refreshToken, !caller.client.grantTypes.contains(grantType) {
            throw NativeAuthError("unauthorized_client", "This client is not allowed the refresh_token grant.")
        }
        let response: TokenResponse
        do {
            response = try await services.nativeGrants.exchange(grant, TokenRequest(parameters: parameters, client: caller.client, address: caller.address,
                                                             language: caller.language))
        } catch let error as OAuthError where error.code != .serverError {
            throw NativeAuthError(error.code.rawValue, error.errorDescription ?? error.code.rawValue, status: error.status)
        }
        var members = try JSONDecoder().decode([String: JSONValue].self, from: try CanonicalJSON.encode(response))
        if let expiresIn = response.expiresIn { members["ext_expires_in"] = .int(Int64(expiresIn)) }
        if parameters["client_info"] == "true", let idToken = response.idToken, let subject = Self.subject(ofIDToken: idToken) {
            // MSAL names the account by `client_info`: base64url JSON of the user's and the tenant's ids.
            let info = try CanonicalJSON.encode(["uid": subject, "utid": Self.tenant(services.issuer)])
            members["client_info"] = .string(Base64URL.encode(info))
        }
        return Responses.json(try CanonicalJSON.encode(members))
    }

    /// What a passkey challenge of an app is bound to: its client.
    static func passkeyBinding(_ client: Client) -> String { "app:" + client.id }

    /// An app's passkey sign-in (the platform's passkey API, `ASAuthorizationPlatformPublicKeyCredentialProvider`
    /// on iOS): the assertion for options of `/passkey/v1.0/options`, answered with tokens.
    func passkeySignIn(_ parameters: RequestParameters, caller: FlowCaller) async throws -> Response {
        let scope = try ScopePolicy.flowScope(parameters["scope"], client: caller.client)
        let signedIn: Passkeys.SignedIn
        do {
            guard parameters["credential"] != nil else { throw NativeAuthError.missing("credential") }
            signedIn = try await services.passkeys.signIn(try PasskeyEndpoints.assertion(parameters), binding: Self.passkeyBinding(caller.client))
        } catch let failure as PasskeyFailure {
            try PasskeyEndpoints.rethrowUnavailable(failure)
            throw Self.error(failure)
        }
        await services.audit.record(.signIn, userID: signedIn.user.id, clientID: caller.client.id, email: signedIn.user.email,
                                    ip: caller.address, detail: "passkey (app)")
        // A passkey without user verification is one factor: a person with an authenticator app gives it too.
        try await services.flows.signIn.requireSecondFactor(SignedIn(userID: signedIn.user.id, amr: signedIn.amr), caller: caller)
        let tokens = try await services.userTokens.issue(userID: signedIn.user.id, amr: signedIn.amr, scope: scope, client: caller.client)
        return Responses.json(try CanonicalJSON.encode(tokens))
    }

    /// A refused passkey, in the native API's shape.
    static func error(_ failure: PasskeyFailure) -> NativeAuthError {
        switch failure {
        case .challengeExpired:
            NativeAuthError("invalid_grant", "The passkey's challenge is unknown, used or expired: ask \(NativeAuthEndpoint.passkeyOptions.path) "
                              + "for new options.", suberror: "invalid_passkey")
        case .unknownPasskey:
            NativeAuthError("invalid_grant", "No account has this passkey (it may have been removed).", suberror: "invalid_passkey")
        case .suspended:
            NativeAuthError("invalid_grant", "This passkey is blocked: its counter went backwards, as a copied key's does. Sign in "
                              + "another way.", suberror: "passkey_blocked")
        case .accountDisabled:
            NativeAuthError("invalid_grant", "The account is disabled. Contact the app's support.", suberror: "user_disabled", errorCodes: [50057])
        case .invalid(let why):
            NativeAuthError("invalid_grant", "The passkey was refused: \(why).", suberror: "invalid_passkey")
        default:
            NativeAuthError("invalid_grant", "The passkey was refused.", suberror: "invalid_passkey")
        }
    }

    /// Parses the form, finds the client, runs `body`, and answers errors in the
    /// reference's shape; nothing unexpected escapes as more than `server_error`.
    /// `endpoint`: which native endpoint words a ``FlowFailure`` (nil: the email-link API).
    func answer(_ request: Request, _ context: TesseraRequestContext, at endpoint: NativeAuthEndpoint?,
                _ body: (RequestParameters, FlowCaller) async throws -> Response) async -> Response {
        let correlationID = request.headers[.init("client-request-id")!].flatMap { UUID(uuidString: $0)?.uuidString.lowercased() }
            ?? UUID().uuidString.lowercased()
        var response: Response
        do {
            var request = request
            let parameters: RequestParameters
            do { parameters = try await request.formParameters() } catch let error as OAuthError {
                throw NativeAuthError.invalidRequest(error.errorDescription ?? "The request body is not valid.")
            }
            if let name = parameters.duplicates.sorted().first {
                throw NativeAuthError.invalidRequest("The \(name) parameter was sent more than once.")
            }
            let caller = FlowCaller(client: try await client(parameters, request: request), address: context.addressKey,
                                                    language: PageLanguage.negotiate(
                                                        uiLocales: (parameters["ui_locales"] ?? "").split(separator: " ").map(String.init),
                                                        acceptLanguage: request.headers[.acceptLanguage]))
            response = try await body(parameters, caller)
        } catch let error as NativeAuthError {
            response = Self.errorResponse(error, correlationID: correlationID)
        } catch let failure as FlowFailure {
            response = Self.errorResponse(NativeAuthWire.error(failure, at: endpoint), correlationID: correlationID)
        } catch is DatabaseUnavailable {
            response = Self.errorResponse(NativeAuthWire.unavailable, correlationID: correlationID)
        } catch {
            services.logger.error("native sign-in request failed", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            response = Self.errorResponse(NativeAuthError("server_error", "The server could not complete the request.", status: 500),
                                          correlationID: correlationID)
        }
        response.headers[.init("x-ms-request-id")!] = correlationID
        return response
    }

    /// The first-party client the request names (public, or authenticated with its secret).
    func client(_ parameters: RequestParameters, request: Request) async throws -> Client {
        let basic = try? request.basicCredentials()
        guard let id = parameters["client_id"] ?? basic?.id else {
            throw NativeAuthError("invalid_request", "The client_id parameter is empty or not valid.", errorCodes: [90100])
        }
        guard let client = try await services.clients.client(id: id) else {
            throw NativeAuthError("unauthorized_client", "The client_id parameter is empty or not valid: no application is registered "
                                    + "with this client_id.", errorCodes: [700016])
        }
        guard client.firstParty else {
            throw NativeAuthError("invalid_client", "The native sign-in API is only for first-party apps: register the client with "
                                    + "--first-party, or sign in through the browser.", suberror: "nativeauthapi_disabled")
        }
        if !client.isPublic {
            do {
                let authenticated = try await services.clientAuthenticator.authenticate(basic: basic, parameters: parameters)
                guard authenticated.id == client.id else { throw OAuthError.invalidClient(detail: "client mismatch") }
            } catch let error as OAuthError {
                throw NativeAuthError("invalid_client", "This client must authenticate: " + (error.errorDescription ?? "client authentication failed."),
                                      status: 401)
            }
        }
        return client
    }

    static func errorResponse(_ error: NativeAuthError, correlationID: String) -> Response {
        let body = error.answer(correlationID: correlationID, now: Date())
        var response = Responses.json((try? CanonicalJSON.encode(body)) ?? Data(), status: .init(code: error.status))
        if let wait = error.retryAfter { response.headers[.retryAfter] = String(wait) }
        // RFC 6749 §5.2 and RFC 6750 §3: a 401 says how to authenticate.
        if error.status == 401 {
            response.headers[.wwwAuthenticate] = error.error == "invalid_token"
                ? "Bearer realm=\"tessera\", error=\"invalid_token\"" : "Basic realm=\"tessera\""
        }
        return response
    }

    static func subject(ofIDToken token: String) -> String? {
        let parts = token.split(separator: ".")
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
              let claims = try? JSONDecoder().decode([String: JSONValue].self, from: payload) else { return nil }
        return claims["sub"]?.stringValue
    }

    /// A stable tenant id for `client_info`: this issuer's, as a name-based UUID.
    static func tenant(_ issuer: String) -> String {
        var bytes = Array(SHA256.hash(data: Data(issuer.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                           bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])).uuidString.lowercased()
    }
}
