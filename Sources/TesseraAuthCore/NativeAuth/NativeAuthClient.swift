import Foundation
import TesseraCore

/// Sign-up, sign-in and password reset inside the app, without a browser: the app side of
/// Tessera's native sign-in API (Microsoft Entra's native authentication protocol, the one
/// MSAL's native auth SDKs speak; docs/native-auth.md).
///
/// Each entry point returns a result whose cases carry *state values*; a state offers exactly
/// the moves that can follow it (`submitCode`, `resendCode`, `submitPassword`,
/// `submitAttributes`, `signIn`), and each state value can be used once:
///
/// ```swift
/// let auth = NativeAuthClient(issuer: URL(string: "https://id.example.com")!, clientID: "my-app")
/// switch await auth.signUp(username: email, attributes: ["given_name": "Anna"]) {
/// case .codeRequired(let state, let sentTo, _, let codeLength):
///     // ask for the code sent to `sentTo`, then:
///     if case .completed(let done) = await state.submitCode(code),
///        case .completed(let result) = await done.signIn() {
///         print(result.user?.email ?? "")
///     }
/// case .error(let error) where error.code == .userAlreadyExists: ...
/// default: ...
/// }
/// ```
///
/// The endpoints come from discovery (`native_authentication_endpoints`); ID tokens are
/// validated exactly as ``OIDCClient`` validates them (signature against the JWKS, `iss`,
/// `aud`, `azp`, `exp`/`iat`, `at_hash`), and a completed sign-in is an
/// ``AuthorizationResult`` that ``AuthState/adopt(_:)`` turns into a stored, self-refreshing session.
///
/// The client holds no user state and is safe to share between tasks.
public final class NativeAuthClient: Sendable {
    /// What the client needs to know about itself and its provider.
    public struct Configuration: Sendable {
        /// The issuer identifier; discovery is at `issuer/.well-known/openid-configuration`.
        public var issuer: URL
        /// The client's `client_id`: a first-party public client.
        public var clientID: String
        /// The ways of proving who the user is that the app's screens handle (`challenge_type`).
        /// ``NativeAuthChallengeType/redirect`` is always sent: the server needs it to tell the
        /// app to continue in the browser.
        public var challengeTypes: [NativeAuthChallengeType]
        /// The scopes a sign-in asks for unless it names its own.
        public var scopes: [String]
        /// The redirect URI of the browser fallback (``oidc``), when the app has one.
        public var redirectURI: String?
        /// Seconds of clock difference tolerated when checking the ID token's `exp` and `iat`.
        public var clockSkew: TimeInterval
        /// How long ``ResetPasswordRequiredState/submitPassword(_:)`` waits for the reset to
        /// complete (`poll_completion`) before giving up.
        public var passwordResetTimeout: TimeInterval

        /// A configuration; only the issuer and client id are required.
        public init(issuer: URL, clientID: String, challengeTypes: [NativeAuthChallengeType] = [.oob, .password, .redirect],
                    scopes: [String] = NativeAuthClient.defaultScopes, redirectURI: String? = nil, clockSkew: TimeInterval = 120,
                    passwordResetTimeout: TimeInterval = 300) {
            self.issuer = issuer
            self.clientID = clientID
            self.challengeTypes = challengeTypes
            self.scopes = scopes
            self.redirectURI = redirectURI
            self.clockSkew = clockSkew
            self.passwordResetTimeout = passwordResetTimeout
        }
    }

    /// `openid profile email offline_access`: an ID token with the profile and address, and a
    /// refresh token.
    public static let defaultScopes = ["openid", "profile", "email", "offline_access"]

    /// The client's configuration.
    public let configuration: Configuration
    /// The OpenID Connect client of the same `client_id` and provider: discovery, ID-token
    /// validation, refresh, userinfo, revocation, and the browser flow to fall back to when
    /// an error has the code ``AuthError/Code/browserRequired``. Use it with ``AuthState``.
    public let oidc: OIDCClient
    let transport: any HTTPTransport

