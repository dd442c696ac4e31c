import Foundation
import Testing
import TesseraCore
import TesseraTestSupport
import TesseraServer
import TesseraDomain

/// The admin API's answers and requests are the Codable types of `TesseraCore/Wire`
/// (AdminMessages, AdminRequests) and the table of client settings: the members
/// docs/admin.openapi.json names, optional ones only when set, the same values read back.
@Suite("Admin wire")
struct AdminWireTests {
    static let document: [String: JSONValue] = {
        let data = (try? Data(contentsOf: Documents.root.appendingPathComponent("docs/admin.openapi.json"))) ?? Data()
        return (try? JSONDecoder().decode([String: JSONValue].self, from: data)) ?? [:]
    }()

    /// A schema's property names.
    static func properties(_ schema: String) -> Set<String> {
        let schemas = document["components"]?.objectValue?["schemas"]?.objectValue
        return Set(schemas?[schema]?.objectValue?["properties"]?.objectValue?.keys.map { $0 } ?? [])
    }

    static func members(_ value: some Encodable) throws -> [String: JSONValue] {
        try JSONDecoder().decode([String: JSONValue].self, from: try CanonicalJSON.encode(value))
    }

    @Test("the table of client settings is the document's NewClient; the changeable ones its ClientChanges")
    func settingsAreTheSchemas() {
        #expect(!Self.properties("NewClient").isEmpty)
        #expect(Set(ClientSetting.all.map(\.member)) == Self.properties("NewClient"))
        #expect(Set(ClientSetting.all.filter(\.changeable).map(\.member)) == Self.properties("ClientChanges"))
    }

    @Test("a client: every setting but its secret in the answer (the optional ones when set), as the document's Client has it")
    func client() throws {
        var client = Client(id: "shop", name: "Shop", secretHash: "h", authMethod: .clientSecretBasic, redirectURIs: ["https://shop.example/cb"],
                            grantTypes: [GrantType.authorizationCode], scopes: ScopeSet(["openid"]), createdAt: 7)
        let plain = try Self.members(AdminClientInfo(client))
        #expect(plain["created_at"] == .int(7) && plain["scope"] == .string("openid") && plain["first_party"] == .bool(false))
        #expect(plain["device_sso_group"] == nil && plain["jwks"] == nil && plain["client_secret"] == nil)
        client.deviceSSOGroup = "acme"
        client.assertionIssuer = "TEAMID"
        client.assertionLifetime = 86_400
        client.jwks = JWKSet(keys: [])
        client.previousSecretHash = "old"
        client.previousSecretExpiresAt = 99
        let full = try Self.members(AdminClientInfo(client))
        #expect(full["device_sso_group"] == .string("acme") && full["assertion_lifetime"] == .int(86_400))
        let settings = Set(ClientSetting.all.map(\.member)).subtracting(["client_secret"])
        #expect(settings.subtracting(full.keys).isEmpty, "settings missing from the answer: \(settings.subtracting(full.keys))")
        #expect(Set(full.keys) == Self.properties("Client"))
        #expect(try JSONDecoder().decode(AdminClientInfo.self, from: try CanonicalJSON.encode(AdminClientInfo(client))) == AdminClientInfo(client))
    }

    @Test("a user: never the hash, only whether there is one; disabled_at only when disabled; details flat, as UserDetails")
    func user() throws {
        var user = User(id: "u1", email: "a@example.com", emailVerified: true, passwordHash: "$scrypt$secret", profile: ["name": .string("A")],
                        createdAt: 1, updatedAt: 2)
        let object = try Self.members(AdminUserInfo(user))
        #expect(object["has_password"] == .bool(true) && object["disabled_at"] == nil)
        #expect(!"\(object)".contains("scrypt"))
        user.disabledAt = 5
        #expect(try Self.members(AdminUserInfo(user))["disabled_at"] == .int(5) && (try Self.members(AdminUserInfo(user)))["disabled"] == .bool(true))
        #expect(Set(try Self.members(AdminUserInfo(user)).keys) == Self.properties("User"))
        let details = AdminUserDetails(user: AdminUserInfo(user), identities: [.init(provider: "apple", subject: "s", email: nil, proven: true)],
                                       sessions: [.init(sid: "x", signedInAt: 3, methods: ["pwd"], expiresAt: 4)],
                                       consents: [.init(clientID: "shop", clientName: "Shop", scope: "openid", grantedAt: 3)], lastSignIn: nil)
        let flat = try Self.members(details)
        #expect(flat["email"] == .string("a@example.com") && flat["identities"]?.arrayValue?.count == 1 && flat["last_sign_in"] == nil)
        #expect(try JSONDecoder().decode(AdminUserDetails.self, from: try CanonicalJSON.encode(details)) == details)
    }

    @Test("a list's next_page_token is there on the last page too, as null")
    func lists() throws {
        #expect(try Self.members(AdminUserList(users: [], nextPageToken: nil))["next_page_token"] == .null)
        #expect(try Self.members(AdminClientList(clients: [], nextPageToken: "t"))["next_page_token"] == .string("t"))
    }

    @Test("a request is refused by the member that is wrong: unknown, missing, or of another type")
    func requests() throws {
        func detail<T: AdminRequestBody>(_ type: T.Type, _ json: String) -> String? {
            do { _ = try AdminRequestDecoding.decode(T.self, from: Data(json.utf8)); return nil } catch let problem as AdminProblem {
                #expect(problem.status == 400 && problem.slug == "invalid-request")
                return problem.detail
            } catch { return "\(error)" }
        }
        #expect(detail(AdminNewUser.self, #"{"email": "a@example.com", "roles": ["admin"]}"#) == nil)
        #expect(detail(AdminNewUser.self, #"{"email": "a@example.com", "colour": "red"}"#)?.hasPrefix("'colour' is not a member") == true)
        #expect(detail(AdminNewUser.self, #"{"password": "x"}"#) == "'email' is required")
        #expect(detail(AdminNewUser.self, #"{"email": "a@example.com", "email_verified": "yes"}"#) == "'email_verified' must be true or false")
        #expect(detail(AdminUserChanges.self, #"{"roles": "admin"}"#) == "'roles' must be an array")
        #expect(detail(AdminSecretRotation.self, #"{"grace_period": "1h"}"#) == "'grace_period' must be a whole number")
        #expect(detail(AdminImportRequest.self, "not json") == "the request body must be a JSON object")
        #expect(Set(AdminNewUser.members) == Self.properties("NewUser"))
    }

    @Test("problem details are the document's Problem, and errors of the rules map to their kinds")
    func problems() throws {
        #expect(Set(try Self.members(AdminProblem(AdminError.versionMismatch(current: 3))).keys) == ["type", "title", "status", "detail", "current_version"])
        #expect(AdminProblem(AdminError.versionMismatch(current: 3)).status == 412)
        #expect(AdminProblem(AdminError.notFound("client x")).slug == "not-found")
        #expect(AdminProblem(DatabaseUnavailable(location: "db", reason: "down")).status == 503)
        #expect(AdminProblem(CancellationError()).status == 500)
        #expect(Self.properties("Problem").isSuperset(of: try Self.members(AdminProblem(AdminError.versionMismatch(current: 3))).keys))
    }
}
