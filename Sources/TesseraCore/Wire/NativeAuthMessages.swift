/// The answer of a native sign-in step (every endpoint but `/oauth2/v2.0/token`, which
/// answers a token response): Entra's members, each present only where the step has it.
/// The server encodes it; the SDK decodes it.
public struct NativeAuthAnswer: Codable, Sendable, Equatable {
    /// The token for the flow's next step.
    public var continuationToken: String?
    /// What the user is asked for next: `oob`, `password`, or `redirect` (go on in the browser).
    public var challengeType: String?
    /// `oob`: how the code is entered (`prompt`), where it went (`email`), the masked address.
    public var bindingMethod: String?
    /// Where the code is (`challenge_channel`): `email`, or for a second factor `authenticator_app` or `recovery_code`.
    public var challengeChannel: String?
    /// The masked address the code went to, such as `a***e@e*****e.com` (`challenge_target_label`).
    public var challengeTargetLabel: String?
    /// Characters in the code (`code_length`): 6 to 10 digits by email, 6 from an authenticator app, 11 for a recovery code.
    public var codeLength: Int?
    /// `oob`: seconds before another code may be asked for.
    public var interval: Int64?
    /// Seconds the continuation token works (after a code is verified, or a sign-up completed).
    public var expiresIn: Int64?
    /// Reset: seconds between `poll_completion` calls.
    public var pollInterval: Int64?
    /// Reset: `succeeded` once the new password is set.
    public var status: String?
    /// With `challenge_type` `redirect`: why the browser is needed, when the server says.
    public var redirectReason: String?
    /// `/oauth2/v2.0/introspect`: the second factors the person can give.
    public var methods: [NativeAuthMethod]?

    /// An answer from its parts; `methods` is set afterwards.
    public init(continuationToken: String? = nil, challengeType: String? = nil, bindingMethod: String? = nil,
                challengeChannel: String? = nil, challengeTargetLabel: String? = nil, codeLength: Int? = nil, interval: Int64? = nil,
                expiresIn: Int64? = nil, pollInterval: Int64? = nil, status: String? = nil, redirectReason: String? = nil) {
        self.continuationToken = continuationToken
        self.challengeType = challengeType
        self.bindingMethod = bindingMethod
        self.challengeChannel = challengeChannel
        self.challengeTargetLabel = challengeTargetLabel
        self.codeLength = codeLength
        self.interval = interval
        self.expiresIn = expiresIn
        self.pollInterval = pollInterval
        self.status = status
        self.redirectReason = redirectReason
    }

    /// The app must go on in the browser.
    public static let redirect = NativeAuthAnswer(challengeType: "redirect")

    enum CodingKeys: String, CodingKey {
        case continuationToken = "continuation_token", challengeType = "challenge_type", bindingMethod = "binding_method"
        case challengeChannel = "challenge_channel", challengeTargetLabel = "challenge_target_label", codeLength = "code_length"
        case interval, expiresIn = "expires_in", pollInterval = "poll_interval", status, redirectReason = "redirect_reason"
        case methods
    }
}

/// A second factor an app can ask for (Entra's strong-authentication method): `id` goes to
/// `/oauth2/v2.0/challenge`.
public struct NativeAuthMethod: Codable, Sendable, Equatable {
    /// `authenticator_app` or `recovery_code`.
    public var id: String
    /// Always `oob` (`challenge_type`).
    public var challengeType: String
    /// Where the code comes from, the same as `id` (`challenge_channel`).
    public var challengeChannel: String
    /// What the app may show for it.
    public var loginHint: String

    /// A method from its parts.
    public init(id: String, challengeType: String, challengeChannel: String, loginHint: String) {
        self.id = id
        self.challengeType = challengeType
        self.challengeChannel = challengeChannel
        self.loginHint = loginHint
    }

    enum CodingKeys: String, CodingKey {
        case id, challengeType = "challenge_type", challengeChannel = "challenge_channel", loginHint = "login_hint"
    }
}

