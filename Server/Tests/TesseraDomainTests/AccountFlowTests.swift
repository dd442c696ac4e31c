import Foundation
import Logging
import Testing
import TesseraCore
import TesseraDomain
import TesseraInfrastructure
import TesseraSQL
import TesseraTestSupport

/// The sign-up and reset flows over a real SQL store and the real outbox, with no HTTP and
/// no wire: typed steps in, ``FlowStep`` and ``FlowFailure`` out.
struct FlowBench {
    let store: SQLStore
    let clock = ManualClock()
    let signUp: SignUp
    let reset: PasswordReset
    let caller: FlowCaller

    /// `store` must hold the client `app` (``make(_:configure:)`` inserts it).
    init(store: SQLStore, configure: (inout NativeAuthSettings) -> Void = { _ in }) throws {
        var settings = NativeAuthSettings()
        configure(&settings)
        self.store = store
        let clock = clock.clock, logger = Logger(label: "test")
        let steps = FlowSteps(settings: settings, store: store, limits: WorkLimits(WorkLimitSettings(), store: store), clock: clock)
        let mailer = OutboxMailer(store: store, sender: try MailAddress(parsing: "tessera@id.example"), domain: "id.example",
                                  clock: clock, signal: DeliverySignal())
        let mail = FlowMail(mailer: mailer, templates: try MailTemplates(), issuerHost: "id.example")
        let codes = EmailCodes(settings: settings, steps: steps, store: store,
                               limits: MailLimits(settings: settings, store: store, clock: clock), mail: mail, clock: clock)
        let passwords = NewPasswords(policy: PasswordPolicy(), hasher: PasswordHasher(parameters: .init(logN: 4, r: 8, p: 1), threads: NIOHashingThreads()), steps: steps)
        signUp = SignUp(settings: settings, enumerationProtection: true, store: store, steps: steps, codes: codes, passwords: passwords,
                        clock: clock, logger: logger)
        reset = PasswordReset(settings: settings, enumerationProtection: true, store: store, steps: steps, codes: codes,
                              passwords: passwords, mail: mail, clock: clock, logger: logger)
        caller = FlowCaller(client: Client(id: "app", name: "App", authMethod: .none, redirectURIs: ["https://app.example/cb"],
                                           grantTypes: [GrantType.authorizationCode], scopes: ScopeSet(["openid"]),
                                           createdAt: 1_800_000_000),
                            address: "192.0.2.1", language: .en)
    }

    static func make(_ store: SQLStore, configure: (inout NativeAuthSettings) -> Void = { _ in }) async throws -> FlowBench {
        let bench = try FlowBench(store: store, configure: configure)
        if try await store.client(id: bench.caller.client.id) == nil { try await store.insert(bench.caller.client) }
        return bench
    }

