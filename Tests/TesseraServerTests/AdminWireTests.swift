import Foundation
import Testing
import TesseraCore
@testable import TesseraServer
@testable import TesseraDomain

/// The admin API's answers come from the Codable types of `TesseraCore/Wire/AdminMessages.swift`:
/// the members the document names, optional ones only when set, and the same values read back.
@Suite("Admin wire")
struct AdminWireTests {
    @Test("a client: every member of the schema, the optional ones only when set, read back as the same type")
    func client() throws {
        var client = Client(id: "shop", name: "Shop", secretHash: "h", authMethod: .clientSecretBasic, redirectURIs: ["https://shop.example/cb"],
                            grantTypes: [GrantType.authorizationCode], scopes: ScopeSet(["openid"]), createdAt: 7)
        let plain = AdminWire.client(client)
        #expect(Set(plain.keys) == ["client_id", "client_name", "redirect_uris", "post_logout_redirect_uris", "grant_types", "scope",
                                    "token_endpoint_auth_method", "first_party", "subject_type", "resource_server", "link_domains",
                                    "ios_apps", "android_apps", "created_at", "version", "require_pushed_authorization_requests",
                                    "authenticator"])
        #expect(plain["created_at"] == .int(7) && plain["scope"] == .string("openid") && plain["first_party"] == .bool(false))
        client.deviceSSOGroup = "acme"
        client.assertionIssuer = "TEAMID"
        client.assertionLifetime = 86_400
        let full = AdminWire.client(client)
        #expect(full["device_sso_group"] == .string("acme") && full["assertion_lifetime"] == .int(86_400))
        let data = try JSONEncoder().encode(JSONValue.object(full))
        #expect(try JSONDecoder().decode(AdminClientInfo.self, from: data) == AdminWire.clientInfo(client))
    }

    @Test("a user: never the hash, only whether there is one; disabled_at only when disabled")
    func user() throws {
        var user = User(id: "u1", email: "a@example.com", emailVerified: true, passwordHash: "$scrypt$secret", profile: ["name": .string("A")],
                        createdAt: 1, updatedAt: 2)
        let object = AdminWire.user(user)
        #expect(object["has_password"] == .bool(true) && object["disabled_at"] == nil)
        #expect(!"\(object)".contains("scrypt"))
        user.disabledAt = 5
        #expect(AdminWire.user(user)["disabled_at"] == .int(5) && AdminWire.user(user)["disabled"] == .bool(true))
    }
}