    /// A client of `clientID` at `issuer`.
    ///
    /// - Parameters:
    ///   - issuer: the provider's issuer URL (its discovery document is under it).
    ///   - clientID: the app's client ID, registered `--first-party`.
    ///   - challengeTypes: what the app's screens handle; `[.oob, .password, .redirect]` by default.
    ///   - scopes: what sign-ins ask for unless they say otherwise.
    ///   - transport: how HTTP is sent (`TesseraAuth`'s initialiser without it uses `URLSessionTransport`).
    ///   - now: the clock for ID-token validation.
    public convenience init(issuer: URL, clientID: String, challengeTypes: [NativeAuthChallengeType] = [.oob, .password, .redirect],
                            scopes: [String] = NativeAuthClient.defaultScopes, transport: any HTTPTransport,
                            now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(configuration: Configuration(issuer: issuer, clientID: clientID, challengeTypes: challengeTypes, scopes: scopes),
                  transport: transport, now: now)
    }

    /// A client of `configuration`, sending HTTP through `transport`.
    public init(configuration: Configuration, transport: any HTTPTransport,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.transport = transport
        oidc = OIDCClient(configuration: .init(issuer: configuration.issuer, clientID: configuration.clientID,
                                               redirectURI: configuration.redirectURI ?? "", scope: configuration.scopes.joined(separator: " "),
                                               clockSkew: configuration.clockSkew),
                          transport: transport, now: now)
    }

    // MARK: Entry points

    /// Starts a sign-up for `username` (an email address): the server sends a code to it.
    ///
    /// - Parameters:
    ///   - username: the email address of the new account.
    ///   - password: the password for the account, when the app asks for it up front;
    ///     checked against the server's policy here (``AuthError/Code/invalidPassword``).
    ///   - attributes: profile attributes by their configured names (`given_name`, `city`, ...);
    ///     names the server doesn't collect are ignored, invalid values give
    ///     ``AuthError/Code/invalidAttributes`` with the refused names in ``AuthError/invalidAttributes``.
    /// - Returns: normally ``SignUpStartResult/codeRequired(_:sentTo:channel:codeLength:)``.
    public func signUp(username: String, password: String? = nil, attributes: [String: JSONValue] = [:]) async -> SignUpStartResult {
        do {
            var parameters = [("username", username), ("challenge_type", challengeTypeList(configuration.challengeTypes))]
            if let password { parameters.append(("password", password)) }
            if !attributes.isEmpty { parameters.append(("attributes", Self.encode(attributes))) }
            let start = try await post(.signUpStart, parameters)
            let context = FlowContext(client: self, username: username, scopes: configuration.scopes)
            return SignUpStartResult(try await signUpChallenge(start.continuationToken(), context: context))
        } catch {
            return .error(AuthError(error))
        }
    }

