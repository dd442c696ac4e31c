import Foundation

// The cross-app answers (docs/cross-app.md): the pushed request's reference (RFC 9126), and
// what the authenticator app's endpoints answer. The server encodes these and the SDK decodes
// them, so the two can't drift apart.

/// `POST /par` (RFC 9126 §2.2): the reference that stands for the pushed request.
public struct PushedRequestAnswer: Codable, Sendable, Equatable {
    public var requestURI: String
    public var expiresIn: Int64

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
    public struct Scope: Codable, Sendable, Equatable {
        public var scope: String
        /// In the request's language (or the app's `Accept-Language`).
        public var description: String
        /// Documents, tax numbers, addresses: always needs the person's explicit consent.
        public var sensitive: Bool
        /// The person has not allowed this scope to the partner yet.
        public var consentRequired: Bool

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

    public var clientID: String
    public var clientName: String
    public var scope: String
    public var scopes: [Scope]
    public var redirectURI: String
    public var prompt: String?
    public var maxAge: Int64?
    public var loginHint: String?
    public var consentRequired: Bool
    /// The authenticator app's sign-in is too old for the request: sign in again, then approve.
    public var reauthenticationRequired: Bool
    public var expiresIn: Int64
    /// Who is signed in to the authenticator app.
    public var userEmail: String
    public var language: String

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
    public var redirectTo: String

    public init(redirectTo: String) {
        self.redirectTo = redirectTo
    }

    enum CodingKeys: String, CodingKey {
        case redirectTo = "redirect_to"
    }
}

/// `POST /authorize/v1.0/handoff`: a one-minute, single-use ticket for the partner app's deep link.
public struct HandoffAnswer: Codable, Sendable, Equatable {
    public var handoffTicket: String
    public var expiresIn: Int64

    public init(handoffTicket: String, expiresIn: Int64) {
        self.handoffTicket = handoffTicket
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey {
        case handoffTicket = "handoff_ticket", expiresIn = "expires_in"
    }
}
