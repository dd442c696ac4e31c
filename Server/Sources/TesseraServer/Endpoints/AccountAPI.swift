import Foundation
import Hummingbird
import TesseraCore
import TesseraDomain

/// The account API (`account_api_endpoint`, docs/account.md): a first-party app, with its
/// signed-in user's access token, reads and changes that user's own account, as the account
/// page does in a browser: the profile, the password, the browser sessions, the account's
/// deletion (which Apple's App Store requires apps to offer in the app).
///
/// Changes that need a recent sign-in check the access token's `auth_time` against
/// `reauthenticate-after`, and answer RFC 9470's `insufficient_user_authentication` with the
/// `max_age` to sign in again with.
struct AccountAPI {
    let services: Services
    var selfService: SelfService { services.selfService }

    func register(on router: Router<TesseraRequestContext>) {
        router.get(RouterPath(TesseraPath.accountProviders)) { request, context in try await call(request, context, providers) }
        router.get(RouterPath(TesseraPath.accountProfile)) { request, context in try await call(request, context, profile) }
        router.patch(RouterPath(TesseraPath.accountProfile)) { request, context in try await call(request, context, updateProfile) }
        router.post(RouterPath(TesseraPath.accountPassword)) { request, context in try await call(request, context, changePassword) }
        router.delete(RouterPath(TesseraPath.accountPassword)) { request, context in try await call(request, context, removePassword) }
        router.post(RouterPath(TesseraPath.accountEmail)) { request, context in try await call(request, context, startEmailChange) }
        router.post(RouterPath(TesseraPath.accountEmail + "/confirm")) { request, context in try await call(request, context, confirmEmailChange) }
        router.get(RouterPath(TesseraPath.accountSessions)) { request, context in try await call(request, context, sessions) }
        router.delete(RouterPath(TesseraPath.accountSessions + "/:id")) { request, context in try await call(request, context, endSession) }
        router.delete(RouterPath(TesseraPath.account)) { request, context in try await call(request, context, deleteAccount) }
        router.get(RouterPath(TesseraPath.accountPasskeys)) { request, context in try await call(request, context, passkeys) }
        router.post(RouterPath(TesseraPath.accountPasskeys + "/options")) { request, context in
            try await call(request, context, passkeyOptions)
        }
        router.post(RouterPath(TesseraPath.accountPasskeys)) { request, context in try await call(request, context, addPasskey) }
        router.delete(RouterPath(TesseraPath.accountPasskeys + "/:id")) { request, context in try await call(request, context, removePasskey) }
    }

    /// The caller: the access token's user at a first-party client, and its sign-in.
    struct Caller {
        var owner: SelfService.Owner
        var client: Client
        var recentSignIn: Bool
        var user: User { owner.user }
    }

    /// Runs `body` for the access token's user, answering a bad token as RFC 6750 says and
    /// every refusal as an ``AccountAPIError``.
    func call(_ request: Request, _ context: TesseraRequestContext,
              _ body: (inout Request, TesseraRequestContext, Caller) async throws -> Response) async throws -> Response {
        var request = request
        guard let token = request.bearerToken else {
            // RFC 6750 §3.1: a request without credentials gets a challenge without an error code.
            var response = answer(AccountAPIError(error: "invalid_token", errorDescription: "An access token is required."))
            response.status = .unauthorized
            response.headers[.wwwAuthenticate] = "Bearer realm=\"tessera\""
            return response
        }
        do {
            let validated = try await services.accessTokens.validate(token)
            guard let grant = validated.grant, let (user, client) = try await services.accounts.owner(of: grant) else {
                throw OAuthError(.invalidToken, "The access token is not a user's.")
            }
            guard client.firstParty else {
                throw OAuthError(.insufficientScope, "Only the account's first-party apps may use the account API.")
            }
            let authTime = grant.authTime ?? grant.createdAt
            let owner = SelfService.Owner(user: user, authTime: authTime, grantID: grant.id,
                                          origin: .init(address: context.addressKey, clientID: client.id), language: language(of: user))
            let caller = Caller(owner: owner, client: client,
                                recentSignIn: selfService.isRecent(owner, within: services.configuration.reauthenticateAfter))
            return try await body(&request, context, caller)
        } catch let error as OAuthError {
            return Responses.bearerError(error)
        } catch let error as SelfServiceError {
            return refusal(error)
        } catch let error as AccountAPIError {
            return answer(error)
        } catch {
            return unavailable(error)
        }
    }