    /// Starts a sign-in for `username` (an email address).
    ///
    /// With a `password` the SDK asks for the password challenge and sends it at once, so the
    /// answer is ``SignInStartResult/completed(_:)`` or an error
    /// (``AuthError/Code/invalidCredentials``). Without one the server chooses: a code
    /// (``SignInStartResult/codeRequired(_:sentTo:channel:codeLength:)``) or, for an account
    /// with a password when the app handles passwords, ``SignInStartResult/passwordRequired(_:)``.
    /// A configuration with `challengeTypes: [.oob, .redirect]` always signs in by code.
    ///
    /// - Parameters:
    ///   - username: the account's email address.
    ///   - password: the password, when the app's screen asked for it up front.
    ///   - scopes: what to ask for; the configuration's scopes when nil.
    public func signIn(username: String, password: String? = nil, scopes: [String]? = nil) async -> SignInStartResult {
        let context = FlowContext(client: self, username: username, scopes: scopes ?? configuration.scopes)
        do {
            let types = challengeTypeList(configuration.challengeTypes)
            let initiate = try await post(.signInInitiate, [("username", username), ("challenge_type", types)])
            let challenge = try await post(.signInChallenge, [("continuation_token", try initiate.continuationToken()),
                                                              ("challenge_type", types)])
            switch challenge.challengeType {
            case "password":
                let continuationToken = try challenge.continuationToken()
                guard let password else {
                    return .passwordRequired(SignInPasswordRequiredState(context: context, continuationToken: continuationToken))
                }
                return .completed(try await token(grant: "password", continuationToken: continuationToken,
                                                  extra: [("password", password)], context: context))
            case "oob":
                let code = try CodeSent(challenge)
                return .codeRequired(SignInCodeRequiredState(context: context, continuationToken: code.continuationToken),
                                     sentTo: code.sentTo, channel: code.channel, codeLength: code.codeLength)
            default:
                throw AuthError.invalidResponse("the sign-in challenge answered challenge_type '\(challenge.challengeType ?? "")'")
            }
        } catch {
            let failure = AuthError(error)
            if let next = failure.mfaRequired(context) { return .mfaRequired(next) }
            return .error(failure)
        }
    }

    /// Starts a password reset for `username`: the server sends a code to it.
    public func resetPassword(username: String) async -> ResetPasswordStartResult {
        let context = FlowContext(client: self, username: username, scopes: configuration.scopes)
        do {
            let start = try await post(.resetStart, [("username", username), ("challenge_type", resetChallengeTypes)])
            let code = try await resetChallenge(try start.continuationToken())
            return .codeRequired(ResetPasswordCodeRequiredState(context: context, continuationToken: code.continuationToken),
                                 sentTo: code.sentTo, channel: code.channel, codeLength: code.codeLength)
        } catch {
            return .error(AuthError(error))
        }
    }

    // MARK: Discovery

    /// The native API's endpoints, from discovery's `native_authentication_endpoints` (fetched
    /// once by ``oidc`` and cached with its metadata).
    public func endpoints(forceRefresh: Bool = false) async throws -> NativeAuthEndpoints {
        try NativeAuthEndpoints(metadata: try await oidc.discover(forceRefresh: forceRefresh))
    }

    // MARK: Steps shared by the states

    /// `/signup/v1.0/challenge`: a code (first time, or again), or the password prompt.
    func signUpChallenge(_ continuationToken: String, context: FlowContext) async throws -> SignUpNext {
        let answer = try await post(.signUpChallenge, [("continuation_token", continuationToken),
                                                       ("challenge_type", challengeTypeList(configuration.challengeTypes))])
        switch answer.challengeType {
        case "oob":
            let code = try CodeSent(answer)
            return .codeRequired(SignUpCodeRequiredState(context: context, continuationToken: code.continuationToken), code)
        case "password":
            return .passwordRequired(SignUpPasswordRequiredState(context: context, continuationToken: try answer.continuationToken()))
        default:
            throw AuthError.invalidResponse("the sign-up challenge answered challenge_type '\(answer.challengeType ?? "")'")
        }
    }

    /// `/signup/v1.0/continue`: done, or what the sign-up needs next. `credential_required`
    /// is followed by the challenge that asks for the password, as MSAL does.
    func signUpContinue(_ continuationToken: String, _ parameters: [(String, String)], context: FlowContext) async throws -> SignUpNext {
        do {
            let answer = try await post(.signUpContinue, [("continuation_token", continuationToken)] + parameters)
            return .completed(SignInAfterSignUpState(context: context, continuationToken: try answer.continuationToken()))
        } catch let failure as AuthError where failure.code == .attributesRequired {
            guard let next = failure.continuationToken else { throw AuthError.invalidResponse("attributes_required without a continuation_token") }
            guard !failure.requiredAttributes.isEmpty else { throw AuthError.invalidResponse("attributes_required names no attribute") }
            return .attributesRequired(SignUpAttributesRequiredState(context: context, continuationToken: next), failure.requiredAttributes)
        } catch let failure as AuthError where failure.serverError == "credential_required" {
            guard let next = failure.continuationToken else { throw AuthError.invalidResponse("credential_required without a continuation_token") }
            return try await signUpChallenge(next, context: context)
        }
    }

