import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraSQL

/// Alice's profile, with a value for every claim family.
let aliceProfile: [String: JSONValue] = [
    "name": "Alice Smith", "given_name": "Alice", "family_name": "Smith", "birthdate": "1990-05-01", "gender": 2,
    "inn": .object(["number": "7700000000"]), "phone_number": "+7 912 345-67-89",
    "address_reg": .object(["full_address": "Moscow, Lenina 1", "city": "Moscow"]), "is_self_employed": true,
]

func withIdentityApp(_ body: @escaping @Sendable (Provider, Browser) async throws -> Void) async throws {
    try await withApp { provider, browser in
        _ = try await provider.updateProfile(email: "alice@example.com", changes: aliceProfile)
        try await provider.addWebClient(id: "bank", scopes: ["openid", "name", "birthdate", "inn", "mobile", "email", "gender",
                                                             "address_reg", "is_self_employed", "profile", "offline_access"])
        try await provider.addWebClient(id: "own", firstParty: true, scopes: ["openid", "email", "name", "inn"])
        try await body(provider, browser)
    }
}

@Suite("Identity data: scopes, claims, consent")
struct IdentityDataTests {
    func tokens(_ browser: Browser, client: String, scope: String, extra: [(String, String)] = []) async throws -> [String: JSONValue] {
        let code = try await browser.code(client: client, scope: scope, extra: extra)
        return try await browser.token([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", testRedirect)], client: client).json
    }

    func userinfo(_ browser: Browser, _ tokens: [String: JSONValue]) async throws -> [String: JSONValue] {
        try await browser.request("/userinfo", headers: [.authorization: "Bearer \(tokens["access_token"]?.stringValue ?? "")"]).json
    }

    @Test("each scope releases exactly its claims, in the seed's shapes")
    func exactClaims() async throws {
        try await withIdentityApp { _, browser in
            let cases: [(String, Set<String>)] = [
                ("name", ["family_name", "given_name"]),
                ("birthdate", ["birthdate"]), ("inn", ["inn"]), ("mobile", ["phone_number"]), ("gender", ["gender"]),
                ("address_reg", ["address_reg"]), ("is_self_employed", ["is_self_employed"]), ("email", ["email", "email_verified"]),
            ]
            for (scope, expected) in cases {
                let info = try await userinfo(browser, try await tokens(browser, client: "bank", scope: "openid \(scope)"))
                #expect(Set(info.keys) == expected.union(["sub"]), "\(scope)")
            }
            let info = try await userinfo(browser, try await tokens(browser, client: "bank", scope: "openid inn gender"))
            #expect(info["inn"] == .object(["number": "7700000000"]))
            #expect(info["gender"] == 2)
        }
    }

    @Test("the ID token carries the standard claims; catalogue claims come from userinfo or the claims parameter")
    func idTokenClaims() async throws {
        try await withIdentityApp { _, browser in
            let plain = try JWT(parsing: try await tokens(browser, client: "bank", scope: "openid email inn")["id_token"]?.stringValue ?? "")
            #expect(plain.claims["email"] == "alice@example.com")
            #expect(plain.claims["inn"] == nil)
            let claims = #"{"id_token": {"inn": {"essential": true}, "birthdate": null}, "userinfo": {"gender": null}}"#
            let asked = try await tokens(browser, client: "bank", scope: "openid", extra: [("claims", claims)])
            let token = try JWT(parsing: asked["id_token"]?.stringValue ?? "")
            #expect(token.claims["inn"] == .object(["number": "7700000000"]))
            #expect(token.claims["birthdate"] == "1990-05-01")
            #expect(token.claims["gender"] == nil)
            #expect(try await userinfo(browser, asked)["gender"] == 2)
        }
    }

    @Test("the claims parameter can't reach claims the client isn't allowed, and must be JSON")
    func claimsPolicy() async throws {
        try await withIdentityApp { _, browser in
            let asked = try await tokens(browser, client: "own", scope: "openid", extra: [("claims", #"{"id_token": {"birthdate": null}}"#)])
            #expect(try JWT(parsing: asked["id_token"]?.stringValue ?? "").claims["birthdate"] == nil)
            let bad = try await browser.request(codeRequest(client: "bank", extra: [("claims", "not json")]))
            #expect(bad.redirectParameters["error"] == "invalid_request")
        }
    }

    @Test("a scope the client isn't allowed is invalid_scope; an unknown one is ignored")
    func perClientScopes() async throws {
        try await withIdentityApp { _, browser in
            #expect(try await browser.request(codeRequest(client: "own", scope: "openid snils")).redirectParameters["error"] == "invalid_scope")
            let response = try await tokens(browser, client: "own", scope: "openid email frobnicate")
            #expect(response["scope"] == "openid email")
        }
    }

    @Test("consent asks only for new scopes, marks sensitive and essential ones, and is remembered")
    func consentPage() async throws {
        try await withIdentityApp { _, browser in
            let first = try await browser.login(try await browser.request(codeRequest(client: "bank", scope: "openid name")),
                                                email: "alice@example.com", password: "correct horse")
            #expect(first.body.text.contains("Last name, first name, middle name"))
            _ = try await browser.consent(first, allow: true)
            let more = try await browser.request(codeRequest(client: "bank", scope: "openid name inn",
                                                             extra: [("claims", #"{"userinfo": {"inn": {"essential": true}}}"#)]))
            #expect(more.body.text.contains("Taxpayer number (INN)"))
            #expect(!more.body.text.contains("Last name, first name"))
            #expect(more.body.text.contains("sensitive") && more.body.text.contains("required by the app"))
            _ = try await browser.consent(more, allow: true)
            #expect(try await browser.request(codeRequest(client: "bank", scope: "openid name inn")).redirectParameters["code"] != nil)
            let again = try await browser.request(codeRequest(client: "bank", scope: "openid name", extra: [("prompt", "consent")]))
            #expect(again.body.text.contains("Last name, first name, middle name"))
        }
    }

    @Test("first-party clients skip consent except for sensitive scopes")
    func sensitiveScopesForFirstParty() async throws {
        try await withIdentityApp { _, browser in
            _ = try await browser.code(client: "own", scope: "openid email name")
            let sensitive = try await browser.request(codeRequest(client: "own", scope: "openid email inn"))
            #expect(sensitive.body.text.contains("action=\"/consent\""))
            #expect(sensitive.body.text.contains("Taxpayer number (INN)"))
            #expect(!sensitive.body.text.contains("Your email address"))
        }
    }

    @Test("the consent page speaks Russian")
    func russianConsent() async throws {
        try await withIdentityApp { _, browser in
            let page = try await browser.login(try await browser.request(codeRequest(client: "bank", scope: "openid name birthdate",
                                                                                     extra: [("ui_locales", "ru")])),
                                               email: "alice@example.com", password: "correct horse")
            #expect(page.body.text.contains("Фамилия, Имя, Отчество"))
            #expect(page.body.text.contains("Дата рождения"))
        }
    }

    @Test("revoking a consent on the account page ends that client's refresh tokens")
    func accountRevocation() async throws {
        try await withIdentityApp { _, browser in
            let issued = try await tokens(browser, client: "bank", scope: "openid name offline_access")
            let page = try await browser.request("/account")
            #expect(page.body.text.contains("Web App"))
            #expect(page.body.text.contains("Last name, first name, middle name"))
            let revoked = try await browser.post("/account/consents/revoke", [("csrf_token", page.field("csrf_token") ?? ""), ("client_id", "bank")])
            #expect(revoked.status == .seeOther)
            let refresh = try await browser.token([("grant_type", "refresh_token"), ("refresh_token", issued["refresh_token"]?.stringValue ?? "")],
                                                  client: "bank")
            #expect(refresh.json["error"] == "invalid_grant")
            #expect(try await browser.request("/account").body.text.contains("allowed any app to see your data"))
            let forged = try await browser.post("/account/consents/revoke", [("csrf_token", "nope"), ("client_id", "bank")])
            #expect(forged.status == .badRequest)
        }
    }

    @Test("the account page asks a stranger to sign in first")
    func accountSignIn() async throws {
        try await withApp { _, browser in
            let page = try await browser.request("/account")
            #expect(page.body.text.contains("action=\"/account/login\""))
            let wrong = try await browser.post("/account/login", [("csrf_token", page.field("csrf_token") ?? ""), ("email", "alice@example.com"),
                                                                  ("password", "nope")])
            #expect(wrong.status == .unauthorized)
            let right = try await browser.post("/account/login", [("csrf_token", page.field("csrf_token") ?? ""), ("email", "alice@example.com"),
                                                                  ("password", "correct horse")])
            #expect(right.location == "/account")
            #expect(try await browser.request("/account").body.text.contains("alice@example.com"))
        }
    }

    @Test("a profile update is validated whole: a bad value changes nothing")
    func atomicProfileUpdate() async throws {
        try await withIdentityApp { provider, _ in
            await #expect(throws: ClaimValidationError.self) {
                _ = try await provider.updateProfile(email: "alice@example.com", changes: ["job_title": "engineer", "birthdate": "yesterday"])
            }
            let user = try await provider.store.user(email: "alice@example.com")
            #expect(user?.profile["job_title"] == nil)
            #expect(user?.profile["birthdate"] == "1990-05-01")
            let removed = try await provider.updateProfile(email: "alice@example.com", changes: ["gender": .null])
            #expect(removed.profile["gender"] == nil)
        }
    }
}
