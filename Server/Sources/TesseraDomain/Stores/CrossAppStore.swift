import TesseraCore

/// An authorization request a client pushed (RFC 9126), validated, until it is used once.
public struct PushedRequest: Sendable, Equatable {
    public var clientID: String
    /// The validated ``AuthorizationRequest`` as JSON.
    public var request: String
    public var createdAt: Int64
    public var expiresAt: Int64

    package init(clientID: String, request: String, createdAt: Int64, expiresAt: Int64) {
        self.clientID = clientID
        self.request = request
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// A hand-off ticket: an authenticator app's signed-in user, handed to one partner client,
/// good for one sign-in within a minute.
public struct HandoffTicket: Sendable, Equatable {
    /// The partner client the ticket signs in to.
    public var clientID: String
    public var userID: String
    /// The authenticator client that asked for it.
    public var issuedBy: String
    /// When the user last authenticated in the authenticator app, and how.
    public var authTime: Int64
    public var amr: [String]
    public var expiresAt: Int64

    package init(clientID: String, userID: String, issuedBy: String, authTime: Int64, amr: [String], expiresAt: Int64) {
        self.clientID = clientID
        self.userID = userID
        self.issuedBy = issuedBy
        self.authTime = authTime
        self.amr = amr
        self.expiresAt = expiresAt
    }
}

/// A Native SSO device session: one sign-in shared by the apps of one vendor on one device,
/// proven by the `device_secret` they keep in their shared keychain group.
public struct DeviceSession: Sendable, Equatable {
    /// The ID tokens' `sid`.
    public var id: String
    public var userID: String
    /// The clients' ``Client/deviceSSOGroup``.
    public var group: String
    public var authTime: Int64
    public var amr: [String]
    public var createdAt: Int64
    public var expiresAt: Int64
    public var endedAt: Int64?
    /// The `ds_hash` its ID tokens carry (the left half of the secret's hash): refreshed ID tokens
    /// carry it too, so an app can share its newest ID token.
    public var dsHash: String?

    package init(id: String, userID: String, group: String, authTime: Int64, amr: [String], createdAt: Int64, expiresAt: Int64,
                 endedAt: Int64? = nil) {
        self.id = id
        self.userID = userID
        self.group = group
        self.authTime = authTime
        self.amr = amr
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.endedAt = endedAt
    }
}

/// Cross-app sign-in's state: pushed requests, hand-off tickets and device sessions. Each
/// secret (request URI, ticket, device secret) is kept as its hash only; each single-use value
/// is taken by a conditional write, so two nodes can't both use it.
public protocol CrossAppStore: Sendable {
    func insertPushedRequest(uriHash: String, _ request: PushedRequest) async throws
    /// The pushed request, while unused and unexpired.
    func pushedRequest(uriHash: String, now: Int64) async throws -> PushedRequest?
    /// Uses the pushed request: it is returned to one caller only, and never again.
    func takePushedRequest(uriHash: String, now: Int64) async throws -> PushedRequest?

    func insertHandoffTicket(hash: String, _ ticket: HandoffTicket, now: Int64) async throws
    /// The ticket, while unused and unexpired.
    func handoffTicket(hash: String, now: Int64) async throws -> HandoffTicket?
    /// Uses the ticket: it is returned to one caller only, and never again.
    func takeHandoffTicket(hash: String, now: Int64) async throws -> HandoffTicket?

    func insertDeviceSession(secretHash: String, _ session: DeviceSession) async throws
    /// The live (not ended, not expired) session whose device secret has this hash.
    func deviceSession(secretHash: String, now: Int64) async throws -> DeviceSession?
    /// The live session of this id.
    func deviceSession(id: String, now: Int64) async throws -> DeviceSession?
    /// Ends a device session (its grants: ``TokenFamilies/endDeviceSession(id:now:)``). True when it was live.
    @discardableResult
    func endDeviceSession(id: String, now: Int64) async throws -> Bool
    /// Ends every live device session of a user.
    func endDeviceSessions(userID: String, now: Int64) async throws
}
