import Foundation
import Logging
import Testing
import TesseraCore
import TesseraDomain
import TesseraSQL
import TesseraTestSupport

/// An account set up without proof of its address: a squatter's password, an identity linked
/// on an address the upstream had not verified, a browser session and a grant.
struct SquattedAccount {
    static let now: Int64 = 1_800_000_000
    let user: User
    let sessionToken = "the squatter's session cookie"
    let grantID = "the squatter's grant"

    init(in store: SQLStore) async throws {
        let now = Self.now
        user = User(id: "u1", email: "owner@example.com", emailVerified: false, passwordHash: "scrypt$squatter", profile: [:],
                    createdAt: now, updatedAt: now)
        try await store.insert(Client(id: "app", name: "App", authMethod: .none, redirectURIs: ["https://app.example/cb"],
                                      grantTypes: [GrantType.authorizationCode], scopes: ScopeSet(["openid"]), createdAt: now))
        try await store.insert(user)
        _ = try await store.link(UpstreamIdentity(providerID: "oidc", subject: "squatter", userID: user.id,
                                                  email: user.email, proven: false, createdAt: now, lastUsedAt: now))
        _ = try await store.link(UpstreamIdentity(providerID: "apple", subject: "owner", userID: user.id,
                                                  email: user.email, proven: true, createdAt: now, lastUsedAt: now))
        try await store.insertSession(tokenHash: tokenHash(sessionToken),
                                      BrowserSession(sid: "s1", userID: user.id, authTime: now, amr: ["pwd"], expiresAt: now + 3600),
                                      now: now)
        try await store.insertGrant(Grant(id: grantID, clientID: "app", userID: user.id, scope: ScopeSet(["openid"]), amr: ["pwd"],
                                          createdAt: now, expiresAt: now + 86_400), refreshToken: nil)
    }
}

@Suite("Account rules, in the domain's own transactions")
struct AccountRulesTests {
    @Test("the address just proven: verified, the password and unproven identities gone, every session and grant ended", arguments: TestBackend.available)
    func addressProven(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let account = try await SquattedAccount(in: store)
            let now = SquattedAccount.now + 60
            let (user, secured) = try await store.transaction { tx in
                try await AccountRules.addressProven(account.user, now: now, in: tx)
            }
            #expect(secured && user.emailVerified && user.passwordHash == nil)
            let stored = try #require(try await store.user(id: account.user.id))
            #expect(stored.emailVerified && stored.passwordHash == nil)
            #expect(try await store.identities(userID: stored.id).map(\.providerID) == ["apple"], "the proven identity stays")
            #expect(try await store.session(tokenHash: tokenHash(account.sessionToken), now: now) == nil)
            #expect(try await store.grant(id: account.grantID)?.revokedAt != nil)
            let events = try await store.auditEvents(AuditFilter(userID: stored.id), limit: 10)
            #expect(events.map(\.kind) == [.addressProven] && events.first?.at == now && events.first?.detail == "password removed",
                    "the audit event commits with the change")

