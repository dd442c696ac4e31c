import Foundation
import Logging
import TesseraCore

/// One user to import, read from a file and checked (``UserImportFile``).
public struct UserImportRow: Sendable, Equatable {
    /// Where the user is in the file (a line, or a position in Firebase's `users` array), for the report.
    public var line: Int
    /// The account's id: Firebase's `localId`, kept so that the `sub` apps stored stays the same.
    public var id: String?
    public var email: String
    public var emailVerified: Bool
    /// A hash in one of ``ImportedPasswordHash``'s formats, checked at the first sign-in and
    /// then replaced by one of Tessera's.
    public var passwordHash: String?
    public var profile: [String: JSONValue]
    public var createdAt: Int64?
    public var disabled: Bool
    /// Upstream identities to link (Firebase's `providerUserInfo`, mapped to this server's providers).
    public var identities: [ImportedIdentity] = []

    public init(line: Int, id: String? = nil, email: String, emailVerified: Bool = false, passwordHash: String? = nil,
                profile: [String: JSONValue] = [:], createdAt: Int64? = nil, disabled: Bool = false) {
        self.line = line
        self.id = id
        self.email = email
        self.emailVerified = emailVerified
        self.passwordHash = passwordHash
        self.profile = profile
        self.createdAt = createdAt
        self.disabled = disabled
    }
}

/// An upstream identity an imported user had: the provider's id at this server, and the user's id there.
public struct ImportedIdentity: Sendable, Equatable {
    public var providerID: String
    public var subject: String
    public var email: String?

    public init(providerID: String, subject: String, email: String? = nil) {
        self.providerID = providerID
        self.subject = subject
        self.email = email
    }
}

/// A row the import could not take, and why (never with a hash or a password in it).
public struct UserImportFailure: Error, Sendable, Equatable {
    public var line: Int
    /// The row's id or address, when it had one.
    public var reference: String
    public var reason: String

    public init(line: Int, reference: String, reason: String) {
        self.line = line
        self.reference = reference
        self.reason = reason
    }
}

/// What an import did.
public struct UserImportReport: Sendable, Equatable {
    public var created = 0
    public var updated = 0
    public var failures: [UserImportFailure] = []
    public var total: Int { created + updated + failures.count }

    public init() {}
}

/// Imports users in batches, each in a transaction: a user is found by its id, then by its
/// address, and updated, or else created, so running an import again changes nothing twice.
/// A row that can't be taken is reported and the others go on; a batch the database refuses
/// is retried row by row, so one bad row never costs its neighbours.
public struct UserImport: Sendable {
    let store: any UserAdministrationStores
    let audit: AuditTrail
    let clock: WallClock
    let logger: Logger

    package init(store: any UserAdministrationStores, audit: AuditTrail, clock: WallClock, logger: Logger) {
        self.store = store
        self.audit = audit
        self.clock = clock
        self.logger = logger
    }

    public static let defaultBatchSize = 500

    /// `progress` is told how many rows are done after each batch.
    public func run(_ rows: [Result<UserImportRow, UserImportFailure>], batchSize: Int = defaultBatchSize, by admin: Administrator,
                    progress: @Sendable (Int) -> Void = { _ in }) async throws -> UserImportReport {
        var report = UserImportReport()
        var done = 0
        let batchSize = max(1, batchSize)
        var index = 0
        while index < rows.count {
            let batch = rows[index..<min(index + batchSize, rows.count)]
            index += batch.count
            var valid: [UserImportRow] = []
            for row in batch {
                switch row {
                case .success(let row): valid.append(row)
                case .failure(let failure): report.failures.append(failure)
                }
            }
            let now = clock.now(), rows = valid
            do {
                let outcomes = try await store.transaction { tx in
                    var outcomes: [Outcome] = []
                    for row in rows { outcomes.append(try await Self.apply(row, now: now, by: admin, in: tx)) }
                    return outcomes
                }
                outcomes.forEach { report.count($0) }
            } catch {
                // One row the database refused rolled back the batch: take them one at a time.
                logger.warning("an import batch failed; retrying its rows one by one", metadata: ["error": "\(error)"])
                for row in valid {
                    do {
                        report.count(try await store.transaction { tx in try await Self.apply(row, now: now, by: admin, in: tx) })
                    } catch {
                        report.failures.append(UserImportFailure(line: row.line, reference: row.id ?? row.email,
                                                                 reason: "the database refused it: \(databaseReason(error))"))
                    }
                }
            }
            done += batch.count
            progress(done)
        }
        report.failures.sort { $0.line < $1.line }
        await audit.record(.userChanged, actor: .admin,
                           detail: "import: \(report.created) created, \(report.updated) updated, \(report.failures.count) refused, by \(admin.description)")
        return report
    }

