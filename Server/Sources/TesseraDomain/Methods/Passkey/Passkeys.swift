import Crypto
import Foundation
import TesseraCore
import TesseraWebAuthn

/// Where passkeys live: the relying party (the issuer's host, or a parent domain the operator
/// names) and the origins whose pages and apps may use them.
package struct PasskeySettings: Sendable {
    /// The RP ID (WebAuthn §5.1.4.2): a passkey is bound to it for ever, so it's chosen once.
    package var relyingPartyID: String
    /// Shown by the authenticator when a passkey is made ("Acme ID").
    package var relyingPartyName: String
    /// The issuer's origin and any others allowed (an Android app's `android:apk-key-hash:…`).
    package var origins: Set<String>
    /// How long a ceremony's challenge works.
    package var challengeLifetime: Int64 = 300

    package init(relyingPartyID: String, relyingPartyName: String, origins: Set<String>) {
        self.relyingPartyID = relyingPartyID
        self.relyingPartyName = relyingPartyName
        self.origins = origins
    }

    var relyingParty: RelyingParty { RelyingParty(id: relyingPartyID, origins: origins) }
}

/// Passkeys (WebAuthn Level 3): registering one to a signed-in account, signing in with any of
/// them without typing an address (discoverable credentials), and looking after them.
///
/// Each ceremony starts with a challenge made here: 32 random bytes, single use, working for
/// ``PasskeySettings/challengeLifetime``, stored as its hash with what it is for (a
/// registration names the account; a sign-in may name the login page's interaction). The
/// answer's client data carries the challenge back: it is taken out of the store before
/// anything else is believed, so a replayed answer finds none.
package struct Passkeys: Sendable {
    package typealias Stores = PasskeyStore & UserStore & IdentityStore & ClientStore
    let store: any Stores
    let settings: PasskeySettings
    let audit: AuditTrail
    let clock: WallClock

    package init(store: any Stores, settings: PasskeySettings, audit: AuditTrail, clock: WallClock) {
        self.store = store
        self.settings = settings
        self.audit = audit
        self.clock = clock
    }

    /// The algorithms offered, in order of preference (COSE numbers).
    static let algorithms: [COSEAlgorithm] = [.es256, .edDSA, .rs256]
    /// The most passkeys one account may hold.
    package static let limit = 20
    /// The longest name a passkey may have.
    package static let nameLimit = 64

    /// The relying party with its origins: the settings', and those of the operator's own
    /// Android apps (`android:apk-key-hash:` of each signing certificate of a first-party
    /// client's `--android-app`), whose passkeys are the issuer's (assetlinks.json's
    /// `get_login_creds`).
    func relyingParty() async throws -> RelyingParty {
        var origins = settings.origins
        for (links, firstParty, _) in try await store.clientAppLinks() where firstParty {
            for app in links.androidApps {
                for fingerprint in app.certificateFingerprints {
                    if let origin = Self.androidOrigin(fingerprint) { origins.insert(origin) }
                }
            }
        }
        return RelyingParty(id: settings.relyingPartyID, origins: origins)
    }

    /// `android:apk-key-hash:` and the base64url (unpadded) SHA-256 of the signing certificate,
    /// from its fingerprint as `AA:BB:…`; nil for one that isn't 32 bytes of hex.
    package static func androidOrigin(_ fingerprint: String) -> String? {
        let hex = fingerprint.replacingOccurrences(of: ":", with: "")
        guard hex.count == 64, let bytes = Data(hex: hex) else { return nil }
        return "android:apk-key-hash:" + Base64URL.encode(bytes)
    }

    /// The user handle WebAuthn stores with the passkey (§5.4.3): opaque, derived from the
    /// account's id so the authenticator never holds the address or the id itself.
    package static func userHandle(for userID: String) -> Data {
        Data(SHA256.hash(data: Data("tessera-user-handle:\(userID)".utf8)))
    }

    // MARK: Registration

    /// The options for `navigator.credentials.create`: a new challenge for `user`, the passkeys
    /// they have (so an authenticator holding one says so), a discoverable credential required.
    package func creationOptions(for user: User) async throws -> PasskeyCreationOptions {
        let challenge = try await newChallenge(.registration, userID: user.id, binding: nil)
        let existing = try await store.passkeys(userID: user.id)
        let displayName = user.profile["name"]?.stringValue ?? user.email
        return PasskeyCreationOptions(
            rp: .init(id: settings.relyingPartyID, name: settings.relyingPartyName),
            user: .init(id: Base64URL.encode(Self.userHandle(for: user.id)), name: user.email, displayName: displayName),
            challenge: challenge, pubKeyCredParams: Self.algorithms.map { .init(alg: $0.rawValue) },
            timeout: Int(settings.challengeLifetime) * 1000,
            excludeCredentials: existing.map { PasskeyDescriptor(id: $0.id, transports: $0.transports.isEmpty ? nil : $0.transports) },
            authenticatorSelection: .init(residentKey: "required", requireResidentKey: true, userVerification: "preferred"),
            attestation: "none")
    }

    /// Verifies what `navigator.credentials.create` answered and stores the passkey as `user`'s.
    package func register(_ registration: PasskeyRegistration, for user: User, name: String?) async throws(PasskeyFailure) -> Passkey {
        guard let clientDataJSON = Base64URL.decode(registration.response.clientDataJSON),
              let attestationObject = Base64URL.decode(registration.response.attestationObject) else {
            throw .invalid("the response's clientDataJSON or attestationObject is not base64url")
        }
        let challenge = try await takeChallenge(in: clientDataJSON)
        guard challenge.purpose == .registration, challenge.userID == user.id else {
            throw .invalid("the challenge was not given to register a passkey for this account")
        }
        let result: RegistrationResult
        do {
            result = try WebAuthn.verifyRegistration(clientDataJSON: clientDataJSON, attestationObject: attestationObject,
                                                     expectedChallenge: challenge.bytes, relyingParty: try await relyingParty(),
                                                     requireUserVerification: false, allowedAlgorithms: Set(Self.algorithms))
        } catch {
            throw .invalid(String(describing: error))
        }
        let now = clock.now()
        let passkey = Passkey(id: Base64URL.encode(result.credentialID), userID: user.id, publicKey: result.publicKey.coseBytes,
                              algorithm: result.publicKey.algorithm.rawValue, signCount: Int64(result.signCount),
                              transports: Self.transports(registration.response.transports), backupEligible: result.backupEligible,
                              backedUp: result.backedUp, aaguid: Self.uuidText(result.aaguid), attestationFormat: result.attestationFormat,
                              name: Self.name(name, backupEligible: result.backupEligible), createdAt: now)
        do {
            guard try await store.passkeys(userID: user.id).count < Self.limit else { throw PasskeyFailure.tooMany }
            try await store.insertPasskey(passkey)
        } catch let failure as PasskeyFailure {
            throw failure
        } catch StoreError.duplicate {
            throw .alreadyRegistered
        } catch {
            throw .unavailable(error)
        }
        await audit.record(.passkeyAdded, userID: user.id, email: user.email,
                           detail: "\(passkey.name) (\(passkey.backupEligible ? "synced" : "device-bound"), \(passkey.attestationFormat))")
        return passkey
    }

    // MARK: Signing in

    /// The options for `navigator.credentials.get`: a new challenge, no credentials listed (the
    /// authenticator offers the ones it holds). `binding` ties it to one login page.
    package func requestOptions(binding: String?) async throws -> PasskeyRequestOptions {
        let challenge = try await newChallenge(.signIn, userID: nil, binding: binding)
        return PasskeyRequestOptions(challenge: challenge, timeout: Int(settings.challengeLifetime) * 1000, rpId: settings.relyingPartyID,
                                     allowCredentials: [], userVerification: "preferred")
    }

    /// Who signed in with a passkey, and how (`amr`).
    package struct SignedIn: Sendable {
        package var user: User
        package var passkey: Passkey
        package var amr: [String]
    }

    /// Verifies what `navigator.credentials.get` answered: the challenge (given for `binding`),
    /// the passkey's signature and its counter, the account.
    package func signIn(_ assertion: PasskeyAssertion, binding: String?) async throws(PasskeyFailure) -> SignedIn {
        do {
            let signedIn = try await verify(assertion, binding: binding)
            Signals.signIn("passkey", "success")
            return signedIn
        } catch {
            switch error {
            case .challengeExpired: Signals.signIn("passkey", "expired")
            case .unavailable: break
            default: Signals.signIn("passkey", "failure")
            }
            throw error
        }
    }

    private func verify(_ assertion: PasskeyAssertion, binding: String?) async throws(PasskeyFailure) -> SignedIn {
        guard let clientDataJSON = Base64URL.decode(assertion.response.clientDataJSON),
              let authenticatorData = Base64URL.decode(assertion.response.authenticatorData),
              let signature = Base64URL.decode(assertion.response.signature) else {
            throw .invalid("the response's clientDataJSON, authenticatorData or signature is not base64url")
        }
        let challenge = try await takeChallenge(in: clientDataJSON)
        guard challenge.purpose == .signIn, challenge.binding == binding else {
            throw .invalid("the challenge was not given to sign in here")
        }
        let passkey: Passkey
        let user: User
        do {
            guard let found = try await store.passkey(id: assertion.id), found.id == assertion.rawId else { throw PasskeyFailure.unknownPasskey }
            guard let owner = try await store.user(id: found.userID) else { throw PasskeyFailure.unknownPasskey }
            passkey = found
            user = owner
        } catch let failure as PasskeyFailure {
            throw failure
        } catch {
            throw .unavailable(error)
        }
        // A discoverable credential names its account: it must be this passkey's.
        if let handle = assertion.response.userHandle, !handle.isEmpty {
            guard let bytes = Base64URL.decode(handle), constantTimeEquals(bytes, Self.userHandle(for: user.id)) else {
                throw .invalid("the user handle is not the passkey's account")
            }
        }
        guard !passkey.isSuspended else { throw .suspended }
        let result: AssertionResult
        do {
            let key = try CredentialPublicKey(cose: passkey.publicKey)
            result = try WebAuthn.verifyAssertion(clientDataJSON: clientDataJSON, authenticatorData: authenticatorData, signature: signature,
                                                  expectedChallenge: challenge.bytes, relyingParty: try await relyingParty(),
                                                  credentialPublicKey: key, storedSignCount: UInt32(clamping: passkey.signCount),
                                                  requireUserVerification: false)
        } catch {
            throw .invalid(String(describing: error))
        }
        // Backup eligibility is fixed when a credential is made (§6.1.3; §7.2 step 19).
        guard result.backupEligible == passkey.backupEligible else {
            throw .invalid("the authenticator data's BE flag (\(result.backupEligible)) is not the one registered (\(passkey.backupEligible))")
        }
        let now = clock.now()
        do {
            if result.counter == .wentBackwards, !(passkey.backupEligible && result.signCount == 0) {
                try await store.suspendPasskey(id: passkey.id, now: now)
                await audit.record(.passkeySuspended, actor: .system, userID: user.id, email: user.email,
                                   detail: "\(passkey.name): its counter went from \(passkey.signCount) to \(result.signCount)")
                throw PasskeyFailure.suspended
            }
            guard try await store.recordPasskeyUse(id: passkey.id, expectedSignCount: passkey.signCount,
                                                   signCount: max(passkey.signCount, Int64(result.signCount)),
                                                   backedUp: result.backedUp, now: now) else {
                throw PasskeyFailure.invalid("the passkey was used by another sign-in at the same moment")
            }
        } catch let failure as PasskeyFailure {
            throw failure
        } catch {
            throw .unavailable(error)
        }
        guard !user.isDisabled else { throw .accountDisabled }
        return SignedIn(user: user, passkey: passkey,
                        amr: AuthenticationContext.passkeyMethods(userVerified: result.userVerified, synced: passkey.backupEligible))
    }

    // MARK: Looking after them

    package func passkeys(of userID: String) async throws -> [Passkey] {
        try await store.passkeys(userID: userID)
    }

    /// False when the user has no passkey of that id.
    package func rename(_ id: String, of user: User, to name: String) async throws(PasskeyFailure) -> Bool {
        guard let valid = Self.validName(name) else { throw .invalidName }
        do { return try await store.renamePasskey(id: id, userID: user.id, name: valid) } catch { throw .unavailable(error) }
    }

    /// Removes one of the user's passkeys, unless it is their last way in (no verified address,
    /// no password, no provider, no other passkey). False when they have none of that id.
    package func remove(_ id: String, of user: User) async throws(PasskeyFailure) -> Bool {
        do {
            let all = try await store.passkeys(userID: user.id)
            guard let passkey = all.first(where: { $0.id == id }) else { return false }
            let others = all.filter { $0.id != id }
            let identities = try await store.identities(userID: user.id)
            guard user.passwordHash != nil || SelfService.hasAnotherWayIn(user, identities: identities, passkeys: others) else {
                throw PasskeyFailure.lastWayIn
            }
            guard try await store.deletePasskey(id: id, userID: user.id) else { return false }
            await audit.record(.passkeyRemoved, userID: user.id, email: user.email, detail: passkey.name)
            return true
        } catch let failure as PasskeyFailure {
            throw failure
        } catch {
            throw .unavailable(error)
        }
    }

    // MARK: Challenges

    private func newChallenge(_ purpose: PasskeyChallenge.Purpose, userID: String?, binding: String?) async throws -> String {
        let challenge = SecureRandom.token(bytes: 32)
        try await store.insertPasskeyChallenge(PasskeyChallenge(hash: tokenHash(challenge), purpose: purpose, userID: userID, binding: binding,
                                                                expiresAt: clock.now() + settings.challengeLifetime))
        return challenge
    }

    /// The challenge the client data carries, taken out of the store (single use).
    private func takeChallenge(in clientDataJSON: Data) async throws(PasskeyFailure) -> (purpose: PasskeyChallenge.Purpose, userID: String?,
                                                                                        binding: String?, bytes: Data) {
        let clientData: ClientData
        do { clientData = try ClientData(json: clientDataJSON) } catch { throw .invalid(String(describing: error)) }
        let text = Base64URL.encode(clientData.challenge)
        let taken: PasskeyChallenge?
        do { taken = try await store.takePasskeyChallenge(hash: tokenHash(text), now: clock.now()) } catch { throw .unavailable(error) }
        guard let taken else { throw .challengeExpired }
        return (taken.purpose, taken.userID, taken.binding, clientData.challenge)
    }

    // MARK: Naming

    /// The transports the browser reported, only the ones WebAuthn defines (§5.8.4).
    static func transports(_ reported: [String]?) -> [String] {
        let known: Set<String> = ["usb", "nfc", "ble", "smart-card", "hybrid", "internal"]
        return Array(Set((reported ?? []).filter(known.contains))).sorted()
    }

    static func uuidText(_ bytes: Data) -> String {
        guard bytes.count == 16 else { return "00000000-0000-0000-0000-000000000000" }
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(hex[hex.index(hex.startIndex, offsetBy: range.lowerBound)..<hex.index(hex.startIndex, offsetBy: range.upperBound)])
        }
        return parts.joined(separator: "-")
    }

    /// The name the person gave, or one saying what kind of passkey it is.
    static func name(_ given: String?, backupEligible: Bool) -> String {
        validName(given ?? "") ?? (backupEligible ? "Synced passkey" : "Security key")
    }

    /// `name` without the spaces around it, when it is a name: one line, 1 to ``nameLimit`` characters.
    static func validName(_ name: String) -> String? {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= nameLimit, !trimmed.unicodeScalars.contains(where: { $0.value < 32 || $0.value == 127 }) else {
            return nil
        }
        return trimmed
    }
}

/// Why a passkey ceremony or change was refused.
package enum PasskeyFailure: Error, Sendable {
    /// The answer doesn't verify (says why, for the log; the person is told it didn't work).
    case invalid(String)
    /// The challenge is unknown, used or expired: start again.
    case challengeExpired
    /// No passkey of that credential id is registered (removed, or never here).
    case unknownPasskey
    /// Its counter went backwards: it no longer signs anyone in.
    case suspended
    case accountDisabled
    /// The authenticator holds a passkey registered here already.
    case alreadyRegistered
    case tooMany
    case invalidName
    /// Removing it would leave the account no way in.
    case lastWayIn
    case unavailable(any Error)
}
