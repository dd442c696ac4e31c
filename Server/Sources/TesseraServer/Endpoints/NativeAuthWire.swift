import Foundation
import TesseraCore
import TesseraDomain

/// An answer of the native API (and of the email-link API) that is not a success, in
/// Microsoft Entra's shape: `error`, an optional `suberror`, the reference's numeric
/// `error_codes`, and what the app needs to go on.
struct NativeAuthError: Error, Sendable, Equatable {
    var error: String
    var description: String
    var suberror: String?
    var status: Int = 400
    /// The reference API's numeric codes, where it defines one.
    var errorCodes: [Int] = []
    var continuationToken: String?
    var requiredAttributes: [NativeAuthAttribute]?
    var invalidAttributes: [NativeAuthAttributeProblem]?
    /// Seconds to wait: a member of the answer and its `Retry-After` header.
    var retryAfter: Int64?

    init(_ error: String, _ description: String, suberror: String? = nil, status: Int = 400, errorCodes: [Int] = []) {
        self.error = error
        self.description = description
        self.suberror = suberror
        self.status = status
        self.errorCodes = errorCodes
    }

    static func invalidRequest(_ description: String, codes: [Int] = []) -> NativeAuthError {
        NativeAuthError("invalid_request", description, errorCodes: codes)
    }

    static func missing(_ name: String) -> NativeAuthError {
        invalidRequest("The \(name) parameter is missing.", codes: [90014])
    }

    /// The answer's body, with the ids the reference adds to every error.
    func answer(correlationID: String, now: Date) -> NativeAuthErrorAnswer {
        NativeAuthErrorAnswer(error: error, errorDescription: description, errorCodes: errorCodes, suberror: suberror,
                              timestamp: NativeAuthWire.timestamp(now), traceID: UUID().uuidString.lowercased(),
                              correlationID: correlationID, continuationToken: continuationToken,
                              requiredAttributes: requiredAttributes, invalidAttributes: invalidAttributes, retryAfter: retryAfter)
    }
}

/// The native API's adapter over the account flows: Entra's parameters into typed values,
/// a ``FlowStep`` into Entra's answer, a ``FlowFailure`` into Entra's error.
enum NativeAuthWire {
    // MARK: Requests

    static func required(_ parameters: RequestParameters, _ name: String) throws -> String {
        guard let value = parameters[name] else { throw NativeAuthError.missing(name) }
        return value
    }

