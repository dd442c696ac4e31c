import Foundation
import Logging
import Testing
import TesseraTestSupport
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraSQL

@Suite("Configuration")
struct ConfigurationTests {
    func file(_ json: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(UUID().uuidString).json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("the embedded defaults are those of the design")
    func defaults() throws {
        let configuration = try ConfigurationLoader(flags: [:], environment: [:]).configuration()
        #expect(configuration.issuerURL == "http://127.0.0.1:8080")
        #expect(configuration.database == .sqliteFile("tessera-data/tessera.sqlite"))
        #expect(configuration.signingAlgorithm == .rs256)
        #expect(!configuration.dev && configuration.enumerationProtection)
        #expect(!configuration.secureCookies)
    }

    @Test("the issuer's origin, host and passkey relying party, for names, ports and IP addresses")
    func issuerOriginAndHost() throws {
        for (issuer, origin, host) in [("https://login.example.com", "https://login.example.com", "login.example.com"),
                                       ("https://Login.Example.com:8443/tenant", "https://Login.Example.com:8443", "Login.Example.com"),
                                       ("http://127.0.0.1:8080", "http://127.0.0.1:8080", "127.0.0.1"),
                                       ("http://[::1]:8080", "http://[::1]:8080", "::1"),
                                       ("https://xn--bcher-kva.example", "https://xn--bcher-kva.example", "xn--bcher-kva.example")] {
            let configuration = try ConfigurationLoader(flags: ["issuer": issuer], environment: [:]).configuration()
            #expect(configuration.issuerOrigin == origin)
            #expect(configuration.issuerHost == host)
            #expect(configuration.passkeyRPID == host.lowercased())
        }
    }

    @Test("flags beat the environment, which beats the config file")
    func precedence() throws {
        let path = try file(#"{"port": 9000, "issuer": "https://file.example", "smtp_url": "smtp://file", "dev": true}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let environment = ["TESSERA_ISSUER": "https://env.example", "TESSERA_SMTP_URL": "smtp://env", "TESSERA_CONFIG": path]
        let configuration = try ConfigurationLoader(flags: ["issuer": "https://flag.example"], environment: environment).configuration()
        #expect(configuration.issuerURL == "https://flag.example")
        #expect(configuration.smtpURL == "smtp://env")
        #expect(configuration.port == 9000)
        #expect(configuration.dev)
        #expect(configuration.secureCookies)
    }

    @Test("bad values are refused with a message that names the setting", arguments: [
        ["port": "eighty"], ["enumeration-protection": "maybe"], ["signing-algorithm": "HS256"],
        ["issuer": "http://id.example.com"], ["issuer": "not a url"], ["access-token-lifetime": "-5"],
        ["database": "mysql://x"], ["master-key": "short"], ["refresh-token-reuse-interval": "10m"],
        ["refresh-token-reuse-interval": "-1"], ["access-token-lifetime": "0"],
    ])
    func badValues(_ flags: [String: String]) throws {
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader(flags: flags, environment: [:]).configuration() }
    }

    @Test("the refresh-token reuse interval is off unless set, and takes 0 and a duration up to 5m")
    func reuseInterval() throws {
        #expect(try ConfigurationLoader(flags: [:], environment: [:]).configuration().refreshTokenReuseInterval == 0)
        #expect(try ConfigurationLoader(flags: ["refresh-token-reuse-interval": "0"], environment: [:]).configuration()
            .refreshTokenReuseInterval == 0)
        #expect(try ConfigurationLoader(flags: [:], environment: ["TESSERA_REFRESH_TOKEN_REUSE_INTERVAL": "10s"]).configuration()
            .refreshTokenReuseInterval == 10)
    }

    @Test("an unknown key in the config file is an error, not a silent typo")
    func unknownKey() throws {
        let path = try file(#"{"isuer": "https://x.example"}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader(flags: ["config": path], environment: [:]) }
    }

    @Test("durations and booleans read the way people write them")
    func formats() throws {
        let configuration = try ConfigurationLoader(flags: [:], environment: [
            "TESSERA_ACCESS_TOKEN_LIFETIME": "5m", "TESSERA_REFRESH_TOKEN_LIFETIME": "2d", "TESSERA_ENUMERATION_PROTECTION": "off",
            "TESSERA_DEMO": "true",
        ]).configuration()
        #expect(configuration.accessTokenLifetime == 300)
        #expect(configuration.refreshTokenLifetime == 172_800)
        #expect(!configuration.enumerationProtection)
        #expect(configuration.demo && configuration.dev)
    }

    @Test("http issuers are allowed on loopback and in dev mode only")
    func httpIssuer() throws {
        #expect(throws: Never.self) { try ConfigurationLoader(flags: ["issuer": "http://localhost:8080"], environment: [:]).configuration() }
        #expect(throws: Never.self) { try ConfigurationLoader(flags: ["issuer": "http://id.lan", "dev": "on"], environment: [:]).configuration() }
    }
}

