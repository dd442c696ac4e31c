import Foundation
import TesseraCore

/// A signed-in session: the tokens, the user, and the rules for keeping them fresh
/// (AppAuth's `OIDAuthState`, Firebase's `Auth.currentUser`).
///
/// An actor, so one session is changed by one task at a time. Refreshing is coalesced: however
/// many tasks ask for fresh tokens at once, one refresh request goes to the provider and they
/// all get its result. That matters with Tessera, which rotates the refresh token on every use
/// and revokes the whole session when a used one is presented again (RFC 9700 §4.14.2).
///
/// ```swift
/// let state = try await AuthState.restore(client: client, store: KeychainTokenStore(service: "com.example.app"))
/// if state.currentUser == nil {
///     try await state.signIn(using: userAgent)
/// }
/// let tokens = try await state.freshTokens()          // refreshes only when needed
/// request.setValue(tokens.authorizationHeader, forHTTPHeaderField: "Authorization")
/// ```
public actor AuthState {
    /// The client that talks to the provider.
    public nonisolated let client: OIDCClient
    /// Where the tokens are kept; `nil` keeps them in memory only.
    public nonisolated let store: (any TokenStore)?
    /// The current tokens; `nil` when signed out.
    public private(set) var tokens: TokenSet?
    /// The last userinfo answer, when ``reloadUser()`` was called.
    public private(set) var userInfo: UserInfo?
    private var inFlightRefresh: (generation: Int, task: Task<TokenSet, any Error>)?
    /// Bumped when the session is replaced or ended, so a refresh that finishes afterwards is dropped.
    private var generation = 0

    /// A session with `tokens` (from a sign-in or a store), or signed out with `nil`.
    public init(client: OIDCClient, tokens: TokenSet? = nil, store: (any TokenStore)? = nil) {
        self.client = client
        self.tokens = tokens
        self.store = store
    }

    /// The session kept in `store`. Tokens of another issuer or client are ignored (signed out).
    public static func restore(client: OIDCClient, store: any TokenStore) async throws -> AuthState {
        var tokens = try await store.load()
        if let stored = tokens, stored.issuer != client.configuration.issuerIdentifier || stored.clientID != client.configuration.clientID {
            tokens = nil
        }
        return AuthState(client: client, tokens: tokens, store: store)
    }

    /// Whether there are tokens. They may still be revoked at the provider.
    public var isSignedIn: Bool { tokens != nil }

    /// The ID token of the session, decoded (it was validated when received).
    public var idToken: IDToken? { tokens?.idToken.flatMap { try? IDToken(parsing: $0) } }

    /// The signed-in user: the ID token's claims completed by the last userinfo answer.
    public var currentUser: AuthUser? { tokens == nil ? nil : AuthUser(idToken: idToken, userInfo: userInfo) }

    // MARK: Signing in

    /// Signs in through the browser: opens `request` (by default a fresh one with the client's
    /// configuration) with `userAgent`, validates the redirect, redeems the code, validates the
    /// ID token and stores the tokens.
    @discardableResult
    public func signIn(using userAgent: any ExternalUserAgent, request: AuthRequest? = nil) async throws -> AuthUser {
        let result = try await client.authorize(request ?? client.makeRequest(), using: userAgent)
        return try await adopt(result)
    }

    /// Completes a sign-in whose redirect reached the app some other way (the app delegate's
    /// `open url`, as in the seeds): validates `url` against `request`, redeems the code and
    /// stores the tokens.
    @discardableResult
    public func handleRedirect(_ url: URL, for request: AuthRequest) async throws -> AuthUser {
        try await adopt(try await client.exchangeCode(from: url, request: request))
    }

    /// Makes a completed authorization the session and stores it.
    @discardableResult
    public func adopt(_ result: AuthorizationResult) async throws -> AuthUser {
        generation += 1
        inFlightRefresh = nil
        tokens = result.tokens
        userInfo = nil
        try await persist(result.tokens)
        guard let user = currentUser else {
            throw AuthError.invalidResponse("the sign-in returned no ID token, so there is no user (was openid requested?)")
        }
        return user
    }

    // MARK: Fresh tokens

    /// Tokens whose access token is good for at least `minimumValidity` seconds, refreshing
    /// first if needed. Concurrent callers share one refresh.
    public func freshTokens(minimumValidity: TimeInterval = 60) async throws -> TokenSet {
        if let inFlightRefresh { return try await inFlightRefresh.task.value }
        guard let tokens else { throw AuthError(.notSignedIn, "signed out") }
        if tokens.isAccessTokenValid(at: client.now(), margin: minimumValidity) { return tokens }
        return try await refresh()
    }

    /// Refreshes the tokens (RFC 6749 §6) and stores the result; concurrent callers, and callers
    /// arriving while a refresh is under way, share that one request.
    ///
    /// - Parameter staleAccessToken: the access token a resource server just refused. When the
    ///   session already holds a different one (another task refreshed meanwhile), it is returned
    ///   without a new request — so a burst of 401s costs one refresh, not one each.
    /// - Throws: ``AuthError/Code/notSignedIn`` without a refresh token. When the provider
    ///   answers `invalid_grant` the session is over: it is signed out and the error rethrown.
    public func refresh(staleAccessToken: String? = nil) async throws -> TokenSet {
        if let inFlightRefresh { return try await inFlightRefresh.task.value }
        guard let current = tokens else { throw AuthError(.notSignedIn, "signed out") }
        if let staleAccessToken, staleAccessToken != current.accessToken { return current }
        guard current.refreshToken != nil else { throw AuthError(.notSignedIn, "the session has no refresh token") }
        let started = generation
        let task = Task { try await self.performRefresh(current, generation: started) }
        inFlightRefresh = (started, task)
        return try await task.value
    }

    private func performRefresh(_ current: TokenSet, generation started: Int) async throws -> TokenSet {
        defer { if inFlightRefresh?.generation == started { inFlightRefresh = nil } }
        do {
            let renewed = try await client.refresh(current)
            guard generation == started else { throw AuthError(.notSignedIn, "the session ended while refreshing") }
            tokens = renewed
            try await persist(renewed)
            return renewed
        } catch let error as AuthError where error.isInvalidGrant && generation == started {
            generation += 1
            tokens = nil
            userInfo = nil
            try? await store?.remove()
            throw error
        }
    }

    // MARK: The user

    /// Fetches userinfo with a fresh access token and returns the completed user
    /// (OpenID Connect Core §5.3). The answer must be about the ID token's `sub`.
    @discardableResult
    public func reloadUser() async throws -> AuthUser {
        let tokens = try await freshTokens()
        let info = try await client.userInfo(accessToken: tokens.accessToken, expectedSubject: idToken?.subject)
        userInfo = info
        guard let user = currentUser else { throw AuthError(.notSignedIn, "signed out") }
        return user
    }

    // MARK: Signing out

    /// Signs out: revokes the refresh token at the provider (which ends every token of the
    /// session, RFC 7009 §2.1), or the access token when there is no refresh token, and forgets
    /// the tokens here and in the store.
    ///
    /// The local session is gone whatever happens; a failed revocation (say, offline) is rethrown
    /// afterwards so the app can log it.
    public func signOut() async throws {
        let ending = tokens
        generation += 1
        tokens = nil
        userInfo = nil
        inFlightRefresh = nil
        var failure: (any Error)?
        do { try await store?.remove() } catch { failure = error }
        if let ending {
            do {
                if let refreshToken = ending.refreshToken {
                    try await client.revoke(refreshToken, typeHint: .refreshToken)
                } else {
                    try await client.revoke(ending.accessToken, typeHint: .accessToken)
                }
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
    }

    /// The provider's logout URL for this session (RP-Initiated Logout 1.0), with the ID token as
    /// `id_token_hint`. Build it before ``signOut()`` (which forgets the ID token) and open it with
    /// an ``ExternalUserAgent`` afterwards to end the provider's browser session too.
    public func endSessionURL(postLogoutRedirectURI: String? = nil, state: String? = nil) async throws -> URL {
        try await client.endSessionURL(idTokenHint: tokens?.idToken, postLogoutRedirectURI: postLogoutRedirectURI, state: state)
    }

    /// Signs out here and at the provider: builds the logout request with the session's ID token
    /// as `id_token_hint` and a fresh `state`, signs out as ``signOut()`` does (revocation, tokens
    /// forgotten here and in the store), then opens the logout URL with `userAgent` and checks the
    /// redirect to `postLogoutRedirectURI` (RP-Initiated Logout 1.0 §2, §3;
    /// ``OIDCClient/endSession(_:using:)``).
    ///
    /// The local session is gone whatever happens. The first failure is thrown after both steps
    /// were tried: the revocation's or the store's (as ``signOut()``), else the browser's
    /// (``AuthError/Code/cancelled`` when the person closed it, ``AuthError/Code/stateMismatch``).
    ///
    /// - Parameters:
    ///   - userAgent: the browser that shows the provider's logout page.
    ///   - postLogoutRedirectURI: where the provider sends the browser back, registered for the client.
    ///   - uiLocales: the logout page's languages (`ui_locales`), e.g. `"ru en"`; nil sends none.
    @discardableResult
    public func signOut(using userAgent: any ExternalUserAgent, postLogoutRedirectURI: String,
                        uiLocales: String? = nil) async throws -> EndSessionResponse {
        let request = client.makeEndSessionRequest(idTokenHint: tokens?.idToken, postLogoutRedirectURI: postLogoutRedirectURI,
                                                   uiLocales: uiLocales)
        var failure: (any Error)?
        do { try await signOut() } catch { failure = error }
        let ended: Result<EndSessionResponse, any Error>
        do { ended = .success(try await client.endSession(request, using: userAgent)) } catch { ended = .failure(error) }
        if let failure { throw failure }
        return try ended.get()
    }

    private func persist(_ tokens: TokenSet) async throws {
        guard let store else { return }
        do { try await store.save(tokens) } catch let error as AuthError { throw error } catch {
            throw AuthError(.storage, "cannot store the tokens: \(error)")
        }
    }
}
