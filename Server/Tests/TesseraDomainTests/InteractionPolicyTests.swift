import Foundation
import Testing
import TesseraCore
import TesseraDomain
import TesseraSQL
import TesseraTestSupport

/// ``InteractionPolicy``: whether a known sign-in answers a request, and what else it needs,
/// the one rule behind the hosted pages, hand-off tickets and authenticator approvals.
@Suite("Interaction policy")
struct InteractionPolicyTests {
    static let now: Int64 = 1_800_000_000

    let client = Client(id: "app", name: "App", authMethod: .none, redirectURIs: ["https://app.example/cb"],
                        grantTypes: [GrantType.authorizationCode], scopes: ScopeSet(["openid", "email", "profile"]), createdAt: 1)
    let alice = User(id: "u-alice", email: "alice@example.com", emailVerified: true, profile: [:], createdAt: 1, updatedAt: 1)

    /// The policy over `store`, which gets the client and Alice.
    func policy(_ store: SQLStore) async throws -> InteractionPolicy {
        try await store.insert(client)
        try await store.insert(alice)
        let clock = WallClock { Self.now }
        return InteractionPolicy(tokenIssuer: try await AuthorizationHarness.tokenIssuer(store, clock: clock), consents: store,
                                 secondFactors: SecondFactorPolicy(factors: store), clock: clock)
    }

    func request(scope: String = "openid email", prompt: [String] = [], maxAge: Int64? = nil, hint: String? = nil) -> AuthorizationRequest {
        AuthorizationRequest(clientID: "app", redirectURI: "https://app.example/cb", responseMode: .query, state: nil, nonce: nil,
                             scope: ScopeSet(parsing: scope), claims: nil, claimScopes: ScopeSet([]), codeChallenge: nil, prompt: prompt,
                             maxAge: maxAge, loginHint: nil, hintedSubject: hint, uiLocales: [])
    }

    @Test("nobody signed in, or a disabled account: sign in; prompt=none makes it login_required")
    func signInFirst() async throws {
        try await withStore { store in
            let policy = try await policy(store)
            let none = request(prompt: ["none"])
            #expect(try await policy.need(request(), client: client, signIn: nil) == .signIn("The user must sign in."))
            #expect(policy.refusal(try await policy.need(none, client: client, signIn: nil), none)?.code == .loginRequired)
            var disabled = alice
            disabled.disabledAt = Self.now - 10
            let need = try await policy.need(request(), client: client, signIn: .init(user: disabled, authTime: Self.now, amr: ["pwd"]))
            #expect(need == .signIn("The account is disabled."))
            #expect(policy.refusal(need, request()) == nil, "the login page may be shown")
            #expect(policy.refusal(need, request(), reauthenticate: false)?.code == .loginRequired, "but not again after a sign-in made for the request")
        }
    }

    @Test("prompt=login and max_age want a sign-in made for this request; one made since answers them")
    func freshness() async throws {
        try await withStore { store in
            let policy = try await policy(store)
            try await store.recordConsent(userID: alice.id, clientID: "app", scopes: ScopeSet(["openid", "email"]), now: Self.now)
            let old = InteractionPolicy.SignIn(user: alice, authTime: Self.now - 600, amr: ["pwd"])
            #expect(policy.reauthentication(request(), client: client, signIn: old) == nil)
            #expect(policy.reauthentication(request(prompt: ["login"]), client: client, signIn: old)?.contains("prompt=login") == true)
            #expect(policy.reauthentication(request(prompt: ["select_account"]), client: client, signIn: old) != nil)
            #expect(policy.reauthentication(request(prompt: ["create"]), client: client, signIn: old)?.contains("prompt=create") == true)
            #expect(policy.refusal(.signIn("x"), request(prompt: ["create"])) == nil, "the sign-up page may be shown")
            #expect(policy.reauthentication(request(maxAge: 600), client: client, signIn: old)?.contains("max_age") == true)
            #expect(policy.reauthentication(request(maxAge: 601), client: client, signIn: old) == nil)
            // Made after the request arrived (an approval after the push, a sign-in on the login page): fresh, even for max_age=0.
            let since = InteractionPolicy.SignIn(user: alice, authTime: Self.now - 5, amr: ["pwd"], freshSince: Self.now - 30)
            #expect(try await policy.need(request(prompt: ["login"], maxAge: 0), client: client, signIn: since) == .nothing)
            let before = InteractionPolicy.SignIn(user: alice, authTime: Self.now - 60, amr: ["pwd"], freshSince: Self.now - 30)
            #expect(policy.reauthentication(request(prompt: ["login"]), client: client, signIn: before) != nil)
        }
    }

