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
package struct SecondFactors: Sendable {
    package typealias Stores = SecondFactorStore & UserStore
    let store: any Stores
    let secretBox: SecretBox
    /// The authenticator app's label: the product's name.
    let issuerName: String
    let audit: AuditTrail
    let clock: WallClock

    package init(store: any Stores, secretBox: SecretBox, issuerName: String, audit: AuditTrail, clock: WallClock) {
        self.store = store
        self.secretBox = secretBox
        self.issuerName = issuerName
        self.audit = audit
        self.clock = clock
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
    package func verify(_ user: User, code: String) async throws(SecondFactorFailure) -> [String] {
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

    /// New recovery codes, replacing the old ones: answers them, shown this once.
    package func newRecoveryCodes(for user: User) async throws -> [String] {
        let codes = (0..<Self.recoveryCodeCount).map { _ in Self.newRecoveryCode() }
        try await store.replaceRecoveryCodes(userID: user.id, hashes: codes.map { tokenHash(Self.recoveryCode($0)) }, now: clock.now())
        return codes
    }

    /// Removes the authenticator app and the recovery codes.
    package func removeTOTP(for user: User) async throws {
        try await store.deleteTOTP(userID: user.id)
        try await store.replaceRecoveryCodes(userID: user.id, hashes: [], now: clock.now())
        await audit.record(.secondFactorRemoved, userID: user.id, email: user.email, detail: "authenticator app")
    }

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
    case unavailable(any Error)
}
