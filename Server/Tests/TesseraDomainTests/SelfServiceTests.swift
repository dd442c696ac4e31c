import Foundation
import Logging
import Testing
import TesseraCore
import TesseraDomain
import TesseraInfrastructure
import TesseraSQL
import TesseraTestSupport

/// What people change on their own account, over a real SQL store and the real outbox: the
/// rules the account page and the account API share.
struct SelfServiceBench {
    static let password = "the owner's passphrase"
    let store: SQLStore
    let clock = ManualClock()
    let service: SelfService
    let user: User

    init(_ store: SQLStore) async throws {
        self.store = store
        let clock = clock.clock
        let audit = AuditTrail(store: store, clock: clock, logger: Logger(label: "test"))
        let hasher = PasswordHasher(parameters: .init(logN: 4, r: 8, p: 1), threads: NIOHashingThreads())
        let mailer = OutboxMailer(store: store, sender: try MailAddress(parsing: "tessera@id.example"), domain: "id.example",
                                  clock: clock, signal: DeliverySignal())
        let settings = NativeAuthSettings()
        service = SelfService(store: store, passwords: hasher, policy: PasswordPolicy(),
                              passwordSignIn: PasswordSignIn(users: store, passwords: hasher, limits: LoginLimits(), throttles: store,
                                                             audit: audit, clock: clock),
                              mail: FlowMail(mailer: mailer, templates: try MailTemplates(), issuerHost: "id.example"), codes: settings,
                              mailLimits: MailLimits(settings: settings, store: store, clock: clock), audit: audit, clock: clock)
        let now = clock.now()
        user = User(id: "u1", email: "owner@example.com", emailVerified: true, passwordHash: try await hasher.hash(Self.password),
                    profile: ["given_name": .string("Ann")], createdAt: now, updatedAt: now)
        try await store.insert(user)
    }

    func owner(recent: Bool = true, sid: String? = nil) async throws -> SelfService.Owner {
        let current = try #require(try await store.user(id: user.id))
        return SelfService.Owner(user: current, authTime: clock.clock.now() - (recent ? 0 : 3600), sid: sid,
                                 origin: .init(address: "192.0.2.1"), language: .en)
    }
}

/// The refusal `body` ends with, or nil when it succeeds.
func refusal<T>(_ body: () async throws(SelfServiceError) -> T) async -> SelfServiceError? {
    do {
        _ = try await body()
        return nil
    } catch { return error }
}

