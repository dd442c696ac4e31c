import Crypto
import Foundation
import TesseraCore

/// A person's second factors besides passkeys: an authenticator app (TOTP, RFC 6238) and
/// recovery codes for the day the phone is lost.
///
/// Setting up the app: a new secret (sealed with the master key), shown as a QR code and as
/// text; the first right code confirms it and makes ten recovery codes, shown once and stored
/// as hashes. Checking a code: a TOTP code of the current step ±1, each step used once (a code
/// seen over a shoulder is spent), or a recovery code, each used once.
///
/// Wrong codes are counted as wrong passwords are (``PasswordSignIn``): five per waiting
/// sign-in, ten per account in 15 minutes from anywhere but a browser the owner signed in
/// from before (its device cookie), which is counted on its own. Only someone who has the
/// first factor gets to guess, and they can't lock the owner's own browser out.
package struct SecondFactors: Sendable {
    package typealias Stores = SecondFactorStore & PasskeyStore & UserStore & ThrottleStore & StoreTransactions
    let store: any Stores
    let secretBox: SecretBox
    /// The authenticator app's label: the product's name.
    let issuerName: String
    let audit: AuditTrail
    let clock: WallClock
    let perSignIn: FailureThrottle
    let perAccount: FailureThrottle
    let perDevice: FailureThrottle

    package init(store: any Stores, secretBox: SecretBox, issuerName: String, audit: AuditTrail, clock: WallClock) {
        self.store = store
        self.secretBox = secretBox
        self.issuerName = issuerName
        self.audit = audit
        self.clock = clock
        perSignIn = FailureThrottle("second-factor:sign-in", limit: 5, window: 900, store: store)
        perAccount = FailureThrottle("second-factor:account", limit: 10, window: 900, store: store)
        perDevice = FailureThrottle("second-factor:device", limit: 5, window: 900, store: store)
    }

    /// Whether a sign-in needs a second factor.
    package var policy: SecondFactorPolicy { SecondFactorPolicy(factors: store) }

    /// Where a code comes from: the sign-in waiting for it, and the browser's device cookie.
    package struct Origin: Sendable {
        package var signIn: String?
        package var device: KnownDevice?

        package init(signIn: String? = nil, device: KnownDevice? = nil) {
            self.signIn = signIn
            self.device = device
        }
    }

    /// How many recovery codes a person gets.
    package static let recoveryCodeCount = 10

    /// An authenticator app being set up: what the person scans or types.
    package struct Enrolment: Sendable {
        /// `otpauth://totp/…` (the QR code's text).
        package var uri: String
        /// The secret in base32, for typing into the app by hand.
        package var secret: String
    }

    /// Starts setting up an authenticator app (replacing one being set up); `.alreadySet` when
    /// the person has a confirmed one.
    package func startTOTP(for user: User) async throws(SecondFactorFailure) -> Enrolment {
        let secret = TOTPSecret()
        do {
            let sealed = try secretBox.seal(secret.bytes, context: Self.sealContext(user.id))
            guard try await store.insertPendingTOTP(TOTPFactor(userID: user.id, sealedSecret: sealed, createdAt: clock.now())) else {
                throw SecondFactorFailure.alreadySet
            }
        } catch let failure as SecondFactorFailure {
            throw failure
        } catch {
            throw .unavailable(error)
        }
        return Enrolment(uri: TOTP(secret: secret).provisioningURI(issuer: issuerName, account: user.email), secret: secret.base32)
    }

    /// The app being set up, again (the page shown a second time), or nil when none is.
    package func pendingTOTP(for user: User) async throws -> Enrolment? {
        guard let factor = try await store.totpFactor(userID: user.id), !factor.isConfirmed else { return nil }
        let secret = TOTPSecret(bytes: try secretBox.open(factor.sealedSecret, context: Self.sealContext(user.id)))
        return Enrolment(uri: TOTP(secret: secret).provisioningURI(issuer: issuerName, account: user.email), secret: secret.base32)
    }

    /// The first code from the app confirms it: answers the recovery codes, shown this once.
    package func confirmTOTP(for user: User, code: String) async throws(SecondFactorFailure) -> [String] {
        do {
            guard let factor = try await store.totpFactor(userID: user.id), !factor.isConfirmed else { throw SecondFactorFailure.notSetUp }
            let totp = TOTP(secret: TOTPSecret(bytes: try secretBox.open(factor.sealedSecret, context: Self.sealContext(user.id))))
            guard let step = totp.matchingStep(Self.digits(code), at: clock.now()) else { throw SecondFactorFailure.wrongCode }
            guard try await store.confirmTOTP(userID: user.id, step: step, now: clock.now()) else { throw SecondFactorFailure.notSetUp }
            let codes = try await newRecoveryCodes(for: user)
            await audit.record(.secondFactorAdded, userID: user.id, email: user.email, detail: "authenticator app")
            return codes
        } catch let failure as SecondFactorFailure {
            throw failure
        } catch {
            throw .unavailable(error)
        }
    }

    /// Whether the person has a confirmed authenticator app.
    package func hasTOTP(_ user: User) async throws -> Bool {
        try await store.totpFactor(userID: user.id)?.isConfirmed == true
    }

    /// Checks a code as the second factor: the app's current code (once per time step) or a
    /// recovery code (once). Answers the methods it adds to the sign-in (RFC 8176: `otp`).
    package func verify(_ user: User, code: String, from origin: Origin = Origin()) async throws(SecondFactorFailure) -> [String] {
        let counters: [(FailureThrottle, String)] = if let device = origin.device, device.userID == user.id {
            [(perDevice, device.id)]
        } else {
            (origin.signIn.map { [(perSignIn, $0)] } ?? []) + [(perAccount, user.id)]
        }
        let attempt: FailureThrottle.Attempt
        do {
            guard let reserved = try await FailureThrottle.reserve(counters, now: clock.now()) else {
                await audit.record(.signInFailed, userID: user.id, email: user.email, detail: "second factor: throttled")
                Signals.throttled("second-factor")
                throw SecondFactorFailure.throttled
            }
            attempt = reserved
        } catch let failure as SecondFactorFailure {
            throw failure
        } catch {
            throw .unavailable(error)
        }
        let methods = try await check(user, code: code)
        do { try await FailureThrottle.forgive(attempt) } catch { throw .unavailable(error) }
        return methods
    }

    /// The code against the app and the recovery codes, uncounted.
    func check(_ user: User, code: String) async throws(SecondFactorFailure) -> [String] {
        do {
            if let factor = try await store.totpFactor(userID: user.id), factor.isConfirmed, Self.digits(code).count == 6 {
                let totp = TOTP(secret: TOTPSecret(bytes: try secretBox.open(factor.sealedSecret, context: Self.sealContext(user.id))))
                guard let step = totp.matchingStep(Self.digits(code), at: clock.now(), after: factor.lastStep) else {
                    throw SecondFactorFailure.wrongCode
                }
                guard try await store.recordTOTPStep(userID: user.id, step: step) else { throw SecondFactorFailure.wrongCode }
                return ["otp"]
            }
            let normalised = Self.recoveryCode(code)
            guard normalised.count == 10, try await store.useRecoveryCode(userID: user.id, hash: tokenHash(normalised), now: clock.now()) else {
                throw SecondFactorFailure.wrongCode
            }
            let left = try await store.recoveryCodesLeft(userID: user.id)
            await audit.record(.recoveryCodeUsed, userID: user.id, email: user.email, detail: "\(left) left")
            return ["otp"]
        } catch let failure as SecondFactorFailure {
            throw failure
        } catch {
            throw .unavailable(error)
        }
    }

    /// How many recovery codes the person has left.
    package func recoveryCodesLeft(for user: User) async throws -> Int {
        try await store.recoveryCodesLeft(userID: user.id)
    }

    /// New recovery codes, replacing the old ones: answers them, shown this once.
    package func newRecoveryCodes(for user: User) async throws -> [String] {
        let codes = (0..<Self.recoveryCodeCount).map { _ in Self.newRecoveryCode() }
        try await store.replaceRecoveryCodes(userID: user.id, hashes: codes.map { tokenHash(Self.recoveryCode($0)) }, now: clock.now())
        return codes
    }

    /// Removes the authenticator app and the recovery codes, together.
    package func removeTOTP(for user: User) async throws {
        let now = clock.now()
        try await store.transaction { tx in
            try await tx.deleteTOTP(userID: user.id)
            try await tx.replaceRecoveryCodes(userID: user.id, hashes: [], now: now)
        }
        await audit.record(.secondFactorRemoved, userID: user.id, email: user.email, detail: "authenticator app")
    }

    // MARK: A sign-in waiting for its second factor

    /// The sealed form of `pending`, for the browser to keep.
    package func seal(_ pending: PendingSecondFactor) throws -> String {
        try secretBox.seal(try JSONEncoder().encode(pending), context: Self.pendingContext)
    }

    /// The waiting sign-in a browser kept, while it is young enough; nil when it isn't one.
    package func pending(_ sealed: String?) -> PendingSecondFactor? {
        guard let sealed, sealed.count <= 4096, let data = try? secretBox.open(sealed, context: Self.pendingContext),
              let pending = try? JSONDecoder().decode(PendingSecondFactor.self, from: data) else { return nil }
        let now = clock.now()
        // Another node may have made it a second "later" by its clock: a little skew is allowed.
        guard pending.issuedAt <= now + Self.clockSkew, now - pending.issuedAt < PendingSecondFactor.lifetime else { return nil }
        return pending
    }

    static let pendingContext = "second-factor-pending"
    /// How far ahead of this node's clock another node's may be.
    static let clockSkew: Int64 = 30

    // MARK: Codes

    /// The sealed secret is bound to its account: moved to another row it doesn't open.
    static func sealContext(_ userID: String) -> String { "totp:" + userID }

    /// The digits of a code as typed ("123 456" → "123456").
    static func digits(_ code: String) -> String { code.filter { !$0.isWhitespace && $0 != "-" } }

    /// A recovery code: ten characters from an alphabet without look-alikes (no 0/O, 1/I/L),
    /// shown as `xxxxx-xxxxx`; 50 bits.
    static let recoveryAlphabet = Array("abcdefghjkmnpqrstuvwxyz23456789")

    static func newRecoveryCode() -> String {
        var generator = SystemRandomNumberGenerator()
        let characters = (0..<10).map { _ in recoveryAlphabet[Int.random(in: 0..<recoveryAlphabet.count, using: &generator)] }
        return String(characters[0..<5]) + "-" + String(characters[5..<10])
    }

    /// A recovery code as typed, the way it is hashed: lower case, without spaces or dashes.
    static func recoveryCode(_ typed: String) -> String {
        String(typed.lowercased().filter { !$0.isWhitespace && $0 != "-" })
    }
}

/// Why a second-factor step was refused.
package enum SecondFactorFailure: Error, Sendable {
    /// Not the app's current code, a code already used, or not a recovery code left.
    case wrongCode
    /// No authenticator app is being set up.
    case notSetUp
    /// One is set up already: remove it first.
    case alreadySet
    /// Too many wrong codes lately: wait.
    case throttled
    case unavailable(any Error)
}
