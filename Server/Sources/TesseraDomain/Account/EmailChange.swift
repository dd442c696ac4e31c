import TesseraCore

/// Changing the account's address: a one-time code goes to the new address, and the change is
/// made when it comes back, so nobody moves an account to an address they can't read. The old
/// address is told. A new address that has an account of its own gets a notice instead of a
/// code, and no code matches: the answers are the same, so the form tells nobody which
/// addresses have accounts.
extension SelfService {
    /// A change waiting for its code: `id` goes back with the code.
    package struct PendingChange: Sendable, Equatable {
        package var id: String
        /// The new address, masked (`a***e@e*****e.com`).
        package var target: String
        package var newEmail: String
        package var codeLength: Int
        package var expiresIn: Int64
    }

    /// Mails a code to `address`; the owner's sign-in must be recent (an intruder who moved the
    /// address would then reset the password).
    package func startEmailChange(_ owner: Owner, to address: String, recentSignIn: Bool) async throws(SelfServiceError) -> PendingChange {
        let email = MailAddress.normalise(address)
        guard MailAddress.isPlausible(email), email != owner.user.email else { throw .invalidAddress }
        guard recentSignIn else { throw .recentSignInRequired("email") }
        let now = clock.now()
        let id = SecureRandom.token(bytes: 16)
        let code = EmailCodes.randomDigits(codes.codeLength)
        do {
            try await mailLimits.check(email: email, clientAddress: owner.origin.address)
            let taken = try await store.user(email: email) != nil
            let change = PendingEmailChange(id: id, userID: owner.user.id, newEmail: email,
                                            codeHash: taken ? "unmatchable:" + SecureRandom.token() : EmailCodes.codeHash(code, flow: id),
                                            createdAt: now, expiresAt: now + codes.codeLifetime)
            try await store.insertEmailChange(change)
            try await mailLimits.record(email: email, clientAddress: owner.origin.address)
            let message: Email = taken ? .emailChangeTaken : .emailChangeCode(code: code, minutes: Int((codes.codeLifetime + 59) / 60))
            try await mail.send(message, to: email, language: owner.language, flow: "email-change", expiresAt: change.expiresAt)
        } catch FlowFailure.tooManyCodes {
            throw .tooManyCodes
        } catch { throw .unavailable(error) }
        return PendingChange(id: id, target: EmailCodes.mask(email), newEmail: email, codeLength: codes.codeLength,
                             expiresIn: codes.codeLifetime)
    }

    /// The owner's pending change of this id, to show its code form again.
    package func pendingEmailChange(_ owner: Owner, id: String) async throws -> PendingChange? {
        guard id.count <= 64, let change = try await store.emailChange(id: id, userID: owner.user.id, now: clock.now()) else { return nil }
        return PendingChange(id: id, target: EmailCodes.mask(change.newEmail), newEmail: change.newEmail, codeLength: codes.codeLength,
                             expiresIn: change.expiresAt - clock.now())
    }

    /// The code from the new address: the account takes it (verified), and the old one is told.
    package func confirmEmailChange(_ owner: Owner, id: String, code: String) async throws(SelfServiceError) -> User {
        let now = clock.now()
        let change: PendingEmailChange
        do {
            guard id.count <= 64, let found = try await store.emailChange(id: id, userID: owner.user.id, now: now) else {
                throw SelfServiceError.expiredChange
            }
            change = found
            guard let used = try await store.reserveEmailChangeAttempt(id: id, limit: codes.maxCodeAttempts) else {
                try await store.deleteEmailChange(id: id)
                throw SelfServiceError.expiredChange
            }
            let entered = code.trimmingCharacters(in: .whitespaces)
            let matches = entered.count == codes.codeLength && entered.allSatisfy { $0.isASCII && $0.isNumber }
                && constantTimeEquals(Array(EmailCodes.codeHash(entered, flow: id).utf8), Array(change.codeHash.utf8))
            guard matches else { throw SelfServiceError.wrongCode(attemptsLeft: codes.maxCodeAttempts - used) }
        } catch let error as SelfServiceError { throw error } catch { throw .unavailable(error) }
        let old = owner.user.email
        let event = AuditEvent(.userChanged, at: now, actor: .user, userID: owner.user.id, clientID: owner.origin.clientID,
                               email: change.newEmail, detail: "email changed from \(old) to \(change.newEmail) by the user")
        do {
            try await store.transaction { tx in
                try await tx.deleteEmailChange(id: id)
                try await tx.changeEmail(userID: owner.user.id, to: change.newEmail, now: now)
                try await tx.recordAudit(event)
            }
        } catch StoreError.duplicate {
            throw .expiredChange  // the address got an account of its own meanwhile
        } catch { throw .unavailable(error) }
        try? await mail.send(.emailChanged(newEmail: change.newEmail), to: old, language: owner.language, flow: "email-change", expiresAt: nil)
        var user = owner.user
        user.email = change.newEmail
        user.emailVerified = true
        user.updatedAt = now
        user.version += 1
        return user
    }
}