@Suite("Self-service: a person's own account")
struct SelfServiceTests {
    @Test("a profile change: every problem at once, by claim; nothing written unless all of it can be", arguments: TestBackend.available)
    func profileProblems(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await SelfServiceBench(store)
            let owner1 = try await bench.owner()
            let refusal1 = await refusal { () async throws(SelfServiceError) in try await bench.service.updateProfile(owner1, changes: [ "given_name": .string("Anna"), "birthdate": .string("1990-02-31"), "email": .string("x@example.com"), "phone_number_verified": .bool(true), "shoe_size": .int(42), ], recentSignIn: true) }
            guard let error1 = refusal1, case .invalidClaims(let problems) = error1 else { Issue.record("accepted"); return }
            #expect(Set(problems.keys) == ["birthdate", "email", "phone_number_verified", "shoe_size"])
                #expect(problems["shoe_size"] == "is not a known claim")
            #expect(try await store.user(id: "u1")?.profile["given_name"] == .string("Ann"), "nothing written")
        }
    }

    @Test("a sensitive claim needs a recent sign-in; a changed phone number loses its verification", arguments: TestBackend.available)
    func sensitive(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await SelfServiceBench(store)
            let inn: [String: JSONValue] = ["inn": .object(["number": .string("500100732259")])]
            let owner2 = try await bench.owner(recent: false)
            let refusal2 = await refusal { () async throws(SelfServiceError) in try await bench.service.updateProfile(owner2, changes: inn, recentSignIn: false) }
            guard let error2 = refusal2, case .recentSignInRequired(let claim) = error2 else { Issue.record("accepted without a recent sign-in"); return }
            #expect(claim == "inn")
            _ = try await bench.service.updateProfile(try await bench.owner(), changes: inn, recentSignIn: true)
            let phone: [String: JSONValue] = ["phone_number": .string("+7 900 000-00-00")]
            _ = try await bench.service.updateProfile(try await bench.owner(recent: false), changes: phone, recentSignIn: false)
            var stored = try #require(try await store.user(id: "u1"))
            stored.profile["phone_number_verified"] = .bool(true)
            #expect(try await store.updateAccount(userID: "u1", profile: stored.profile, roles: [], now: 1, ifVersion: stored.version))
            let changed = try await bench.service.updateProfile(try await bench.owner(recent: false),
                                                                changes: ["phone_number": .string("+7 900 111-11-11")], recentSignIn: false)
            #expect(changed.profile["phone_number_verified"] == nil && changed.profile["inn"] != nil)
            let events = try await store.auditEvents(AuditFilter(userID: "u1"), limit: 10)
            #expect(events.contains { $0.actor == .user && $0.detail?.contains("profile inn") == true })
        }
    }

    @Test("a password change: the current one or a recent sign-in; other sessions end, the request's own stays", arguments: TestBackend.available)
    func password(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await SelfServiceBench(store)
            let now = bench.clock.clock.now()
            for sid in ["mine", "other"] {
                try await store.insertSession(tokenHash: tokenHash(sid), BrowserSession(sid: sid, userID: "u1", authTime: now, amr: ["pwd"],
                                                                                        expiresAt: now + 3600), now: now)
            }
            let owner3 = try await bench.owner(recent: false, sid: "mine")
            let refusal3 = await refusal { () async throws(SelfServiceError) in try await bench.service.changePassword(owner3, current: nil, to: "a new passphrase here", recentSignIn: false) }
            guard let error3 = refusal3, case .recentSignInRequired = error3 else { Issue.record("changed without proof"); return }
            let owner4 = try await bench.owner(recent: false, sid: "mine")
            let refusal4 = await refusal { () async throws(SelfServiceError) in try await bench.service.changePassword(owner4, current: "wrong", to: "a new passphrase here", recentSignIn: false) }
            guard let error4 = refusal4, case .currentPassword(.badCredentials) = error4 else { Issue.record("changed with a wrong password"); return }
            let owner5 = try await bench.owner(sid: "mine")
            let refusal5 = await refusal { () async throws(SelfServiceError) in try await bench.service.changePassword(owner5, current: SelfServiceBench.password, to: "short", recentSignIn: false) }
            guard let error5 = refusal5, case .weakPassword(.tooShort, _) = error5 else { Issue.record("a weak password accepted"); return }
            _ = try await bench.service.changePassword(try await bench.owner(recent: false, sid: "mine"), current: SelfServiceBench.password,
                                                       to: "a new passphrase here", recentSignIn: false)
            #expect(try await store.sessions(userID: "u1", now: now).map(\.sid) == ["mine"])
            let mail = try await store.outboxMessages(recipient: "owner@example.com", limit: 1)
            #expect(mail.first?.subject == "Your password was changed")
        }
    }

    @Test("the password is removed only after a recent sign-in and while another way in remains", arguments: TestBackend.available)
    func removePassword(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await SelfServiceBench(store)
            let owner6 = try await bench.owner(recent: false)
            let refusal6 = await refusal { () async throws(SelfServiceError) in try await bench.service.removePassword(owner6, recentSignIn: false) }
            guard let error6 = refusal6, case .recentSignInRequired = error6 else { Issue.record("removed without a recent sign-in"); return }
            try await store.insert(User(id: "u2", email: "unproven@example.com", emailVerified: false, passwordHash: "scrypt$x",
                                        profile: [:], createdAt: 0, updatedAt: 0))
            let unproven = SelfService.Owner(user: try #require(try await store.user(id: "u2")), authTime: bench.clock.clock.now(),
                                             origin: .init(address: "192.0.2.1"), language: .en)
            let refusal7 = await refusal { () async throws(SelfServiceError) in try await bench.service.removePassword(unproven, recentSignIn: true) }
            guard let error7 = refusal7, case .lastWayIn = error7 else { Issue.record("the last way in removed"); return }
            let removed = try await bench.service.removePassword(try await bench.owner(), recentSignIn: true)
            let stored = try await store.user(id: "u1")
            #expect(removed.passwordHash == nil && stored?.passwordHash == nil)
        }
    }

    @Test("an address change: a code to the new address; a taken one gets a notice and no code matches", arguments: TestBackend.available)
    func emailChange(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await SelfServiceBench(store)
            try await store.insert(User(id: "u2", email: "taken@example.com", emailVerified: true, profile: [:], createdAt: 0, updatedAt: 0))
            let owner8 = try await bench.owner(recent: false)
            let refusal8 = await refusal { () async throws(SelfServiceError) in try await bench.service.startEmailChange(owner8, to: "new@example.com", recentSignIn: false) }
            guard let error8 = refusal8, case .recentSignInRequired = error8 else { Issue.record("started without a recent sign-in"); return }
            let taken = try await bench.service.startEmailChange(try await bench.owner(), to: "Taken@Example.com", recentSignIn: true)
            let notice = try #require(try await store.outboxMessages(recipient: "taken@example.com", limit: 1).first)
            #expect(notice.subject == "Someone tried to move an account to this address")
            for guess in ["00000000", "12345678"] {
                let owner9 = try await bench.owner()
                let refusal9 = await refusal { () async throws(SelfServiceError) in try await bench.service.confirmEmailChange(owner9, id: taken.id, code: guess) }
                guard let error9 = refusal9, case .wrongCode = error9 else { Issue.record("a code matched a taken address's change"); return }
            }
            let pending = try await bench.service.startEmailChange(try await bench.owner(), to: "new@example.com", recentSignIn: true)
            #expect(!pending.target.contains("new@") && pending.target.contains("*"))
            let message = try #require(try await store.outboxMessages(recipient: "new@example.com", limit: 1).first)
            let code = String(try #require(message.text.split(whereSeparator: { !$0.isNumber }).first { $0.count == 8 }))
            let owner10 = try await bench.owner()
            let refusal10 = await refusal { () async throws(SelfServiceError) in try await bench.service.confirmEmailChange(owner10, id: taken.id, code: code) }
            guard let error10 = refusal10, case .expiredChange = error10 else { Issue.record("the earlier change still open"); return }
            let moved = try await bench.service.confirmEmailChange(try await bench.owner(), id: pending.id, code: code)
            #expect(moved.email == "new@example.com" && moved.emailVerified)
            #expect(try await store.user(email: "new@example.com")?.id == "u1")
            let told = try #require(try await store.outboxMessages(recipient: "owner@example.com", limit: 1).first)
            #expect(told.subject == "Your account's email address was changed" && told.text.contains("new@example.com"))
            let owner11 = try await bench.owner()
            let refusal11 = await refusal { () async throws(SelfServiceError) in try await bench.service.confirmEmailChange(owner11, id: pending.id, code: code) }
            guard let error11 = refusal11, case .expiredChange = error11 else { Issue.record("a change used twice"); return }
        }
    }
}