    /// `/resetpassword/v1.0/challenge`: sends the code (again).
    func resetChallenge(_ continuationToken: String) async throws -> CodeSent {
        let answer = try await post(.resetChallenge, [("continuation_token", continuationToken), ("challenge_type", resetChallengeTypes)])
        guard answer.challengeType == "oob" else {
            throw AuthError.invalidResponse("the reset challenge answered challenge_type '\(answer.challengeType ?? "")'")
        }
        return try CodeSent(answer)
    }

    /// `/resetpassword/v1.0/submit`, then `poll_completion` every `poll_interval` seconds
    /// until the reset succeeds, fails or takes longer than ``Configuration/passwordResetTimeout``.
    func submitNewPassword(_ continuationToken: String, password: String, context: FlowContext) async throws -> ResetPasswordResult {
        let submitted = try await post(.resetSubmit, [("continuation_token", continuationToken), ("new_password", password)])
        var token = try submitted.continuationToken()
        // As MSAL: an interval of 0 (or none) means 2 seconds.
        let interval = max(submitted.answer.pollInterval.map { $0 > 0 ? Double($0) : 2 } ?? 2, 0.1)
        // Date and nanoseconds rather than Clock and Duration: the SDK runs on iOS 15 and macOS 12.
        let deadline = Date().addingTimeInterval(TimeInterval(configuration.passwordResetTimeout))
        while true {
            let poll = try await post(.resetPollCompletion, [("continuation_token", token)])
            if let next = poll.answer.continuationToken { token = next }
            switch poll.answer.status {
            case "succeeded":
                return .completed(SignInAfterResetPasswordState(context: context, continuationToken: try poll.continuationToken()))
            case "failed":
                var failure = AuthError(.passwordResetFailed, "The server could not change the password.")
                failure.correlationID = poll.correlationID
                return .error(failure, newState: ResetPasswordRequiredState(context: context, continuationToken: token))
            case "not_started", "in_progress":
                guard Date().addingTimeInterval(interval) < deadline else {
                    return .error(AuthError(.timeout, "The password reset did not complete in time."), newState: nil)
                }
                try await Task.sleep(nanoseconds: UInt64(interval * 1_000_000_000))
            default:
                throw AuthError.invalidResponse("poll_completion answered status '\(poll.answer.status ?? "")'")
            }
        }
    }

    /// `/oauth2/v2.0/token` with a native grant; validates the ID token.
    func token(grant: String, continuationToken: String, extra: [(String, String)], context: FlowContext) async throws -> AuthorizationResult {
        var scopes = context.scopes
        if !scopes.contains("openid") { scopes.insert("openid", at: 0) }
        let receivedAt = oidc.now()
        let answer = try await post(.token, [("grant_type", grant), ("continuation_token", continuationToken),
                                             ("scope", scopes.joined(separator: " "))] + extra)
        return try await authorizationResult(from: try answer.decode(TokenResponse.self, "token response"), receivedAt: receivedAt)
    }

    /// The tokens of a token-response answer (`/oauth2/v2.0/token`, `/emaillink/v1.0/complete`),
    /// with the ID token validated as ``OIDCClient`` validates it.
    func authorizationResult(from response: TokenResponse, receivedAt: Date) async throws -> AuthorizationResult {
        guard response.tokenType.lowercased() == "bearer" else {
            throw AuthError.invalidResponse("token_type '\(response.tokenType)' is not Bearer")
        }
        guard let raw = response.idToken else {
            throw AuthError.invalidResponse("the token response has no id_token although openid was asked for")
        }
        let idToken = try await oidc.validateIDToken(raw, nonce: nil, accessToken: response.accessToken)
        let tokens = TokenSet(response: response, receivedAt: receivedAt, issuer: oidc.configuration.issuerIdentifier,
                              clientID: configuration.clientID)
        return AuthorizationResult(tokens: tokens, idToken: idToken, isNewUser: response.isNewUser ?? false)
    }