    /// The code in the last email the outbox holds for `address`.
    func lastCode(to address: String) async throws -> String {
        let message = try #require(try await store.outboxMessages(recipient: address, limit: 1).first)
        let digits = message.text.split(whereSeparator: { !$0.isNumber }).first { $0.count == NativeAuthSettings().codeLength }
        return String(try #require(digits))
    }
}

func token(of step: FlowStep) -> String? {
    switch step {
    case .started(let token), .codeSent(let token, _), .passwordRequested(let token), .passwordRequired(let token),
         .attributesRequired(let token, _), .verified(let token, _), .completed(let token, _), .resetSubmitted(let token, _),
         .resetSucceeded(let token), .secondFactorMethods(let token, _), .secondFactorChallenge(let token, _):
        token
    case .browserRequired:
        nil
    }
}

@Suite("Account flows, typed, over the real store")
struct AccountFlowTests {
    @Test("a sign-up by code: the code mailed, a wrong one counted, the right one creates the verified account", arguments: TestBackend.available)
    func signUpByCode(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await FlowBench.make(store)
            let started = try await bench.signUp.start(username: " Anna@Example.com ", challenges: [.oob, .redirect], password: nil,
                                                       attributes: nil, caller: bench.caller)
            let sent = try await bench.signUp.challenge(token: try #require(token(of: started)), challenges: nil, caller: bench.caller)
            guard case .codeSent(let codeToken, let where_) = sent else { Issue.record("no code: \(sent)"); return }
            #expect(where_.target == "a**a@e*****e.com" && where_.codeLength == 8)
            let code = try await bench.lastCode(to: "anna@example.com")

            await #expect(throws: FlowFailure.wrongCode(attemptsLeft: 4)) {
                try await bench.signUp.submitCode(token: codeToken, code: "00000000" == code ? "11111111" : "00000000", caller: bench.caller)
            }
            let done = try await bench.signUp.submitCode(token: codeToken, code: code, caller: bench.caller)
            guard case .completed = done else { Issue.record("not completed: \(done)"); return }
            let user = try #require(try await store.user(email: "anna@example.com"))
            #expect(user.emailVerified && user.passwordHash == nil)
            // The token of the step before is used up.
            await #expect(throws: FlowFailure.unknownFlow) {
                try await bench.signUp.submitCode(token: codeToken, code: code, caller: bench.caller)
            }
        }
    }

    @Test("an address with an account gets the same steps, a notice instead of a code, and no code matches", arguments: TestBackend.available)
    func signUpOnExistingAccount(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await FlowBench.make(store)
            try await store.insert(User(id: "u1", email: "anna@example.com", emailVerified: true, passwordHash: nil, profile: [:],
                                        createdAt: 1_800_000_000, updatedAt: 1_800_000_000))
            let started = try await bench.signUp.start(username: "anna@example.com", challenges: [.oob, .redirect], password: nil,
                                                       attributes: nil, caller: bench.caller)
            let sent = try await bench.signUp.challenge(token: try #require(token(of: started)), challenges: nil, caller: bench.caller)
            guard case .codeSent(let codeToken, _) = sent else { Issue.record("no code step: \(sent)"); return }
            let notice = try #require(try await store.outboxMessages(recipient: "anna@example.com", limit: 1).first)
            #expect(notice.metadata["template"] == Email.accountExists.templateName)
            await #expect(throws: FlowFailure.wrongCode(attemptsLeft: 4)) {
                try await bench.signUp.submitCode(token: codeToken, code: "12345678", caller: bench.caller)
            }
        }
    }

    @Test("codes: the resend interval, the entry limit, expiry", arguments: TestBackend.available)
    func codeLimits(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await FlowBench.make(store) { $0.maxCodeAttempts = 2 }
            let started = try await bench.signUp.start(username: "bob@example.com", challenges: [.oob, .redirect], password: nil,
                                                       attributes: nil, caller: bench.caller)
            let sent = try await bench.signUp.challenge(token: try #require(token(of: started)), challenges: nil, caller: bench.caller)
            let codeToken = try #require(token(of: sent))
            await #expect(throws: FlowFailure.resendTooSoon(ago: 0, wait: 60)) {
                try await bench.signUp.challenge(token: codeToken, challenges: nil, caller: bench.caller)
            }
            let code = try await bench.lastCode(to: "bob@example.com")
            let wrong = code == "00000000" ? "11111111" : "00000000"
            await #expect(throws: FlowFailure.wrongCode(attemptsLeft: 1)) {
                try await bench.signUp.submitCode(token: codeToken, code: wrong, caller: bench.caller)
            }
            await #expect(throws: FlowFailure.wrongCode(attemptsLeft: 0)) {
                try await bench.signUp.submitCode(token: codeToken, code: wrong, caller: bench.caller)
            }
            await #expect(throws: FlowFailure.tooManyWrongCodes) {
                try await bench.signUp.submitCode(token: codeToken, code: code, caller: bench.caller)
            }
            bench.clock.advance(by: 61)
            let again = try await bench.signUp.challenge(token: codeToken, challenges: nil, caller: bench.caller)
            bench.clock.advance(by: 601)
            await #expect(throws: FlowFailure.expiredFlow) {
                try await bench.signUp.submitCode(token: try #require(token(of: again)), code: code, caller: bench.caller)
            }
        }
    }

    @Test("a reset: the code proves the address, the policy checks the password, the account's sessions end", arguments: TestBackend.available)
    func reset(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let account = try await SquattedAccount(in: store)
            let bench = try await FlowBench.make(store)
            let started = try await bench.reset.start(username: account.user.email, challenges: [.oob, .redirect], caller: bench.caller)
            let sent = try await bench.reset.challenge(token: try #require(token(of: started)), challenges: nil, caller: bench.caller)
            let code = try await bench.lastCode(to: account.user.email)
            let verified = try await bench.reset.submitCode(token: try #require(token(of: sent)), code: code, caller: bench.caller)
            guard case .verified(let passwordToken, _) = verified else { Issue.record("not verified: \(verified)"); return }
            do {
                _ = try await bench.reset.submitPassword(token: passwordToken, password: "password", caller: bench.caller)
                Issue.record("a common password was accepted")
            } catch FlowFailure.weakPassword(let violation, let reason) {
                #expect(violation == .tooWeak || violation == .banned || violation == .tooShort)
                #expect(!reason.isEmpty)
            }
            let submitted = try await bench.reset.submitPassword(token: passwordToken, password: "a long and unusual phrase 42",
                                                                 caller: bench.caller)
            guard case .resetSubmitted = submitted else { Issue.record("not submitted: \(submitted)"); return }
            let user = try #require(try await store.user(id: account.user.id))
            #expect(user.passwordHash != nil && user.passwordHash != "scrypt$squatter")
            #expect(try await store.session(tokenHash: tokenHash(account.sessionToken), now: SquattedAccount.now) == nil)
        }
    }

    @Test("the app that can't show a code is sent to the browser; a non-address is refused", arguments: TestBackend.available)
    func browserAndAddress(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let bench = try await FlowBench.make(store)
            #expect(try await bench.signUp.start(username: "c@example.com", challenges: [.password, .redirect], password: nil,
                                                 attributes: nil, caller: bench.caller) == .browserRequired)
            await #expect(throws: FlowFailure.invalidAddress) {
                try await bench.signUp.start(username: "not an address", challenges: [.oob, .redirect], password: nil, attributes: nil,
                                             caller: bench.caller)
            }
        }
    }
}
