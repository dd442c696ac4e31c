import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraSQL

/// An account set up by a squatter: the victim's address, unverified, with the squatter's
/// password, a browser session, a refresh token and an upstream identity linked on the
/// unverified address.
struct SquattedAccount {
    let user: User
    let sessionHash: String
    let refreshToken: String

    static let password = "squatter's passphrase"

    static func make(_ app: NativeApp, email: String = "victim@example.com") async throws -> SquattedAccount {
        let provider = app.provider
        let user = try await provider.createUser(email: email, password: password, emailVerified: false)
        let now = provider.clock.now()
        let sessionHash = tokenHash("squatter-session")
        try await provider.store.insertSession(tokenHash: sessionHash, BrowserSession(
            sid: "squatter-sid", userID: user.id, authTime: now, amr: ["pwd"], expiresAt: now + 3600), now: now)
        _ = try await provider.store.link(UpstreamIdentity(providerID: "corp", subject: "squatter", userID: user.id, email: email,
                                                           proven: false, createdAt: now, lastUsedAt: now))
        let challenge = try await app.startSignIn(email)
        let signedIn = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(challenge)), ("grant_type", "password"),
                                                                 ("password", password), ("scope", "openid offline_access")])
        return SquattedAccount(user: user, sessionHash: sessionHash, refreshToken: try #require(signedIn.json["refresh_token"]?.stringValue))
    }

    /// Checks that nothing the squatter set up works any more.
    func expectLockedOut(_ app: NativeApp) async throws {
        let provider = app.provider
        let secured = try #require(try await provider.store.user(id: user.id))
        #expect(secured.emailVerified, "the address is verified")
        #expect(secured.passwordHash == nil, "the squatter's password is gone")
        #expect(try await provider.store.session(tokenHash: sessionHash, now: provider.clock.now()) == nil, "the session ended")
        #expect(try await provider.store.identities(userID: user.id).isEmpty, "the identity linked on the unverified address is gone")
        let refreshed = try await app.post("/oauth2/v2.0/token", [("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
        #expect(refreshed.json["error"] == "invalid_grant", "the squatter's refresh token is revoked")
        let again = try await app.startSignIn(user.email)
        let old = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(again)), ("grant_type", "password"),
                                                            ("password", Self.password), ("scope", "openid")])
        #expect(old.json["error_codes"] == .array([50126]), "the squatter's password no longer signs in")
    }
}

@Suite("Security: the address was just proven")
struct AddressProofTests {
    @Test("a code sign-in to an unverified account removes the password, unproven identities, sessions and grants")
    func codeSignInSecuresAccount() async throws {
        try await withNativeApp { app in
            let squatted = try await SquattedAccount.make(app)
            let challenge = try await app.startSignIn("victim@example.com", challengeTypes: "oob redirect")
            let owner = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(challenge)), ("grant_type", "oob"),
                                                                  ("oob", try await app.code(for: "victim@example.com")),
                                                                  ("scope", "openid offline_access")])
            #expect(owner.status == .ok, "\(owner.body.text)")
            let ownerRefresh = try #require(owner.json["refresh_token"]?.stringValue)
            try await squatted.expectLockedOut(app)
            // The owner's own tokens, issued after the rule ran, keep working.
            let refreshed = try await app.post("/oauth2/v2.0/token", [("grant_type", "refresh_token"), ("refresh_token", ownerRefresh)])
            #expect(refreshed.status == .ok, "\(refreshed.body.text)")
        }
    }

    @Test("a password reset by code on an unverified account ends the squatter's identities, sessions and grants too")
    func resetSecuresAccount() async throws {
        try await withNativeApp { app in
            let squatted = try await SquattedAccount.make(app)
            let start = try await app.post("/resetpassword/v1.0/start", [("username", "victim@example.com"), ("challenge_type", "oob redirect")])
            let challenge = try await app.post("/resetpassword/v1.0/challenge", [("continuation_token", try token(start))])
            let verified = try await app.post("/resetpassword/v1.0/continue", [("continuation_token", try token(challenge)), ("grant_type", "oob"),
                                                                              ("oob", try await app.code(for: "victim@example.com"))])
            let submitted = try await app.post("/resetpassword/v1.0/submit", [("continuation_token", try token(verified)),
                                                                             ("new_password", "the owner's own passphrase")])
            #expect(submitted.status == .ok, "\(submitted.body.text)")
            let user = try #require(try await app.provider.store.user(id: squatted.user.id))
            #expect(user.emailVerified && user.passwordHash != nil)
            #expect(try await app.provider.store.session(tokenHash: squatted.sessionHash, now: app.provider.clock.now()) == nil)
            #expect(try await app.provider.store.identities(userID: user.id).isEmpty)
            let refreshed = try await app.post("/oauth2/v2.0/token", [("grant_type", "refresh_token"), ("refresh_token", squatted.refreshToken)])
            #expect(refreshed.json["error"] == "invalid_grant")
        }
    }

    @Test("an email link to an unverified account applies the same rule")
    func emailLinkSecuresAccount() async throws {
        try await withNativeApp { app in
            let squatted = try await SquattedAccount.make(app)
            try await app.sendLink("victim@example.com")
            let owner = try await app.complete("victim@example.com", code: try await app.oobCode(for: "victim@example.com"))
            #expect(owner.json["is_new_user"] == false, "\(owner.body.text)")
            try await squatted.expectLockedOut(app)
        }
    }

    @Test("proving the address of a verified account changes nothing: its sessions and grants stay")
    func verifiedAccountUntouched() async throws {
        try await withNativeApp { app in
            let challenged = try await app.startSignIn("alice@example.com")
            let before = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(challenged)), ("grant_type", "password"),
                                                                   ("password", "correct horse battery"), ("scope", "openid offline_access")])
            let refresh = try #require(before.json["refresh_token"]?.stringValue)
            let challenge = try await app.startSignIn("alice@example.com", challengeTypes: "oob redirect")
            let byCode = try await app.post("/oauth2/v2.0/token", [("continuation_token", try token(challenge)), ("grant_type", "oob"),
                                                                   ("oob", try await app.code(for: "alice@example.com")), ("scope", "openid")])
            #expect(byCode.status == .ok)
            #expect(try await app.provider.store.user(email: "alice@example.com")?.passwordHash != nil)
            let refreshed = try await app.post("/oauth2/v2.0/token", [("grant_type", "refresh_token"), ("refresh_token", refresh)])
            #expect(refreshed.status == .ok, "a code sign-in on another device signs nobody out")
        }
    }

    @Test("the rule runs in one transaction: when a later step fails, nothing of it stays")
    func ruleIsAtomic() async throws {
        try await withProvider { provider async throws in
            let user = try await provider.createUser(email: "victim@example.com", password: "squatter's passphrase", emailVerified: false)
            struct Abort: Error {}
            await #expect(throws: Abort.self) {
                try await provider.store.transaction { tx in
                    _ = try await AccountRules.addressProven(user, now: 1, in: tx)
                    throw Abort()
                }
            }
            let unchanged = try #require(try await provider.store.user(id: user.id))
            #expect(!unchanged.emailVerified && unchanged.passwordHash != nil)
        }
    }
}