    // MARK: HTTP

    /// A form POST to a native endpoint. A 200 answer whose `challenge_type` is `redirect`
    /// throws ``AuthError/Code/browserRequired``; any other status throws the server's error.
    func post(_ endpoint: NativeAuthEndpoints.Name, _ parameters: [(String, String)]) async throws -> NativeAnswer {
        try await post(to: try await endpoints().url(endpoint), name: endpoint.rawValue, parameters)
    }

    /// A form POST with this client's `client_id` to an endpoint that answers in the native
    /// API's shape (the native endpoints, and the email-link ones); `headers` are added.
    func post(to url: URL, name: String, _ parameters: [(String, String)], headers: [String: String] = [:]) async throws -> NativeAnswer {
        let correlationID = UUID().uuidString.lowercased()
        let request = HTTPTransportRequest(method: "POST", url: url, headers: headers.merging([
            "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json", "client-request-id": correlationID,
        ]) { _, fixed in fixed }, body: Data(FormEncoding.encode([("client_id", configuration.clientID)] + parameters).utf8))
        let response = try await transport.send(request)
        let answeredID = response.headers["x-ms-request-id"] ?? correlationID
        guard response.status == 200 else {
            guard let error = try? JSONDecoder().decode(NativeAuthErrorAnswer.self, from: response.body) else {
                var failure = AuthError.invalidResponse("\(name) answered HTTP \(response.status)")
                failure.httpStatus = response.status
                failure.correlationID = answeredID
                throw failure
            }
            throw AuthError(serverError: error, status: response.status, headers: response.headers, correlationID: answeredID)
        }
        guard let answer = try? JSONDecoder().decode(NativeAuthAnswer.self, from: response.body) else {
            throw AuthError.invalidResponse("\(name) answered something that is not a JSON object of its members")
        }
        if answer.challengeType == "redirect" {
            var failure = AuthError(.browserRequired,
                                            answer.redirectReason ?? "This sign-in can only continue in the browser.")
            failure.correlationID = answeredID
            throw failure
        }
        return NativeAnswer(answer: answer, raw: response.body, correlationID: answeredID)
    }

    func challengeTypeList(_ types: [NativeAuthChallengeType]) -> String {
        var list: [NativeAuthChallengeType] = []
        for type in types + [.redirect] where !list.contains(type) { list.append(type) }
        return list.map(\.rawValue).joined(separator: " ")
    }

    /// A reset proves the address by code only.
    var resetChallengeTypes: String { challengeTypeList(configuration.challengeTypes.filter { $0 != .password }) }

    static func encode(_ attributes: [String: JSONValue]) -> String {
        String(decoding: JSONValue.object(attributes).serialized, as: UTF8.self)
    }
}

/// A way of proving who the user is that the app can handle (`challenge_type`).
public struct NativeAuthChallengeType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The wire value.
    public let rawValue: String
    /// A challenge type by its wire value.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `oob`: a one-time code sent out of band (by email).
    public static let oob = NativeAuthChallengeType(rawValue: "oob")
    /// `password`: the account's password.
    public static let password = NativeAuthChallengeType(rawValue: "password")
    /// `redirect`: the app can continue in the browser when the server needs it to.
    public static let redirect = NativeAuthChallengeType(rawValue: "redirect")
    /// The wire value.
    public var description: String { rawValue }
}

/// Where a one-time code was sent (`challenge_channel`); MSAL's `MSALNativeAuthChannelType`.
public struct NativeAuthChannelType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The wire value.
    public let rawValue: String
    /// A channel by its wire value.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `email`.
    public static let email = NativeAuthChannelType(rawValue: "email")
    /// The wire value.
    public var description: String { rawValue }
}

