import Foundation
import TesseraCore

/// The signed-in user's own account, from inside a first-party app: Tessera's account API
/// (`account_api_endpoint`) — the profile, the email address, the password, the browser
/// sessions, the linked ways in, and deleting the account (which Apple's App Store requires apps that create accounts to
/// offer in the app).
///
/// ```swift
/// let account = AccountClient(state: session)                 // the app's AuthState
/// var profile = try await account.profile()
/// profile = try await account.updateProfile(["given_name": "Ann", "nickname": .null])
/// do {
///     try await account.deleteAccount()
/// } catch let error as AuthError where error.code == .insufficientUserAuthentication {
///     var request = session.client.makeRequest()
///     request.maxAge = error.maxAge                           // RFC 9470: sign in again...
///     try await session.signIn(using: userAgent, request: request)
///     try await account.deleteAccount()                       // ...and retry with the new token
/// }
/// ```
///
/// Every call sends the user's access token as a bearer token (RFC 6750 §2.1); only tokens of
/// the operator's first-party clients are accepted. Changing a sensitive claim (an address, a
/// document, a tax number), the email address, the password without the current one, removing
/// the password and deleting the account need a recent sign-in: the server then answers
/// ``AuthError/Code/insufficientUserAuthentication`` with the ``AuthError/maxAge`` to sign
/// in again with, and nothing changes.
///
/// Like ``AuthorizationApprover`` it holds no tokens itself: it asks for one per call (from an
/// ``AuthState``, which refreshes it when near expiry), so it never calls with a stale one and
/// is safe to share between tasks.
public struct AccountClient: Sendable {
    /// The client whose discovery document names the account API and whose transport sends.
    public let client: OIDCClient
    /// The user's current access token, asked for before each call.
    let accessToken: @Sendable () async throws -> String
    /// The session the token comes from, signed out here once its account is deleted.
    let session: AuthState?

    /// An account client calling with the access token `accessToken` gives (of a first-party
    /// client of `client`'s provider), e.g. `{ try await state.freshTokens().accessToken }`.
    public init(client: OIDCClient, accessToken: @escaping @Sendable () async throws -> String) {
        self.client = client
        self.accessToken = accessToken
        session = nil
    }

    /// An account client for the user of the app's session `state`, calling with its access
    /// token refreshed when near expiry; ``deleteAccount()`` also signs `state` out.
    public init(state: AuthState) {
        client = state.client
        accessToken = { try await state.freshTokens().accessToken }
        session = state
    }

    // MARK: Profile

    /// The account as its owner sees it: `sub`, the address and whether it is verified,
    /// whether it has a password, and the profile's claims (`GET …/profile`).
    public func profile() async throws(AuthError) -> AccountProfile {
        try await send("GET", "/profile").decode(AccountProfile.self, "profile")
    }

    /// Changes profile claims (`PATCH …/profile`, a JSON merge patch, RFC 7396): each member
    /// replaces its claim, `.null` removes it, and a structured claim such as `address` is
    /// replaced whole (`.object(["locality": "Berlin", "country": "DE"])`). All of it applies or none.
    ///
    /// - Returns: the account after the change.
    /// - Throws: ``AuthError/Code/invalidClaims`` with every refused claim in
    ///   ``AuthError/invalidClaims`` (unknown, maintained by the server such as `email`, or a
    ///   value of the wrong shape); ``AuthError/Code/insufficientUserAuthentication`` when a
    ///   sensitive claim changes and the sign-in is older than ``AuthError/maxAge``.
    public func updateProfile(_ changes: [String: JSONValue]) async throws(AuthError) -> AccountProfile {
        let body: Data
        do { body = try CanonicalJSON.encode(changes) } catch {
            throw AuthError(.configuration, "the changes can't be encoded as JSON: \(error)")
        }
        return try await send("PATCH", "/profile", body: body, contentType: "application/merge-patch+json")
            .decode(AccountProfile.self, "profile")
    }

    // MARK: Password

