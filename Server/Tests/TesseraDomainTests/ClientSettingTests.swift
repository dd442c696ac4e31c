import Foundation
import Testing
import TesseraCore
import TesseraDomain
import TesseraTestSupport

/// A client's settings are declared once (`Admin/ClientSettings.swift`): the command line and
/// the admin API's JSON both read through the table into the same registration or change.
@Suite("Client settings: one declaration each")
struct ClientSettingTests {
    @Test("members and flags are unique, and each has its labels and help")
    func unique() {
        #expect(Set(ClientSetting.all.map(\.member)).count == ClientSetting.all.count)
        #expect(Set(ClientSetting.all.map(\.flag)).count == ClientSetting.all.count)
        for setting in ClientSetting.all {
            #expect(!setting.help.isEmpty && !setting.label.english.isEmpty && !setting.label.russian.isEmpty, "\(setting.member)")
        }
    }

    @Test("a command line becomes the registration the JSON would make")
    func commandLine() throws {
        let settings = try AdminClientSettings(arguments: [
            "--name", "Shop", "--redirect-uri", "https://shop.example/cb", "--redirect-uri=com.example.shop:/cb", "--first-party",
            "--scope", "openid profile", "--scope", "email", "--public", "--android-app", "com.example.shop=aa:bb",
            "--android-app", "com.example.shop=CC:DD", "--require-par", "false", "--device-sso-group", "acme",
            "--assertion-lifetime", "1h",
        ])
        #expect(settings["redirect_uris"] == .array([.string("https://shop.example/cb"), .string("com.example.shop:/cb")]))
        #expect(settings["scope"] == .string("openid profile email"))
        #expect(settings["first_party"] == .bool(true) && settings["require_pushed_authorization_requests"] == .bool(false))
        #expect(settings["android_apps"] == .array([.object(["package_name": .string("com.example.shop"),
                                                             "sha256_cert_fingerprints": .array([.string("AA:BB"), .string("CC:DD")])])]))
        #expect(settings["assertion_lifetime"] == .int(3600))
        let json = try JSONDecoder().decode(AdminClientSettings.self, from: try JSONEncoder().encode(settings))
        #expect(json == settings)
        let registration = try json.registration()
        #expect(registration.name == "Shop" && registration.isPublic && registration.firstParty && !registration.requirePushedRequests)
        #expect(registration.scopes == ["openid", "profile", "email"] && registration.deviceSSOGroup == "acme")
        #expect(registration.appLinks.androidApps == [.init(packageName: "com.example.shop", certificateFingerprints: ["AA:BB", "CC:DD"])])
    }

    @Test("a change leaves out what wasn't given, clears with null, and refuses what is fixed at registration")
    func changes() throws {
        let cleared = try AdminClientSettings(arguments: ["--device-sso-group", "", "--link-domain", "links.example"]).changes()
        #expect(cleared.deviceSSOGroup == .some(nil) && cleared.linkDomains == ["links.example"] && cleared.name == nil)
        #expect(cleared.appleAppIDs == nil && cleared.firstParty == nil)
        let json = try JSONDecoder().decode(AdminClientSettings.self, from: Data(#"{"device_sso_group": null, "first_party": true}"#.utf8))
        #expect(try json.changes().deviceSSOGroup == .some(nil) && (try json.changes().firstParty) == true)
        #expect(throws: AdminError.invalid("'subject_type' is fixed when a client is registered: register a new client to change it")) {
            try AdminClientSettings(arguments: ["--pairwise"]).changes()
        }
    }

    @Test("an unknown member, a value of the wrong shape and an unknown flag are refused by name")
    func refusals() throws {
        func problem(_ json: String) -> String? {
            do { _ = try JSONDecoder().decode(AdminClientSettings.self, from: Data(json.utf8)); return nil } catch let problem as AdminProblem {
                return problem.detail
            } catch { return "\(error)" }
        }
        #expect(problem(#"{"colour": "red"}"#)?.hasPrefix("'colour' is not a member of this request") == true)
        #expect(problem(#"{"first_party": "yes"}"#) == "'first_party' must be true or false")
        #expect(problem(#"{"redirect_uris": ["a", 1]}"#) == "'redirect_uris' must be an array of strings")
        #expect(problem(#"{"token_endpoint_auth_method": "tls_client_auth"}"#)?.hasPrefix("'tls_client_auth' is not a token_endpoint_auth_method") == true)
        #expect(problem(#"[1]"#) == "the request body must be a JSON object")
        #expect(throws: ConfigurationError.self) { try AdminClientSettings(arguments: ["--colour", "red"]) }
        #expect(throws: ConfigurationError.self) { try AdminClientSettings(arguments: ["--first-party", "maybe"]) }
        #expect(throws: ConfigurationError.self) { try AdminClientSettings(arguments: ["--android-app", "no-fingerprint"]) }
        #expect(throws: AdminError.invalid("'client_name' is required")) { try AdminClientSettings().registration() }
    }

    @Test("docs/admin.md's table of client settings is the one the table makes (tessera settings --clients --markdown)")
    func documented() throws {
        #expect(try Documents.section("client-settings", of: "docs/admin.md") == ClientSetting.markdownTable)
    }
}
