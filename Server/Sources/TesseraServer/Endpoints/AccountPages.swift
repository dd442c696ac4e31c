import Foundation
import Hummingbird
import TesseraCore
import TesseraDomain

/// What the account page shows: the person's profile form, password, sessions, apps and
/// providers, with a notice after a change and each refusal next to its field.
struct AccountPage {
    var user: User
    var csrf: String
    var recentSignIn: Bool
    var notice: String?
    var formError: String?
    var profileFields: [[String: Any]]
    /// `current` / `new`: a refusal next to the password fields.
    var passwordErrors: [String: String] = [:]
    /// A change of address waiting for its code, and a refusal next to the address or code field.
    var emailChange: SelfService.PendingChange?
    var emailError: String?
    var passwordHint: String
    var canRemovePassword: Bool
    var passkeys: [[String: Any]]
    /// A refused passkey ceremony or change.
    var passkeyError: String?
    /// The "Two-step verification" section's values.
    var twoStep: [String: Any]
    var sessions: [[String: Any]]
    var apps: [AccountPageApp]
    var identities: [[String: Any]]
    var connect: [LoginProvider]
}

/// The account page's forms: the profile, the password, the sessions. Each is a POST with
/// the page's CSRF token from a signed-in browser, answered by a redirect back to the page
/// with a notice (`/account?done=…`), or by the page again with what was refused.
extension AccountEndpoint {
    static let notices: [String: PageLanguage.Key] = [
        "profile": .accountProfileSaved, "password": .accountPasswordChanged, "password-removed": .accountPasswordRemoved,
        "session": .accountSessionEnded, "sessions": .accountOthersEnded, "email": .accountEmailChanged,
        "passkey-added": .passkeyAdded, "passkey-renamed": .passkeyRenamed, "passkey-removed": .passkeyRemoved, "passkey-gone": .passkeyGone,
        "two-step-on": .twoStepTurnedOn, "two-step-off": .twoStepTurnedOff, "recovery-codes": .recoveryCodesReplaced,
    ]

    func registerForms(on router: Router<TesseraRequestContext>) {
        router.post("/account/profile") { request, context in try await form(request, context, saveProfile) }
        router.post("/account/password") { request, context in try await form(request, context, changePassword) }
        router.post("/account/password/remove") { request, context in try await form(request, context, removePassword) }
        router.post("/account/sessions/end") { request, context in try await form(request, context, endSession) }
        router.post("/account/sessions/end-others") { request, context in try await form(request, context, endOtherSessions) }
        router.post("/account/email") { request, context in try await form(request, context, startEmailChange) }
        router.post("/account/email/confirm") { request, context in try await form(request, context, confirmEmailChange) }
        router.get("/account/confirm") { request, _ in try await confirmPage(request) }
        registerTwoStepForms(on: router)
    }

    /// The signed-in browser's account, and the proof it has.
    struct SignedIn {
        var session: BrowserSession
        var user: User
        var form: RequestParameters
        var language: PageLanguage
        var owner: SelfService.Owner
        var recentSignIn: Bool
    }