    /// Sets a new password (`POST …/password`). Every other session of the user ends; this
    /// app's tokens keep working.
    ///
    /// - Parameters:
    ///   - current: the current password. It may be `nil` when the account has none
    ///     (`AccountProfile.hasPassword`) or the sign-in is recent.
    ///   - new: the new password, checked against the server's policy.
    /// - Throws: ``AuthError/Code/invalidCredentials``, ``AuthError/Code/slowDown``,
    ///   ``AuthError/Code/invalidPassword`` (the reason in ``AuthError/reason``), or
    ///   ``AuthError/Code/insufficientUserAuthentication`` without `current` and a recent sign-in.
    public func changePassword(current: String?, new: String) async throws(AuthError) {
        let body: Data
        do { body = try JSONEncoder().encode(AccountPasswordChange(currentPassword: current, newPassword: new)) } catch {
            throw AuthError(.configuration, "the password change can't be encoded as JSON: \(error)")
        }
        _ = try await send("POST", "/password", body: body, contentType: "application/json", expecting: 204)
    }

    /// Removes the password (`DELETE …/password`): the user then signs in by code, link or a
    /// linked provider. Needs a recent sign-in.
    ///
    /// - Throws: ``AuthError/Code/lastWayIn`` when the address is unverified and no provider
    ///   is linked (the password is the only way in); ``AuthError/Code/insufficientUserAuthentication``.
    public func removePassword() async throws(AuthError) {
        _ = try await send("DELETE", "/password", expecting: 204)
    }

    // MARK: Email address

    /// Starts moving the account to the address `newEmail` (`POST …/email`): the server mails a
    /// one-time code there, and ``confirmEmailChange(id:code:)`` with it makes the move, so nobody
    /// moves an account to an address they can't read. Needs a recent sign-in: whoever controls
    /// the address can reset the password, so a stolen token must not be enough to take it.
    ///
    /// An address that has an account of its own gets a notice instead of a code, and the answer
    /// is the same (no code then matches): the form tells nobody which addresses have accounts.
    ///
    /// - Returns: the waiting change: `AccountEmailChangeStarted.changeID` goes back with the
    ///   code; `AccountEmailChangeStarted.target` is the address masked, to show ("we sent a
    ///   code to a***e@e*****e.com"); the code's length and its lifetime in seconds.
    /// - Throws: ``AuthError/Code/invalidEmail`` when `newEmail` is not an address or is the
    ///   account's own; ``AuthError/Code/insufficientUserAuthentication`` when the sign-in is
    ///   older than ``AuthError/maxAge``; ``AuthError/Code/slowDown``. Nothing is sent then.
    public func startEmailChange(to newEmail: String) async throws(AuthError) -> AccountEmailChangeStarted {
        let body: Data
        do { body = try JSONEncoder().encode(AccountEmailChange(newEmail: newEmail)) } catch {
            throw AuthError(.configuration, "the address change can't be encoded as JSON: \(error)")
        }
        return try await send("POST", "/email", body: body, contentType: "application/json", expecting: 202)
            .decode(AccountEmailChangeStarted.self, "address change")
    }

    /// Confirms a change begun by ``startEmailChange(to:)`` with the code mailed to the new
    /// address (`POST …/email/confirm`): the account takes the address, verified, and the old
    /// address is told. No recent sign-in is needed: the code proves the new address, and the
    /// start already asked for one. The ID token the app holds still names the old address.
    ///
    /// - Parameters:
    ///   - id: the change's `AccountEmailChangeStarted.changeID`.
    ///   - code: the code as the user typed it (spaces around it are ignored).
    /// - Returns: the account after the change.
    /// - Throws: ``AuthError/Code/invalidCode`` (``AuthError/reason`` says how many tries are
    ///   left); ``AuthError/Code/flowExpired`` when the change is unknown, used, expired or
    ///   was tried too often: start again.
    public func confirmEmailChange(id: String, code: String) async throws(AuthError) -> AccountProfile {
        let body: Data
        do { body = try JSONEncoder().encode(AccountEmailConfirmation(changeID: id, code: code)) } catch {
            throw AuthError(.configuration, "the confirmation can't be encoded as JSON: \(error)")
        }
        return try await send("POST", "/email/confirm", body: body, contentType: "application/json")
            .decode(AccountProfile.self, "profile")
    }

    // MARK: Sessions

