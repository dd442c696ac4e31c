import NIOConcurrencyHelpers
import TesseraCore

/// `refresh_token` (RFC 6749 §6) with rotation: every use returns a new refresh token,
/// and presenting one that was already rotated revokes the whole family (RFC 9700 §4.14.2).
public struct RefreshTokenGrant: TokenGrant {
    public let grantType = GrantType.refreshToken
    let families: TokenFamilies
    let tokens: UserGrantTokens
    /// Native SSO: a grant of a device session keeps `ds_hash` in its refreshed ID tokens.
    let deviceSessions: DeviceSessions?
    let clock: WallClock
    /// Seconds after a rotation in which a retry with the same token is answered (`refresh-token-reuse-interval`).
    let reuseInterval: Int64

    package init(families: TokenFamilies, tokens: UserGrantTokens, deviceSessions: DeviceSessions? = nil, clock: WallClock,
                 reuseInterval: Int64 = 0) {
        self.families = families
        self.tokens = tokens
        self.deviceSessions = deviceSessions
        self.clock = clock
        self.reuseInterval = reuseInterval
    }

    public func exchange(_ request: TokenRequest) async throws -> TokenResponse {
        let parameters = request.parameters, client = request.client
        guard let token = parameters["refresh_token"] else {
            throw OAuthError.invalidRequest("The refresh_token parameter is required.")
        }
        let requested = parameters["scope"].map { ScopeSet(parsing: $0) }
        let issuer = tokens.issuer
        if FamilyTokens.isFamilyFormat(token) {
            // Refused before the database is asked when its tag is wrong.
            guard let family = issuer.familyTokens.parse(token) else { throw Self.invalidToken }
            return try await exchange(family, tokenHash: tokenHash(token), requested: requested, client: client)
        }
        // A token with a row of its own (issued before family tokens, or by a node told not to issue them).
        let presented = RefreshTokenKey.key(token)
        // The successor is made once, whichever way the rotation goes.
        let successor = issuer.pendingRefreshToken()
        // A request that narrows no scope needs nothing the statement can't read: on PostgreSQL
        // the rotation is then one round trip. Anything else, and every token that isn't simply
        // live, takes the transaction below. The tokens are signed where the answer came: the
        // request's event loop, on which its pool's connections live (`PostgresDatabase.pools`),
        // so a refresh moves between no threads (on two cores ≈ 20 % more refreshes a second
        // than one pool for the node and the signatures on ``SigningThreads``: docs/performance.md,
        // twenty-first session; with one pool, signing on the loop alone was ≈ 12 % slower).
        if requested == nil,
           let (grant, user) = try await families.rotateAtOnce(tokenHash: presented, clientID: client.id,
                                                              successor: successor.pending, clock: clock) {
            return try tokens.signedResponse(grant: grant, user: user, client: client, scope: grant.scope, nonce: nil,
                                             refreshToken: successor.token)
        }
        // The rotation in a transaction, which answers every case. On SQLite it runs on the
        // request's thread with the signatures after it, when the connection can begin it there
        // at once: a refresh then moves between no threads (the database's thread, the signing
        // threads and back to the loop cost more than its statements).
        let minted = NIOLockedValueBox<Minted?>(nil)
        let make = successorMaker(requested: requested, client: client, minted: minted) { _, _ in successor }
        let makeSuccessor: @Sendable (Grant, any TransactionStores) async throws -> RefreshTokenRecord = { try await make($0, nil, $1) }
        if let outcome = try await families.rotateHere(tokenHash: presented, clientID: client.id, clock: clock,
                                                       reuseInterval: reuseInterval, makeSuccessor: makeSuccessor) {
            return try answer(outcome, minted: minted, client: client)
        }
        // Elsewhere, from the end of the transaction to the signed tokens on the threads that
        // sign: the database's thread hands the task to them directly (``SigningThreads``).
        return try await withTaskExecutorPreference(SigningThreads.executor) {
            let outcome = try await families.rotate(tokenHash: presented, clientID: client.id, clock: clock,
                                                    reuseInterval: reuseInterval, makeSuccessor: makeSuccessor)
            return try answer(outcome, minted: minted, client: client)
        }
    }