    /// Runs `body` for a form posted from the account page of a signed-in browser; otherwise
    /// the page saying the session expired.
    func form(_ request: Request, _ context: TesseraRequestContext, _ body: (Request, SignedIn) async throws -> Response) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = language(request)
        guard services.csrf.isValid(form["csrf_token"], request: request),
              let (session, user) = try await BrowserSessions(services: services).signedIn(request) else {
            return expiredPage(language)
        }
        let owner = SelfService.Owner(user: user, authTime: session.authTime, sid: session.sid,
                                      origin: .init(address: context.addressKey, device: services.deviceCookies.device(in: request)),
                                      language: language)
        let recent = session.isRecent(now: services.clock.now(), within: services.configuration.reauthenticateAfter)
        return try await body(request, SignedIn(session: session, user: user, form: form, language: language, owner: owner, recentSignIn: recent))
    }

    func done(_ notice: String) -> Response { Responses.redirect("/account?done=" + notice, status: .seeOther) }

    func saveProfile(_ request: Request, _ signedIn: SignedIn) async throws -> Response {
        let claims = ProfileForm.claims(of: signedIn.user)
        let changes = ProfileForm.changes(from: signedIn.form, claims: claims)
        do {
            _ = try await services.selfService.updateProfile(signedIn.owner, changes: changes, recentSignIn: signedIn.recentSignIn)
            return done("profile")
        } catch .invalidClaims(let problems) {
            return try await page(request, signedIn.user, session: signedIn.session, typed: signedIn.form, problems: problems,
                                  formError: signedIn.language.text(.formHasErrors), status: .badRequest)
        } catch .recentSignInRequired {
            return reauthenticationPage(request, user: signedIn.user, reason: .reauthProfile, message: nil, status: .ok)
        } catch .changedMeanwhile {
            return try await page(request, signedIn.user, session: signedIn.session, typed: signedIn.form,
                                  formError: signedIn.language.text(.sessionExpired), status: .conflict)
        } catch .unavailable(let error) {
            throw error
        } catch {
            return try await page(request, signedIn.user, session: signedIn.session, typed: signedIn.form,
                                  formError: signedIn.language.text(.busy), status: .serviceUnavailable)
        }
    }

    func changePassword(_ request: Request, _ signedIn: SignedIn) async throws -> Response {
        let language = signedIn.language
        func refused(_ field: String, _ text: String, _ status: HTTPResponse.Status) async throws -> Response {
            try await page(request, signedIn.user, session: signedIn.session, passwordErrors: [field: text], status: status)
        }
        do {
            _ = try await services.selfService.changePassword(signedIn.owner, current: signedIn.form["current_password"],
                                                              to: signedIn.form["new_password"] ?? "", recentSignIn: signedIn.recentSignIn)
            return done("password")
        } catch .recentSignInRequired {
            if signedIn.user.passwordHash != nil { return try await refused("current", language.text(.accountCurrentPasswordRequired), .badRequest) }
            return reauthenticationPage(request, user: signedIn.user, reason: .reauthPassword, message: nil, status: .ok)
        } catch .currentPassword(let failure) {
            let text = failure == .badCredentials ? language.text(.wrongPassword) : language.text(failure.pageText)
            return try await refused("current", text, failure.status)
        } catch .weakPassword(let violation, _) {
            return try await refused("new", PasswordResetPages.text(violation, language), .badRequest)
        } catch .busy {
            return try await refused("new", language.text(.busy), .serviceUnavailable)
        } catch .unavailable(let error) {
            throw error
        } catch {
            return try await refused("new", language.text(.busy), .serviceUnavailable)
        }
    }

    func removePassword(_ request: Request, _ signedIn: SignedIn) async throws -> Response {
        do {
            _ = try await services.selfService.removePassword(signedIn.owner, recentSignIn: signedIn.recentSignIn)
            return done("password-removed")
        } catch .recentSignInRequired {
            return reauthenticationPage(request, user: signedIn.user, reason: .reauthPassword, message: nil, status: .ok)
        } catch .lastWayIn {
            return try await page(request, signedIn.user, session: signedIn.session,
                                  passwordErrors: ["new": signedIn.language.text(.accountPasswordLastWay)], status: .conflict)
        } catch .unavailable(let error) {
            throw error
        } catch {
            return try await page(request, signedIn.user, session: signedIn.session, formError: signedIn.language.text(.busy),
                                  status: .serviceUnavailable)
        }
    }

    func startEmailChange(_ request: Request, _ signedIn: SignedIn) async throws -> Response {
        let language = signedIn.language
        func refused(_ key: PageLanguage.Key, _ status: HTTPResponse.Status) async throws -> Response {
            try await page(request, signedIn.user, session: signedIn.session, emailError: language.text(key), status: status)
        }
        let pending: SelfService.PendingChange
        do {
            pending = try await services.selfService.startEmailChange(signedIn.owner, to: signedIn.form["new_email"] ?? "",
                                                                      recentSignIn: signedIn.recentSignIn)
        } catch .invalidAddress {
            return try await refused(.accountEmailInvalid, .badRequest)
        } catch .recentSignInRequired {
            return reauthenticationPage(request, user: signedIn.user, reason: .reauthEmail, message: nil, status: .ok)
        } catch .tooManyCodes {
            return try await refused(.accountEmailThrottled, .tooManyRequests)
        } catch .unavailable(let error) {
            throw error
        } catch {
            return try await refused(.busy, .serviceUnavailable)
        }
        return try await page(request, signedIn.user, session: signedIn.session, emailChange: pending)
    }

    func confirmEmailChange(_ request: Request, _ signedIn: SignedIn) async throws -> Response {
        let language = signedIn.language
        let id = signedIn.form["change_id"] ?? ""
        do {
            _ = try await services.selfService.confirmEmailChange(signedIn.owner, id: id, code: signedIn.form["code"] ?? "")
            return done("email")
        } catch .wrongCode(let left) {
            let pending = try await services.selfService.pendingEmailChange(signedIn.owner, id: id)
            let text = left > 0 ? language.text(.codeWrongLeft).replacingOccurrences(of: "{left}", with: String(left))
                : language.text(.accountEmailExpired)
            return try await page(request, signedIn.user, session: signedIn.session, emailChange: left > 0 ? pending : nil, emailError: text,
                                  status: .badRequest)
        } catch .unavailable(let error) {
            throw error
        } catch {
            return try await page(request, signedIn.user, session: signedIn.session, emailError: language.text(.accountEmailExpired),
                                  status: .badRequest)
        }
    }

    func endSession(_ request: Request, _ signedIn: SignedIn) async throws -> Response {
        let sid = signedIn.form["sid"] ?? ""
        _ = try await services.selfService.endSession(signedIn.owner, sid: sid)
        if sid == signedIn.session.sid {
            var response = Responses.redirect("/account", status: .seeOther)
            response.setCookie(BrowserSessions(services: services).clearingCookie)
            return response
        }
        return done("session")
    }

    func endOtherSessions(_ request: Request, _ signedIn: SignedIn) async throws -> Response {
        _ = try await services.selfService.endOtherSessions(signedIn.owner)
        return done("sessions")
    }

    /// "Confirm it's you" before a sensitive change, asked for from the page itself.
    func confirmPage(_ request: Request) async throws -> Response {
        guard let (_, user) = try await BrowserSessions(services: services).signedIn(request) else {
            return Responses.redirect("/account", status: .seeOther)
        }
        let reason: PageLanguage.Key = switch request.uri.queryParameters["reason"] {
        case "password": .reauthPassword
        case "email": .reauthEmail
        case "passkey": .reauthPasskey
        case "two-step": .reauthTwoStep
        default: .reauthProfile
        }
        return reauthenticationPage(request, user: user, reason: reason, message: nil, status: .ok)
    }

    // MARK: The page

    /// The account page of `user`: `typed` and `problems` show a refused profile form again.
    func page(_ request: Request, _ user: User, session: BrowserSession, typed: RequestParameters? = nil, problems: [String: String] = [:],
              passwordErrors: [String: String] = [:], emailChange: SelfService.PendingChange? = nil, emailError: String? = nil,
              passkeyError: String? = nil, setupError: String? = nil, formError: String? = nil, notice: String? = nil,
              status: HTTPResponse.Status = .ok) async throws -> Response {
        let language = language(request)
        let (csrf, cookie) = services.csrf.token(for: request)
        let recent = session.isRecent(now: services.clock.now(), within: services.configuration.reauthenticateAfter)
        var apps: [AccountPageApp] = []
        for (consent, name) in try await services.accounts.apps(of: user.id) {
            let ordered = consent.scopes.values.sorted { ScopeCatalogue.order($0) < ScopeCatalogue.order($1) }
            apps.append(AccountPageApp(clientID: consent.clientID, name: name, scopes: ordered.map { scope in
                var item: [String: Any] = ["text": language.describe(scope: scope)]
                if ScopeCatalogue.definition(scope)?.sensitive == true { item["sensitive"] = language.text(.scopeSensitive) }
                return item
            }))
        }
        let names = Dictionary(uniqueKeysWithValues: services.federation.ordered.map { ($0.id, $0.settings.name) })
        let linkedIdentities = try await services.accounts.identities(of: user.id)
        let identities: [[String: Any]] = linkedIdentities.map { identity in
            ["name": names[identity.providerID] ?? identity.providerID, "provider": identity.providerID, "email": identity.email ?? ""]
        }
        let linked = Set(linkedIdentities.map(\.providerID))
        let sessions = try await services.selfService.sessions(of: user).map { other -> [String: Any] in
            [
                "sid": other.sid, "device": Self.deviceSummary(other.device.userAgent) ?? language.text(.accountUnknownDevice),
                "address": other.device.address ?? "", "current": other.sid == session.sid, "csrf": csrf,
                "thisBrowser": language.text(.accountThisBrowser),
                "signedInAt": language.text(.accountSignedInAt).replacingOccurrences(of: "{time}", with: language.time(other.authTime)),
                "lastSeen": language.text(.accountLastSeen).replacingOccurrences(of: "{time}", with: language.time(other.lastSeenAt)),
                "signOut": language.text(.accountSignOutSession),
            ]
        }
        let userPasskeys = try await services.passkeys.passkeys(of: user.id)
        let passkeys = userPasskeys.map { passkey -> [String: Any] in
            var item: [String: Any] = [
                "id": passkey.id, "name": passkey.name, "csrf": csrf,
                "kind": language.text(passkey.backupEligible ? .passkeySynced : .passkeyDeviceBound),
                "createdAt": language.text(.passkeyCreatedAt).replacingOccurrences(of: "{time}", with: language.time(passkey.createdAt)),
                "lastUsed": passkey.lastUsedAt.map { language.text(.passkeyLastUsed).replacingOccurrences(of: "{time}", with: language.time($0)) }
                    ?? language.text(.passkeyNeverUsed),
                "nameLabel": language.text(.passkeyName), "rename": language.text(.passkeyRename), "remove": language.text(.passkeyRemove),
            ]
            if passkey.isSuspended { item["blocked"] = language.text(.passkeyBlocked) }
            return item
        }
        let policy = PasswordPolicy()
        let model = AccountPage(
            user: user, csrf: csrf, recentSignIn: recent, notice: notice, formError: formError,
            profileFields: ProfileForm.fields(ProfileForm.claims(of: user), user: user, typed: typed, problems: problems, recentSignIn: recent,
                                              language: language),
            passwordErrors: passwordErrors, emailChange: emailChange, emailError: emailError,
            passwordHint: language == .ru ? "Не короче \(policy.minimumLength) символов." : "At least \(policy.minimumLength) characters.",
            canRemovePassword: user.passwordHash != nil && SelfService.hasAnotherWayIn(user, identities: linkedIdentities, passkeys: userPasskeys),
            passkeys: passkeys, passkeyError: passkeyError,
            twoStep: try await twoStepSection(user, language: language, setupError: setupError),
            sessions: sessions, apps: apps, identities: identities,
            connect: services.federation.loginProviders.filter { !linked.contains($0.id) })
        var response = Responses.html(services.pages.account(model, language: language), status: status,
                                      formTargets: services.federation.ordered.map(\.authorizationOrigin))
        if let cookie { response.setCookie(cookie) }
        return response
    }

    /// "Firefox on Linux", from a `User-Agent`; nil when nothing in it is recognised.
    static func deviceSummary(_ userAgent: String?) -> String? {
        guard let agent = userAgent, !agent.isEmpty else { return nil }
        let browsers = [("Edg/", "Edge"), ("OPR/", "Opera"), ("YaBrowser/", "Yandex Browser"), ("Firefox/", "Firefox"),
                        ("Chrome/", "Chrome"), ("Safari/", "Safari"), ("curl/", "curl"), ("python-requests", "Python")]
        let systems = [("iPhone", "iOS"), ("iPad", "iPadOS"), ("Android", "Android"), ("Windows", "Windows"), ("Mac OS X", "macOS"),
                       ("CrOS", "ChromeOS"), ("Linux", "Linux")]
        let browser = browsers.first { agent.contains($0.0) }?.1
        let system = systems.first { agent.contains($0.0) }?.1
        switch (browser, system) {
        case (let browser?, let system?): return "\(browser) · \(system)"
        case (let browser?, nil): return browser
        case (nil, let system?): return system
        default: return String(agent.prefix(40))
        }
    }
}

extension PageLanguage {
    /// A moment as people read it, in UTC: "27 Nov 2026, 03:15 UTC".
    func time(_ unix: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: self == .ru ? "ru_RU" : "en_GB")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "d MMM yyyy, HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(unix))) + " UTC"
    }
}