/// The native API's endpoints by their discovery names.
public struct NativeAuthEndpoints: Sendable, Equatable {
    /// An endpoint's name in discovery (`native_authentication_endpoints` members).
    public typealias Name = NativeAuthEndpoint

    /// Every endpoint's URL by name.
    public let urls: [Name: URL]

    /// The endpoints a provider announces; each must be https (http on loopback only).
    public init(metadata: ProviderMetadata) throws {
        guard let members = metadata.nativeAuthenticationEndpoints else {
            throw AuthError(.discovery, "the provider does not announce native_authentication_endpoints: it has no native sign-in API")
        }
        var urls: [Name: URL] = [:]
        for name in Name.allCases {
            guard let text = members[name.rawValue] else { continue }
            guard let url = URL(string: text) else { throw AuthError(.discovery, "native endpoint \(name.rawValue) '\(text)' is not a URL") }
            try AuthRequest.checkEndpoint(url, name: "native endpoint \(name.rawValue)")
            urls[name] = url
        }
        self.urls = urls
    }

    /// The endpoints of a discovery document.
    public init(discovery document: Data) throws {
        let metadata: ProviderMetadata
        do { metadata = try JSONDecoder().decode(ProviderMetadata.self, from: document) } catch {
            throw AuthError(.discovery, "the discovery document is not valid metadata: \(error)")
        }
        try self.init(metadata: metadata)
    }

    /// The URL of `name`, or a discovery error when the provider lacks it.
    public func url(_ name: Name) throws -> URL {
        guard let url = urls[name] else { throw AuthError(.discovery, "the provider has no native endpoint \(name.rawValue)") }
        return url
    }
}

// MARK: - Internals

/// A successful answer of a native endpoint.
struct NativeAnswer: Sendable {
    /// The native API's members (a token response's, or an email-link answer's, are in `raw`).
    var answer: NativeAuthAnswer
    var raw: Data
    var correlationID: String

    var challengeType: String? { answer.challengeType }

    /// The whole answer as `type` (a token response, an email-link answer).
    func decode<T: Decodable>(_ type: T.Type, _ what: String) throws -> T {
        do { return try JSONDecoder().decode(type, from: raw) } catch {
            throw AuthError.invalidResponse("the \(what) is not valid: \(error)")
        }
    }

    func continuationToken() throws -> String {
        guard let token = answer.continuationToken, !token.isEmpty else {
            throw AuthError(.invalidResponse, "The answer has no continuation_token.")
        }
        return token
    }
}

/// An `oob` challenge: where the code went and how long it is.
struct CodeSent: Sendable {
    var continuationToken: String
    var sentTo: String
    var channel: NativeAuthChannelType
    var codeLength: Int

    init(_ answer: NativeAnswer) throws {
        continuationToken = try answer.continuationToken()
        sentTo = answer.answer.challengeTargetLabel ?? ""
        channel = NativeAuthChannelType(rawValue: answer.answer.challengeChannel ?? "email")
        codeLength = answer.answer.codeLength ?? -1
    }
}

/// What a sign-up step leads to.
enum SignUpNext: Sendable {
    case codeRequired(SignUpCodeRequiredState, CodeSent)
    case passwordRequired(SignUpPasswordRequiredState)
    case attributesRequired(SignUpAttributesRequiredState, [AttributeRequirement])
    case completed(SignInAfterSignUpState)
}

/// What every state of one flow shares: the client, the user's address and the scopes.
struct FlowContext: Sendable {
    let client: NativeAuthClient
    let username: String
    let scopes: [String]
}

/// The single-use guard of a state value.
final class SingleUse: Sendable {
    private let spent = Locked(false)

    /// True the first time only.
    func take() -> Bool { spent.withLock { was in defer { was = true }; return !was } }
}
