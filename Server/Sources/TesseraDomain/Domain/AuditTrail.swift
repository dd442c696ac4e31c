import Logging

/// Writes audit events outside a transaction (inside one, rules call `tx.recordAudit`, so the
/// event commits with the change). A write that fails is logged and does not fail what the
/// user was doing: the sign-in happened; the database that refused the row will say why.
public struct AuditTrail: Sendable {
    let store: any AuditStore
    let clock: WallClock
    let logger: Logger

    public init(store: any AuditStore, clock: WallClock, logger: Logger) {
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    public func record(_ kind: AuditEvent.Kind, actor: AuditEvent.Actor = .user, userID: String? = nil, clientID: String? = nil,
                       email: String? = nil, ip: String? = nil, detail: String? = nil) async {
        let event = AuditEvent(kind, at: clock.now(), actor: actor, userID: userID, clientID: clientID, email: email, ip: ip, detail: detail)
        do {
            try await store.recordAudit(event)
        } catch {
            logger.error("could not record an audit event", metadata: ["event": "\(kind.rawValue)", "error": "\(error)"])
        }
    }

    /// The events `filter` selects, newest first.
    public func events(_ filter: AuditFilter, limit: Int) async throws -> [AuditEvent] {
        try await store.auditEvents(filter, limit: limit)
    }
}