@Suite("Client registration")
struct RegistrationTests {
    @Test("generated client ids are 22 base64url characters that a command line can't take for an option")
    func generatedClientIDs() {
        let ids = (0..<2000).map { _ in ClientAdministration.newClientID() }
        #expect(ids.allSatisfy { $0.count == 22 && ($0.first!.isLetter || $0.first!.isNumber) })
        #expect(Set(ids).count == ids.count)
        #expect(ids.contains { $0.contains("-") || $0.contains("_") }, "the rest of the id is still base64url")
    }

    @Test("unsafe registrations are refused", arguments: [
        ("http://app.example.com/cb", false, nil as String?),
        ("https://app.example.com/cb#frag", false, nil),
        ("myapp:/cb", false, nil),
        ("https://app.example.com/cb", false, "short"),
        ("https://app.example.com/cb", true, "s3cret-s3cret-s3cret-s3cret-s3cret-42"),
    ])
    func refused(redirect: String, isPublic: Bool, secret: String?) async throws {
        try await withProvider { provider async throws in
            var registration = Provider.ClientRegistration(name: "x", redirectURIs: [redirect])
            registration.isPublic = isPublic
            registration.secret = secret
            await #expect(throws: ConfigurationError.self) { _ = try await provider.registerClient(registration) }
        }
    }

    @Test("loopback http, https and reverse-domain schemes are accepted; secrets are returned once and stored hashed")
    func accepted() async throws {
        try await withProvider { provider async throws in
            let registration = Provider.ClientRegistration(
                name: "x", redirectURIs: ["http://127.0.0.1:9000/cb", "https://app.example.com/cb", "com.example.app:/cb"])
            let (client, secret) = try await provider.registerClient(registration)
            let stored = try await provider.store.client(id: client.id)
            #expect(secret != nil && stored?.secretHash != nil && stored?.secretHash?.contains(secret!) == false)
            #expect(stored == client)
        }
    }
}

@Suite("Redirect URI matching")
struct RedirectURITests {
    func client(_ uris: [String], isPublic: Bool) -> Client {
        Client(id: "c", name: "c", authMethod: isPublic ? .none : .clientSecretBasic, redirectURIs: uris, grantTypes: [],
               scopes: ScopeSet([]), createdAt: 0)
    }

    @Test("redirect URIs match exactly: no prefix, no case folding, no extra query")
    func exact() {
        let web = client(["https://app.example.com/cb"], isPublic: false)
        #expect(web.accepts(redirectURI: "https://app.example.com/cb"))
        for other in ["https://app.example.com/cb/", "https://app.example.com/cb?x=1", "https://APP.example.com/cb",
                      "https://app.example.com/cbx", "https://app.example.com:443/cb"] {
            #expect(!web.accepts(redirectURI: other), "\(other)")
        }
    }

    @Test("a public client's loopback redirect accepts any port, and nothing else loosens (RFC 8252 §7.3)")
    func loopback() {
        let native = client(["http://127.0.0.1/callback", "http://[::1]/cb"], isPublic: true)
        #expect(native.accepts(redirectURI: "http://127.0.0.1:53127/callback"))
        #expect(native.accepts(redirectURI: "http://[::1]:4000/cb"))
        #expect(!native.accepts(redirectURI: "http://127.0.0.1:53127/other"))
        #expect(!native.accepts(redirectURI: "http://localhost:53127/callback"))
        #expect(!native.accepts(redirectURI: "https://127.0.0.1:53127/callback"))
        let confidential = client(["http://127.0.0.1/callback"], isPublic: false)
        #expect(!confidential.accepts(redirectURI: "http://127.0.0.1:53127/callback"))
    }
}

@Suite("Settings: one declaration each")
struct SettingTableTests {
    @Test("docs/configuration.md's table is the one the settings make (scripts/generate-configuration-doc)")
    func documented() throws {
        #expect(try Documents.section("settings", of: "docs/configuration.md") == Setting.markdownTable)
    }

