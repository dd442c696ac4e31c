import Foundation
import Logging
import TesseraCore

/// The native sign-in API's flows, one method per endpoint: sign-up, sign-in and
/// password reset by email one-time code or password, without a browser
/// (Microsoft Entra's native authentication protocol; docs/native-auth.md).
///
/// Each method takes the request's parameters and answers the JSON members of a success
/// or throws a ``NativeAuthError``. A failed step writes nothing, except the count of
/// wrong codes; the account is created, or the password changed, in the same transaction
/// as the step that completes the flow.
package struct NativeAuthenticator: Sendable {
    package typealias Store = NativeFlowStore & UserStore & GrantStore & StoreTransactions

    let settings: NativeAuthSettings
    let enumerationProtection: Bool
    let store: any Store
    let passwords: PasswordHasher
    let policy: PasswordPolicy
    let passwordSignIn: PasswordSignIn
    let limits: WorkLimits
    let mailer: any Mailer
    let templates: MailTemplates
    let tokens: UserGrantTokens
    let issuerHost: String
    let clock: WallClock
    let logger: Logger

    package init(settings: NativeAuthSettings, enumerationProtection: Bool, store: any Store, passwords: PasswordHasher,
                 policy: PasswordPolicy, passwordSignIn: PasswordSignIn, limits: WorkLimits, mailer: any Mailer,
                 templates: MailTemplates, tokens: UserGrantTokens, issuerHost: String, clock: WallClock, logger: Logger) {
        self.settings = settings
        self.enumerationProtection = enumerationProtection
        self.store = store
        self.passwords = passwords
        self.policy = policy
        self.passwordSignIn = passwordSignIn
        self.limits = limits
        self.mailer = mailer
        self.templates = templates
        self.tokens = tokens
        self.issuerHost = issuerHost
        self.clock = clock
        self.logger = logger
    }

    /// Who is asking: the (first-party) client, from which address, in which language.
    package struct Caller: Sendable {
        package var client: Client
        package var address: String
        package var language: PageLanguage

        package init(client: Client, address: String, language: PageLanguage) {
            self.client = client
            self.address = address
            self.language = language
        }
    }

    enum Challenge: String {
        case oob, password, redirect
    }

    // MARK: Sign-up

    /// `/signup/v1.0/start`: the address, and optionally a password and attributes.
    package func signUpStart(_ parameters: RequestParameters, caller: Caller) async throws -> NativeAuthAnswer {
        let challenges = try challengeTypes(parameters)
        let email = try username(parameters)
        guard challenges.contains(.oob) else { return .redirect }
        var flow = try newFlow(.signUp, email: email, challenges: challenges, caller: caller)
        if try await store.user(email: email) != nil {
            guard enumerationProtection else {
                throw NativeAuthError("user_already_exists", "An account with this email address already exists.", errorCodes: [1003037])
            }
            flow.accountExists = true
        }
        if let password = parameters["password"] {
            try checkPassword(password, email: email)
            flow.passwordHash = try await hashNewPassword(password, caller: caller, priority: .new)
        }
        if let attributes = parameters["attributes"] {
            flow.attributes = try settings.signUpAttributes.parse(attributes).get()
        }
        return try await begin(flow)
    }

    /// `/signup/v1.0/challenge`: sends the code (again), or asks for the password once the
    /// address is verified.
    package func signUpChallenge(_ parameters: RequestParameters, caller: Caller) async throws -> NativeAuthAnswer {
        let (flow, token) = try await currentFlow(parameters, .signUp, caller: caller, steps: [.started, .codeSent, .verified],
                                                 invalid: "invalid_grant")
        let challenges = try challengeTypes(parameters, else: flow)
        if flow.step == .verified {
            guard flow.passwordHash == nil, challenges.contains(.password) else {
                throw NativeAuthError.invalidRequest("The email address is verified: continue the sign-up with /signup/v1.0/continue.")
            }
            var next = flow
            next.step = .verified
            return try await advance(next, from: token, members: ["challenge_type": "password"])
        }
        guard challenges.contains(.oob) else { return .redirect }
        return try await sendCode(flow, from: token, caller: caller,
                                  email: flow.accountExists ? { _, _ in Email.accountExists } : Email.signUpCode, deliver: true)
    }

    /// `/signup/v1.0/continue`: the code (`oob`), the password, or attributes.
    package func signUpContinue(_ parameters: RequestParameters, caller: Caller) async throws -> NativeAuthAnswer {
        let grantType = try required(parameters, "grant_type")
        var (flow, token) = try await currentFlow(parameters, .signUp, caller: caller, steps: [.started, .codeSent, .verified])
        switch grantType {
        case "oob":
            guard flow.step == .codeSent else {
                throw NativeAuthError.invalidRequest(flow.step == .verified ? "The email address is already verified."
                                                                            : "Ask for a code with /signup/v1.0/challenge first.")
            }
            try await checkCode(&flow, token: token, parameters: parameters)
            flow.amr = ["otp"]
        case "password" where !flow.emailVerified, "attributes" where !flow.emailVerified:
            throw NativeAuthError.invalidRequest("Verify the email address first: send the code with grant_type=oob, then the "
                                                 + "\(grantType). (A password and attributes can also go with /signup/v1.0/start.)")
        case "password":
            let password = try required(parameters, "password")
            try checkPassword(password, email: flow.email)
            flow.passwordHash = try await hashNewPassword(password, caller: caller, priority: .underWay)
        case "attributes":
            let sent = try settings.signUpAttributes.parse(try required(parameters, "attributes")).get()
            flow.attributes.merge(sent) { _, new in new }
        default:
            throw NativeAuthError("invalid_grant", "grant_type must be oob, password or attributes here.")
        }
        return try await finishSignUpIfReady(flow, from: token)
    }

    /// What the sign-up still needs once the address is verified, or the account.
    func finishSignUpIfReady(_ flow: NativeFlow, from token: String) async throws -> NativeAuthAnswer {
        var flow = flow
        if flow.passwordHash == nil && settings.signUpPasswordRequired {
            // The app can't take a password: the hosted pages finish the sign-up.
            guard flow.challengeTypes.contains(Challenge.password.rawValue) else { return .redirect }
            let next = try await advance(flow, from: token, members: [:])
            throw NativeAuthError("credential_required", "Choose a password to finish signing up.", errorCodes: [55103],
                                  extra: ["continuation_token": next.members["continuation_token"] ?? .null])
        }
        let missing = settings.signUpAttributes.missing(from: flow.attributes)
        if !missing.isEmpty {
            let next = try await advance(flow, from: token, members: [:])
            throw NativeAuthError("attributes_required", "Some attributes are required to finish signing up: "
                                    + missing.map(\.name).joined(separator: ", ") + ".",
                                  errorCodes: [55106],
                                  extra: ["continuation_token": next.members["continuation_token"] ?? .null,
                                          "required_attributes": .array(missing.map(\.description))])
        }
        let now = clock.now()
        var profile = settings.signUpAttributes.profile(from: flow.attributes)
        profile["locale"] = profile["locale"] ?? .string(flow.language)
        try ScopeCatalogue.validate(profile: profile)
        let user = User(id: UUID().uuidString.lowercased(), email: flow.email, emailVerified: true, passwordHash: flow.passwordHash,
                        profile: profile, createdAt: now, updatedAt: now)
        flow.step = .completed
        flow.userID = user.id
        flow.passwordHash = nil
        flow.attributes = [:]
        if flow.amr.isEmpty { flow.amr = ["otp"] }
        flow.expiresAt = now + settings.continuationTokenLifetime
        let next = SecureRandom.token()
        do {
            // The account is created in the step that moves the flow on, or not at all. A
            // sign-up by code proves the address: the account starts verified, with nothing
            // set up by anybody else (an address with an account never gets here).
            let completed = try await store.transaction { [flow] tx in
                guard try await tx.advanceFlow(flow, from: tokenHash(token), to: tokenHash(next)) else { return false }
                try await tx.insert(user)
                return true
            }
            guard completed else { throw NativeAuthError.invalidToken("invalid_request") }
        } catch StoreError.duplicate {
            throw NativeAuthError("user_already_exists", "An account with this email address was created meanwhile.", errorCodes: [1003037])
        }
        logger.info("account created by native sign-up", metadata: ["user": "\(user.id)", "client": "\(flow.clientID)"])
        return NativeAuthAnswer(["continuation_token": .string(next), "expires_in": .int(settings.continuationTokenLifetime)])
    }

    // MARK: Sign-in

    /// `/oauth2/v2.0/initiate`: the address of the account to sign in to.
    package func signInInitiate(_ parameters: RequestParameters, caller: Caller) async throws -> NativeAuthAnswer {
        let challenges = try challengeTypes(parameters)
        let email = try username(parameters)
        let user = try await store.user(email: email)
        if user == nil && !enumerationProtection {
            throw NativeAuthError("user_not_found", "No account has this email address.", errorCodes: [50034])
        }
        guard challenges.contains(.oob) || challenges.contains(.password) else { return .redirect }
        var flow = try newFlow(.signIn, email: email, challenges: challenges, caller: caller)
        flow.userID = user?.id
        return try await begin(flow)
    }

    /// `/oauth2/v2.0/challenge`: asks for the password when the account has one and the
    /// app can, or sends a code.
    package func signInChallenge(_ parameters: RequestParameters, caller: Caller) async throws -> NativeAuthAnswer {
        let (flow, token) = try await currentFlow(parameters, .signIn, caller: caller, steps: [.started, .codeSent, .passwordRequested],
                                                 invalid: "invalid_grant")
        let challenges = try challengeTypes(parameters, else: flow)
        let user = try await flow.userID.asyncMap { try await store.user(id: $0) } ?? nil
        // With enumeration protection the challenge depends only on what the app can do: a
        // password when it listed one (an account without one, like an unknown address, then
        // fails with the one invalid_grant), so the answer tells nothing about the account. An
        // app that wants a code for such users asks for it with challenge_type=oob redirect.
        let hasPassword = enumerationProtection || user?.passwordHash != nil
        // Once a code was sent, asking again means "send another code".
        if challenges.contains(.password) && hasPassword && flow.step != .codeSent {
            var next = flow
            next.step = .passwordRequested
            return try await advance(next, from: token, members: ["challenge_type": "password"])
        }
        guard challenges.contains(.oob) else { return .redirect }
        return try await sendCode(flow, from: token, caller: caller, email: Email.signInCode, deliver: user != nil)
    }

    /// `grant_type=password`: the password of a sign-in flow that asked for it.
    package func passwordToken(_ parameters: RequestParameters, caller: Caller) async throws -> TokenResponse {
        let (flow, token) = try await currentFlow(parameters, .signIn, caller: caller, steps: [.passwordRequested], invalid: "invalid_grant")
        let password = try required(parameters, "password")
        switch try await passwordSignIn.signIn(email: flow.email, password: password, from: .init(address: caller.address)) {
        case .success(let user):
            return try await issueTokens(flow, userID: user.id, amr: ["pwd"], from: token, parameters: parameters, caller: caller)
        case .failure(.badCredentials):
            if flow.userID != nil || enumerationProtection { throw NativeAuthError.invalidCredentials }
            throw NativeAuthError("user_not_found", "No account has this email address.", errorCodes: [50034])
        case .failure(.throttled):
            throw NativeAuthError("invalid_grant", "Too many failed attempts. Wait a few minutes, or sign in with a code.",
                                  suberror: "user_locked", errorCodes: [50053])
        case .failure(.busy):
            throw NativeAuthError.busy()
        }
    }

    /// `grant_type=oob`: the one-time code a sign-in flow sent; it proves the address.
    package func codeToken(_ parameters: RequestParameters, caller: Caller) async throws -> TokenResponse {
        var (flow, token) = try await currentFlow(parameters, .signIn, caller: caller, steps: [.codeSent], invalid: "invalid_grant")
        try await checkCode(&flow, token: token, parameters: parameters)
        guard let userID = flow.userID else { throw NativeAuthError.invalidOOB("The code is not valid.") }
        return try await issueTokens(flow, userID: userID, amr: ["otp"], from: token, parameters: parameters, caller: caller,
                                     provesAddress: true)
    }

    /// `grant_type=continuation_token`: signs in at the end of a completed sign-up or reset.
    package func continuationToken(_ parameters: RequestParameters, caller: Caller) async throws -> TokenResponse {
        let (flow, token) = try await currentFlow(parameters, nil, caller: caller, steps: [.completed], invalid: "invalid_grant")
        guard flow.kind != .signIn, let userID = flow.userID else { throw NativeAuthError.invalidToken("invalid_grant") }
        if let username = parameters["username"], Self.normalise(username) != flow.email {
            throw NativeAuthError.invalidRequest("username is not the address this flow signed up or reset.")
        }
        return try await issueTokens(flow, userID: userID, amr: flow.amr, from: token, parameters: parameters, caller: caller)
    }

    /// Ends the flow and issues the tokens. A code sign-in (`provesAddress`) proved the
    /// address in the same step: ``AccountRules/addressProven(_:now:in:)`` runs in the
    /// transaction that ends the flow.
    func issueTokens(_ flow: NativeFlow, userID: String, amr: [String], from token: String, parameters: RequestParameters,
                     caller: Caller, provesAddress: Bool = false) async throws -> TokenResponse {
        let scope = try scope(parameters, client: caller.client)
        let now = clock.now()
        let ended = try await store.transaction { tx in
            guard try await tx.advanceFlow(flow, from: tokenHash(token), to: nil) else { return false }
            if provesAddress, let user = try await tx.user(id: userID) {
                if try await AccountRules.addressProven(user, now: now, in: tx).secured {
                    logger.notice("a code sign-in secured an unverified account: its password, unproven identities, sessions and tokens are gone",
                                  metadata: ["user": "\(userID)"])
                }
            }
            return true
        }
        guard ended else { throw NativeAuthError.invalidToken("invalid_grant") }
        return try await issueTokens(userID: userID, amr: amr, scope: scope, client: caller.client)
    }

    /// A new grant for the user, and its tokens, as the token endpoint answers them.
    package func issueTokens(userID: String, amr: [String], scope: ScopeSet, client: Client) async throws -> TokenResponse {
        let now = clock.now()
        let (grant, refresh) = tokens.mint(client: client, userID: userID, scope: scope, authTime: now, amr: amr,
                                           sid: SecureRandom.token(bytes: 16), now: now)
        try await store.insertGrant(grant, refreshToken: refresh?.record)
        return try await tokens.response(grant: grant, client: client, scope: scope, nonce: nil, refreshToken: refresh?.token)
    }

    /// The scopes asked for: the client's own, never a sensitive one (those need the consent page).
    package func scope(_ parameters: RequestParameters, client: Client) throws -> ScopeSet {
        let requested = ScopeSet(parsing: try required(parameters, "scope"))
        do { return try ScopePolicy.withoutConsent(requested, client: client) } catch {
            throw NativeAuthError("invalid_scope", error.oauthError.errorDescription ?? "The scope is not allowed.")
        }
    }

    // MARK: Password reset

    /// `/resetpassword/v1.0/start`.
    package func resetStart(_ parameters: RequestParameters, caller: Caller) async throws -> NativeAuthAnswer {
        let challenges = try challengeTypes(parameters)
        let email = try username(parameters)
        let user = try await store.user(email: email)
        if user == nil && !enumerationProtection {
            throw NativeAuthError("user_not_found", "No account has this email address.", errorCodes: [50034])
        }
        guard challenges.contains(.oob) else { return .redirect }
        var flow = try newFlow(.passwordReset, email: email, challenges: challenges, caller: caller)
        flow.userID = user?.id
        return try await begin(flow)
    }

    /// `/resetpassword/v1.0/challenge`: sends the code (again).
    package func resetChallenge(_ parameters: RequestParameters, caller: Caller) async throws -> NativeAuthAnswer {
        let (flow, token) = try await currentFlow(parameters, .passwordReset, caller: caller, steps: [.started, .codeSent],
                                                 invalid: "invalid_grant")
        let challenges = try challengeTypes(parameters, else: flow)
        guard challenges.contains(.oob) else { return .redirect }
        return try await sendCode(flow, from: token, caller: caller, email: Email.passwordResetCode, deliver: flow.userID != nil)
    }

    /// `/resetpassword/v1.0/continue`: the code.
    package func resetContinue(_ parameters: RequestParameters, caller: Caller) async throws -> NativeAuthAnswer {
        guard try required(parameters, "grant_type") == "oob" else {
            throw NativeAuthError("invalid_grant", "grant_type must be oob here.")
        }
        var (flow, token) = try await currentFlow(parameters, .passwordReset, caller: caller, steps: [.codeSent])
        try await checkCode(&flow, token: token, parameters: parameters)
        guard flow.userID != nil else { throw NativeAuthError.invalidOOB("The code is not valid.") }
        flow.step = .verified
        return try await advance(flow, from: token, members: ["expires_in": .int(settings.continuationTokenLifetime)])
    }

    /// `/resetpassword/v1.0/submit`: the new password. It is set at once, and every
    /// session and refresh token of the user ends.
    package func resetSubmit(_ parameters: RequestParameters, caller: Caller) async throws -> NativeAuthAnswer {
        var (flow, token) = try await currentFlow(parameters, .passwordReset, caller: caller, steps: [.verified])
        let password = try required(parameters, "new_password")
        try checkPassword(password, email: flow.email)
        guard let userID = flow.userID else { throw NativeAuthError.invalidToken("invalid_request") }
        let hash = try await hashNewPassword(password, caller: caller, priority: .underWay)
        let now = clock.now()
        flow.step = .completed
        flow.amr = ["pwd", "otp"]
        flow.expiresAt = now + settings.continuationTokenLifetime
        let next = SecureRandom.token()
        let completed = try await store.transaction { [flow, token] tx in
            guard try await tx.advanceFlow(flow, from: tokenHash(token), to: tokenHash(next)),
                  let user = try await tx.user(id: userID) else { return false }
            try await AccountRules.passwordReset(user, passwordHash: hash, now: now, in: tx)
            return true
        }
        guard completed else { throw NativeAuthError.invalidToken("invalid_request") }
        logger.info("password reset by native API", metadata: ["user": "\(userID)", "client": "\(flow.clientID)"])
        try? await mail(.passwordChanged, to: flow.email, language: caller.language, flow: flow, expiresAt: nil)
        return NativeAuthAnswer(["continuation_token": .string(next), "poll_interval": 1])
    }

    /// `/resetpassword/v1.0/poll_completion`: the reset is done when `submit` answers, so
    /// this says `succeeded` and hands over the token that signs the user in.
    package func resetPollCompletion(_ parameters: RequestParameters, caller: Caller) async throws -> NativeAuthAnswer {
        let (flow, token) = try await currentFlow(parameters, .passwordReset, caller: caller, steps: [.completed])
        return try await advance(flow, from: token, members: ["status": "succeeded"])
    }

    // MARK: Steps shared by the flows

    /// A new flow, once the caller's address and client may start one (``WorkLimits``).
    func newFlow(_ kind: NativeFlow.Kind, email: String, challenges: [Challenge], caller: Caller) throws -> NativeFlow {
        try admit(.flow, caller: caller)
        let now = clock.now()
        return NativeFlow(id: SecureRandom.token(bytes: 16), kind: kind, clientID: caller.client.id, email: email, step: .started,
                          challengeTypes: challenges.map(\.rawValue), language: caller.language.rawValue, createdAt: now,
                          expiresAt: now + settings.continuationTokenLifetime)
    }

    /// Counts `work` for the caller's address and client: `slow_down` past their share.
    func admit(_ work: WorkLimits.Work, caller: Caller) throws {
        do {
            try limits.admit(work, address: caller.address, client: caller.client.id, now: clock.now())
        } catch {
            let what = work == .flow ? "sign-ins were started" : "passwords were set"
            throw NativeAuthError("slow_down", "Too many \(what) from this network or app. Try again in \(error.retryAfter) s.",
                                  status: 429, extra: ["retry_after": .int(error.retryAfter)])
        }
    }

    /// The hash of a password chosen in a flow, within the caller's share of hashing work;
    /// `temporarily_unavailable` when the hashing queue is full.
    func hashNewPassword(_ password: String, caller: Caller, priority: PasswordHasher.Priority) async throws -> String {
        try admit(.hashing, caller: caller)
        do {
            return try await passwords.hash(password, priority: priority)
        } catch is PasswordHasher.Busy {
            throw NativeAuthError.busy()
        }
    }

    /// Stores a new flow and answers its first continuation token.
    func begin(_ flow: NativeFlow) async throws -> NativeAuthAnswer {
        let token = SecureRandom.token()
        try await store.insertFlow(flow, tokenHash: tokenHash(token))
        return NativeAuthAnswer(["continuation_token": .string(token)])
    }

    /// Saves the flow under a new continuation token, returned with `members`.
    func advance(_ flow: NativeFlow, from token: String, members: [String: JSONValue]) async throws -> NativeAuthAnswer {
        var flow = flow
        flow.expiresAt = clock.now() + settings.continuationTokenLifetime
        let next = SecureRandom.token()
        guard try await store.advanceFlow(flow, from: tokenHash(token), to: tokenHash(next)) else {
            throw NativeAuthError.invalidToken("invalid_request")
        }
        var members = members
        members["continuation_token"] = .string(next)
        return NativeAuthAnswer(members)
    }

    /// The flow of the request's continuation token, if it is this client's, of this kind,
    /// unexpired and at one of `steps`.
    func currentFlow(_ parameters: RequestParameters, _ kind: NativeFlow.Kind?, caller: Caller, steps: Set<NativeFlow.Step>,
                     invalid: String = "invalid_request") async throws -> (NativeFlow, String) {
        let token = try required(parameters, "continuation_token")
        guard token.count <= 512, let flow = try await store.flow(tokenHash: tokenHash(token)), flow.clientID == caller.client.id else {
            throw NativeAuthError.invalidToken(invalid)
        }
        guard flow.expiresAt > clock.now() else { throw NativeAuthError.expiredToken() }
        guard kind == nil || flow.kind == kind else {
            throw NativeAuthError(invalid, "The continuation_token is not valid for this endpoint: it belongs to a \(flow.kind.rawValue) flow.",
                                  errorCodes: [55200])
        }
        guard steps.contains(flow.step) else {
            throw NativeAuthError.invalidRequest("This step doesn't follow the previous one (the flow is at '\(flow.step.rawValue)').")
        }
        return (flow, token)
    }

    /// Sends a new code (or, with `deliver` false, pretends to: the same answer, no email),
    /// within the resend interval and the hourly limits.
    func sendCode(_ flow: NativeFlow, from token: String, caller: Caller, email: (_ code: String, _ minutes: Int) -> Email,
                  deliver: Bool) async throws -> NativeAuthAnswer {
        let now = clock.now()
        if let sentAt = flow.codeSentAt, now - sentAt < settings.resendInterval {
            let wait = settings.resendInterval - (now - sentAt)
            throw NativeAuthError("slow_down", "A code was sent \(now - sentAt) s ago. Ask for another in \(wait) s.", status: 429,
                                  extra: ["retry_after": .int(wait)])
        }
        try await checkHourlyLimits(email: flow.email, clientAddress: caller.address)
        var flow = flow
        let code = Self.randomDigits(settings.codeLength)
        // Nothing that is typed can match a code that was not sent.
        let matchable = deliver && !flow.accountExists
        flow.code = NativeFlow.Code(hash: matchable ? Self.codeHash(code, flow: flow.id) : "unmatchable:" + SecureRandom.token(),
                                    expiresAt: now + settings.codeLifetime)
        flow.codeSentAt = now
        flow.step = .codeSent
        let answer = try await advance(flow, from: token, members: [
            "challenge_type": "oob", "binding_method": "prompt", "challenge_channel": "email",
            "challenge_target_label": .string(Self.mask(flow.email)), "code_length": .int(Int64(settings.codeLength)),
            "interval": .int(settings.resendInterval),
        ])
        try await store.resetCodeAttempts(flowID: flow.id)
        try await store.recordCodeSent(email: flow.email, clientAddress: caller.address, now: now)
        if deliver {
            let message = email(code, Int((settings.codeLifetime + 59) / 60))
            try await mail(message, to: flow.email, language: caller.language, flow: flow, expiresAt: flow.code?.expiresAt)
        }
        return answer
    }

    /// Codes and links sent per address and per client address in the last hour, against
    /// their limits (counted in the database, so across nodes).
    func checkHourlyLimits(email: String, clientAddress: String) async throws {
        let sent = try await store.codesSent(email: email, clientAddress: clientAddress, since: clock.now() - 3600)
        if sent.toEmail >= settings.codesPerEmailPerHour || sent.fromAddress >= settings.codesPerAddressPerHour {
            throw NativeAuthError("slow_down", "Too many codes or links were sent in the last hour. Try again later.", status: 429,
                                  extra: ["retry_after": 3600])
        }
    }

    func mail(_ message: Email, to address: String, language: PageLanguage, flow: NativeFlow, expiresAt: Int64?) async throws {
        try await mailer.send(try templates.message(message, to: address, language: language, issuerHost: issuerHost,
                                                    metadata: ["flow": flow.kind.rawValue], expiresAt: expiresAt))
    }

    /// Checks the `oob` parameter against the flow's code; a wrong one is counted (and
    /// saved), and after the limit the code stops working.
    func checkCode(_ flow: inout NativeFlow, token: String, parameters: RequestParameters) async throws {
        let entered = try required(parameters, "oob")
        guard let code = flow.code else { throw NativeAuthError.invalidRequest("Ask for a code first.") }
        guard code.expiresAt > clock.now() else { throw NativeAuthError.invalidOOB("The code has expired. Ask for a new code.") }
        // The entry is counted before it is compared, so parallel guesses each use one up.
        guard let used = try await store.reserveCodeAttempt(flowID: flow.id, tokenHash: tokenHash(token), limit: settings.maxCodeAttempts)
        else { throw NativeAuthError.invalidOOB("Too many wrong codes. Ask for a new code.") }
        let matches = entered.count == settings.codeLength && entered.allSatisfy(\.isASCII) && entered.allSatisfy(\.isNumber)
            && constantTimeEquals(Array(Self.codeHash(entered, flow: flow.id).utf8), Array(code.hash.utf8))
        guard matches else {
            let left = settings.maxCodeAttempts - used
            throw NativeAuthError.invalidOOB(left > 0 ? "The code is not valid. \(left) attempt\(left == 1 ? "" : "s") left."
                                                      : "The code is not valid. Ask for a new code.")
        }
        flow.code = nil
        flow.emailVerified = true
        flow.step = .verified
    }


    func checkPassword(_ password: String, email: String) throws {
        if let violation = policy.check(password, email: email) { throw NativeAuthError.password(violation, policy: policy) }
    }

    /// The challenge step's `challenge_type` when the app sent one, else the one it gave at `start` / `initiate`.
    func challengeTypes(_ parameters: RequestParameters, else flow: NativeFlow) throws -> [Challenge] {
        parameters["challenge_type"] == nil ? flow.challengeTypes.compactMap(Challenge.init) : try challengeTypes(parameters)
    }

    /// `challenge_type`: a space-separated list that must include `redirect`, so the app
    /// can always fall back to the browser.
    func challengeTypes(_ parameters: RequestParameters) throws -> [Challenge] {
        let listed = try required(parameters, "challenge_type").split(separator: " ").map(String.init)
        var challenges: [Challenge] = []
        for name in listed {
            guard let challenge = Challenge(rawValue: name) else {
                throw NativeAuthError.invalidRequest("The challenge_type list parameter contains an unsupported challenge type: '\(name)' "
                                                     + "(the types are oob, password and redirect).")
            }
            challenges.append(challenge)
        }
        guard challenges.contains(.redirect) else {
            throw NativeAuthError("unsupported_challenge_type",
                                  "The challenge_type list parameter does not include the 'redirect' type, which the app needs for "
                                  + "when a flow can only finish in the browser.", errorCodes: [901_007])
        }
        return challenges
    }

    func username(_ parameters: RequestParameters) throws -> String {
        let email = Self.normalise(try required(parameters, "username"))
        guard MailAddress.isPlausible(email) else {
            throw NativeAuthError("invalid_request", "The username parameter is empty or not valid: it must be an email address.",
                                  errorCodes: [90100])
        }
        return email
    }

    package func required(_ parameters: RequestParameters, _ name: String) throws -> String {
        guard let value = parameters[name] else { throw NativeAuthError.invalidRequest("The \(name) parameter is missing.", codes: [90014]) }
        return value
    }

    package static func normalise(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// `a***e@e*****e.com`: enough for the user to recognise their address.
    static func mask(_ email: String) -> String {
        guard let at = email.lastIndex(of: "@") else { return "***" }
        func hide(_ part: Substring) -> String {
            part.count <= 2 ? String(repeating: "*", count: max(part.count, 1))
                : "\(part.first!)" + String(repeating: "*", count: min(part.count - 2, 8)) + "\(part.last!)"
        }
        let domain = email[email.index(after: at)...]
        let dot = domain.lastIndex(of: ".") ?? domain.endIndex
        return hide(email[..<at]) + "@" + hide(domain[..<dot]) + domain[dot...]
    }

    static func randomDigits(_ count: Int) -> String {
        var digits = ""
        while digits.count < count {
            // Rejection sampling keeps every digit uniform.
            for byte in SecureRandom.bytes(count) where byte < 250 && digits.count < count {
                digits.append(Character(String(byte % 10)))
            }
        }
        return digits
    }

    /// A code is stored only as its hash, salted with the flow's id.
    static func codeHash(_ code: String, flow: String) -> String {
        tokenHash("otp:" + flow + ":" + code)
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        switch self {
        case .some(let value): try await transform(value)
        case .none: nil
        }
    }
}