    /// The database failed: 503, for the app to try again shortly.
    func unavailable(_ error: any Error) -> Response {
        services.logger.error("account API: the database failed", metadata: ["error": "\(error)"])
        return answer(AccountAPIError(error: "temporarily_unavailable", errorDescription: "The database is unavailable: try again shortly."))
    }

    // MARK: Resources

    func providers(_ request: inout Request, _ context: TesseraRequestContext, _ caller: Caller) async throws -> Response {
        try Responses.json(LinkedProvidersAnswer(linkedProviders: try await services.accounts.linkedProviders(of: caller.user)))
    }

    func profile(_ request: inout Request, _ context: TesseraRequestContext, _ caller: Caller) async throws -> Response {
        try Responses.json(Self.profile(of: caller.user))
    }

    /// A JSON merge patch of claims (RFC 7396 at the top level: a member replaces the claim,
    /// `null` removes it; a structured claim is replaced whole).
    func updateProfile(_ request: inout Request, _ context: TesseraRequestContext, _ caller: Caller) async throws -> Response {
        let data = try await Self.body(&request)
        guard let changes = try? JSONDecoder().decode([String: JSONValue].self, from: data) else {
            throw AccountAPIError(error: "invalid_request", errorDescription: "The body must be a JSON object of claims, such as {\"given_name\": \"Ann\"}.")
        }
        let user = try await selfService.updateProfile(caller.owner, changes: changes, recentSignIn: caller.recentSignIn)
        return try Responses.json(Self.profile(of: user))
    }

    func changePassword(_ request: inout Request, _ context: TesseraRequestContext, _ caller: Caller) async throws -> Response {
        let data = try await Self.body(&request)
        guard let change = try? JSONDecoder().decode(AccountPasswordChange.self, from: data) else {
            throw AccountAPIError(error: "invalid_request",
                                  errorDescription: "The body must be {\"new_password\": \"…\", \"current_password\": \"…\"}.")
        }
        _ = try await selfService.changePassword(caller.owner, current: change.currentPassword, to: change.newPassword,
                                                        recentSignIn: caller.recentSignIn)
        return Response(status: .noContent, headers: Self.noStore)
    }

    func removePassword(_ request: inout Request, _ context: TesseraRequestContext, _ caller: Caller) async throws -> Response {
        _ = try await selfService.removePassword(caller.owner, recentSignIn: caller.recentSignIn)
        return Response(status: .noContent, headers: Self.noStore)
    }

    func startEmailChange(_ request: inout Request, _ context: TesseraRequestContext, _ caller: Caller) async throws -> Response {
        guard let change = try? JSONDecoder().decode(AccountEmailChange.self, from: try await Self.body(&request)) else {
            throw AccountAPIError(error: "invalid_request", errorDescription: "The body must be {\"new_email\": \"…\"}.")
        }
        let pending = try await selfService.startEmailChange(caller.owner, to: change.newEmail, recentSignIn: caller.recentSignIn)
        return try Responses.json(AccountEmailChangeStarted(changeID: pending.id, target: pending.target, codeLength: pending.codeLength,
                                                            expiresIn: pending.expiresIn), status: .accepted)
    }

    func confirmEmailChange(_ request: inout Request, _ context: TesseraRequestContext, _ caller: Caller) async throws -> Response {
        guard let confirmation = try? JSONDecoder().decode(AccountEmailConfirmation.self, from: try await Self.body(&request)) else {
            throw AccountAPIError(error: "invalid_request", errorDescription: "The body must be {\"change_id\": \"…\", \"code\": \"…\"}.")
        }
        let user = try await selfService.confirmEmailChange(caller.owner, id: confirmation.changeID, code: confirmation.code)
        return try Responses.json(Self.profile(of: user))
    }

    func sessions(_ request: inout Request, _ context: TesseraRequestContext, _ caller: Caller) async throws -> Response {
        let sessions = try await selfService.sessions(of: caller.user).map(Self.wire)
        return try Responses.json(AccountSessionList(sessions: sessions))
    }

    func endSession(_ request: inout Request, _ context: TesseraRequestContext, _ caller: Caller) async throws -> Response {
        guard try await selfService.endSession(caller.owner, sid: context.parameters.get("id") ?? "") else {
            throw AccountAPIError(error: AccountAPIError.notFound, errorDescription: "No live session of this account has this id.")
        }
        return Response(status: .noContent, headers: Self.noStore)
    }

