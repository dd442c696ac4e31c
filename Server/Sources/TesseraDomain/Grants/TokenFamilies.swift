import TesseraCore

/// The rules of a token family: a grant, the authorization code it came from, and its chain of
/// refresh tokens, each replacing the one before (RFC 9700 §4.14.2). Everything that decides
/// "replayed", "reused", "retried" or "revoke the family" is here, run inside one transaction
/// over the store's primitives (take a code, take a token, retire a successor, revoke a family),
/// so it is the same on SQLite and PostgreSQL and on any number of nodes.
///
/// Why it is race-free at PostgreSQL's READ COMMITTED: every single-use thing is taken by one
/// conditional write, so of two requests racing for it on one node or two, one takes it and the
/// other waits for that one's commit, then finds nothing to take.
package struct TokenFamilies: Sendable {
    let store: any StoreTransactions

    package init(store: any StoreTransactions) {
        self.store = store
    }

    // MARK: Codes

    /// Redeems a code: it is taken, and the grant it makes (with its first refresh token)
    /// recorded, at once. A code taken before is a replay: the grant of its first redemption
    /// is revoked (RFC 6749 §4.1.2, RFC 9700 §4.5).
    package func redeem(codeHash: String, grant: Grant, refreshToken: RefreshTokenRecord?, now: Int64) async throws -> CodeRedemption {
        try await store.transaction { tx in
            guard try await tx.takeCode(codeHash: codeHash, grantID: grant.id, now: now) else {
                guard let code = try await tx.code(codeHash: codeHash) else { return .notFound }
                try await Self.replayed(code, now: now, in: tx)
                return .replayed
            }
            try await tx.insertGrant(grant, refreshToken: refreshToken)
            return .redeemed
        }
    }

    /// A code presented again after its redemption: every token its grant holds stops working.
    package func replayed(_ code: AuthorizationCodeRecord, now: Int64) async throws {
        try await store.transaction { tx in try await Self.replayed(code, now: now, in: tx) }
    }

    private static func replayed(_ code: AuthorizationCodeRecord, now: Int64, in tx: any TransactionStores) async throws {
        if let grantID = code.grantID { try await tx.revokeGrant(id: grantID, now: now) }
    }

    // MARK: Refresh tokens

    /// Replaces a refresh token with the successor `makeSuccessor` builds for its grant (which may
    /// throw to refuse, changing nothing, and reads in the transaction whatever the answer needs:
    /// once the rotation commits, building the answer must not need the database, or an outage in
    /// between would answer 503 for a rotation that happened, and the client's retry, long after,
    /// would be taken for reuse). Presenting a rotated token revokes the family; within
    /// `reuseInterval` seconds of its rotation, a token whose successor nobody has used yet may be
    /// presented again (a retry after a lost answer): that successor is retired and another
    /// issued. 0 allows no retry.
    ///
    /// The rotation is dated by `clock` once the transaction has its connection: a refresh that
    /// waited for the database is dated when it rotates, not when it arrived, so the client's
    /// retry that follows is within the reuse interval of the rotation it retries.
    package func rotate(tokenHash: String, clientID: String, clock: WallClock, reuseInterval: Int64,
                        makeSuccessor: @escaping @Sendable (Grant, any TransactionStores) async throws -> RefreshTokenRecord)
        async throws -> RefreshRotation {
        try await store.transaction { tx in
            try await Self.rotation(tokenHash, clientID: clientID, clock: clock, reuseInterval: reuseInterval, makeSuccessor, in: tx)
        }
    }

    /// ``rotate(tokenHash:clientID:clock:reuseInterval:makeSuccessor:)`` on the calling thread,
    /// where the database can begin its transaction there at once (``StoreTransactions/transactionHere(_:)``);
    /// nil, having changed nothing, where it can't.
    package func rotateHere(tokenHash: String, clientID: String, clock: WallClock, reuseInterval: Int64,
                            makeSuccessor: @escaping @Sendable (Grant, any TransactionStores) async throws -> RefreshTokenRecord)
        async throws -> RefreshRotation? {
        try await store.transactionHere { tx in
            try await Self.rotation(tokenHash, clientID: clientID, clock: clock, reuseInterval: reuseInterval, makeSuccessor, in: tx)
        }
    }

    private static func rotation(_ tokenHash: String, clientID: String, clock: WallClock, reuseInterval: Int64,
                                 _ makeSuccessor: @Sendable (Grant, any TransactionStores) async throws -> RefreshTokenRecord,
                                 in tx: any TransactionStores) async throws -> RefreshRotation {
        let now = clock.now()
        if let grantID = try await tx.takeRefreshToken(tokenHash: tokenHash, clientID: clientID, now: now) {
            return try await replace(tokenHash, grantID: grantID, now: now, makeSuccessor, in: tx)
        }
        // Unknown, expired, bound to another client (which says nothing about this client's
        // tokens), or used before. The token's state is read once a rotation of it under way
        // elsewhere has committed: retries within the reuse interval take turns.
        guard let used = try await tx.settledRefreshToken(tokenHash: tokenHash), used.clientID == clientID,
              let usedAt = used.usedAt else {
            return .invalid
        }
        if reuseInterval > 0, now - usedAt < reuseInterval, used.expiresAt > now,
           // A retry of a refresh whose answer was lost (a node died, the network dropped it):
           // the successor nobody has used is retired and another takes its place. Had the
           // successor been used, the family's chain has moved on and this is a replay.
           try await tx.retireSuccessor(of: tokenHash, grantID: used.grantID, now: now) {
            return try await replace(tokenHash, grantID: used.grantID, now: now, makeSuccessor, in: tx)
        }
        // Reuse revokes the whole family.
        try await tx.revokeGrant(id: used.grantID, now: now)
        return .reused
    }

    /// The common rotation (a live token of a live grant, presented once) in one statement where
    /// the database can: the grant and its user, or nil when it took nothing, and ``rotate(tokenHash:clientID:clock:reuseInterval:makeSuccessor:)``
    /// must decide (see ``StoreTransactions/rotateRefreshTokenAtOnce(tokenHash:clientID:successor:clock:)``).
    package func rotateAtOnce(tokenHash: String, clientID: String, successor: PendingRefreshToken,
                              clock: WallClock) async throws -> (grant: Grant, user: User)? {
        try await store.rotateRefreshTokenAtOnce(tokenHash: tokenHash, clientID: clientID, successor: successor, clock: clock)
    }

    /// Rotation at a fixed time `now`.
    package func rotate(tokenHash: String, clientID: String, now: Int64, reuseInterval: Int64 = 0,
                        makeSuccessor: @escaping @Sendable (Grant) throws -> RefreshTokenRecord) async throws -> RefreshRotation {
        try await rotate(tokenHash: tokenHash, clientID: clientID, clock: WallClock { now }, reuseInterval: reuseInterval,
                         makeSuccessor: { grant, _ in try makeSuccessor(grant) })
    }

    // MARK: Family tokens

    /// ``rotate(tokenHash:clientID:clock:reuseInterval:makeSuccessor:)`` for a ``FamilyToken``
    /// (`tokenHash` is its hash), whose family keeps its current token on the grant's row:
    /// `makeSuccessor` makes the successor of the generation it is given. The same rules, read
    /// from the row: the current token is rotated; the one it replaced may be presented again
    /// within `reuseInterval` seconds of that rotation (its successor, the current token, is then
    /// retired and another issued); any other token of an earlier generation was used, and
    /// presenting it revokes the family.
    package func rotate(_ token: FamilyToken, tokenHash: String, clientID: String, clock: WallClock, reuseInterval: Int64,
                        makeSuccessor: @escaping FamilySuccessorMaker) async throws -> RefreshRotation {
        try await store.transaction { tx in
            try await Self.rotation(token, tokenHash: tokenHash, clientID: clientID, clock: clock, reuseInterval: reuseInterval,
                                    makeSuccessor, in: tx)
        }
    }

    /// ``rotate(_:tokenHash:clientID:clock:reuseInterval:makeSuccessor:)`` on the calling thread,
    /// where the database can begin its transaction there at once; nil, having changed nothing,
    /// where it can't.
    package func rotateHere(_ token: FamilyToken, tokenHash: String, clientID: String, clock: WallClock, reuseInterval: Int64,
                            makeSuccessor: @escaping FamilySuccessorMaker) async throws -> RefreshRotation? {
        try await store.transactionHere { tx in
            try await Self.rotation(token, tokenHash: tokenHash, clientID: clientID, clock: clock, reuseInterval: reuseInterval,
                                    makeSuccessor, in: tx)
        }
    }

    /// The common rotation of a family token (its family's current one, presented once) at once
    /// where the database can (``StoreTransactions/rotateFamilyTokenAtOnce(grantID:tokenHash:clientID:successor:clock:)``):
    /// the grant and its user, or nil when it took nothing.
    package func rotateAtOnce(_ token: FamilyToken, tokenHash: String, clientID: String, successor: PendingRefreshToken,
                              clock: WallClock) async throws -> (grant: Grant, user: User)? {
        try await store.rotateFamilyTokenAtOnce(grantID: token.grantID, tokenHash: tokenHash, clientID: clientID, successor: successor,
                                                clock: clock)
    }

    private static func rotation(_ token: FamilyToken, tokenHash: String, clientID: String, clock: WallClock, reuseInterval: Int64,
                                 _ makeSuccessor: FamilySuccessorMaker, in tx: any TransactionStores) async throws -> RefreshRotation {
        let now = clock.now()
        // Another client's grant says nothing about this client's tokens.
        guard let family = try await tx.settledFamily(grantID: token.grantID), family.clientID == clientID,
              let current = family.tokenHash else {
            return .invalid
        }
        if constantTimeEquals(Array(current.utf8), Array(tokenHash.utf8)) {
            guard family.expiresAt > now else { return .invalid }
            return try await replace(token.grantID, family, predecessor: token.generation, rotatedAt: now, now: now, makeSuccessor, in: tx)
        }
        // A token of a later generation, or another of the current one, was never issued.
        guard token.generation < family.generation else { return .invalid }
        if reuseInterval > 0, token.generation == family.predecessor, let rotatedAt = family.rotatedAt, now - rotatedAt < reuseInterval,
           family.expiresAt > now {
            // A retry of a refresh whose answer was lost: its successor, the current token, had
            // not been used (the family would have moved on), so it is retired and another
            // takes its place, as the successor of the same rotation.
            return try await replace(token.grantID, family, predecessor: token.generation, rotatedAt: rotatedAt, now: now,
                                     makeSuccessor, in: tx)
        }
        // Reuse revokes the whole family.
        try await tx.revokeGrant(id: token.grantID, now: now)
        return .reused
    }

    /// Issues the next generation of a family token when its grant still holds.
    private static func replace(_ grantID: String, _ family: FamilyTokenState, predecessor: Int64, rotatedAt: Int64, now: Int64,
                                _ makeSuccessor: FamilySuccessorMaker, in tx: any TransactionStores) async throws -> RefreshRotation {
        guard let grant = try await tx.grant(id: grantID), grant.revokedAt == nil, grant.expiresAt > now else { return .invalid }
        let generation = family.generation + 1
        let successor = try await makeSuccessor(grant, generation, tx)
        try await tx.replaceFamilyToken(successor, generation: generation, predecessor: predecessor, rotatedAt: rotatedAt)
        return .rotated(grant)
    }

    /// Issues the successor of a token just taken, when its grant still holds.
    private static func replace(_ tokenHash: String, grantID: String, now: Int64,
                                _ makeSuccessor: @Sendable (Grant, any TransactionStores) async throws -> RefreshTokenRecord,
                                in tx: any TransactionStores) async throws -> RefreshRotation {
        guard let grant = try await tx.grant(id: grantID), grant.revokedAt == nil, grant.expiresAt > now else {
            return .invalid
        }
        try await tx.insertRefreshToken(try await makeSuccessor(grant, tx), replacing: tokenHash, now: now)
        return .rotated(grant)
    }

    // MARK: Whole families

    /// Every family of a user ends: each grant is revoked with its tokens, and each Native SSO
    /// device session ends (it would make new grants for the vendor's other apps).
    package static func revokeAll(userID: String, now: Int64, in tx: any TransactionStores) async throws {
        try await tx.revokeGrants(userID: userID, now: now)
        try await tx.endDeviceSessions(userID: userID, now: now)
    }

    /// A browser session ends (its user signs out, or RP-initiated logout): every family made
    /// in it ends too, except offline ones (`offline_access`: the app was granted access that
    /// outlives the session).
    package static func sessionEnded(sid: String, now: Int64, in tx: any TransactionStores) async throws {
        try await tx.endSession(sid: sid, now: now)
        for grant in try await tx.liveGrants(sid: sid) where !grant.scope.contains(ScopeCatalogue.offlineAccess) {
            try await tx.revokeGrant(id: grant.id, now: now)
        }
    }

    /// The user withdraws a client's consent: every family the user gave that client ends with it.
    package static func consentWithdrawn(userID: String, clientID: String, now: Int64, in tx: any TransactionStores) async throws {
        try await tx.deleteConsent(userID: userID, clientID: clientID)
        try await tx.revokeGrants(userID: userID, clientID: clientID, now: now)
    }

    /// Ends a device session, and with it the family of every app that joined it. True when it
    /// was live.
    package func endDeviceSession(id: String, now: Int64) async throws -> Bool {
        try await store.transaction { tx in
            let ended = try await tx.endDeviceSession(id: id, now: now)
            try await tx.revokeGrants(deviceSessionID: id, now: now)
            return ended
        }
    }
}

/// Makes a family token's successor of the given generation for its grant, in the rotation's transaction.
package typealias FamilySuccessorMaker = @Sendable (Grant, _ generation: Int64, any TransactionStores) async throws -> RefreshTokenRecord
