import Foundation
import TesseraCore

/// One check of an authorization request (RFC 6749 §4.1.1, OpenID Connect Core §3.1.2.1).
/// ``Authorizer/checks`` runs them in order; the first that fails decides the answer.
///
/// `redirectable` says where its error goes: to the client's redirect URI, or only to an
/// error page. A check may be redirectable only once the client and its redirect URI are
/// verified (RFC 6749 §4.1.2.1): otherwise an attacker's URI would receive the error.
package struct AuthorizationCheck: Sendable {
    package let name: String
    package let redirectable: Bool
    let run: @Sendable (Authorizer, inout AuthorizationDraft) async throws -> OAuthError?

    init(_ name: String, redirectable: Bool = true,
         _ run: @escaping @Sendable (Authorizer, inout AuthorizationDraft) async throws -> OAuthError?) {
        self.name = name
        self.redirectable = redirectable
        self.run = run
    }
}

/// What the checks have learned about a request so far.
struct AuthorizationDraft {
    let parameters: RequestParameters
    /// Set by the checks that verify them; before that, errors can only be shown on a page.
    var client: Client?
    var target: ResponseTarget?
    var scope = ScopeSet([])
    var claims: ClaimsRequest?
    var claimScopes: [String] = []
    var codeChallenge: String?
    var prompt: [String] = []
    var maxAge: Int64?
    var hintedSubject: String?
    var handoffTicketHash: String?
    /// The request arrived at the pushed authorization request endpoint (RFC 9126).
    let pushed: Bool

    init(_ parameters: RequestParameters, pushed: Bool = false) {
        self.parameters = parameters
        self.pushed = pushed
    }

    /// The verified client and where its answers go; a check that runs before they are
    /// known gets a server error rather than an unverified target.
    func trusted() throws -> (client: Client, target: ResponseTarget) {
        guard let client, let target else {
            throw OAuthError(.serverError, detail: "an authorization check ran before the client was verified")
        }
        return (client, target)
    }

    /// The request the checks have validated.
    func request() throws -> AuthorizationRequest {
        let (client, target) = try trusted()
        return AuthorizationRequest(
            clientID: client.id, redirectURI: target.redirectURI, responseMode: target.mode, state: target.state,
            nonce: parameters["nonce"], scope: scope, claims: claims, claimScopes: ScopeSet(claimScopes),
            codeChallenge: codeChallenge, prompt: prompt, maxAge: maxAge, loginHint: parameters["login_hint"],
            hintedSubject: hintedSubject, uiLocales: (parameters["ui_locales"] ?? "").split(separator: " ").map(String.init),
            handoffTicketHash: handoffTicketHash)
    }
}

extension Authorizer {
    /// `create`: OpenID Connect's "Initiating User Registration" (the sign-up page is shown).
    static let knownPrompts: Set<String> = ["none", "login", "consent", "select_account", "create"]
    /// Parameters that must not repeat (RFC 6749 §3.1).
    static let singleParameters = ["client_id", "redirect_uri", "response_type", "response_mode", "scope", "state", "nonce",
                                   "code_challenge", "code_challenge_method", "prompt", "max_age", "login_hint",
                                   "id_token_hint", "ui_locales", "request", "request_uri", "claims", "handoff_ticket",
                                   "acr_values"]
    /// The longest value, in bytes, of each parameter a request keeps while the user signs in;
    /// a longer one is refused (`invalid_request`) rather than stored, and a too long `state`
    /// is not sent back.
    static let maximumLengths: KeyValuePairs<String, Int> = [
        "state": 2048, "nonce": 512, "scope": 2048, "claims": 8192, "login_hint": 320, "id_token_hint": 8192,
        "ui_locales": 256, "prompt": 64, "max_age": 20, "response_type": 64, "response_mode": 32,
        "code_challenge": 128, "code_challenge_method": 16, "handoff_ticket": 128, "acr_values": 512,
    ]