    /// The user's live browser sessions, the latest sign-in first (`GET …/sessions`). The ID
    /// token's `sid` names the one this app signed in with, when it signed in in the browser.
    public func sessions() async throws(AuthError) -> [AccountSession] {
        try await send("GET", "/sessions").decode(AccountSessionList.self, "session list").sessions
    }

    /// Signs one browser session out (`DELETE …/sessions/{id}`), with the tokens apps got in
    /// it (but those for offline access).
    ///
    /// - Throws: ``AuthError/Code/notFound`` when the user has no live session `id`.
    public func endSession(id: String) async throws(AuthError) {
        var segment = CharacterSet.urlPathAllowed
        segment.remove("/")
        guard let escaped = id.addingPercentEncoding(withAllowedCharacters: segment) else {
            throw AuthError(.configuration, "the session id '\(id)' can't be put in a URL")
        }
        _ = try await send("DELETE", "/sessions/" + escaped, expecting: 204)
    }

    // MARK: Passkeys

    /// The account's passkeys (`GET …/passkeys`).
    public func passkeys() async throws(AuthError) -> [AccountPasskey] {
        try await send("GET", "/passkeys").decode(AccountPasskeyList.self, "passkey list").passkeys
    }

    /// The options for the platform's passkey API to make a passkey for this account
    /// (`POST …/passkeys/options`): hand them to `ASAuthorizationPlatformPublicKeyCredentialProvider`
    /// (`TesseraAuth`'s `registrationRequest()`), then ``addPasskey(_:name:)``. Needs a recent sign-in.
    ///
    /// - Throws: ``AuthError/Code/insufficientUserAuthentication``: sign in again and retry.
    public func passkeyCreationOptions() async throws(AuthError) -> PasskeyCreationOptions {
        try await send("POST", "/passkeys/options").decode(PasskeyCreationOptions.self, "passkey creation options")
    }

    /// Adds the passkey the platform made for the options (`POST …/passkeys`).
    ///
    /// - Throws: ``AuthError/Code/invalidPasskey`` (the server refused it: new options, then
    ///   again), ``AuthError/Code/conflict`` (already registered, or too many).
    public func addPasskey(_ registration: PasskeyRegistration, name: String? = nil) async throws(AuthError) -> AccountPasskey {
        let body: Data
        do { body = try CanonicalJSON.encode(AccountPasskeyRegistration(credential: registration, name: name)) } catch {
            throw AuthError(.configuration, "the passkey can't be encoded as JSON: \(error)")
        }
        return try await send("POST", "/passkeys", body: body, contentType: "application/json", expecting: 201)
            .decode(AccountPasskey.self, "passkey")
    }

    /// Removes a passkey (`DELETE …/passkeys/{id}`).
    ///
    /// - Throws: ``AuthError/Code/notFound``; ``AuthError/Code/lastWayIn`` when it is the
    ///   account's only way in.
    public func removePasskey(id: String) async throws(AuthError) {
        _ = try await send("DELETE", "/passkeys/" + (try Self.segment(id)), expecting: 204)
    }

