// swift-tools-version:6.0
import PackageDescription

// The tests' own code unoptimised in release too: the tests run in release against the optimised
// modules that ship (scripts/test), and their own code compiles in a third less time without the
// optimiser, which has nothing to find there.
let testCodeSettings: [SwiftSetting] = [.unsafeFlags(["-Onone"], .when(configuration: .release))]

// The server: `tessera` and its modules. A package of its own so that an app adding the
// repository by URL (the SDK, in the root folder's package) resolves none of the server's
// dependencies; it uses the SDK's modules through that package, by path. Hummingbird needs
// macOS 15; on Linux, Apple's versions don't apply.
let package = Package(
    name: "tessera-server",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "tessera", targets: ["tessera"]),
        .library(name: "TesseraDomain", targets: ["TesseraDomain"]),
        .library(name: "TesseraServer", targets: ["TesseraServer"]),
        .library(name: "TesseraNode", targets: ["TesseraNode"]),
        .library(name: "TesseraWebAuthn", targets: ["TesseraWebAuthn"]),
    ],
    dependencies: [
        // The SDK's package, this repository's root: TesseraCore (the wire vocabulary), and
        // TesseraAuthCore (the relying-party code the server signs in to upstream providers with,
        // and `tessera login`). Named, so references don't depend on the checkout's folder name.
        .package(name: "tessera", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // HTTP field names (Hummingbird's own vocabulary); already in Hummingbird's graph.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        // PostgreSQL: the driver with its connection pool, and SQLKit's dialect for it.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // The server's HTTP client (upstream identity providers); already built for HummingbirdTesting.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // Signals for operators: swift-metrics in the code, exported in Prometheus's format.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // X.509: packed attestation's certificates (TesseraWebAuthn), and self-signed certificates for the SMTP TLS
        // tests; already built for NIOSSL's and NIOExtras' graph.
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
    ],
    targets: [
        // WebAuthn's server side (passkeys): CBOR, authenticator data, COSE keys, attestation
        // statements, the registration and assertion checks. Ours, small and fuzzed (Fuzz/).
        .target(
            name: "TesseraWebAuthn",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        // The provider's rules: models, store protocols, flows, grants, policies, the token
        // issuer, mail. No HTTP server and no SQL here (Hummingbird and SQLKit are absent from
        // its dependencies, so an import of either is a compile error).
        .target(
            name: "TesseraDomain",
            dependencies: [
                .product(name: "TesseraCore", package: "tessera"),
                "TesseraWebAuthn",
                // Upstream identity providers are OpenID providers to the server: it signs in
                // to them with the SDK's relying-party code (discovery, JWKS, ID-token checks),
                // over the SDK's HTTPTransport (TesseraInfrastructure's, on AsyncHTTPClient).
                .product(name: "TesseraAuthCore", package: "tessera"),
                "TesseraOpenSSL",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            // Data is a file, not source; embedded in the binary, so a copied binary still has it.
            resources: [
                .embedInCode("Resources/common-passwords.txt"),
                .embedInCode("Resources/mail/mail-en.json"),
                .embedInCode("Resources/mail/mail-ru.json"),
                .embedInCode("Resources/mail/mail-header.html"),
                .embedInCode("Resources/mail/mail-footer.html"),
            ]
        ),
        // What the domain declares and the server runs on: SMTP delivery (SwiftNIO, NIOSSL), the
        // HTTP client for upstream providers (AsyncHTTPClient), the password-hashing threads
        // (NIOPosix), the outbox's background delivery (ServiceLifecycle).
        .target(
            name: "TesseraInfrastructure",
            dependencies: [
                .product(name: "TesseraAuthCore", package: "tessera"),
                "TesseraDomain",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // RS256 signing through the machine's OpenSSL 3 (loaded at run time, swift-crypto
        // where it is absent): the one piece that calls C for crypto.
        .target(
            name: "TesseraOpenSSL",
            dependencies: [
                .product(name: "TesseraCore", package: "tessera"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The few SQLite C functions the database handle calls, wrapped (the SQLite is
        // sqlite-nio's bundled one, linked through its product).
        .target(
            name: "CTesseraSQLite",
            dependencies: [.product(name: "SQLiteNIO", package: "sqlite-nio")]
        ),
        // One SQLite connection called synchronously: the one piece that calls SQLite's C API.
        .target(
            name: "TesseraSQLite",
            dependencies: [
                "CTesseraSQLite",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
            ]
        ),
        // The one SQL implementation of the domain's store protocols, and its migrations.
        .target(
            name: "TesseraSQL",
            dependencies: [
                .product(name: "TesseraCore", package: "tessera"),
                "TesseraDomain",
                "TesseraSQLite",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
            ]
        ),
        // HTTP: endpoints, hosted pages, middleware, over `Services` (the domain's services, no
        // store). TesseraSQL is absent from its dependencies: an endpoint can't reach a store.
        .target(
            name: "TesseraServer",
            dependencies: [
                .product(name: "TesseraCore", package: "tessera"),
                .product(name: "TesseraAuthCore", package: "tessera"),
                "TesseraDomain",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The hosted pages' templates and stylesheet, embedded in the binary (it runs from any directory).
            resources: [
                .embedInCode("Resources/pages/header.mustache"),
                .embedInCode("Resources/pages/footer.mustache"),
                .embedInCode("Resources/pages/login.mustache"),
                .embedInCode("Resources/pages/consent.mustache"),
                .embedInCode("Resources/pages/error.mustache"),
                .embedInCode("Resources/pages/logout.mustache"),
                .embedInCode("Resources/pages/loggedout.mustache"),
                .embedInCode("Resources/pages/formpost.mustache"),
                .embedInCode("Resources/pages/account.mustache"),
                .embedInCode("Resources/pages/accountprofile.mustache"),
                .embedInCode("Resources/pages/accountemail.mustache"),
                .embedInCode("Resources/pages/accountpassword.mustache"),
                .embedInCode("Resources/pages/accountpasskeys.mustache"),
                .embedInCode("Resources/pages/accounttwostep.mustache"),
                .embedInCode("Resources/pages/accountsessions.mustache"),
                .embedInCode("Resources/pages/accountapps.mustache"),
                .embedInCode("Resources/pages/accountidentities.mustache"),
                .embedInCode("Resources/pages/accountdelete.mustache"),
                .embedInCode("Resources/pages/emaillinksent.mustache"),
                .embedInCode("Resources/pages/emaillinkconfirm.mustache"),
                .embedInCode("Resources/pages/message.mustache"),
                .embedInCode("Resources/pages/federationlink.mustache"),
                .embedInCode("Resources/pages/continue.mustache"),
                .embedInCode("Resources/pages/code.mustache"),
                .embedInCode("Resources/pages/newpassword.mustache"),
                .embedInCode("Resources/pages/signup.mustache"),
                .embedInCode("Resources/pages/signupattributes.mustache"),
                .embedInCode("Resources/pages/adminheader.mustache"),
                .embedInCode("Resources/pages/adminfooter.mustache"),
                .embedInCode("Resources/pages/adminusers.mustache"),
                .embedInCode("Resources/pages/adminuser.mustache"),
                .embedInCode("Resources/pages/adminclients.mustache"),
                .embedInCode("Resources/pages/adminclient.mustache"),
                .embedInCode("Resources/pages/adminkeys.mustache"),
                .embedInCode("Resources/pages/adminaudit.mustache"),
                .embedInCode("Resources/pages/tessera.css"),
                .embedInCode("Resources/pages/passkeys.js"),
                .embedInCode("Resources/pages/secondfactor.mustache"),
                .embedInCode("Resources/pages/totpsetup.mustache"),
                .embedInCode("Resources/pages/recoverycodes.mustache"),
                .embedInCode("Resources/pages/passkeyoffer.mustache"),
                // The OpenAPI documents it serves: copies of docs/*.openapi.json (scripts/generate-openapi-source).
                .embedInCode("Resources/openapi/native-auth.openapi.json"),
                .embedInCode("Resources/openapi/admin.openapi.json"),
            ]
        ),
        // The wiring: `Provider` (the database, its store, the mail transport and the services
        // built over them) and `Node` (a serving node's life: listeners, waiting for the
        // database, the background work, the bounded stop). The one target that knows both the
        // SQL store and the endpoints.
        // Swift concurrency's global enqueue hook, reached by the linker (the event loops take
        // over the tasks through it; a statically linked runtime exports no symbols to look up).
        .target(name: "CTesseraConcurrency"),
        .target(
            name: "TesseraNode",
            dependencies: [
                "CTesseraConcurrency",
                .product(name: "TesseraCore", package: "tessera"),
                "TesseraDomain",
                "TesseraInfrastructure",
                "TesseraSQL",
                "TesseraServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "tessera",
            dependencies: [
                "TesseraDomain",
                "TesseraInfrastructure",
                "TesseraNode",
                "TesseraServer",
                .product(name: "TesseraAuthCore", package: "tessera"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Test-only: fresh databases of each kind the store runs on (SQLite; PostgreSQL when given).
        .target(
            name: "TesseraTestSupport",
            dependencies: [
                .product(name: "TesseraCore", package: "tessera"),
                "TesseraDomain",
                "TesseraSQL",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLKit", package: "sql-kit"),
            ],
            path: "Tests/TesseraTestSupport",
            swiftSettings: testCodeSettings
        ),
        .testTarget(name: "TesseraWebAuthnTests", dependencies: [
            "TesseraWebAuthn",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "CryptoExtras", package: "swift-crypto"),
            .product(name: "X509", package: "swift-certificates"),
        ], swiftSettings: testCodeSettings),
        // The domain's rules without HTTP: pure ones, and those over a real (in-memory) SQL store.
        .testTarget(
            name: "TesseraDomainTests",
            dependencies: [
                .product(name: "TesseraCore", package: "tessera"),
                "TesseraDomain",
                "TesseraInfrastructure",
                "TesseraSQL",
                "TesseraTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLKit", package: "sql-kit"),
            ],
            swiftSettings: testCodeSettings
        ),
        // The store contract, on SQLite and (when the tests have one) PostgreSQL.
        .testTarget(
            name: "TesseraSQLTests",
            dependencies: [
                .product(name: "TesseraCore", package: "tessera"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLKit", package: "sql-kit"),
                "TesseraDomain",
                "TesseraSQL",
                "TesseraTestSupport",
            ],
            swiftSettings: testCodeSettings
        ),
        .testTarget(
            name: "TesseraServerTests",
            dependencies: [
                "TesseraDomain",
                "TesseraOpenSSL",
                "TesseraSQL",
                "TesseraSQLite",
                "TesseraServer",
                "TesseraNode",
                "TesseraInfrastructure",
                .product(name: "TesseraAuthCore", package: "tessera"),
                "TesseraTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // The event loops, to run a request's statements on a chosen one.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // NIO's own HTTP/1 codec, the reference the answers written as bytes are held to.
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: testCodeSettings
        ),
        .testTarget(
            name: "TesseraAuthIntegrationTests",
            dependencies: [
                .product(name: "TesseraAuth", package: "tessera"),
                .product(name: "TesseraAuthCore", package: "tessera"),
                .product(name: "TesseraAuthMSAL", package: "tessera"),
                .product(name: "TesseraAuthFirebase", package: "tessera"),
                .product(name: "TesseraAuthSberID", package: "tessera"),
                .product(name: "TesseraCore", package: "tessera"),
                "TesseraDomain",
                "TesseraNode",
                "TesseraServer",
                "TesseraTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: testCodeSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