            // A second proof changes nothing.
            let again = try await store.transaction { tx in try await AccountRules.addressProven(stored, now: now + 1, in: tx) }
            #expect(!again.secured)
            #expect(try await store.auditEvents(AuditFilter(userID: stored.id), limit: 10).count == 1)
        }
    }

    @Test("a rule that fails half-way leaves nothing behind: the transaction rolls back", arguments: TestBackend.available)
    func rollsBack(on backend: TestBackend) async throws {
        struct Interrupted: Error {}
        try await withStore(backend) { store in
            let account = try await SquattedAccount(in: store)
            let now = SquattedAccount.now + 60
            await #expect(throws: Interrupted.self) {
                try await store.transaction { tx in
                    _ = try await AccountRules.addressProven(account.user, now: now, in: tx)
                    throw Interrupted()
                }
            }
            let stored = try #require(try await store.user(id: account.user.id))
            #expect(!stored.emailVerified && stored.passwordHash == "scrypt$squatter")
            #expect(try await store.identities(userID: stored.id).count == 2)
            #expect(try await store.session(tokenHash: tokenHash(account.sessionToken), now: now) != nil)
            #expect(try await store.grant(id: account.grantID)?.revokedAt == nil)
            #expect(try await store.auditEvents(AuditFilter(), limit: 10).isEmpty, "nor an audit event of what did not happen")
        }
    }

    @Test("a reset on a verified account replaces the password and ends every session and grant", arguments: TestBackend.available)
    func passwordReset(on backend: TestBackend) async throws {
        try await withStore(backend) { store in
            let account = try await SquattedAccount(in: store)
            try await store.markEmailVerified(userID: account.user.id, now: SquattedAccount.now)
            let verified = try #require(try await store.user(id: account.user.id))
            let now = SquattedAccount.now + 60
            try await store.transaction { tx in
                try await AccountRules.passwordReset(verified, passwordHash: "scrypt$new", now: now, in: tx)
            }
            #expect(try await store.user(id: verified.id)?.passwordHash == "scrypt$new")
            #expect(try await store.session(tokenHash: tokenHash(account.sessionToken), now: now) == nil)
            #expect(try await store.grant(id: account.grantID)?.revokedAt != nil)
            #expect(try await store.identities(userID: verified.id).count == 2, "a verified account's identities stay")
            #expect(try await store.auditEvents(AuditFilter(userID: verified.id), limit: 10).map(\.kind) == [.passwordReset])
        }
    }
}

@Suite("Scope policy")
struct ScopePolicyTests {
    static let client = Client(id: "app", name: "App", authMethod: .none, redirectURIs: [], grantTypes: [],
                               scopes: ScopeSet(["openid", "email", "offline_access", "api"]), createdAt: 0)

    @Test("at /authorize a known scope the client lacks is refused and an unknown one ignored")
    func authorization() throws {
        #expect(try ScopePolicy.authorization(ScopeSet(parsing: "openid email made-up"), client: Self.client) == ScopeSet(["openid", "email"]))
        #expect(throws: ScopeRefusal.notAllowed("phone")) { try ScopePolicy.authorization(ScopeSet(parsing: "openid phone"), client: Self.client) }
    }

    @Test("without a browser only the client's scopes, never a sensitive one")
    func withoutConsent() throws {
        #expect(try ScopePolicy.withoutConsent(ScopeSet(parsing: "openid email"), client: Self.client) == ScopeSet(["openid", "email"]))
        #expect(throws: ScopeRefusal.notAllowed("made-up")) { try ScopePolicy.withoutConsent(ScopeSet(parsing: "made-up"), client: Self.client) }
        var sensitive = Self.client
        let scope = try #require(ScopeCatalogue.all.first { $0.sensitive }).name
        sensitive.scopes = ScopeSet([scope])
        #expect(throws: ScopeRefusal.needsConsent(scope)) { try ScopePolicy.withoutConsent(ScopeSet([scope]), client: sensitive) }
    }

    @Test("client credentials get the scopes that need no user; a refresh never widens")
    func clientCredentialsAndRefresh() throws {
        #expect(try ScopePolicy.clientCredentials(nil, client: Self.client) == ScopeSet(["email", "api"]))
        #expect(throws: ScopeRefusal.needsUser) { try ScopePolicy.clientCredentials(ScopeSet(["openid"]), client: Self.client) }
        #expect(try ScopePolicy.refresh(nil, granted: ScopeSet(["openid", "email"])) == ScopeSet(["openid", "email"]))
        #expect(try ScopePolicy.refresh(ScopeSet(["email"]), granted: ScopeSet(["openid", "email"])) == ScopeSet(["email"]))
        #expect(throws: ScopeRefusal.exceedsGrant) { try ScopePolicy.refresh(ScopeSet(["api"]), granted: ScopeSet(["email"])) }
    }
}
