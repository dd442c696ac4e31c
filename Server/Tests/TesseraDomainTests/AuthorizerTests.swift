import Foundation
import Logging
import Testing
import TesseraCore
import TesseraDomain
import TesseraSQL
import TesseraTestSupport

/// An `Authorizer` over a real store, with a clock the test moves: a confidential client `web`
/// and a first-party `partner`, and Alice.
struct AuthorizationHarness {
    static let redirect = "https://app.example/cb"
    let store: SQLStore
    let time: ManualClock
    let authorizer: Authorizer
    let alice: User

    static func with(_ backend: TestBackend = .sqlite, _ body: (AuthorizationHarness) async throws -> Void) async throws {
        try await withStore(backend) { store async throws in
            let time = ManualClock()
            let clock = time.clock
            let issuer = try await tokenIssuer(store, clock: clock)
            let audit = AuditTrail(store: store, clock: clock, logger: Logger(label: "test"))
            let authorizer = Authorizer(issuer: "https://id.example", clients: store, users: store, consents: store, interactions: store,
                                        grants: store, crossApp: store, factors: store, keys: issuer.keys, tokenIssuer: issuer, clock: clock, codeLifetime: 60,
                                        interactionLifetime: 600, limits: WorkLimits(WorkLimitSettings(), store: store), audit: audit)
            for (id, firstParty) in [("web", false), ("partner", true)] {
                try await store.insert(Client(id: id, name: id, secretHash: ClientSecretHash.make(String(repeating: "s", count: 32)),
                                              authMethod: .clientSecretBasic, redirectURIs: [redirect],
                                              grantTypes: [GrantType.authorizationCode, GrantType.refreshToken],
                                              scopes: ScopeSet(["openid", "email", "profile"]), firstParty: firstParty, createdAt: 1))
            }
            let alice = User(id: "u-alice", email: "alice@example.com", emailVerified: true, profile: [:], createdAt: 1, updatedAt: 1)
            try await store.insert(alice)
            try await body(AuthorizationHarness(store: store, time: time, authorizer: authorizer, alice: alice))
        }
    }

    /// The token issuer of `https://id.example`, its signing key (ES256) made in `store`.
    static func tokenIssuer(_ store: SQLStore, clock: WallClock) async throws -> TokenIssuer {
        let keys = KeyRing(store: store, algorithm: .es256, gracePeriod: 0,
                           masterKey: MasterKey(box: try SecretBox(masterKey: String(repeating: "ab", count: 32)), source: "test"),
                           clock: clock)
        try await keys.start()
        return TokenIssuer(issuer: "https://id.example", keys: keys, clock: clock, accessTokenLifetime: 300, idTokenLifetime: 300,
                           refreshTokenLifetime: 3600, pairwiseSecret: "pairwise", familyTokens: FamilyTokens(key: "family-token-key"),
                           issuesFamilyTokens: true)
    }

    /// A valid request's parameters for `client`, with `extra` ones.
    func parameters(client: String = "web", _ extra: [(String, String)] = []) -> RequestParameters {
        RequestParameters([("response_type", "code"), ("client_id", client), ("redirect_uri", Self.redirect),
                           ("scope", "openid email"), ("state", "s1")] + extra)
    }

    func validated(_ parameters: RequestParameters) async throws -> (AuthorizationRequest, Client) {
        switch try await authorizer.validate(parameters) {
        case .success(let valid): return valid
        case .failure(let failure): throw failure
        }
    }

    /// A browser session of Alice's, signed in `ago` seconds before now.
    func session(signedIn ago: Int64 = 0) -> BrowserSession {
        let now = time.clock.now()
        return BrowserSession(sid: "sid-1", userID: alice.id, authTime: now - ago, amr: ["pwd"], expiresAt: now + 3600)
    }
}

