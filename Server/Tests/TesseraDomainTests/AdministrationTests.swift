import Foundation
import Logging
import Testing
import TesseraCore
import TesseraDomain
import TesseraSQL
import TesseraTestSupport

/// Who may administer, and the registration rules a client must meet whoever registers it
/// (the admin API, the console, the CLI).
@Suite("Administration rules")
struct AdministrationTests {
    static let now: Int64 = 1_800_000_000

    func user(admin: Bool, disabled: Bool = false) -> User {
        var user = User(id: "u1", email: "root@example.com", emailVerified: true, profile: [:], createdAt: 1, updatedAt: 1)
        if admin { user.roles = [User.adminRole] }
        if disabled { user.disabledAt = Self.now - 1 }
        return user
    }

    @Test("the console: an administrator signed in within 12 hours; older sign-ins sign in again; others are told")
    func consoleAccess() {
        let recent = BrowserSession(sid: "s", userID: "u1", authTime: Self.now - 12 * 3600, amr: ["pwd"], expiresAt: Self.now + 3600)
        let old = BrowserSession(sid: "s", userID: "u1", authTime: Self.now - 12 * 3600 - 1, amr: ["pwd"], expiresAt: Self.now + 3600)
        #expect(Administrator.console(session: recent, user: user(admin: true), now: Self.now)
                    == .granted(.user(id: "u1", email: "root@example.com")))
        #expect(Administrator.console(session: old, user: user(admin: true), now: Self.now) == .signIn)
        #expect(Administrator.console(session: nil, user: nil, now: Self.now) == .signIn)
        #expect(Administrator.console(session: recent, user: user(admin: false), now: Self.now) == .notAdministrator(email: "root@example.com"))
        #expect(Administrator.console(session: recent, user: user(admin: true, disabled: true), now: Self.now)
                    == .notAdministrator(email: "root@example.com"))
    }

    @Test("a client registered for private_key_jwt needs its keys; a public one gets no secret")
    func registration() async throws {
        try await withStore { store in
            let clients = ClientAdministration(store: store, audit: AuditTrail(store: store, clock: WallClock { Self.now },
                                                                               logger: Logger(label: "test")),
                                               clock: WallClock { Self.now })
            var keyed = ClientRegistration(name: "Keyed", redirectURIs: ["https://app.example/cb"])
            keyed.authMethod = .privateKeyJWT
            await #expect(throws: ConfigurationError("private_key_jwt needs the client's 'jwks'")) {
                _ = try await clients.register(keyed, by: .operator)
            }
            var app = ClientRegistration(name: "App", redirectURIs: ["com.example.app:/cb"])
            app.isPublic = true
            let (client, secret) = try await clients.register(app, by: .operator)
            #expect(client.authMethod == ClientAuthMethod.none && client.isPublic && secret == nil)
            app.isPublic = false
            #expect(app.authMethod == nil, "not public any more: authenticated by what it registers")
        }
    }
}