    /// Deletes the account at once (its tokens, this one too, stop working): a recent sign-in required.
    func deleteAccount(_ request: inout Request, _ context: TesseraRequestContext, _ caller: Caller) async throws -> Response {
        guard caller.recentSignIn else { throw SelfServiceError.recentSignInRequired("account") }
        try await services.federation.deleteUser(caller.user, by: .user, detail: "by the user, through the account API at \(caller.client.id)")
        return Response(status: .noContent, headers: Self.noStore)
    }

    // MARK: Passkeys

    func passkeys(_ request: inout Request, _ context: TesseraRequestContext, _ caller: Caller) async throws -> Response {
        try Responses.json(AccountPasskeyList(passkeys: try await services.passkeys.passkeys(of: caller.user.id).map(Self.wire)))
    }

    /// The options for the platform's passkey API: a recent sign-in required, as on the account page.
    func passkeyOptions(_ request: inout Request, _ context: TesseraRequestContext, _ caller: Caller) async throws -> Response {
        guard caller.recentSignIn else { throw SelfServiceError.recentSignInRequired("passkeys") }
        return try Responses.json(try await services.passkeys.creationOptions(for: caller.user))
    }

    func addPasskey(_ request: inout Request, _ context: TesseraRequestContext, _ caller: Caller) async throws -> Response {
        guard caller.recentSignIn else { throw SelfServiceError.recentSignInRequired("passkeys") }
        guard let registration = try? JSONDecoder().decode(AccountPasskeyRegistration.self, from: try await Self.body(&request)) else {
            throw AccountAPIError(error: "invalid_request",
                                  errorDescription: "The body must be {\"credential\": WebAuthn's RegistrationResponseJSON, \"name\": \"…\"}.")
        }
        let passkey: Passkey
        do {
            passkey = try await services.passkeys.register(registration.credential, for: caller.user, name: registration.name)
        } catch .unavailable(let error) {
            throw error
        } catch .invalidName {
            throw AccountAPIError(error: "invalid_request", errorDescription: "name must be one line of at most 64 characters.")
        } catch .tooMany {
            throw AccountAPIError(error: AccountAPIError.conflict, errorDescription: "The account has the most passkeys it may have: remove one first.")
        } catch .alreadyRegistered {
            throw AccountAPIError(error: AccountAPIError.conflict, errorDescription: "This passkey is already registered.")
        } catch .challengeExpired {
            throw AccountAPIError(error: AccountAPIError.invalidPasskey,
                                  errorDescription: "The challenge is unknown, used or expired: ask for new options.")
        } catch .invalid(let why) {
            throw AccountAPIError(error: AccountAPIError.invalidPasskey, errorDescription: "The passkey was refused: \(why).")
        } catch {
            throw AccountAPIError(error: AccountAPIError.invalidPasskey, errorDescription: "The passkey was refused.")
        }
        return try Responses.json(Self.wire(passkey), status: .created)
    }

    func removePasskey(_ request: inout Request, _ context: TesseraRequestContext, _ caller: Caller) async throws -> Response {
        do {
            guard try await services.passkeys.remove(context.parameters.get("id") ?? "", of: caller.user) else {
                throw AccountAPIError(error: AccountAPIError.notFound, errorDescription: "The account has no passkey with this id.")
            }
        } catch let failure as PasskeyFailure {
            try PasskeyEndpoints.rethrowUnavailable(failure)
            throw AccountAPIError(error: AccountAPIError.lastWayIn,
                                  errorDescription: "This passkey is the account's only way to sign in: add a password or verify the address first.")
        }
        return Response(status: .noContent, headers: Self.noStore)
    }

    static func wire(_ passkey: Passkey) -> AccountPasskey {
        AccountPasskey(id: passkey.id, name: passkey.name, synced: passkey.backupEligible, createdAt: passkey.createdAt,
                       lastUsedAt: passkey.lastUsedAt, blocked: passkey.isSuspended)
    }

    // MARK: Wire

    static var noStore: HTTPFields {
        var headers: HTTPFields = [:]
        Responses.addNoStore(&headers)
        return headers
    }

    static func profile(of user: User) -> AccountProfile {
        AccountProfile(sub: user.id, email: user.email, emailVerified: user.emailVerified, hasPassword: user.passwordHash != nil,
                       claims: user.profile, updatedAt: user.updatedAt)
    }

    static func wire(_ session: BrowserSession) -> AccountSession {
        AccountSession(id: session.sid, amr: session.amr, authTime: session.authTime, createdAt: session.createdAt,
                       lastSeenAt: session.lastSeenAt, expiresAt: session.expiresAt, userAgent: session.device.userAgent,
                       ipAddress: session.device.address)
    }