    /// A ``FamilyToken``'s exchange: the same two ways as a stored token's, on its grant's row.
    private func exchange(_ family: FamilyToken, tokenHash presented: String, requested: ScopeSet?, client: Client) async throws -> TokenResponse {
        let issuer = tokens.issuer
        if requested == nil {
            let successor = issuer.familyToken(grantID: family.grantID, generation: family.generation + 1)
            if let (grant, user) = try await families.rotateAtOnce(family, tokenHash: presented, clientID: client.id,
                                                                   successor: successor.pending, clock: clock) {
                return try tokens.signedResponse(grant: grant, user: user, client: client, scope: grant.scope, nonce: nil,
                                                 refreshToken: successor.token)
            }
        }
        // The successor's generation is the family's next, which only the transaction knows (a
        // retry skips the one it retires).
        let minted = NIOLockedValueBox<Minted?>(nil)
        let make = successorMaker(requested: requested, client: client, minted: minted) { grant, generation in
            issuer.familyToken(grantID: grant.id, generation: generation ?? 0)
        }
        let makeSuccessor: FamilySuccessorMaker = { try await make($0, $1, $2) }
        if let outcome = try await families.rotateHere(family, tokenHash: presented, clientID: client.id, clock: clock,
                                                       reuseInterval: reuseInterval, makeSuccessor: makeSuccessor) {
            return try answer(outcome, minted: minted, client: client)
        }
        return try await withTaskExecutorPreference(SigningThreads.executor) {
            let outcome = try await families.rotate(family, tokenHash: presented, clientID: client.id, clock: clock,
                                                    reuseInterval: reuseInterval, makeSuccessor: makeSuccessor)
            return try answer(outcome, minted: minted, client: client)
        }
    }

    /// What the rotation's transaction runs for a token it took: the scope (narrowed as `requested`
    /// asks), and everything the answer needs (UserGrantTokens.account), read in the transaction
    /// and kept in `minted`; the successor (`successor` makes it for the grant and, for a family
    /// token, its generation) and its record.
    private func successorMaker(requested: ScopeSet?, client: Client, minted: NIOLockedValueBox<Minted?>,
                                successor: @escaping @Sendable (Grant, Int64?) -> (token: String, pending: PendingRefreshToken))
        -> @Sendable (Grant, Int64?, any TransactionStores) async throws -> RefreshTokenRecord {
        let deviceSessions = deviceSessions, clock = clock
        return { grant, generation, tx in
            let scope: ScopeSet
            do { scope = try ScopePolicy.refresh(requested, granted: grant.scope) } catch let refusal as ScopeRefusal { throw refusal.oauthError }
            let user = try await UserGrantTokens.account(grant.userID, in: tx)
            let dsHash = try await deviceSessions?.dsHash(of: grant, in: tx)
            let made = successor(grant, generation)
            minted.withLockedValue { $0 = Minted(token: made.token, scope: scope, user: user, dsHash: dsHash) }
            return made.pending.record(grantID: grant.id, clientID: client.id, rotatedAt: clock.now(), notAfter: grant.expiresAt)
        }
    }

    static let invalidToken = OAuthError.invalidGrant("The refresh token is invalid, expired or was issued to another client.")

    /// The answer to a rotation's outcome: the tokens it rotated to, signed on the calling thread.
    private func answer(_ outcome: RefreshRotation, minted: NIOLockedValueBox<Minted?>, client: Client) throws -> TokenResponse {
        switch outcome {
        case .rotated(let grant):
            guard let minted = minted.withLockedValue({ $0 }) else { throw OAuthError.serverError(detail: "rotation minted nothing") }
            return try tokens.signedResponse(grant: grant, user: minted.user, client: client, scope: minted.scope, nonce: nil,
                                             refreshToken: minted.token, dsHash: minted.dsHash)
        case .reused:
            Signals.refreshReuse()
            throw OAuthError.invalidGrant("The refresh token was already used; every token of this grant is revoked.")
        case .invalid:
            throw Self.invalidToken
        }
    }
}

/// What a rotation read and made for its answer.
private struct Minted: Sendable {
    let token: String
    let scope: ScopeSet
    let user: User
    let dsHash: String?
}