    /// Every check, in the order it runs.
    package static let checks: [AuthorizationCheck] = [
        // The client and its redirect URI: until both check out, nothing is redirected.
        AuthorizationCheck("client", redirectable: false) { authorizer, draft in
            let parameters = draft.parameters
            guard let clientID = parameters["client_id"] else { return .invalidRequest("The client_id parameter is missing.") }
            if parameters.duplicates.contains("client_id") || parameters.duplicates.contains("redirect_uri") {
                return .invalidRequest("client_id and redirect_uri must be sent once.")
            }
            guard let client = try await authorizer.clients.client(id: clientID) else {
                return OAuthError(.invalidRequest, "The client_id is not registered here.", detail: "unknown client \(clientID)")
            }
            draft.client = client
            return nil
        },
        AuthorizationCheck("redirect_uri", redirectable: false) { _, draft in
            let parameters = draft.parameters
            guard let redirectURI = parameters["redirect_uri"] else { return .invalidRequest("The redirect_uri parameter is missing.") }
            guard draft.client?.accepts(redirectURI: redirectURI) == true else {
                return .invalidRequest("The redirect_uri is not registered for this client.", detail: "unregistered redirect_uri \(redirectURI)")
            }
            // From here on errors go back to the client, with its state unless that is the problem.
            let mode = parameters["response_mode"].flatMap(ResponseMode.init(rawValue:)) ?? .query
            let echoState = !parameters.duplicates.contains("state") && (parameters["state"]?.utf8.count ?? 0) <= Self.stateLimit
            draft.target = ResponseTarget(redirectURI: redirectURI, mode: mode, state: echoState ? parameters["state"] : nil)
            return nil
        },
        // RFC 9126 §5: a client registered with require_pushed_authorization_requests pushes every request.
        AuthorizationCheck("pushed requests") { _, draft in
            guard !draft.pushed, try draft.trusted().client.requirePushedRequests else { return nil }
            return .invalidRequest("This client must push its authorization requests (RFC 9126): send them to the "
                                   + "pushed_authorization_request_endpoint, then only client_id and request_uri here.")
        },
        AuthorizationCheck("parameter sizes") { _, draft in
            guard let (name, limit) = Self.maximumLengths.first(where: { (draft.parameters[$0]?.utf8.count ?? 0) > $1 }) else { return nil }
            return .invalidRequest("The \(name) parameter is longer than \(limit) bytes.")
        },
        AuthorizationCheck("single parameters") { _, draft in
            draft.parameters.firstDuplicate(among: Self.singleParameters).map { OAuthError.invalidRequest("The \($0) parameter was sent more than once.") }
        },
        AuthorizationCheck("response_mode") { _, draft in
            guard let value = draft.parameters["response_mode"], ResponseMode(rawValue: value) == nil else { return nil }
            return .invalidRequest("response_mode must be query, fragment or form_post.")
        },
        AuthorizationCheck("request objects") { _, draft in
            if draft.parameters["request"] != nil { return OAuthError(.requestNotSupported, "Request objects are not supported.") }
            if draft.parameters["request_uri"] != nil {
                // A request_uri is resolved before the checks; one inside a pushed request is refused (RFC 9126 §2.1).
                return .invalidRequest("request_uri can't be part of a pushed authorization request.")
            }
            return nil
        },
        AuthorizationCheck("response_type") { _, draft in
            guard let responseType = draft.parameters["response_type"] else { return .invalidRequest("The response_type parameter is missing.") }
            guard responseType == "code" else { return OAuthError(.unsupportedResponseType, "Only response_type=code is supported.") }
            guard try draft.trusted().client.grantTypes.contains(GrantType.authorizationCode) else {
                return OAuthError(.unauthorizedClient, "This client may not use the authorization code flow.")
            }
            return nil
        },
        // A scope the client may not ask for is refused; an unknown one is ignored (OpenID Connect Core §3.1.2.1).
        AuthorizationCheck("scope") { _, draft in
            do {
                draft.scope = try ScopePolicy.authorization(ScopeSet(parsing: draft.parameters["scope"]), client: try draft.trusted().client)
            } catch let refusal as ScopeRefusal {
                return refusal.oauthError
            }
            return nil
        },
        // PKCE (RFC 7636 §4.4.1): S256 only; required for public clients.
        AuthorizationCheck("PKCE") { _, draft in
            let challenge = draft.parameters["code_challenge"], method = draft.parameters["code_challenge_method"]
            if let method {
                guard method == "S256" else { return .invalidRequest("code_challenge_method must be S256; plain is not allowed.") }
                guard challenge != nil else { return .invalidRequest("code_challenge_method was sent without code_challenge.") }
            }
            if let challenge {
                guard method == "S256" else {
                    return .invalidRequest("code_challenge_method=S256 is required with code_challenge (plain is not allowed).")
                }
                guard PKCE.isValidChallenge(challenge) else { return .invalidRequest("code_challenge must be 43 base64url characters (S256).") }
            } else if try draft.trusted().client.isPublic {
                return .invalidRequest("PKCE is required for public clients: send code_challenge with code_challenge_method=S256.")
            }
            draft.codeChallenge = challenge
            return nil
        },
        AuthorizationCheck("prompt") { _, draft in
            let prompt = (draft.parameters["prompt"] ?? "").split(separator: " ").map(String.init)
            if let unknown = prompt.first(where: { !Self.knownPrompts.contains($0) }) { return .invalidRequest("Unsupported prompt value '\(unknown)'.") }
            if prompt.contains("none") && prompt.count > 1 { return .invalidRequest("prompt=none cannot be combined with other values.") }
            draft.prompt = prompt
            return nil
        },
        AuthorizationCheck("max_age") { _, draft in
            guard let value = draft.parameters["max_age"] else { return nil }
            guard let seconds = Int64(value), seconds >= 0 else { return .invalidRequest("max_age must be a non-negative integer.") }
            draft.maxAge = seconds
            return nil
        },
        // A hand-off ticket from an authenticator app: checked when the request is decided, where it is used.
        AuthorizationCheck("handoff_ticket") { _, draft in
            guard let ticket = draft.parameters["handoff_ticket"] else { return nil }
            guard !ticket.isEmpty else { return .invalidRequest("handoff_ticket is empty.") }
            draft.handoffTicketHash = tokenHash(ticket)
            return nil
        },
        AuthorizationCheck("id_token_hint") { authorizer, draft in
            guard let hint = draft.parameters["id_token_hint"] else { return nil }
            let client = try draft.trusted().client
            guard let jwt = authorizer.idTokenHint(hint), jwt.audience.contains(client.id) else {
                return .invalidRequest("id_token_hint is not an ID token this provider issued to this client.")
            }
            draft.hintedSubject = jwt.subject
            return nil
        },
        // The claims parameter (OpenID Connect Core §5.5): only claims a scope the client is
        // allowed covers; consent is asked for those scopes.
        AuthorizationCheck("claims") { _, draft in
            guard let text = draft.parameters["claims"] else { return nil }
            let client = try draft.trusted().client
            let parsed: ClaimsRequest
            do { parsed = try ClaimsRequest(parsing: text) } catch let error as OAuthError { return error }
            let coverable = ScopeCatalogue.claims(for: client.scopes.values)
            let narrowed = parsed.filtered { $0 == "sub" || $0 == "acr" || coverable.contains($0) }
            let asked = ScopeCatalogue.claims(for: draft.scope.values)
            for claim in narrowed.allClaims.sorted() where claim != "sub" && claim != "acr" && !asked.contains(claim) {
                if let covering = client.scopes.values.first(where: { ScopeCatalogue.definition($0)?.claims.contains(claim) == true }) {
                    draft.claimScopes.append(covering)
                }
            }
            draft.claims = narrowed.isEmpty ? nil : narrowed
            return nil
        },
        // Authentication context (OpenID Connect Core §3.1.2.1, §5.5.1.1): `acr_values` are
        // voluntary, and put `acr` in the ID token; an essential `acr` no sign-in here can reach is
        // refused (OpenID Connect Unmet Authentication Requirements 1.0).
        AuthorizationCheck("acr") { _, draft in
            let voluntary = (draft.parameters["acr_values"] ?? "").split(separator: " ").map(String.init)
            var claims = draft.claims ?? ClaimsRequest()
            if let entry = claims.idToken?["acr"] ?? nil, entry.essential == true {
                let asked = entry.stringValues
                if !asked.isEmpty, !asked.contains(where: AuthenticationContext.supported.contains) {
                    return OAuthError(OAuthError.Code(rawValue: "unmet_authentication_requirements"),
                                      "No sign-in here reaches the essential acr \(asked.joined(separator: " ")) "
                                        + "(supported: \(AuthenticationContext.supported.joined(separator: " "))).")
                }
            }
            guard !voluntary.isEmpty || claims.idToken?["acr"] != nil else { return nil }
            if claims.idToken?["acr"] == nil {
                var idToken = claims.idToken ?? [:]
                idToken["acr"] = ClaimsRequest.Entry(values: voluntary.map(JSONValue.string))
                claims.idToken = idToken
            }
            draft.claims = claims
            return nil
        },
    ]

    static var stateLimit: Int { maximumLengths.first { $0.key == "state" }?.value ?? 2048 }

    /// A verified `id_token_hint`: an ID token this provider signed (expiry doesn't matter
    /// for a hint). Which client it must be for is the caller's check.
    package func idTokenHint(_ token: String) -> JWT? {
        tokenIssuer.verifiedIDToken(token)
    }
}
