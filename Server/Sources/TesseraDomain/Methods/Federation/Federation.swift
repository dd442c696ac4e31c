import Crypto
import Foundation
import Logging
import TesseraAuthCore
import TesseraCore

/// Signing in through upstream identity providers, and the rules that keep an upstream
/// identity from taking over an account it doesn't own:
///
/// - an identity (provider, subject) belongs to one account;
/// - the first sign-in creates an account, with the address verified only if the upstream
///   says it verified it;
/// - an address that already has an account never links by itself: the owner signs in to
///   that account first (or connects the provider from the account page);
/// - links made on an address the upstream hadn't verified are dropped when the address is
///   proven another way (``AccountRules/addressProven(_:now:in:)``).
package struct Federation: Sendable {
    package let upstreams: [String: Upstream]
    /// In configuration order, for the buttons.
    package let ordered: [Upstream]
    let store: any IdentityStore & UserStore & UsedOnceStore & StoreTransactions
    let secretBox: SecretBox
    let audit: AuditTrail
    let clock: WallClock
    let logger: Logger
    /// How long a request to an upstream and a pending link last.
    package let requestLifetime: Int64 = 600

    /// `transport`: how the upstreams are reached (discovery, keys, tokens, revocation).
    package init(settings: [UpstreamProviderSettings], issuer: String, store: any IdentityStore & UserStore & UsedOnceStore & StoreTransactions, secretBox: SecretBox,
         transport: any HTTPTransport, audit: AuditTrail, clock: WallClock, logger: Logger) throws {
        self.audit = audit
        ordered = try settings.map { try Upstream($0, issuer: issuer, clock: clock, transport: transport) }
        upstreams = Dictionary(uniqueKeysWithValues: ordered.map { ($0.id, $0) })
        self.store = store
        self.secretBox = secretBox
        self.clock = clock
        self.logger = logger
    }

    /// The login page's buttons.
    package var loginProviders: [LoginProvider] {
        ordered.map { LoginProvider(id: $0.id, type: $0.settings.type.rawValue, name: $0.settings.name) }
    }

    package enum Failure: Error, Equatable {
        case unknownProvider
        /// The state is unknown, used or expired.
        case unknownState
        /// The upstream answered an error (the user cancelled, most often).
        case upstreamError(String)
        /// The code exchange or the ID token failed.
        case invalidResponse(String)
        /// The identity is another account's (connecting from the account page).
        case identityInUse
        /// The database could not be reached: nothing was done.
        case unavailable(DatabaseUnavailable)
    }

    /// Where a callback leads.
    package enum Outcome: Sendable {
        case signedIn(User, interaction: String?, isNewUser: Bool)
        /// The address is an existing account's: its owner must sign in to link.
        case needsProof(token: String, user: User, upstream: Upstream, interaction: String?)
        /// Connected from the account page.
        case connected(User)
    }

    // MARK: Web

    /// Starts a sign-in at `upstream` from the browser holding `browser` (a random cookie
    /// value): the URL to send it to.
    package func start(_ upstream: Upstream, interaction: String?, linkUserID: String?, browser: String) async throws -> URL {
        let request = try await upstream.authorizationRequest()
        try await store.insertUpstreamRequest(stateHash: tokenHash(request.state), UpstreamRequest(
            providerID: upstream.id, nonce: request.nonce ?? "", codeVerifier: request.codeVerifier, interaction: interaction,
            linkUserID: linkUserID, browserHash: tokenHash(browser), expiresAt: clock.now() + requestLifetime), now: clock.now())
        return try await upstream.web.authorizationURL(for: request)
    }

    /// The upstream's answer, in the browser that started the request (`browser`, its cookie):
    /// `state`, `code` or `error`, and Apple's `user` on the first time.
    package func callback(_ upstream: Upstream, parameters: RequestParameters, browser: String?) async throws(Failure) -> Outcome {
        do {
            guard let state = parameters["state"], let browser, !browser.isEmpty,
                  let request = try await store.takeUpstreamRequest(stateHash: tokenHash(state), browserHash: tokenHash(browser),
                                                                   now: clock.now()),
                  request.providerID == upstream.id else { throw Failure.unknownState }
            if let error = parameters["error"] { throw Failure.upstreamError(error) }
            guard let code = parameters["code"] else { throw Failure.invalidResponse("the answer has no code") }
            let result: AuthorizationResult
            do {
                result = try await upstream.web.redeemCode(code, redirectURI: upstream.redirectURI, codeVerifier: request.codeVerifier,
                                                           nonce: request.nonce, scope: upstream.scope)
            } catch {
                throw Failure.invalidResponse("\(error)")
            }
            guard let idToken = result.idToken else { throw Failure.invalidResponse("no ID token") }
            var userInfo: [String: JSONValue] = [:]
            if !upstream.isApple, idToken.claims["email"] == nil, (try? await upstream.web.discover().userinfoEndpoint) != nil {
                userInfo = (try? await upstream.web.userInfo(accessToken: result.tokens.accessToken, expectedSubject: idToken.subject))?.claims ?? [:]
            }
            let claims = UpstreamClaims(idToken: idToken, userInfo: userInfo, appleUser: parameters["user"])
            let outcome = try await resolve(upstream, claims: claims, refreshToken: result.tokens.refreshToken,
                                            clientID: upstream.settings.clientID, interaction: request.interaction,
                                            linkUserID: request.linkUserID)
            Signals.signIn("upstream", "success")
            if case .signedIn(let user, interaction: _, isNewUser: let isNew) = outcome {
                if isNew { await audit.record(.accountCreated, userID: user.id, email: user.email, detail: "upstream \(upstream.id)") }
                await audit.record(.signIn, userID: user.id, email: user.email, detail: "upstream \(upstream.id)")
            }
            return outcome
        } catch let failure as Failure {
            Signals.signIn("upstream", "failure")
            await audit.record(.signInFailed, detail: "upstream \(upstream.id): \(failure)")
            throw failure
        } catch let outage as DatabaseUnavailable {
            throw Failure.unavailable(outage)
        } catch {
            logger.error("federated sign-in failed", metadata: ["provider": "\(upstream.id)", "error": "\(error)"])
            Signals.signIn("upstream", "failure")
            await audit.record(.signInFailed, detail: "upstream \(upstream.id)")
            throw Failure.invalidResponse("\(error)")
        }
    }

    /// The account of an upstream identity: the linked one, a new one, or — when its address
    /// is an existing account's — none until the owner proves it.
    func resolve(_ upstream: Upstream, claims: UpstreamClaims, refreshToken: String?, clientID: String, interaction: String?,
                 linkUserID: String?) async throws -> Outcome {
        let now = clock.now()
        var identity = UpstreamIdentity(providerID: upstream.id, subject: claims.subject, userID: "", email: claims.email,
                                        proven: claims.emailVerified, refreshToken: try refreshToken.map(seal), clientID: clientID,
                                        createdAt: now, lastUsedAt: now)
        if let linked = try await store.identity(providerID: upstream.id, subject: claims.subject) {
            identity.userID = linked.userID
            identity.proven = linked.proven
            if let linkUserID, linkUserID != linked.userID { throw Failure.identityInUse }
            _ = try await store.link(identity)
            guard let user = try await store.user(id: linked.userID) else { throw Failure.invalidResponse("the linked account is gone") }
            return linkUserID != nil ? .connected(user) : .signedIn(user, interaction: interaction, isNewUser: false)
        }
        if let linkUserID {
            // Connecting from the account page: the signed-in owner is the proof.
            identity.userID = linkUserID
            identity.proven = true
            guard try await store.link(identity) == .linked, let user = try await store.user(id: linkUserID) else {
                throw Failure.identityInUse
            }
            logger.info("upstream identity connected", metadata: ["provider": "\(upstream.id)", "user": "\(user.id)"])
            await audit.record(.identityLinked, userID: user.id, email: user.email, detail: "upstream \(upstream.id), from the account page")
            return .connected(user)
        }
        if let email = claims.email, let owner = try await store.user(email: email) {
            let token = SecureRandom.token()
            identity.userID = owner.id
            try await store.insertPendingLink(tokenHash: tokenHash(token), PendingLink(userID: owner.id, identity: identity,
                                                                                    interaction: interaction,
                                                                                    expiresAt: now + requestLifetime), now: now)
            return .needsProof(token: token, user: owner, upstream: upstream, interaction: interaction)
        }
        let user = newUser(claims, upstream: upstream)
        identity.userID = user.id
        do { try await store.createUser(user, identity: identity) } catch StoreError.duplicate {
            throw Failure.invalidResponse("an account with this address was created meanwhile; sign in again")
        }
        logger.info("account created by federated sign-in", metadata: ["provider": "\(upstream.id)", "user": "\(user.id)"])
        return .signedIn(user, interaction: interaction, isNewUser: true)
    }

    /// A new account from the upstream's claims. Without an address (an upstream may not
    /// share one), the account gets a placeholder that can never receive mail.
    func newUser(_ claims: UpstreamClaims, upstream: Upstream) -> User {
        let now = clock.now()
        let id = UUID().uuidString.lowercased()
        let email = claims.email ?? "\(id)@\(upstream.id).upstream.invalid"
        return User(id: id, email: email, emailVerified: claims.email != nil && claims.emailVerified, passwordHash: nil,
                    profile: claims.profile, createdAt: now, updatedAt: now)
    }

    /// Links a pending identity once its account's owner signed in.
    package func completeLink(_ link: PendingLink, token: String, signedIn user: User) async throws -> Bool {
        guard user.id == link.userID else { return false }
        var identity = link.identity
        identity.proven = true
        guard try await store.link(identity) == .linked else { return false }
        try await store.deletePendingLink(tokenHash: tokenHash(token))
        await audit.record(.identityLinked, userID: user.id, email: user.email,
                           detail: "upstream \(identity.providerID), after the owner signed in")
        logger.info("upstream identity linked after the owner signed in", metadata: ["provider": "\(identity.providerID)", "user": "\(user.id)"])
        return true
    }

    // MARK: Native Sign in with Apple

    /// An iOS app's Sign in with Apple result: the identity token (checked with the SHA-256 of
    /// the raw nonce, as Apple puts it), the authorization code (redeemed for Apple's refresh
    /// token) and the name Apple gives the app the first time.
    ///
    /// The nonce is required, and each one is accepted once: an identity token taken from a
    /// device (with its nonce) can't be exchanged again, and one from a request without a
    /// nonce can't be exchanged at all.
    func nativeApple(_ upstream: Upstream, identityToken: String, authorizationCode: String?, rawNonce: String, user: String?,
                     linkUserID: String?) async throws(Failure) -> Outcome {
        do {
            guard let audience = (try? JWT(parsing: identityToken))?.audience.first, let client = upstream.native[audience] else {
                throw Failure.invalidResponse("the identity token is not for one of the configured apps (native_client_ids)")
            }
            let nonce = Base64URL.hex(SHA256.hash(data: Data(rawNonce.utf8)))
            let idToken: IDToken
            do { idToken = try await client.validateIDToken(identityToken, nonce: nonce) } catch {
                throw Failure.invalidResponse("the identity token is not valid: \(error)")
            }
            let now = clock.now()
            guard try await store.recordFirstUse(kind: "apple-nonce:" + upstream.id, idHash: tokenHash(nonce),
                                                 expiresAt: max(idToken.expiresAt.map { Int64($0.timeIntervalSince1970) } ?? now, now) + 300,
                                                 now: now) else {
                throw Failure.invalidResponse("this identity token and nonce were exchanged before")
            }
            var refreshToken: String?
            if let authorizationCode {
                do {
                    let redeemed = try await client.redeemCode(authorizationCode, redirectURI: nil, codeVerifier: nil, nonce: nonce, scope: "")
                    guard redeemed.idToken?.subject == idToken.subject else {
                        throw Failure.invalidResponse("the authorization code is for another user than the identity token")
                    }
                    refreshToken = redeemed.tokens.refreshToken
                } catch let failure as Failure {
                    throw failure
                } catch {
                    throw Failure.invalidResponse("Apple refused the authorization code: \(error)")
                }
            }
            let claims = UpstreamClaims(idToken: idToken, appleUser: user)
            return try await resolve(upstream, claims: claims, refreshToken: refreshToken, clientID: audience, interaction: nil,
                                     linkUserID: linkUserID)
        } catch let failure as Failure {
            throw failure
        } catch let outage as DatabaseUnavailable {
            throw Failure.unavailable(outage)
        } catch {
            logger.error("native Sign in with Apple failed", metadata: ["error": "\(error)"])
            throw Failure.invalidResponse("\(error)")
        }
    }

    // MARK: Sign in with Apple server-to-server notifications

    package enum NotificationFailure: Error, Equatable {
        case malformed(String)
        case notFromApple(String)
        case stale
        case replayed
        /// The database could not be reached: Apple should send it again.
        case unavailable(DatabaseUnavailable)
    }

    /// How old an Apple notification may be (its `iat`): older ones are refused, so a captured
    /// one can't be played back later.
    package static let notificationMaxAge: Int64 = 600

    /// Applies a notification Apple sent about a user's Apple ID with one of the configured
    /// services (`{"payload": JWS}`): verified against Apple's keys, for one of our client ids,
    /// recent, and applied once (by its `jti`, else the payload's hash). `consent-revoked` and
    /// `account-delete` unlink the identity and sign the account out everywhere.
    package func appleNotification(payload: String) async throws(NotificationFailure) {
        do {
            for upstream in ordered where upstream.isApple {
                guard let jwt = try? await upstream.web.verifySignature(payload) else { continue }
                let audiences = Set([upstream.settings.clientID] + upstream.settings.nativeClientIDs)
                guard jwt.issuer == (try await upstream.web.discover().issuer), !audiences.isDisjoint(with: jwt.audience) else {
                    throw NotificationFailure.notFromApple("the notification is not from Apple for this service")
                }
                let now = clock.now()
                guard jwt.hasValidTimeClaims else { throw NotificationFailure.malformed("the notification's iat or exp is not a time") }
                if let expiry = jwt.expiresAt, expiry < now { throw NotificationFailure.stale }
                guard let issuedAt = jwt.issuedAt, issuedAt <= now + 60, now - issuedAt <= Self.notificationMaxAge else {
                    throw NotificationFailure.stale
                }
                guard let events = jwt.claims["events"].flatMap(Self.events), let type = events["type"]?.stringValue,
                      let subject = events["sub"]?.stringValue else { throw NotificationFailure.malformed("the notification has no events") }
                let id = jwt.jwtID ?? payload
                guard try await store.recordFirstUse(kind: "apple-notification:" + upstream.id, idHash: tokenHash(id),
                                                     expiresAt: issuedAt + Self.notificationMaxAge + 60, now: now) else {
                    throw NotificationFailure.replayed
                }
                try await apply(notification: type, subject: subject, upstream: upstream, now: now)
                return
            }
            throw NotificationFailure.notFromApple("the notification's signature does not verify with Apple's keys")
        } catch let failure as NotificationFailure {
            throw failure
        } catch let outage as DatabaseUnavailable {
            throw NotificationFailure.unavailable(outage)
        } catch {
            logger.error("Apple notification failed", metadata: ["error": "\(error)"])
            throw NotificationFailure.notFromApple("the notification could not be checked against Apple's keys")
        }
    }

    /// `events` is a JSON string in Apple's notifications (an object in some examples).
    static func events(_ value: JSONValue) -> [String: JSONValue]? {
        if let object = value.objectValue { return object }
        guard let text = value.stringValue else { return nil }
        return try? JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8))
    }

    func apply(notification type: String, subject: String, upstream: Upstream, now: Int64) async throws {
        guard let identity = try await store.identity(providerID: upstream.id, subject: subject) else { return }
        switch type {
        case "consent-revoked", "account-delete":
            // The user stopped using their Apple ID with this app (or deleted it): unlink, and sign them out everywhere.
            try await store.transaction { tx in
                try await tx.removeIdentity(providerID: upstream.id, subject: subject)
                try await AccountRules.signOutEverywhere(userID: identity.userID, now: now, in: tx)
                try await tx.recordAudit(AuditEvent(.identityUnlinked, at: now, actor: .system, userID: identity.userID,
                                                    detail: "upstream \(upstream.id): Apple's \(type) notification"))
            }
        case "email-disabled", "email-enabled":
            // The relay forwards mail again or not; the address itself doesn't change.
            break
        default:
            logger.info("unknown Apple notification type", metadata: ["type": "\(type)"])
        }
        logger.info("Apple notification", metadata: ["type": "\(type)", "user": "\(identity.userID)"])
    }

    // MARK: Accounts

    /// Whether removing this identity leaves the user another way to sign in they have used:
    /// a password or another identity. (Email codes and links would still work for a verified
    /// address, but a relay address can stop forwarding; the account page doesn't bet on it.)
    package func canRemove(_ identity: UpstreamIdentity, of user: User) async throws -> Bool {
        let others = try await store.identities(userID: user.id).filter { $0.providerID != identity.providerID || $0.subject != identity.subject }
        return user.passwordHash != nil || !others.isEmpty
    }

    /// Removes the user's identities at one upstream provider. Refuses (false, from the
    /// first one that would be the last way to sign in) rather than leave an account nobody
    /// can open.
    package func removeIdentities(of user: User, providerID: String) async throws -> Bool {
        for identity in try await store.identities(userID: user.id) where identity.providerID == providerID {
            guard try await canRemove(identity, of: user) else { return false }
            try await store.removeIdentity(providerID: identity.providerID, subject: identity.subject)
            await audit.record(.identityUnlinked, userID: user.id, email: user.email, detail: "upstream \(providerID), from the account page")
        }
        return true
    }

    /// The identity waiting to be linked under a `link_token`, and the account it would join.
    package func pendingLink(token: String) async throws -> (link: PendingLink, owner: User)? {
        guard let pending = try await store.pendingLink(tokenHash: tokenHash(token), now: clock.now()),
              let owner = try await store.user(id: pending.userID) else { return nil }
        return (pending, owner)
    }

    /// Deletes an account, first revoking the upstream tokens it holds (Apple requires it).
    package func deleteUser(_ user: User, by actor: AuditEvent.Actor, detail: String? = nil) async throws {
        for identity in try await store.identities(userID: user.id) {
            guard let sealed = identity.refreshToken, let upstream = upstreams[identity.providerID] else { continue }
            do {
                try await upstream.revoke(refreshToken: try open(sealed), clientID: identity.clientID)
            } catch {
                logger.warning("could not revoke an upstream token while deleting an account",
                               metadata: ["provider": "\(identity.providerID)", "error": "\(error)"])
            }
        }
        let now = clock.now()
        try await store.transaction { tx in try await AccountRules.deleteAccount(user.id, now: now, by: actor, detail: detail, in: tx) }
        logger.notice("account deleted", metadata: ["user": "\(user.id)"])
    }

    func seal(_ token: String) throws -> String {
        try secretBox.seal(Data(token.utf8), context: "upstream-refresh-token")
    }

    package func open(_ stored: String) throws -> String {
        guard SecretBox.isSealed(stored) else { return stored }
        return String(decoding: try secretBox.open(stored, context: "upstream-refresh-token"), as: UTF8.self)
    }

    /// Seals the upstream refresh tokens a database kept in clear (from before tokens were always sealed).
    package func sealStoredTokens() async throws {
        var sealed = 0
        for identity in try await store.identitiesWithClearRefreshTokens() {
            guard let token = identity.refreshToken else { continue }
            if try await store.replaceRefreshToken(providerID: identity.providerID, subject: identity.subject, old: token, new: try seal(token)) {
                sealed += 1
            }
        }
        if sealed > 0 { logger.notice("sealed upstream refresh tokens stored in clear", metadata: ["count": "\(sealed)"]) }
    }
}

/// A sign-in button for an upstream provider.
package struct LoginProvider: Sendable {
    package var id: String
    package var type: String
    package var name: String
}