    enum Outcome {
        case created, updated
        case failed(UserImportFailure)
    }

    static func apply(_ row: UserImportRow, now: Int64, by admin: Administrator, in tx: any TransactionStores) async throws -> Outcome {
        let byID = try await row.id.asyncMap { try await tx.user(id: $0) } ?? nil
        let byEmail = try await tx.user(email: row.email)
        if let byID, let byEmail, byID.id != byEmail.id {
            return .failed(UserImportFailure(line: row.line, reference: row.id ?? row.email,
                                             reason: "the address \(row.email) belongs to another account (\(byEmail.id))"))
        }
        let owner = byID?.id ?? byEmail?.id
        for identity in row.identities {
            if let linked = try await tx.identity(providerID: identity.providerID, subject: identity.subject), linked.userID != owner {
                return .failed(UserImportFailure(line: row.line, reference: row.id ?? row.email,
                                                 reason: "the \(identity.providerID) identity \(identity.subject) is linked to another account (\(linked.userID))"))
            }
        }
        if let existing = byID ?? byEmail {
            if let id = row.id, id != existing.id {
                return .failed(UserImportFailure(line: row.line, reference: id,
                                                 reason: "the address \(row.email) belongs to another account (\(existing.id))"))
            }
            // The "address proven" rule holds for imports too: a row whose address nobody proved
            // (anyone could have registered it at the source) never adds a credential to, nor
            // changes, an account whose owner proved the address.
            if existing.emailVerified && !row.emailVerified {
                return .failed(UserImportFailure(line: row.line, reference: row.id ?? row.email,
                                                 reason: "the address \(row.email) is verified on the existing account (\(existing.id)) and "
                                                    + "this row's is not (email_verified false): an unverified row can't change it"))
            }
            var user = existing
            user.email = row.email
            user.emailVerified = row.emailVerified || existing.emailVerified
            user.profile = existing.profile.merging(row.profile) { _, imported in imported }
            // A password chosen at Tessera is the user's; an imported one may be replaced by a newer import.
            if let hash = row.passwordHash, existing.passwordHash.map(ImportedPasswordHash.recognises) ?? true { user.passwordHash = hash }
            user.updatedAt = now
            try await tx.saveImported(user, now: now)
            if row.disabled && !existing.isDisabled { try await AccountRules.disable(user.id, now: now, in: tx) }
            try await link(row.identities, to: user.id, now: now, in: tx)
            try await tx.recordAudit(AuditEvent(.userChanged, at: now, actor: .admin, userID: user.id, email: user.email,
                                                detail: "imported by \(admin.description)"))
            return .updated
        }
        var user = User(id: row.id ?? UUID().uuidString.lowercased(), email: row.email, emailVerified: row.emailVerified,
                        passwordHash: row.passwordHash, profile: row.profile, createdAt: row.createdAt ?? now, updatedAt: now)
        if row.disabled { user.disabledAt = now }
        try await tx.insert(user)
        try await link(row.identities, to: user.id, now: now, in: tx)
        try await tx.recordAudit(AuditEvent(.accountCreated, at: now, actor: .admin, userID: user.id, email: user.email,
                                            detail: "imported by \(admin.description)"))
        return .created
    }
}

extension UserImport {
    /// Links what is not linked yet; the other provider proved these identities belong to the user.
    static func link(_ identities: [ImportedIdentity], to userID: String, now: Int64, in tx: any TransactionStores) async throws {
        for identity in identities where try await tx.identity(providerID: identity.providerID, subject: identity.subject) == nil {
            _ = try await tx.link(UpstreamIdentity(providerID: identity.providerID, subject: identity.subject, userID: userID,
                                                   email: identity.email, proven: true, createdAt: now, lastUsedAt: now))
        }
    }
}

extension UserImportReport {
    mutating func count(_ outcome: UserImport.Outcome) {
        switch outcome {
        case .created: created += 1
        case .updated: updated += 1
        case .failed(let failure): failures.append(failure)
        }
    }
}

/// The database's reason for refusing a write, without the values (which may hold a hash).
func databaseReason(_ error: any Error) -> String {
    if case StoreError.duplicate(let what) = error { return "\(what) exists already" }
    return String(describing: type(of: error))
}
