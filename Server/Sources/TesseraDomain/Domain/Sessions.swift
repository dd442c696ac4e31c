import TesseraCore

/// Browser sessions. The browser holds a random token (its cookie); the store keeps only
/// the token's hash, so reading the database hands out no session.
package struct Sessions: Sendable {
    let store: any SessionStore & StoreTransactions
    let users: any UserStore
    /// Seconds a session lasts from its sign-in.
    let lifetime: Int64
    let clock: WallClock

    package init(store: any SessionStore & StoreTransactions, users: any UserStore, lifetime: Int64, clock: WallClock) {
        self.store = store
        self.users = users
        self.lifetime = lifetime
        self.clock = clock
    }

    /// How often a session's "last seen" is written: at most once a minute, not on every request.
    static let lastSeenResolution: Int64 = 60

    /// The live session a browser's token stands for, its "last seen" brought up to date.
    package func session(token: String) async throws -> BrowserSession? {
        let now = clock.now(), hash = tokenHash(token)
        guard var session = try await store.session(tokenHash: hash, now: now) else { return nil }
        if now - session.lastSeenAt >= Self.lastSeenResolution {
            try await store.touchSession(tokenHash: hash, now: now)
            session.lastSeenAt = now
        }
        return session
    }

    /// The user's live browser sessions, the latest sign-in first.
    package func sessions(of userID: String) async throws -> [BrowserSession] {
        try await store.sessions(userID: userID, now: clock.now())
    }

    /// A new session for a browser that just signed in, and the token the browser keeps.
    /// The session the browser had before (`previousToken`) ends: one browser, one live
    /// session, and a token that leaked before the sign-in is worth nothing after it.
    /// Throws ``AccountDisabled`` for an account an administrator disabled, whichever way it signed in.
    package func start(userID: String, amr: [String], device: SessionDevice = SessionDevice(),
                       replacing previousToken: String?) async throws -> (session: BrowserSession, token: String) {
        let now = clock.now()
        if try await users.user(id: userID)?.isDisabled != false { throw AccountDisabled() }
        if let previousToken, !previousToken.isEmpty {
            try await store.revokeSession(tokenHash: tokenHash(previousToken), now: now)
        }
        let token = SecureRandom.token()
        var session = BrowserSession(sid: SecureRandom.token(bytes: 16), userID: userID, authTime: now, amr: amr,
                                     expiresAt: now + lifetime)
        session.device = device
        try await store.insertSession(tokenHash: tokenHash(token), session, now: now)
        return (session, token)
    }

    /// Ends a session (RP-initiated logout, or the user signing out), with the grants made in it
    /// that were not for offline access.
    package func end(_ session: BrowserSession) async throws {
        let now = clock.now()
        try await store.transaction { tx in try await TokenFamilies.sessionEnded(sid: session.sid, now: now, in: tx) }
    }
}

/// An administrator disabled the account: no sign-in gives it a session or tokens.
public struct AccountDisabled: Error, Sendable, Equatable {
    public init() {}
}
