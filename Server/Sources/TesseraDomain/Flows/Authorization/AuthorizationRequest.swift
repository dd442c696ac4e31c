import Foundation
import TesseraCore

/// How the authorization response travels back (OAuth 2.0 Multiple Response Types §2.1,
/// Form Post Response Mode §2).
public enum ResponseMode: String, Sendable, Codable, CaseIterable {
    case query
    case fragment
    case formPost = "form_post"
}

/// A validated authorization request (RFC 6749 §4.1.1, OpenID Connect Core §3.1.2.1),
/// kept while the user signs in and consents.
public struct AuthorizationRequest: Sendable, Codable, Equatable {
    public var clientID: String
    public var redirectURI: String
    public var responseMode: ResponseMode
    public var state: String?
    public var nonce: String?
    public var scope: ScopeSet
    /// The `claims` parameter, narrowed to claims the client may receive.
    public var claims: ClaimsRequest?
    /// Scopes that cover the claims of `claims`: consent is asked for them too.
    public var claimScopes: ScopeSet
    public var codeChallenge: String?
    public var prompt: [String]
    public var maxAge: Int64?
    public var loginHint: String?
    /// `sub` of a verified `id_token_hint`.
    public var hintedSubject: String?
    public var uiLocales: [String]
    /// The hash of a hand-off ticket the request carries (`handoff_ticket`): the person an
    /// authenticator app handed over, signed in without a page.
    public var handoffTicketHash: String?
    /// The sign-in a used hand-off ticket carried, while the request waits for consent: the
    /// authenticator app's sign-in (its time and methods), for this request alone. It never
    /// becomes a browser session, so the browser's own session (or none) stays as it was.
    public var handedOver: HandedOverSignIn?

    package init(clientID: String, redirectURI: String, responseMode: ResponseMode, state: String?, nonce: String?, scope: ScopeSet,
                 claims: ClaimsRequest?, claimScopes: ScopeSet, codeChallenge: String?, prompt: [String], maxAge: Int64?,
                 loginHint: String?, hintedSubject: String?, uiLocales: [String], handoffTicketHash: String? = nil,
                 handedOver: HandedOverSignIn? = nil) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.responseMode = responseMode
        self.state = state
        self.nonce = nonce
        self.scope = scope
        self.claims = claims
        self.claimScopes = claimScopes
        self.codeChallenge = codeChallenge
        self.prompt = prompt
        self.maxAge = maxAge
        self.loginHint = loginHint
        self.hintedSubject = hintedSubject
        self.uiLocales = uiLocales
        self.handoffTicketHash = handoffTicketHash
        self.handedOver = handedOver
    }

    public var isOpenID: Bool { scope.contains(ScopeCatalogue.openid) }

    /// Everything the user is asked to allow.
    public var consentScopes: ScopeSet { ScopeSet(scope.values + claimScopes.values) }

    /// A `sub` the `claims` parameter demands (§5.5.1): only that user may answer.
    public var demandedSubject: String? {
        (claims?.idToken?["sub"] ?? nil)?.value?.stringValue ?? (claims?.userinfo?["sub"] ?? nil)?.value?.stringValue
    }
}

/// Where an authorization response or error goes, once the redirect URI is trusted.
public struct ResponseTarget: Sendable, Equatable {
    public var redirectURI: String
    public var mode: ResponseMode
    public var state: String?
}

/// What the authorization endpoint does next.
public enum AuthorizationOutcome: Sendable {
    /// The client or redirect URI can't be trusted: show an error page, never redirect.
    case errorPage(OAuthError)
    /// Send `parameters` to the client's redirect URI.
    case respond(ResponseTarget, [(String, String)])
    /// Ask the user to sign in.
    case login(interaction: String, AuthorizationRequest, Client)
    /// Ask the session's user for a second factor (or to set one up).
    case secondFactor(interaction: String, AuthorizationRequest, Client, User, SecondFactorPolicy.Requirement)
    /// Ask the user to allow `scopes`; `essential` are those the client marked essential.
    case consent(interaction: String, AuthorizationRequest, Client, User, scopes: ScopeSet, essential: Set<String>)
}

/// Who a hand-off ticket signed in, and when and how they had signed in to the authenticator app.
public struct HandedOverSignIn: Sendable, Codable, Equatable {
    public var userID: String
    public var authTime: Int64
    public var amr: [String]
}

/// Who signed in, when and how: what a code, and so the tokens, record of the sign-in.
public struct Authentication: Sendable, Equatable {
    public var userID: String
    public var authTime: Int64
    public var amr: [String]
    /// The ID tokens' `sid`.
    public var sid: String

    package init(userID: String, authTime: Int64, amr: [String], sid: String) {
        self.userID = userID
        self.authTime = authTime
        self.amr = amr
        self.sid = sid
    }
}

extension BrowserSession {
    /// The sign-in this session stands for.
    public var authentication: Authentication { Authentication(userID: userID, authTime: authTime, amr: amr, sid: sid) }
}

extension AuthorizationRequest {
    /// The authentication context classes the request demands (an essential `acr` in `claims`,
    /// OpenID Connect Core §5.5.1.1): the sign-in must reach one. Empty when it demands none.
    package var demandedContexts: [String] {
        guard let entry = claims?.idToken?["acr"] ?? nil, entry.essential == true else { return [] }
        return entry.stringValues
    }

    /// The classes the request asks for without demanding them (`acr_values`, or a voluntary
    /// `acr` in `claims`), in its order of preference.
    package var requestedContexts: [String] {
        guard let entry = claims?.idToken?["acr"] ?? nil, entry.essential != true else { return [] }
        return entry.stringValues
    }

    /// Whether only a passkey reaches what the request demands (every demanded class is `phr`
    /// or `phrh`; a second factor reaches `urn:tessera:acr:mfa`): the login page says so.
    package var demandsStrongerSignIn: Bool {
        let demanded = demandedContexts
        return !demanded.isEmpty && !demanded.contains(AuthenticationContext.singleFactor)
            && !demanded.contains(AuthenticationContext.multiFactor)
    }
}
