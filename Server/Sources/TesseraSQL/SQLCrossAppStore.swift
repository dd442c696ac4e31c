import SQLKit
import TesseraCore
import TesseraDomain

extension SQLStore: CrossAppStore {
    // MARK: Pushed authorization requests

    public func insertPushedRequest(uriHash: String, _ request: PushedRequest) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO pushed_requests (uri_hash, client_id, request, created_at, expires_at)
                VALUES (\(bind: uriHash), \(bind: request.clientID), \(bind: request.request), \(bind: request.createdAt),
                    \(bind: request.expiresAt))
                """).run()
        }
    }

    public func pushedRequest(uriHash: String, now: Int64) async throws -> PushedRequest? {
        try await database.withDatabase { db in
            try await db.raw("""
                SELECT * FROM pushed_requests WHERE uri_hash = \(bind: uriHash) AND used_at IS NULL AND expires_at > \(bind: now)
                """).first().map(Self.pushedRequest)
        }
    }

    public func takePushedRequest(uriHash: String, now: Int64) async throws -> PushedRequest? {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE pushed_requests SET used_at = \(bind: now)
                WHERE uri_hash = \(bind: uriHash) AND used_at IS NULL AND expires_at > \(bind: now) RETURNING *
                """).first().map(Self.pushedRequest)
        }
    }

    static func pushedRequest(_ row: any SQLRow) throws -> PushedRequest {
        PushedRequest(clientID: try row.string("client_id"), request: try row.string("request"), createdAt: try row.int("created_at"),
                      expiresAt: try row.int("expires_at"))
    }

    // MARK: Hand-off tickets

    public func insertHandoffTicket(hash: String, _ ticket: HandoffTicket, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO handoff_tickets (ticket_hash, client_id, user_id, issued_by, auth_time, amr, created_at, expires_at)
                VALUES (\(bind: hash), \(bind: ticket.clientID), \(bind: ticket.userID), \(bind: ticket.issuedBy), \(bind: ticket.authTime),
                    \(bind: ticket.amr.joined(separator: " ")), \(bind: now), \(bind: ticket.expiresAt))
                """).run()
        }
    }

    public func handoffTicket(hash: String, now: Int64) async throws -> HandoffTicket? {
        try await database.withDatabase { db in
            try await db.raw("""
                SELECT * FROM handoff_tickets WHERE ticket_hash = \(bind: hash) AND used_at IS NULL AND expires_at > \(bind: now)
                """).first().map(Self.handoffTicket)
        }
    }

    public func takeHandoffTicket(hash: String, now: Int64) async throws -> HandoffTicket? {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE handoff_tickets SET used_at = \(bind: now)
                WHERE ticket_hash = \(bind: hash) AND used_at IS NULL AND expires_at > \(bind: now) RETURNING *
                """).first().map(Self.handoffTicket)
        }
    }

    static func handoffTicket(_ row: any SQLRow) throws -> HandoffTicket {
        HandoffTicket(clientID: try row.string("client_id"), userID: try row.string("user_id"), issuedBy: try row.string("issued_by"),
                      authTime: try row.int("auth_time"), amr: try row.string("amr").split(separator: " ").map(String.init),
                      expiresAt: try row.int("expires_at"))
    }

    // MARK: Device sessions

    public func insertDeviceSession(secretHash: String, _ session: DeviceSession) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO device_sessions (id, secret_hash, user_id, sso_group, auth_time, amr, created_at, expires_at, ds_hash)
                VALUES (\(bind: session.id), \(bind: secretHash), \(bind: session.userID), \(bind: session.group),
                    \(bind: session.authTime), \(bind: session.amr.joined(separator: " ")), \(bind: session.createdAt),
                    \(bind: session.expiresAt), \(bind: session.dsHash))
                """).run()
        }
    }

    public func deviceSession(secretHash: String, now: Int64) async throws -> DeviceSession? {
        try await database.withDatabase { db in
            try await db.raw("""
                SELECT * FROM device_sessions WHERE secret_hash = \(bind: secretHash) AND ended_at IS NULL AND expires_at > \(bind: now)
                """).first().map(Self.deviceSession)
        }
    }

    public func deviceSession(id: String, now: Int64) async throws -> DeviceSession? {
        try await database.withDatabase { db in
            try await db.raw("""
                SELECT * FROM device_sessions WHERE id = \(bind: id) AND ended_at IS NULL AND expires_at > \(bind: now)
                """).first().map(Self.deviceSession)
        }
    }

    static func deviceSession(_ row: any SQLRow) throws -> DeviceSession {
        var session = DeviceSession(id: try row.string("id"), userID: try row.string("user_id"), group: try row.string("sso_group"),
                                    authTime: try row.int("auth_time"), amr: try row.string("amr").split(separator: " ").map(String.init),
                                    createdAt: try row.int("created_at"), expiresAt: try row.int("expires_at"))
        session.dsHash = try row.optionalString("ds_hash")
        return session
    }

    @discardableResult
    public func endDeviceSession(id: String, now: Int64) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE device_sessions SET ended_at = \(bind: now) WHERE id = \(bind: id) AND ended_at IS NULL RETURNING id
                """).first() != nil
        }
    }

    public func endDeviceSessions(userID: String, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("UPDATE device_sessions SET ended_at = \(bind: now) WHERE user_id = \(bind: userID) AND ended_at IS NULL").run()
        }
    }
}
