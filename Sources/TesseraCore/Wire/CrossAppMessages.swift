import Foundation

// The cross-app answers (docs/cross-app.md): the pushed request's reference (RFC 9126), and
// what the authenticator app's endpoints answer. The server encodes these and the SDK decodes
// them, so the two can't drift apart.

/// `POST /par` (RFC 9126 §2.2): the reference that stands for the pushed request.
public struct PushedRequestAnswer: Codable, Sendable, Equatable {
    /// The reference to open `/authorize` with, beside `client_id` (`request_uri`): single use, bound to the client.
    public var requestURI: String
    /// Seconds the reference stays valid (`expires_in`; `pushed-request-lifetime`, 90 by default).
    public var expiresIn: Int64

    /// An answer from its parts.
    public init(requestURI: String, expiresIn: Int64) {
        self.requestURI = requestURI
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey {
        case requestURI = "request_uri", expiresIn = "expires_in"
    }
}

/// `POST /authorize/v1.0/details`: what a partner app's pushed request asks for, as the
/// authenticator app shows it.
public struct AuthorizationDetailsAnswer: Codable, Sendable, Equatable {
    /// One scope the partner would get, as the person should see it.
    public struct Scope: Codable, Sendable, Equatable {
        /// The scope's name.
        public var scope: String
        /// In the request's language (or the app's `Accept-Language`).
        public var description: String
        /// Documents, tax numbers, addresses: always needs the person's explicit consent.
        public var sensitive: Bool
        /// The person has not allowed this scope to the partner yet.
        public var consentRequired: Bool

        /// A scope from its parts.
        public init(scope: String, description: String, sensitive: Bool, consentRequired: Bool) {
            self.scope = scope
            self.description = description
            self.sensitive = sensitive
            self.consentRequired = consentRequired
        }

        enum CodingKeys: String, CodingKey {
            case scope, description, sensitive, consentRequired = "consent_required"
        }
    }

    /// The partner's client id (`client_id`).
    public var clientID: String
    /// The partner's name, to show (`client_name`).
    public var clientName: String
    /// The request's `scope` as sent.
    public var scope: String
    /// Each scope the person would share, those the `claims` parameter adds included.
    public var scopes: [Scope]
    /// Where the answer will go (`redirect_uri`).
    public var redirectURI: String
    /// The request's `prompt` values, space-separated; nil when it has none.
    public var prompt: String?
    /// The request's `max_age` in seconds; nil when it has none.
    public var maxAge: Int64?
    /// The request's `login_hint`; nil when it has none.
    public var loginHint: String?
    /// Whether some scope still needs the person's consent (`consent_required`): show those scopes before Allow.
    public var consentRequired: Bool
    /// The authenticator app's sign-in is too old for the request: sign in again, then approve.
    public var reauthenticationRequired: Bool
    /// Seconds left to decide (`expires_in`).
    public var expiresIn: Int64
    /// Who is signed in to the authenticator app.
    public var userEmail: String
    /// The descriptions' language, `en` or `ru`: the request's `ui_locales`, else the app's `Accept-Language`.
    public var language: String

    /// An answer from its parts.
    public init(clientID: String, clientName: String, scope: String, scopes: [Scope], redirectURI: String, prompt: String?, maxAge: Int64?,
                loginHint: String?, consentRequired: Bool, reauthenticationRequired: Bool, expiresIn: Int64, userEmail: String, language: String) {
        self.clientID = clientID
        self.clientName = clientName
        self.scope = scope
        self.scopes = scopes
        self.redirectURI = redirectURI
        self.prompt = prompt
        self.maxAge = maxAge
        self.loginHint = loginHint
        self.consentRequired = consentRequired
        self.reauthenticationRequired = reauthenticationRequired
        self.expiresIn = expiresIn
        self.userEmail = userEmail
        self.language = language
    }

    enum CodingKeys: String, CodingKey {
        case clientID = "client_id", clientName = "client_name", scope, scopes, redirectURI = "redirect_uri", prompt
        case maxAge = "max_age", loginHint = "login_hint", consentRequired = "consent_required"
        case reauthenticationRequired = "reauthentication_required", expiresIn = "expires_in", userEmail = "user_email", language
    }
}

/// `POST /authorize/v1.0/approve`: where the authenticator app sends the person (the partner's
/// redirect URI with the code, or with `access_denied`).
public struct ApprovalAnswer: Codable, Sendable, Equatable {
    /// The URL to open (`redirect_to`): the partner's redirect URI with `code`, `state` and `iss`, or with an error.
    public var redirectTo: String

    /// An answer sending the person to `redirectTo`.
    public init(redirectTo: String) {
        self.redirectTo = redirectTo
    }

    enum CodingKeys: String, CodingKey {
        case redirectTo = "redirect_to"
    }
}

/// `POST /authorize/v1.0/handoff`: a one-minute, single-use ticket for the partner app's deep link.
public struct HandoffAnswer: Codable, Sendable, Equatable {
    /// The single-use ticket for the partner's authorization request (`handoff_ticket`).
    public var handoffTicket: String
    /// Seconds the ticket works (`expires_in`; `handoff-ticket-lifetime`, 60 by default).
    public var expiresIn: Int64

    /// An answer from its parts.
    public init(handoffTicket: String, expiresIn: Int64) {
        self.handoffTicket = handoffTicket
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey {
        case handoffTicket = "handoff_ticket", expiresIn = "expires_in"
    }
}