    static func segment(_ id: String) throws(AuthError) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove("/")
        guard let escaped = id.addingPercentEncoding(withAllowedCharacters: allowed) else {
            throw AuthError(.configuration, "the id '\(id)' can't be put in a URL")
        }
        return escaped
    }

    // MARK: The account

    /// Deletes the account at once (`DELETE …/account`): its tokens, this app's too, stop
    /// working. Needs a recent sign-in. A client made with ``init(state:)`` signs its session
    /// out here too (the tokens are forgotten; the store is emptied).
    ///
    /// - Throws: ``AuthError/Code/insufficientUserAuthentication``: sign in again and retry.
    public func deleteAccount() async throws(AuthError) {
        _ = try await send("DELETE", "/account", expecting: 204)
        // The provider forgot the tokens with the account; revoking them is a no-op (RFC 7009 §2.2)
        // and a failure of it changes nothing for the user.
        try? await session?.signOut()
    }

    /// How the user can sign in: `password`, `email`, `apple`, an upstream provider's id
    /// (`GET …/providers`; the provider's `account_providers_endpoint` when it has no account API).
    public func linkedProviders() async throws(AuthError) -> [String] {
        try await send("GET", "/providers", fallback: \.accountProvidersEndpoint)
            .decode(LinkedProvidersAnswer.self, "linked providers").linkedProviders
    }

    // MARK: Internals

    /// The account API's root from discovery, without a trailing slash.
    func root() async throws -> String? {
        var root = try await client.discover().accountAPIEndpoint
        while root?.hasSuffix("/") == true { root?.removeLast() }
        return root
    }

    /// Sends `method` to the account API's `resource` with the user's access token, and returns
    /// the answer when its status is `expecting`; any other answer becomes an ``AuthError``.
    ///
    /// - Parameter fallback: a discovery member naming the resource itself, used when the
    ///   provider announces no account API.
    func send(_ method: String, _ resource: String, body: Data? = nil, contentType: String? = nil, expecting: Int = 200,
              fallback: KeyPath<ProviderMetadata, String?>? = nil) async throws(AuthError) -> Answer {
        do {
            let address: String
            if let root = try await root() {
                address = root + resource
            } else if let fallback, let endpoint = try await client.discover()[keyPath: fallback] {
                address = endpoint
            } else {
                throw AuthError(.unsupported, "the provider announces no account_api_endpoint: it has no account API")
            }
            guard let url = URL(string: address) else { throw AuthError(.discovery, "the account API's '\(address)' is not a URL") }
            try AuthRequest.checkEndpoint(url, name: "account API")
            let token: String
            do { token = try await accessToken() } catch let error as AuthError {
                throw Self.sessionError(error)
            } catch is CancellationError {
                throw AuthError(.cancelled, "the task was cancelled")
            } catch {
                throw AuthError(.notSignedIn, "no access token for the account API: \(error)")
            }
            var headers = ["Authorization": "Bearer " + token, "Accept": "application/json"]
            if let contentType { headers["Content-Type"] = contentType }
            let response = try await client.transport.send(HTTPTransportRequest(method: method, url: url, headers: headers, body: body))
            guard response.status == expecting else { throw Self.refusal(response, "\(method) \(resource)") }
            return Answer(response: response)
        } catch {
            throw AuthError(error)
        }
    }

    /// An error of the session's tokens, as the account API's caller sees it: a refresh token the
    /// provider refused (RFC 6749 §5.2) means the session is over.
    static func sessionError(_ error: AuthError) -> AuthError {
        guard error.isInvalidGrant else { return error }
        var ended = AuthError(.notSignedIn, "the session's refresh token was refused: sign in again", oauthError: error.oauthError,
                              httpStatus: error.httpStatus)
        ended.correlationID = error.correlationID
        return ended
    }

    /// The error of an answer that isn't the expected one: the account API's JSON refusal, or a
    /// bare `WWW-Authenticate: Bearer error=…` challenge (RFC 6750 §3).
    static func refusal(_ response: HTTPTransportResponse, _ what: String) -> AuthError {
        if let refusal = try? JSONDecoder().decode(AccountAPIError.self, from: response.body) {
            return AuthError(accountRefusal: refusal, httpStatus: response.status)
        }
        if let challenge = response.headers["www-authenticate"], let code = OIDCClient.bearerError(challenge) {
            return AuthError(accountRefusal: AccountAPIError(error: code, errorDescription: nil), httpStatus: response.status)
        }
        return AuthError(.invalidResponse, "the account API answered \(what) with HTTP \(response.status)", httpStatus: response.status)
    }

    /// A successful answer, decoded on demand.
    struct Answer {
        let response: HTTPTransportResponse

        func decode<T: Decodable>(_ type: T.Type, _ what: String) throws(AuthError) -> T {
            do { return try JSONDecoder().decode(type, from: response.body) } catch {
                throw AuthError(.invalidResponse, "the account API's \(what) is not what it sends: \(error)", httpStatus: response.status)
            }
        }
    }
}

extension AuthError {
    /// The account API's refusal as it sent it, answered with HTTP `httpStatus`.
    init(accountRefusal refusal: AccountAPIError, httpStatus: Int) {
        self.init(refusal: refusal.error, description: refusal.errorDescription, httpStatus: httpStatus)
        invalidClaims = refusal.invalidClaims ?? [:]
        maxAge = refusal.maxAge.map { Int($0) }
    }
}
