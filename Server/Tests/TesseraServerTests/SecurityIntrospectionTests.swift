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

@Suite("Security: introspection")
struct IntrospectionTests {
    @Test("a client introspects its own tokens, and a resource server those carrying its scopes; nothing else")
    func visibility() async throws {
        try await withApp { provider, browser in
            try await provider.addWebClient(id: "other")
            try await provider.addWebClient(id: "service", grants: ["client_credentials"], scopes: ["api.read", "api.write"])
            var api = Provider.ClientRegistration(name: "Orders API", redirectURIs: [])
            api.id = "orders-api"
            api.secret = testSecret
            api.grantTypes = ["client_credentials"]
            api.scopes = ["api.read"]
            api.resourceServer = true
            _ = try await provider.registerClient(api)

            let userTokens = try await browser.exchange(try await browser.code()).json
            let access = try #require(userTokens["access_token"]?.stringValue), refresh = try #require(userTokens["refresh_token"]?.stringValue)
            let serviceToken = try #require(try await browser.token([("grant_type", "client_credentials"), ("scope", "api.read")],
                                                                    client: "service").json["access_token"]?.stringValue)
            func introspect(_ token: String, as client: String) async throws -> [String: JSONValue] {
                try await browser.post("/introspect", [("token", token)], headers: basic(client, testSecret)).json
            }
            #expect(try await introspect(access, as: "web")["active"] == true)
            #expect(try await introspect(refresh, as: "web")["active"] == true)
            let stranger = try await introspect(access, as: "other")
            #expect(stranger == ["active": false], "another client learns nothing, not even the sub: \(stranger)")
            #expect(try await introspect(refresh, as: "other") == ["active": false])
            #expect(try await introspect(access, as: "orders-api") == ["active": false], "the user's token carries none of the API's scopes")
            let served = try await introspect(serviceToken, as: "orders-api")
            #expect(served["active"] == true && served["client_id"] == "service" && served["scope"] == "api.read")
        }
    }

    @Test("a resource server is confidential and names the scopes it serves")
    func registration() async throws {
        try await withProvider { provider async throws in
            var api = Provider.ClientRegistration(name: "API", redirectURIs: [])
            api.grantTypes = ["client_credentials"]
            api.resourceServer = true
            api.scopes = ["openid", "email"]
            await #expect(throws: ConfigurationError.self) { try await provider.registerClient(api) }
            api.scopes = ["orders"]
            #expect(try await provider.registerClient(api).client.servedScopes == ScopeSet(["orders"]))
        }
    }
}