extension AuthorizationOutcome {
    /// The parameters sent back to the client, by name (empty for anything but a response).
    var answer: [String: String] {
        guard case .respond(_, let parameters) = self else { return [:] }
        return Dictionary(parameters, uniquingKeysWith: { first, _ in first })
    }

    var isLogin: Bool { if case .login = self { true } else { false } }
    var consentScopes: ScopeSet? { if case .consent(_, _, _, _, let scopes, _) = self { scopes } else { nil } }
}

/// ``Authorizer``: the request's checks in their order, and the decision after them.
@Suite("Authorizer")
struct AuthorizerTests {
    @Test("an unknown client or redirect URI is an error page; once they are trusted, errors go back with state and iss")
    func checksAndWhereErrorsGo() async throws {
        try await AuthorizationHarness.with { h in
            guard case .failure(.page(let unknown)) = try await h.authorizer.validate(h.parameters(client: "nobody")) else {
                Issue.record("an unknown client must not be redirected to"); return
            }
            #expect(unknown.code == .invalidRequest || unknown.code == .invalidClient)
            let elsewhere = RequestParameters([("response_type", "code"), ("client_id", "web"), ("redirect_uri", "https://evil.example/cb"),
                                               ("scope", "openid")])
            guard case .failure(.page) = try await h.authorizer.validate(elsewhere) else {
                Issue.record("an unregistered redirect URI must not be redirected to"); return
            }
            guard case .failure(.redirect(let target, let error)) = try await h.authorizer.validate(h.parameters([("prompt", "bogus")])) else {
                Issue.record("a bad prompt goes back to the client"); return
            }
            #expect(target.redirectURI == AuthorizationHarness.redirect && target.state == "s1" && error.code == .invalidRequest)
        }
    }

    @Test("the decision: sign in, then consent, then a code; prompt=none answers login_required or consent_required instead")
    func decision() async throws {
        try await AuthorizationHarness.with { h in
            let (request, client) = try await h.validated(h.parameters())
            #expect(try await h.authorizer.decide(request, client: client, session: nil, signedInNow: false).isLogin)
            let consent = try await h.authorizer.decide(request, client: client, session: h.session(), signedInNow: true)
            #expect(consent.consentScopes == ScopeSet(["openid", "email"]))
            let (silent, _) = try await h.validated(h.parameters([("prompt", "none")]))
            #expect(try await h.authorizer.decide(silent, client: client, session: nil, signedInNow: false).answer["error"] == "login_required")
            #expect(try await h.authorizer.decide(silent, client: client, session: h.session(), signedInNow: false).answer["error"]
                        == "consent_required")
            let allowed = try await h.authorizer.consent(request, client: client, by: h.session().authentication, allowed: true)
            #expect(allowed.answer["code"] != nil && allowed.answer["state"] == "s1" && allowed.answer["iss"] == "https://id.example")
            // Consented once: the next request gets its code without a page.
            #expect(try await h.authorizer.decide(request, client: client, session: h.session(signedIn: 60), signedInNow: false)
                        .answer["code"] != nil)
            let declined = try await h.authorizer.consent(request, client: client, by: h.session().authentication, allowed: false)
            #expect(declined.answer["error"] == "access_denied")
        }
    }

    @Test("max_age: an older sign-in goes back to the login page; a sign-in made for the request answers it")
    func maxAge() async throws {
        try await AuthorizationHarness.with { h in
            let (request, client) = try await h.validated(h.parameters(client: "partner", [("max_age", "300")]))
            #expect(try await h.authorizer.decide(request, client: client, session: h.session(signedIn: 301), signedInNow: false).isLogin)
            #expect(try await h.authorizer.decide(request, client: client, session: h.session(signedIn: 10), signedInNow: false)
                        .answer["code"] != nil, "first-party: no consent page")
            let (now, _) = try await h.validated(h.parameters(client: "partner", [("max_age", "0")]))
            #expect(try await h.authorizer.decide(now, client: client, session: h.session(), signedInNow: true).answer["code"] != nil)
        }
    }
}