    @Test("a request for another user (id_token_hint, claims sub) is never answered by this sign-in, fresh or not")
    func anotherUser() async throws {
        try await withStore { store in
            let policy = try await policy(store)
            let fresh = InteractionPolicy.SignIn(user: alice, authTime: Self.now, amr: ["pwd"], freshSince: Self.now)
            #expect(policy.reauthentication(request(hint: "u-bob"), client: client, signIn: fresh)?.contains("id_token_hint") == true)
            #expect(policy.reauthentication(request(hint: alice.id), client: client, signIn: fresh) == nil)
            var demanding = request()
            demanding.claims = try JSONDecoder().decode(ClaimsRequest.self, from: Data(#"{"id_token":{"sub":{"value":"u-bob"}}}"#.utf8))
            #expect(policy.reauthentication(demanding, client: client, signIn: fresh)?.contains("claims") == true)
        }
    }

    @Test("consent: asked for scopes not yet allowed, all of them with prompt=consent, only sensitive ones for first-party clients; prompt=none makes it consent_required")
    func consent() async throws {
        try await withStore { store in
            let policy = try await policy(store)
            let signIn = InteractionPolicy.SignIn(user: alice, authTime: Self.now, amr: ["pwd"])
            #expect(try await policy.need(request(), client: client, signIn: signIn) == .consent(ScopeSet(["openid", "email"])))
            try await store.recordConsent(userID: alice.id, clientID: "app", scopes: ScopeSet(["openid"]), now: Self.now)
            #expect(try await policy.need(request(), client: client, signIn: signIn) == .consent(ScopeSet(["email"])))
            #expect(try await policy.need(request(prompt: ["consent"]), client: client, signIn: signIn) == .consent(ScopeSet(["openid", "email"])))
            let none = request(prompt: ["none"])
            #expect(policy.refusal(try await policy.need(none, client: client, signIn: signIn), none)?.code == .consentRequired)
            var firstParty = client
            firstParty.firstParty = true
            #expect(try await policy.need(request(), client: firstParty, signIn: signIn) == .nothing)
            #expect(try await policy.need(request(scope: "openid address"), client: firstParty, signIn: signIn) == .consent(ScopeSet(["address"])))
            try await store.recordConsent(userID: alice.id, clientID: "app", scopes: ScopeSet(["email"]), now: Self.now)
            #expect(try await policy.need(request(), client: client, signIn: signIn) == .nothing)
        }
    }

    @Test("a second factor: asked of someone who turned it on, for a client that requires it and a request demanding mfa; never for a voluntary mfa from someone without one")
    func secondFactor() async throws {
        try await withStore { store in
            let policy = try await policy(store)
            try await store.recordConsent(userID: alice.id, clientID: "app", scopes: ScopeSet(["openid", "email"]), now: Self.now)
            let password = InteractionPolicy.SignIn(user: alice, authTime: Self.now, amr: ["pwd"])
            var asking = request()
            asking.claims = ClaimsRequest(userinfo: nil, idToken: ["acr": .init(values: [.string(AuthenticationContext.multiFactor)])])
            #expect(try await policy.need(asking, client: client, signIn: password) == .nothing, "voluntary, and nothing to give it with")
            var demanding = request()
            demanding.claims = ClaimsRequest(userinfo: nil, idToken: ["acr": .init(essential: true, values: [.string(AuthenticationContext.multiFactor)])])
            let demanded = try await policy.need(demanding, client: client, signIn: password)
            #expect(demanded == .secondFactor(.init(reason: .requestDemands, authenticatorApp: false, passkey: false)))
            guard case .secondFactor(let requirement) = demanded else { return }
            #expect(requirement.mustEnrol, "nothing to give: an app is set up on the way")
            #expect(policy.refusal(demanded, demanding) == nil, "the page may be shown")
            #expect(policy.refusal(demanded, demanding, reauthenticate: false)?.code.rawValue == "unmet_authentication_requirements")
            var silent = demanding
            silent.prompt = ["none"]
            #expect(policy.refusal(demanded, silent)?.code == .interactionRequired)
            var strict = client
            strict.requireMFA = true
            #expect(try await policy.need(request(), client: strict, signIn: password)
                == .secondFactor(.init(reason: .clientRequires, authenticatorApp: false, passkey: false)))
            // Alice turns it on: every sign-in of hers asks, and two factors answer everything above.
            #expect(try await store.insertPendingTOTP(TOTPFactor(userID: alice.id, sealedSecret: "enc:v1:x", createdAt: Self.now)))
            #expect(try await policy.need(request(), client: client, signIn: password) == .nothing, "an app being set up asks nothing yet")
            #expect(try await store.confirmTOTP(userID: alice.id, step: 1, now: Self.now))
            #expect(try await policy.need(request(), client: client, signIn: password)
                == .secondFactor(.init(reason: .turnedOn, authenticatorApp: true, passkey: false)))
            let both = InteractionPolicy.SignIn(user: alice, authTime: Self.now, amr: SecondFactorPolicy.combined(["pwd"], ["otp"]))
            #expect(both.amr == ["pwd", "otp", "mfa"])
            for (wanted, target) in [(request(), client), (demanding, client), (asking, client), (request(), strict)] {
                #expect(try await policy.need(wanted, client: target, signIn: both) == .nothing)
            }
            // A passkey with user verification is two factors by itself.
            let passkey = InteractionPolicy.SignIn(user: alice, authTime: Self.now, amr: ["hwk", "pin", "mfa"])
            #expect(try await policy.need(request(), client: strict, signIn: passkey) == .nothing)
            // phr is for a passkey alone: a second factor doesn't reach it.
            var phishingResistant = request()
            phishingResistant.claims = ClaimsRequest(userinfo: nil, idToken: ["acr": .init(essential: true, values: [.string("phr")])])
            guard case .strongerSignIn = try await policy.need(phishingResistant, client: client, signIn: both) else {
                Issue.record("phr needs a passkey"); return
            }
        }
    }

