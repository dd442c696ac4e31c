import Foundation
import Logging
import TesseraCore

/// Passwordless sign-in by email link (Firebase's email-link sign-in, served whole):
/// links sent from an app or from the hosted login, opened in the app or in a browser.
///
/// The rules of seed 004's security section: a link works once, within its lifetime, and
/// only together with the address it was sent to; the first sign-in creates the account
/// with the address verified; signing in to an account whose address was never verified
/// removes the password someone else may have set and ends every session and token.
package struct EmailLinks: Sendable {
    package let lifetime: Int64
    /// Completions with an address (on another device, or by an app) before the link stops working.
    let maxWrongEmails = 5
    let issuer: String
    let store: any EmailLinkStore & UserStore & StoreTransactions
    let limits: MailLimits
    let mail: FlowMail
    let audit: AuditTrail
    let clock: WallClock
    let logger: Logger

    package init(lifetime: Int64, issuer: String, store: any EmailLinkStore & UserStore & StoreTransactions,
                 limits: MailLimits, mail: FlowMail, audit: AuditTrail, clock: WallClock, logger: Logger) {
        self.lifetime = lifetime
        self.audit = audit
        self.issuer = issuer
        self.store = store
        self.limits = limits
        self.mail = mail
        self.clock = clock
        self.logger = logger
    }

    /// What the app (or the hosted login) asks for: seed 004's `ActionCodeSettings`.
    package struct SendRequest: Sendable {
        var email: String
        package var continueURL: String?
        package var handleInApp = false
        package var iosBundleID: String?
        package var androidPackageName: String?
        package var androidInstallApp = false
        package var androidMinimumVersion: String?
        var language: PageLanguage
        var interaction: String?
        var deviceHash: String?

        package init(email: String, continueURL: String? = nil, iosBundleID: String? = nil,
                     androidPackageName: String? = nil, androidMinimumVersion: String? = nil, language: PageLanguage,
                     interaction: String? = nil, deviceHash: String? = nil) {
            self.email = email
            self.continueURL = continueURL
            self.iosBundleID = iosBundleID
            self.androidPackageName = androidPackageName
            self.androidMinimumVersion = androidMinimumVersion
            self.language = language
            self.interaction = interaction
            self.deviceHash = deviceHash
        }
    }

    /// Why an app's settings for its link are refused: each names something the client did not register.
    package enum SettingsProblem: Error, Equatable {
        /// `continue_url` is not https (or loopback http) on a host of the client's.
        case continueURLNotAllowed
        /// The link is to open in the app, and nothing says where it goes without the app.
        case continueURLRequired
        case unknownIOSApp(String)
        case unknownAndroidApp(String)
    }

    /// Sends a link an app asked for, once its settings name only what `client` registered: a
    /// `continue_url` on one of its hosts (``allows(continueURL:client:)``), one at all when the
    /// link opens in the app, and its own iOS and Android apps.
    package func send(_ request: SendRequest, from client: Client, clientAddress: String) async throws {
        if let url = request.continueURL {
            guard Self.allows(continueURL: url, client: client) else { throw SettingsProblem.continueURLNotAllowed }
        } else if request.handleInApp {
            throw SettingsProblem.continueURLRequired
        }
        if let bundle = request.iosBundleID, !client.appLinks.appleBundleIDs.contains(bundle) {
            throw SettingsProblem.unknownIOSApp(bundle)
        }
        if let package = request.androidPackageName, !client.appLinks.androidApps.contains(where: { $0.packageName == package }) {
            throw SettingsProblem.unknownAndroidApp(package)
        }
        try await send(request, clientID: client.id, clientAddress: clientAddress)
    }

    /// The client of links the account page sends to confirm a sign-in: stored as no client
    /// (`client_id` NULL), so no app can redeem them.
    package static let accountClientID = "tessera:account"

    /// The path of the link itself (a universal link / app link when the client registered apps).
    package static let linkPath = "/emaillink/v1.0/signin"

    /// Sends a sign-in link to the address, whether or not it has an account (the first sign-in
    /// creates it). Only the limits can refuse, and they don't depend on the account either.
    /// `clientID`: the app the link is for, or ``accountClientID`` for the account page's own links.
    package func send(_ request: SendRequest, clientID: String, clientAddress: String) async throws {
        try await limits.check(email: request.email, clientAddress: clientAddress)
        let now = clock.now()
        let code = SecureRandom.token()
        let record = EmailLinkRecord(clientID: clientID, email: request.email, continueURL: request.continueURL,
                                     handleInApp: request.handleInApp, interaction: request.interaction, deviceHash: request.deviceHash,
                                     language: request.language.rawValue, wrongAttempts: 0, createdAt: now, expiresAt: now + lifetime)
        try await store.insertEmailLink(codeHash: tokenHash(code), record)
        try await limits.record(email: request.email, clientAddress: clientAddress)
        try await mail.send(.signInLink(link: link(code: code, request: request, clientID: clientID), minutes: Int((lifetime + 59) / 60)),
                            to: request.email, language: request.language, flow: "emaillink", expiresAt: record.expiresAt)
    }

    /// `{issuer}/emaillink/v1.0/signin?mode=signIn&oob_code=…&continue_url=…` and the app hints.
    func link(code: String, request: SendRequest, clientID: String) -> String {
        var parameters = [("mode", "signIn"), ("oob_code", code), ("client_id", clientID), ("lang", request.language.rawValue)]
        if let continueURL = request.continueURL { parameters.append(("continue_url", continueURL)) }
        if let bundle = request.iosBundleID { parameters.append(("ios_bundle_id", bundle)) }
        if let package = request.androidPackageName {
            parameters.append(("android_package_name", package))
            if request.androidInstallApp { parameters.append(("android_install_app", "true")) }
            if let version = request.androidMinimumVersion { parameters.append(("android_minimum_version", version)) }
        }
        return issuer + Self.linkPath + "?" + RequestParameters.encode(parameters)
    }

    package enum Problem: Error, Equatable {
        /// Unknown, used, or expired.
        case unusable(expired: Bool)
        /// The address isn't the one the link was sent to (the link stays unused, up to the limit).
        case emailMismatch(attemptsLeft: Int)
        case credentialInUse
        case userMismatch
        /// The database could not be reached: nothing was done, the link still works.
        case unavailable(DatabaseUnavailable)
    }

    /// The link of `code`, if it can still be used.
    package func usableLink(code: String) async throws -> EmailLinkRecord? {
        guard code.count <= 256, let link = try await store.emailLink(codeHash: tokenHash(code)) else { return nil }
        guard link.usedAt == nil, link.expiresAt > clock.now(), link.wrongAttempts < maxWrongEmails else { return nil }
        return link
    }

    /// Uses the link of `code` for `operation`, after checking the address it was sent to.
    /// `email` nil means the caller already knows the address matches (the same-device cookie).
    package func redeem(code: String, email: String?, operation: EmailLinkOperation) async throws(Problem) -> EmailLinkRedemption {
        do {
            guard let record = try await store.emailLink(codeHash: tokenHash(code)), record.usedAt == nil,
                  record.wrongAttempts < maxWrongEmails else { throw Problem.unusable(expired: false) }
            guard record.expiresAt > clock.now() else { throw Problem.unusable(expired: true) }
            if let email {
                // Counted before the comparison, so parallel guesses each use one up; the count
                // of the link's completions with an address, right or wrong.
                guard let used = try await store.reserveEmailAttempt(codeHash: tokenHash(code), limit: maxWrongEmails) else {
                    throw Problem.unusable(expired: false)
                }
                guard constantTimeEquals(Array(MailAddress.normalise(email).utf8), Array(record.email.utf8)) else {
                    throw Problem.emailMismatch(attemptsLeft: max(maxWrongEmails - used, 0))
                }
            }
            let outcome = try await use(codeHash: tokenHash(code), operation: operation)
            switch outcome {
            case .unusable: throw Problem.unusable(expired: false)
            case .credentialInUse: throw Problem.credentialInUse
            case .userMismatch: throw Problem.userMismatch
            case .signedIn(let user, let isNew, let secured):
                let client = record.clientID == Self.accountClientID ? nil : record.clientID
                if isNew { await audit.record(.accountCreated, userID: user.id, clientID: client, email: user.email, detail: "email link") }
                await audit.record(.signIn, userID: user.id, clientID: client, email: user.email, detail: "email_link")
                if secured {
                    logger.notice("email link secured an unverified account: its password, sessions and tokens are gone",
                                  metadata: ["user": "\(user.id)"])
                } else if isNew {
                    logger.info("account created by email link", metadata: ["user": "\(user.id)"])
                }
            case .linked, .reauthenticated: break
            }
            if case .signedIn = outcome { Signals.signIn("email_link", "success") }
            return outcome
        } catch let problem as Problem {
            if case .unusable(expired: true) = problem { Signals.signIn("email_link", "expired") } else { Signals.signIn("email_link", "failure") }
            await audit.record(.signInFailed, email: email.map(MailAddress.normalise), detail: "email_link")
            throw problem
        } catch let outage as DatabaseUnavailable {
            throw Problem.unavailable(outage)
        } catch {
            logger.error("email link failed", metadata: ["error": "\(error)"])
            Signals.signIn("email_link", "failure")
            throw Problem.unusable(expired: false)
        }
    }

    /// In one transaction: marks the link used (if it still can be) and does `operation`.
    /// A link that proves the address of an existing account applies ``AccountRules/addressProven(_:now:in:)``.
    func use(codeHash: String, operation: EmailLinkOperation) async throws -> EmailLinkRedemption {
        let now = clock.now()
        return try await store.transaction { tx in
            guard let link = try await tx.emailLink(codeHash: codeHash), link.usedAt == nil, link.expiresAt > now else { return .unusable }
            let owner = try await tx.user(email: link.email)
            switch operation {
            case .link(let userID):
                if let owner, owner.id != userID { return .credentialInUse }
            case .reauthenticate(let userID):
                guard owner?.id == userID else { return .userMismatch }
            case .signIn:
                break
            }
            guard try await tx.markEmailLinkUsed(codeHash: codeHash, now: now) else { return .unusable }
            switch operation {
            case .signIn(let newUser):
                guard let owner else {
                    var created = newUser
                    created.email = link.email
                    created.emailVerified = true
                    try await tx.insert(created)
                    return .signedIn(created, isNewUser: true, securedAccount: false)
                }
                let (user, secured) = try await AccountRules.addressProven(owner, now: now, in: tx)
                return .signedIn(user, isNewUser: false, securedAccount: secured)
            case .link(let userID):
                try await tx.changeEmail(userID: userID, to: link.email, now: now)
                guard let user = try await tx.user(id: userID) else { throw StoreError.notFound("user \(userID)") }
                return .linked(user)
            case .reauthenticate:
                return .reauthenticated(try await AccountRules.addressProven(owner!, now: now, in: tx).user)
            }
        }
    }

    /// A new account's user value; ``use(codeHash:operation:)`` inserts it only if the address has none.
    package func newUser(language: String) -> User {
        let now = clock.now()
        return User(id: UUID().uuidString.lowercased(), email: "", emailVerified: true, passwordHash: nil,
                    profile: ["locale": .string(language)], createdAt: now, updatedAt: now)
    }

    /// Whether `continueURL` may receive users of `client`: https (or http on loopback) on a
    /// host of one of its redirect URIs or of its registered link domains.
    package static func allows(continueURL: String, client: Client) -> Bool {
        guard let url = URLComponents(string: continueURL), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(),
              url.fragment == nil, url.user == nil, url.password == nil else { return false }
        let loopback = ["127.0.0.1", "localhost", "[::1]", "::1"].contains(host)
        guard scheme == "https" || (scheme == "http" && loopback) else { return false }
        let hosts = Set(client.redirectURIs.compactMap { URLComponents(string: $0)?.host?.lowercased() }
            + client.appLinks.linkDomains.map { $0.lowercased() })
        return hosts.contains(host)
    }

    /// The link a code stands for, when it was sent for `clientID` (an app can't complete
    /// another app's links).
    package func link(code: String, for clientID: String) async throws -> EmailLinkRecord? {
        guard let record = try await store.emailLink(codeHash: tokenHash(code)), record.clientID == clientID else { return nil }
        return record
    }
}
