import SQLKit
import TesseraDomain

extension SQLStore: AuditStore {
    public func recordAudit(_ event: AuditEvent) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO audit_events (id, kind, at, actor, user_id, client_id, email, ip, detail)
                VALUES (\(bind: event.id), \(bind: event.kind.rawValue), \(bind: event.at), \(bind: event.actor.rawValue), \(bind: event.userID),
                    \(bind: event.clientID), \(bind: event.email), \(bind: event.ip), \(bind: event.detail))
                """).run()
        }
    }

    public func auditEvents(_ filter: AuditFilter, limit: Int) async throws -> [AuditEvent] {
        var conditions: [SQLQueryString] = []
        if let userID = filter.userID { conditions.append("user_id = \(bind: userID)") }
        if let kind = filter.kind { conditions.append("kind = \(bind: kind.rawValue)") }
        if let since = filter.since { conditions.append("at >= \(bind: since)") }
        var condition: SQLQueryString = ""
        if !conditions.isEmpty {
            condition = "WHERE "
            condition += conditions.joined(separator: " AND ")
        }
        let whereClause = condition
        return try await database.withDatabase { db in
            try await db.raw("SELECT * FROM audit_events \(whereClause) ORDER BY at DESC, id LIMIT \(bind: max(1, min(limit, 10_000)))")
                .all().map { row in
                    AuditEvent(AuditEvent.Kind(rawValue: try row.string("kind")) ?? .userChanged, at: try row.int("at"),
                               actor: AuditEvent.Actor(rawValue: try row.string("actor")) ?? .system, userID: try row.optionalString("user_id"),
                               clientID: try row.optionalString("client_id"), email: try row.optionalString("email"),
                               ip: try row.optionalString("ip"), detail: try row.optionalString("detail"), id: try row.string("id"))
                }
        }
    }

    public func purgeAudit(before: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("DELETE FROM audit_events WHERE at < \(bind: before)").run()
        }
    }
}