    /// `challenge_type`: a space-separated list that must include `redirect`, so the app
    /// can always fall back to the browser.
    static func challenges(_ parameters: RequestParameters) throws -> [Challenge] {
        var challenges: [Challenge] = []
        for name in try required(parameters, "challenge_type").split(separator: " ") {
            guard let challenge = Challenge(rawValue: String(name)) else {
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

    /// A challenge step's `challenge_type`, when the app sends one again.
    static func optionalChallenges(_ parameters: RequestParameters) throws -> [Challenge]? {
        parameters["challenge_type"] == nil ? nil : try challenges(parameters)
    }

    /// `attributes`: a JSON object of sign-up attributes.
    static func attributes(_ text: String) throws -> [String: JSONValue] {
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8)) else {
            throw NativeAuthError.invalidRequest("attributes must be a JSON object such as {\"given_name\": \"Anna\"}.")
        }
        return object
    }

    // MARK: Answers

    /// The answer to a step that went on; the sign-up's "more is needed" steps are errors in
    /// Entra's protocol (`credential_required`, `attributes_required`), with the token to go on.
    static func answer(_ step: FlowStep) throws -> NativeAuthAnswer {
        switch step {
        case .started(let token):
            return NativeAuthAnswer(continuationToken: token)
        case .browserRequired:
            return .redirect
        case .codeSent(let token, let sent):
            return NativeAuthAnswer(continuationToken: token, challengeType: "oob", bindingMethod: "prompt", challengeChannel: "email",
                                    challengeTargetLabel: sent.target, codeLength: sent.codeLength, interval: sent.resendInterval)
        case .passwordRequested(let token):
            return NativeAuthAnswer(continuationToken: token, challengeType: "password")
        case .verified(let token, let expiresIn), .completed(let token, let expiresIn):
            return NativeAuthAnswer(continuationToken: token, expiresIn: expiresIn)
        case .resetSubmitted(let token, let pollInterval):
            return NativeAuthAnswer(continuationToken: token, pollInterval: pollInterval)
        case .resetSucceeded(let token):
            return NativeAuthAnswer(continuationToken: token, status: "succeeded")
        case .secondFactorMethods(let token, let methods):
            var answer = NativeAuthAnswer(continuationToken: token)
            answer.methods = methods.map {
                NativeAuthMethod(id: $0.rawValue, challengeType: "oob", challengeChannel: $0.rawValue,
                                 loginHint: $0 == .authenticatorApp ? "Authenticator app" : "Recovery code")
            }
            return answer
        case .secondFactorChallenge(let token, let method):
            return NativeAuthAnswer(continuationToken: token, challengeType: "oob", bindingMethod: "prompt",
                                    challengeChannel: method.rawValue, codeLength: method.codeLength)
        case .passwordRequired(let token):
            var error = NativeAuthError("credential_required", "Choose a password to finish signing up.", errorCodes: [55103])
            error.continuationToken = token
            throw error
        case .attributesRequired(let token, let missing):
            var error = NativeAuthError("attributes_required", "Some attributes are required to finish signing up: "
                                          + missing.map(\.name).joined(separator: ", ") + ".", errorCodes: [55106])
            error.continuationToken = token
            error.requiredAttributes = missing.map {
                NativeAuthAttribute(name: $0.name, type: $0.type, required: $0.required, options: $0.pattern.map { .init(regex: $0) })
            }
            throw error
        }
    }

    // MARK: Errors

    /// `failure` as the reference words it at `endpoint` (nil: the email-link API).
    static func error(_ failure: FlowFailure, at endpoint: NativeAuthEndpoint?) -> NativeAuthError {
        // An unusable continuation token is `invalid_grant` at the challenge and token
        // endpoints, `invalid_request` at the others, as in the reference.
        let invalidToken = [.signUpChallenge, .signInChallenge, .signInIntrospect, .resetChallenge, .token].contains(endpoint) ? "invalid_grant" : "invalid_request"
        switch failure {
        case .missingParameter(let name):
            return .missing(name)
        case .invalidAddress:
            return NativeAuthError("invalid_request", "The username parameter is empty or not valid: it must be an email address.",
                                   errorCodes: [90100])
        case .accountExists:
            return NativeAuthError("user_already_exists", "An account with this email address already exists.", errorCodes: [1_003_037])
        case .accountNotFound:
            return NativeAuthError("user_not_found", "No account has this email address.", errorCodes: [50034])
        case .unknownFlow:
            return NativeAuthError(invalidToken, "The continuation_token is invalid: it was already used, or belongs to another flow or client.",
                                   errorCodes: [55200])
        case .expiredFlow:
            return NativeAuthError("expired_token", "The continuation_token has expired. Start the flow again.", errorCodes: [552_003])
        case .wrongFlow(let kind):
            return NativeAuthError(invalidToken, "The continuation_token is not valid for this endpoint: it belongs to a \(kind.rawValue) flow.",
                                   errorCodes: [55200])
        case .outOfOrder(let step):
            return .invalidRequest("This step doesn't follow the previous one (the flow is at '\(step.rawValue)').")
        case .addressAlreadyVerified:
            return .invalidRequest(endpoint == .signUpChallenge
                                   ? "The email address is verified: continue the sign-up with \(NativeAuthEndpoint.signUpContinue.path)."
                                   : "The email address is already verified.")
        case .addressNotVerified:
            return .invalidRequest("Verify the email address first: send the code with grant_type=oob, then the password or attributes. "
                                   + "(They can also go with \(NativeAuthEndpoint.signUpStart.path).)")
        case .codeNotSent:
            return .invalidRequest(endpoint == .signUpContinue ? "Ask for a code with \(NativeAuthEndpoint.signUpChallenge.path) first."
                                                               : "Ask for a code first.")
        case .wrongCode(let left):
            let text = switch left {
            case nil: "The code is not valid."
            case 0?: "The code is not valid. Ask for a new code."
            case let left?: "The code is not valid. \(left) attempt\(left == 1 ? "" : "s") left."
            }
            return invalidCode(text)
        case .codeExpired:
            return invalidCode("The code has expired. Ask for a new code.")
        case .tooManyWrongCodes:
            return invalidCode("Too many wrong codes. Ask for a new code.")
        case .weakPassword(let violation, let reason):
            return NativeAuthError("invalid_grant", reason, suberror: violation.rawValue, errorCodes: [399_246])
        case .invalidAttributes(let problems):
            var error = NativeAuthError("invalid_grant", "Some attributes are not valid: "
                                          + problems.map { "\($0.name) \($0.reason)" }.joined(separator: "; ") + ".",
                                        suberror: "attribute_validation_failed")
            error.invalidAttributes = problems.map { NativeAuthAttributeProblem(name: $0.name, reason: $0.reason) }
            return error
        case .invalidCredentials:
            return NativeAuthError("invalid_grant", "The email address or password is incorrect.", errorCodes: [50126])
        case .locked:
            return NativeAuthError("invalid_grant", "Too many failed attempts. Wait a few minutes, or sign in with a code.",
                                   suberror: "user_locked", errorCodes: [50053])
        case .accountDisabled:
            return NativeAuthError("invalid_grant", "The account is disabled. Contact the app's support.", suberror: "user_disabled",
                                   errorCodes: [50057])
        case .busy:
            return slowDown("temporarily_unavailable", "The server is busy. Try again in a few seconds.", status: 503, retryAfter: 2)
        case .tooMuchWork(let work, let retryAfter):
            let what = work == .flow ? "sign-ins were started" : "passwords were set"
            return slowDown("slow_down", "Too many \(what) from this network or app. Try again in \(retryAfter) s.", retryAfter: retryAfter)
        case .resendTooSoon(let ago, let wait):
            return slowDown("slow_down", "A code was sent \(ago) s ago. Ask for another in \(wait) s.", retryAfter: wait)
        case .tooManyCodes:
            return slowDown("slow_down", "Too many codes or links were sent in the last hour. Try again later.", retryAfter: 3600)
        case .scopeRefused(let description):
            return NativeAuthError("invalid_scope", description)
        case .usernameMismatch:
            return .invalidRequest("username is not the address this flow signed up or reset.")
        case .secondFactorRequired(let token):
            var error = NativeAuthError("invalid_grant", "A second factor is needed: list the methods at \(NativeAuthEndpoint.signInIntrospect.path), "
                                          + "choose one at \(NativeAuthEndpoint.signInChallenge.path) (id), then send its code with "
                                          + "grant_type=mfa_oob.", suberror: "mfa_required", errorCodes: [50076])
            error.continuationToken = token
            return error
        case .secondFactorSetupRequired:
            return NativeAuthError("invalid_grant", "This app requires a second factor, and the account has none yet: sign in through the "
                                     + "browser once to set up an authenticator app.", suberror: "registration_required", errorCodes: [50079])
        case .secondFactorInBrowser:
            return NativeAuthError("invalid_grant", "This sign-in needs a second factor only the browser can ask for (a passkey): sign in "
                                     + "through the browser.", suberror: "browser_required", errorCodes: [50076])
        case .unknownSecondFactor(let id):
            return .invalidRequest("id must be one of " + SecondFactorMethod.allCases.map(\.rawValue).joined(separator: ", ")
                                   + " (from \(NativeAuthEndpoint.signInIntrospect.path)), not '\(String(id.prefix(64)))'.")
        case .secondFactorThrottled:
            return slowDown("slow_down", "Too many wrong codes. Try again in 15 minutes.", retryAfter: 900)
        }
    }

    static func invalidCode(_ description: String) -> NativeAuthError {
        NativeAuthError("invalid_grant", description, suberror: "invalid_oob_value", errorCodes: [50181])
    }

    /// The database can't be reached (``Outage``): `temporarily_unavailable`, 503, `Retry-After`.
    static let unavailable = slowDown("temporarily_unavailable", "The server can't reach its database right now. Try again in a few seconds.",
                                      status: 503, retryAfter: Int64(Outage.retryAfter))

    static func slowDown(_ code: String, _ description: String, status: Int = 429, retryAfter: Int64) -> NativeAuthError {
        var error = NativeAuthError(code, description, status: status)
        error.retryAfter = retryAfter
        return error
    }

    /// `2026-11-22 10:15:00Z`, as the reference writes it.
    static func timestamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss'Z'"
        return formatter.string(from: date)
    }
}
