import Foundation
import Logging
import Testing
import TesseraCore
import TesseraDomain
import TesseraSQL
import TesseraTestSupport

/// ``UserImport``: users found by id, then by address, updated or created, so an import run
/// twice changes nothing twice; rows the file or the database refuse are reported, not lost.
@Suite("User import")
struct UserImportTests {
    static let now: Int64 = 1_800_000_000

    func importer(_ store: SQLStore) -> UserImport {
        let clock = WallClock { Self.now }
        return UserImport(store: store, audit: AuditTrail(store: store, clock: clock, logger: Logger(label: "test")), clock: clock,
                          logger: Logger(label: "test"))
    }

    @Test("created, then updated by id or address on a second run; an id and an address of two accounts is refused",
          arguments: TestBackend.available)
    func createThenUpdate(on backend: TestBackend) async throws {
        try await withStore(backend) { store async throws in
            let rows: [Result<UserImportRow, UserImportFailure>] = [
                .success(UserImportRow(line: 1, id: "fb-1", email: "anna@example.com", emailVerified: true,
                                       profile: ["name": .string("Anna")])),
                .success(UserImportRow(line: 2, email: "boris@example.com")),
                .failure(UserImportFailure(line: 3, reference: "x", reason: "not an email address")),
            ]
            let first = try await importer(store).run(rows, batchSize: 2, by: .operator)
            #expect(first.created == 2 && first.updated == 0 && first.failures.map(\.line) == [3])
            #expect(try await store.user(id: "fb-1")?.name == "Anna", "the id kept: the sub apps stored stays the same")
            let second = try await importer(store).run(rows, by: .operator)
            #expect(second.created == 0 && second.updated == 2)
            let clash = try await importer(store).run([.success(UserImportRow(line: 1, id: "fb-1", email: "boris@example.com"))],
                                                      by: .operator)
            #expect(clash.failures.first?.reason.contains("belongs to another account") == true)
            #expect(try await store.user(id: "fb-1")?.email == "anna@example.com")
        }
    }

    @Test("a disabled row imports a disabled account, and the audit trail says who imported what")
    func disabledAndAudited() async throws {
        try await withStore { store async throws in
            let report = try await importer(store).run([.success(UserImportRow(line: 1, email: "gone@example.com", disabled: true))],
                                                       by: .client("ops"))
            #expect(report.created == 1)
            #expect(try await store.user(email: "gone@example.com")?.isDisabled == true)
            let events = try await store.auditEvents(AuditFilter(kind: .userChanged), limit: 10)
            #expect(events.contains { $0.detail?.contains("import: 1 created, 0 updated, 0 refused, by client ops") == true })
        }
    }
}