    @Test("an essential acr the sign-in doesn't reach asks for a stronger one: the login page, or unmet_authentication_requirements after a sign-in made for the request")
    func essentialContext() async throws {
        try await withStore { store in
            let policy = try await policy(store)
            var demanding = request()
            demanding.claims = ClaimsRequest(userinfo: nil, idToken: ["acr": .init(essential: true, values: [.string("phr")])])
            let password = InteractionPolicy.SignIn(user: alice, authTime: Self.now, amr: ["pwd"], freshSince: Self.now)
            let need = try await policy.need(demanding, client: client, signIn: password)
            guard case .strongerSignIn(let reason) = need else { Issue.record("expected a stronger sign-in, got \(need)"); return }
            #expect(reason.contains("phr") && reason.contains("urn:tessera:acr:1fa"))
            #expect(policy.refusal(need, demanding) == nil, "the login page may be shown")
            #expect(policy.refusal(need, demanding, reauthenticate: false)?.code.rawValue == "unmet_authentication_requirements")
            let passkey = InteractionPolicy.SignIn(user: alice, authTime: Self.now, amr: ["hwk", "pin", "mfa"], freshSince: Self.now)
            #expect(try await policy.need(demanding, client: client, signIn: passkey) != need)
            // Voluntary acr_values ask nothing of the sign-in: the ID token names what it reached.
            var voluntary = request()
            voluntary.claims = ClaimsRequest(userinfo: nil, idToken: ["acr": .init(values: [.string("phr")])])
            #expect(try await policy.need(voluntary, client: client, signIn: password) == policy.need(request(), client: client, signIn: password))
        }
    }

    @Test("the class a sign-in reached: the first requested one it reaches, else the strongest")
    func achievedContext() {
        let hardware = AuthenticationContext.passkeyMethods(userVerified: true, synced: false)
        let synced = AuthenticationContext.passkeyMethods(userVerified: true, synced: true)
        let presence = AuthenticationContext.passkeyMethods(userVerified: false, synced: true)
        #expect(hardware == ["hwk", "pin", "mfa"] && synced == ["swk", "pin", "mfa"] && presence == ["swk", "user"])
        #expect(AuthenticationContext.achieved(amr: hardware) == "phrh")
        #expect(AuthenticationContext.achieved(amr: synced) == "phr")
        #expect(AuthenticationContext.achieved(amr: synced, requested: ["phrh", "urn:tessera:acr:mfa"]) == "urn:tessera:acr:mfa")
        #expect(AuthenticationContext.achieved(amr: presence, requested: ["urn:tessera:acr:mfa"]) == "phr", "not requested, but true")
        #expect(AuthenticationContext.achieved(amr: ["pwd"], requested: ["phr"]) == "urn:tessera:acr:1fa")
        #expect(AuthenticationContext.achieved(amr: ["pwd", "otp"]) == "urn:tessera:acr:1fa", "a password and an emailed code are not two factors here")
    }
}
