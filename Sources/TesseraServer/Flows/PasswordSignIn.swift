import TesseraCore

/// Signing in with email and password, for every page that offers it.
///
/// A wrong email and a wrong password give the same answer and cost the same time (the
/// hasher checks a decoy hash when there is no account). Failures are counted per account
/// and per client address; past the limit every attempt is refused, the right password too.
public struct PasswordSignIn: Sendable {
    let users: any UserStore
    let passwords: PasswordHasher
    let accountThrottle: FailureThrottle
    let addressThrottle: FailureThrottle
    let clock: WallClock

    public enum Failure: Error, Sendable {
        case badCredentials
        case throttled
    }

    public func signIn(email: String, password: String, clientAddress: String) async throws -> Result<User, Failure> {
        let now = clock.now()
        let email = email.trimmingCharacters(in: .whitespaces).lowercased()
        let accountKey = "account:" + email, addressKey = "address:" + clientAddress
        if accountThrottle.isBlocked(accountKey, now: now) || addressThrottle.isBlocked(addressKey, now: now) {
            return .failure(.throttled)
        }
        let user = try await users.user(email: email)
        let verification = try await passwords.verify(password, against: user?.passwordHash)
        guard let user, verification.matches else {
            accountThrottle.recordFailure(accountKey, now: now)
            addressThrottle.recordFailure(addressKey, now: now)
            return .failure(.badCredentials)
        }
        accountThrottle.reset(accountKey)
        if verification.needsRehash {
            try await users.updatePasswordHash(userID: user.id, hash: try await passwords.hash(password), now: now)
        }
        return .success(user)
    }
}