    func language(of user: User) -> PageLanguage {
        user.profile["locale"]?.stringValue.flatMap { PageLanguage(rawValue: String($0.prefix(2))) } ?? .en
    }

    /// A JSON body of at most 64 KiB.
    static func body(_ request: inout Request) async throws -> Data {
        let type = request.headers[.contentType]?.lowercased() ?? ""
        guard type.hasPrefix("application/json") || type.hasPrefix("application/merge-patch+json") else {
            throw AccountAPIError(error: "invalid_request", errorDescription: "The request body must be application/json.")
        }
        do { return Data(buffer: try await request.collectBody(upTo: maxFormBody)) } catch {
            throw AccountAPIError(error: "invalid_request", errorDescription: "The request body is over 64 KiB.")
        }
    }

    func refusal(_ error: SelfServiceError) -> Response {
        switch error {
        case .invalidClaims(let problems):
            let words = problems.sorted { $0.key < $1.key }.map { "'\($0.key)' \($0.value)" }.joined(separator: "; ")
            return answer(AccountAPIError(error: AccountAPIError.invalidClaimsCode, errorDescription: words, invalidClaims: problems))
        case .recentSignInRequired(let what):
            let maxAge = services.configuration.reauthenticateAfter
            let description = "Changing \(what == "account" ? "the account" : "'\(what)'") needs a sign-in within the last \(maxAge) seconds: "
                + "sign the user in again (max_age=\(maxAge)) and retry with the new access token."
            var response = answer(AccountAPIError(error: AccountAPIError.insufficientUserAuthentication, errorDescription: description,
                                                  maxAge: maxAge))
            response.headers[.wwwAuthenticate] = "Bearer realm=\"tessera\", error=\"insufficient_user_authentication\", "
                + "error_description=\"A more recent sign-in is required\", max_age=\(maxAge)"
            return response
        case .currentPassword(.badCredentials):
            return answer(AccountAPIError(error: AccountAPIError.wrongPassword, errorDescription: "The current password is wrong."))
        case .currentPassword(.throttled):
            return answer(AccountAPIError(error: AccountAPIError.passwordThrottled,
                                          errorDescription: "Too many wrong passwords: try again later."))
        case .currentPassword(.disabled):
            return Responses.bearerError(OAuthError(.invalidToken, "The account is disabled."))
        case .currentPassword(.busy), .busy:
            return answer(AccountAPIError(error: "temporarily_unavailable", errorDescription: "The server is busy: try again in a few seconds."))
        case .weakPassword(_, let reason):
            return answer(AccountAPIError(error: AccountAPIError.passwordTooWeak, errorDescription: reason))
        case .lastWayIn:
            return answer(AccountAPIError(error: AccountAPIError.lastWayIn,
                                          errorDescription: "The password is the account's only way to sign in: verify the address or link a provider first."))
        case .changedMeanwhile:
            return answer(AccountAPIError(error: AccountAPIError.conflict, errorDescription: "The account changed meanwhile: read it again and retry."))
        case .invalidAddress:
            return answer(AccountAPIError(error: AccountAPIError.invalidAddress,
                                          errorDescription: "new_email must be an email address other than the account's own."))
        case .tooManyCodes:
            return answer(AccountAPIError(error: AccountAPIError.tooManyCodes,
                                          errorDescription: "Too many codes were sent to this address or from this network: try again later."))
        case .wrongCode(let left):
            return answer(AccountAPIError(error: AccountAPIError.wrongCode,
                                          errorDescription: "The code is wrong: \(left) more \(left == 1 ? "try" : "tries") before it stops working."))
        case .expiredChange:
            return answer(AccountAPIError(error: AccountAPIError.expiredChange,
                                          errorDescription: "The change is unknown, used, or its code expired or was tried too often: start again."))
        case .unavailable(let error):
            return unavailable(error)
        }
    }

    func answer(_ error: AccountAPIError) -> Response {
        let status: HTTPResponse.Status = switch error.error {
        case AccountAPIError.insufficientUserAuthentication: .unauthorized
        case AccountAPIError.wrongPassword: .forbidden
        case AccountAPIError.passwordThrottled, AccountAPIError.tooManyCodes: .tooManyRequests
        case AccountAPIError.lastWayIn, AccountAPIError.conflict: .conflict
        case AccountAPIError.notFound: .notFound
        case "temporarily_unavailable": .serviceUnavailable
        default: .badRequest
        }
        return Responses.json((try? CanonicalJSON.encode(error)) ?? Data(), status: status)
    }
}