/// An error answer of the native API and of the email-link API, in Entra's shape: `error`,
/// an optional `suberror`, Entra's numeric `error_codes`, ids to quote to support, and
/// what the app needs to go on (a fresh continuation token, the attributes to ask for).
public struct NativeAuthErrorAnswer: Codable, Sendable, Equatable {
    /// The error code as Entra's reference names it (`invalid_grant`, `expired_token`, `slow_down`…).
    public var error: String
    /// English, for developers (`error_description`); apps match `error`, `suberror` and `error_codes`.
    public var errorDescription: String?
    /// Entra's numeric codes where it defines one (`error_codes`), such as 55200 for an unusable continuation token.
    public var errorCodes: [Int]?
    /// A finer reason, such as `invalid_oob_value`, `password_too_weak` or `mfa_required`; nil when there is none.
    public var suberror: String?
    /// When the error was answered, in UTC as `2026-11-22 10:15:00Z`.
    public var timestamp: String?
    /// A new UUID for this answer, to quote to support (`trace_id`).
    public var traceID: String?
    /// The request's `client-request-id` when it is a UUID, else a new one (`correlation_id`).
    public var correlationID: String?
    /// With `credential_required`, `attributes_required` and `mfa_required`: the token for the next step (`continuation_token`).
    public var continuationToken: String?
    /// `attributes_required`: what the sign-up still needs.
    public var requiredAttributes: [NativeAuthAttribute]?
    /// `attribute_validation_failed`: the values refused, and why.
    public var invalidAttributes: [NativeAuthAttributeProblem]?
    /// `slow_down`, `temporarily_unavailable`: seconds to wait (also the `Retry-After` header).
    public var retryAfter: Int64?

    /// An error answer from its parts.
    public init(error: String, errorDescription: String? = nil, errorCodes: [Int]? = nil, suberror: String? = nil,
                timestamp: String? = nil, traceID: String? = nil, correlationID: String? = nil, continuationToken: String? = nil,
                requiredAttributes: [NativeAuthAttribute]? = nil, invalidAttributes: [NativeAuthAttributeProblem]? = nil,
                retryAfter: Int64? = nil) {
        self.error = error
        self.errorDescription = errorDescription
        self.errorCodes = errorCodes
        self.suberror = suberror
        self.timestamp = timestamp
        self.traceID = traceID
        self.correlationID = correlationID
        self.continuationToken = continuationToken
        self.requiredAttributes = requiredAttributes
        self.invalidAttributes = invalidAttributes
        self.retryAfter = retryAfter
    }

    enum CodingKeys: String, CodingKey {
        case error, errorDescription = "error_description", errorCodes = "error_codes", suberror, timestamp
        case traceID = "trace_id", correlationID = "correlation_id", continuationToken = "continuation_token"
        case requiredAttributes = "required_attributes", invalidAttributes = "invalid_attributes", retryAfter = "retry_after"
    }
}

/// A sign-up attribute as `required_attributes` lists it.
public struct NativeAuthAttribute: Codable, Sendable, Equatable {
    /// The attribute's name, as the app sends it in `attributes`.
    public var name: String
    /// `string`, `boolean`, …
    public var type: String
    /// Whether the sign-up can't finish without it.
    public var required: Bool
    /// What a value must match; nil when nothing is asked.
    public var options: Options?

    /// What an attribute's value must match.
    public struct Options: Codable, Sendable, Equatable {
        /// The pattern a value must match.
        public var regex: String?

        /// Options with the pattern `regex`.
        public init(regex: String?) { self.regex = regex }
    }

    /// An attribute from its parts.
    public init(name: String, type: String, required: Bool, options: Options? = nil) {
        self.name = name
        self.type = type
        self.required = required
        self.options = options
    }

    /// As the reference reads it: without `type` an attribute is a string, without `required` it is required.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try container.decode(String.self, forKey: .name),
                  type: try container.decodeIfPresent(String.self, forKey: .type) ?? "string",
                  required: try container.decodeIfPresent(Bool.self, forKey: .required) ?? true,
                  options: try container.decodeIfPresent(Options.self, forKey: .options))
    }

    enum CodingKeys: String, CodingKey { case name, type, required, options }
}

/// An attribute value the server refused, and why.
public struct NativeAuthAttributeProblem: Codable, Sendable, Equatable {
    /// The attribute's name, as the app sent it in `attributes`.
    public var name: String
    /// Why it was refused, in English.
    public var reason: String

    /// A problem from its parts.
    public init(name: String, reason: String) {
        self.name = name
        self.reason = reason
    }
}

/// The answer of `/emaillink/v1.0/send`: where the link went, and how long it works.
public struct EmailLinkSendAnswer: Codable, Sendable, Equatable {
    /// The address the link went to, as the server normalised it (lower case).
    public var email: String
    /// Seconds the link works (`expires_in`; `email-link-lifetime`, 3600 by default); nil when the server doesn't say.
    public var expiresIn: Int64?

    /// An answer from its parts.
    public init(email: String, expiresIn: Int64?) {
        self.email = email
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey { case email, expiresIn = "expires_in" }
}

/// The answer of `account_providers_endpoint`: how the signed-in user can sign in.
public struct LinkedProvidersAnswer: Codable, Sendable, Equatable {
    /// `password`, `email`, `apple`, or an upstream provider's id.
    public var linkedProviders: [String]

    /// An answer listing `linkedProviders`.
    public init(linkedProviders: [String]) { self.linkedProviders = linkedProviders }

    enum CodingKeys: String, CodingKey { case linkedProviders = "linked_providers" }
}
