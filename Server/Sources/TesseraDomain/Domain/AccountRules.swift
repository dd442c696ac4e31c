import TesseraCore

/// Rules about an account's security that several sign-in methods share, each written
/// once here and run inside the caller's transaction.
package enum AccountRules {
    /// "The address was just proven": a one-time code or a link sent to it came back.
    ///
    /// An account whose address was never verified may have been set up by somebody else
    /// (a squatter who registered the victim's address, or an upstream identity whose
    /// provider had not verified it). When its owner proves the address, whatever was set
    /// up without that proof goes (seed 004, "Security concerns"): the address is marked
    /// verified, the password is removed, identities linked on the unverified address are
    /// unlinked, and every session and grant of the account ends. For an account whose
    /// address was verified already this changes nothing.
    ///
    /// Every method that proves an address calls it: email code sign-in, sign-up by code,
    /// password reset by code, email links. Returns the user as it is now, and whether
    /// anything was removed.
    package static func addressProven(_ user: User, now: Int64, in tx: any TransactionStores) async throws -> (user: User, secured: Bool) {
        guard !user.emailVerified else { return (user, false) }
        try await tx.recordAudit(AuditEvent(.addressProven, at: now, userID: user.id, email: user.email,
                                            detail: user.passwordHash != nil ? "password removed" : nil))
        try await tx.markEmailVerified(userID: user.id, now: now)
        if user.passwordHash != nil { try await tx.removePassword(userID: user.id, now: now) }
        try await tx.removeUnprovenIdentities(userID: user.id)
        try await signOutEverywhere(userID: user.id, now: now, in: tx)
        var secured = user
        secured.emailVerified = true
        secured.passwordHash = nil
        secured.updatedAt = now
        return (secured, true)
    }

    /// Ends every browser session and every token family (grants, their tokens, device sessions) of a user.
    static func signOutEverywhere(userID: String, now: Int64, in tx: any TransactionStores) async throws {
        try await tx.endSessions(userID: userID, now: now)
        try await TokenFamilies.revokeAll(userID: userID, now: now, in: tx)
    }

    /// The owner changed the password: every browser session but theirs (`keepingSession`) ends,
    /// with every grant but the request's own (`keepingGrant`, an app changing it through the
    /// account API), and every Native SSO device session, since whoever knew the old password
    /// may hold any of them.
    static func signOutElsewhere(userID: String, keepingSession sid: String?, keepingGrant grantID: String?, now: Int64,
                                 in tx: any TransactionStores) async throws {
        for session in try await tx.sessions(userID: userID, now: now) where session.sid != sid {
            try await tx.endSession(sid: session.sid, now: now)
        }
        if let grantID {
            try await tx.revokeGrants(userID: userID, except: grantID, now: now)
        } else {
            try await tx.revokeGrants(userID: userID, now: now)
        }
        try await tx.endDeviceSessions(userID: userID, now: now)
    }

    /// Disables an account, whoever asks (an administrator, an import): no way of signing in
    /// works until it is enabled again, and every session and grant ends at once (refresh and
    /// access tokens stop working).
    static func disable(_ userID: String, now: Int64, in tx: any TransactionStores) async throws {
        try await tx.setDisabled(userID: userID, at: now, now: now)
        try await signOutEverywhere(userID: userID, now: now, in: tx)
    }

    /// A new password replaces the old one (a reset proves the address too): every session
    /// and grant ends, since whoever knew the old password may hold them.
    package static func passwordReset(_ user: User, passwordHash: String, now: Int64, clientID: String? = nil, in tx: any TransactionStores) async throws {
        let (_, secured) = try await addressProven(user, now: now, in: tx)
        try await tx.recordAudit(AuditEvent(.passwordReset, at: now, userID: user.id, clientID: clientID, email: user.email))
        try await tx.updatePasswordHash(userID: user.id, hash: passwordHash, now: now)
        if !secured { try await signOutEverywhere(userID: user.id, now: now, in: tx) }  // done already when it was
    }

    /// Deletes an account: its tokens stop working at once (access tokens are checked
    /// against their grant), then the account and everything hanging on it go.
    static func deleteAccount(_ userID: String, now: Int64, by actor: AuditEvent.Actor, detail: String? = nil,
                              in tx: any TransactionStores) async throws {
        let email = try await tx.user(id: userID)?.email
        try await tx.recordAudit(AuditEvent(.accountDeleted, at: now, actor: actor, userID: userID, email: email, detail: detail))
        try await signOutEverywhere(userID: userID, now: now, in: tx)
        try await tx.deleteUser(id: userID)
    }
}