    @Test("names are unique and each reads its own default back unchanged")
    func defaultsRoundTrip() throws {
        #expect(Set(Setting.all.map(\.name)).count == Setting.all.count)
        for setting in Setting.all where [.integer, .duration].contains(setting.kind) {
            var configuration = ServerConfiguration()
            try setting.read(setting.defaultText, into: &configuration)
            #expect("\(configuration)" == "\(ServerConfiguration())", "\(setting.name): \(setting.defaultText)")
        }
        #expect(Setting.named("smtp_url")?.name == "smtp-url")
        #expect(Setting.named("otp-length")?.environmentVariable == "TESSERA_OTP_LENGTH")
        #expect(Setting.named("master-key")?.flag == nil, "a secret stays off the command line")
    }

    @Test("every setting with a flag sets what its environment variable sets")
    func flagsAndEnvironmentAgree() throws {
        let samples: [String: String] = ["port": "9443", "otp-length": "6", "access-token-lifetime": "10m", "dev": "true",
                                         "trusted-proxy": "10.0.0.0/8", "signup-password": "required",
                                         "enumeration-protection": "off", "hashing-per-client": "7",
                                         "metrics-port": "9090", "metrics-host": "0.0.0.0", "log-format": "json", "log-level": "debug",
                                         "database-pool-size": "5"]
        for (name, value) in samples {
            let setting = try #require(Setting.named(name))
            let byFlag = try ConfigurationLoader(flags: [name: value], environment: [:]).configuration()
            let byEnvironment = try ConfigurationLoader(flags: [:], environment: [setting.environmentVariable: value]).configuration()
            #expect("\(byFlag)" == "\(byEnvironment)", "\(name)")
            #expect("\(byFlag)" != "\(ServerConfiguration())", "\(name) changed nothing")
        }
    }
}

@Suite("Database locations")
struct DatabaseLocationTests {
    @Test("a postgres:// URL is read as libpq reads it, and printed without its password")
    func postgresURL() throws {
        let location = try DatabaseLocation(parsing:
            "postgresql://tessera:p%40ss%3Aword@db.internal:6432/identity?sslmode=verify-full&sslrootcert=/etc/ssl/db.pem&options=-csearch_path%3Dauth")
        guard case .postgres(let server) = location else { Issue.record("not PostgreSQL: \(location)"); return }
        #expect(server.user == "tessera")
        #expect(server.password == "p@ss:word")
        #expect(server.host == "db.internal")
        #expect(server.port == 6432)
        #expect(server.database == "identity")
        #expect(server.sslMode == .verifyFull)
        #expect(server.sslRootCertificate == "/etc/ssl/db.pem")
        #expect(server.parameters == ["search_path": "auth"])
        #expect(location.isShared)
        #expect(!"\(location)".contains("p@ss") && "\(location)".contains("tessera:***@db.internal:6432/identity"))
        let defaults = try PostgresLocation(parsing: "postgres://app@localhost/tessera")
        #expect(defaults.port == 5432 && defaults.sslMode == .prefer && defaults.password == nil)
        let socket = try PostgresLocation(parsing: "postgres://app@/tessera?host=/var/run/postgresql")
        #expect(socket.socketDirectory == "/var/run/postgresql")
    }

    @Test("a bad database URL is refused with a message that says what is wrong, never the password", arguments: [
        ("postgres://db.internal/tessera", "names no user"),
        ("postgres://app:secret@db.internal/", "names no database"),
        ("postgres://app:secret@db.internal/tessera?sslmode=sometimes", "sslmode must be one of"),
        ("postgres://app:secret@db.internal/tessera?pool=5", "unknown parameter 'pool'"),
        ("postgres://app:secret@db.internal/tessera?sslrootcert=/ca.pem", "verify-ca or verify-full"),
        ("postgres://app:secret@db.internal/tessera?options=search_path", "'-c name=value'"),
        ("mysql://app:secret@db.internal/tessera", "unsupported database URL 'mysql://app:***@db.internal/tessera'"),
    ])
    func badURLs(url: String, message: String) {
        do {
            _ = try DatabaseLocation(parsing: url)
            Issue.record("accepted \(url)")
        } catch {
            #expect("\(error)".contains(message), "\(error)")
            #expect(!"\(error)".contains("secret"), "\(error)")
        }
    }

    @Test("PostgreSQL needs the master key given, the same on every node")
    func postgresNeedsMasterKey() throws {
        var configuration = ServerConfiguration()
        configuration.database = try DatabaseLocation(parsing: "postgres://app:secret@db.internal/tessera")
        #expect(throws: ConfigurationError.self) { _ = try MasterKey.load(configuration, logger: Logger(label: "test")) }
        configuration.masterKey = Data(repeating: 7, count: 32).base64EncodedString()
        #expect(try MasterKey.load(configuration, logger: Logger(label: "test")).source == "TESSERA_MASTER_KEY")
    }
}
