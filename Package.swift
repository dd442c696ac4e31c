// swift-tools-version:6.0
import PackageDescription

// The TesseraAuth SDK: what an app adds by this repository's URL. Foundation and swift-crypto
// only, so an app resolves nothing else. The server is a package of its own, in `Server/`, that
// depends on this one by path (docs/architecture.md, "Two packages").
let package = Package(
    name: "tessera",
    platforms: [.macOS(.v12), .iOS(.v15)],
    products: [
        // The SDK for apps: every flow, with HTTP over URLSession.
        .library(name: "TesseraAuth", targets: ["TesseraAuth"]),
        // The SDK without an HTTP client, for code that brings its own `HTTPTransport`.
        .library(name: "TesseraAuthCore", targets: ["TesseraAuthCore"]),
        // The wire vocabulary (JOSE, OAuth forms, the claim catalogue) the SDK and the server share.
        .library(name: "TesseraCore", targets: ["TesseraCore"]),
        // For teams moving from MSAL's native auth: its delegates and names over TesseraAuth.
        .library(name: "TesseraAuthMSAL", targets: ["TesseraAuthMSAL"]),
        // For teams moving from the Sber ID SDK: its names over TesseraAuth.
        .library(name: "TesseraAuthSberID", targets: ["TesseraAuthSberID"]),
        // For teams moving from Firebase's email-link sign-in: its shapes over TesseraAuth.
        .library(name: "TesseraAuthFirebase", targets: ["TesseraAuthFirebase"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
    ],
    targets: [
        // Wire vocabulary shared by the server and the SDK: Foundation + swift-crypto only.
        .target(
            name: "TesseraCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The SDK without an HTTP client: every flow, the `HTTPTransport` protocol, token storage.
        // Foundation + swift-crypto only (no FoundationNetworking), so the server can link it too.
        // Nothing newer than iOS 15 / macOS 12 (no Synchronization; Clock and Duration only in the
        // loopback listener, which says macOS 13).
        .target(
            name: "TesseraAuthCore",
            dependencies: [
                "TesseraCore",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The SDK for apps: TesseraAuthCore re-exported, plus HTTP over URLSession
        // (FoundationNetworking on Linux); compiles for iOS and macOS too.
        .target(
            name: "TesseraAuth",
            dependencies: ["TesseraAuthCore"]
        ),
        // MSAL native auth's shape (delegates, MSAL-prefixed names) over TesseraAuth: a team moving
        // from MSAL changes `import MSAL` to `import TesseraAuthMSAL`.
        .target(
            name: "TesseraAuthMSAL",
            dependencies: ["TesseraAuth", "TesseraAuthCore", "TesseraCore"]
        ),
        // The Sber ID SDK's names over TesseraAuth: `import TesseraAuthSberID`.
        .target(
            name: "TesseraAuthSberID",
            dependencies: ["TesseraAuth", "TesseraAuthCore"]
        ),
        // Firebase's email-link shapes (EmailLinkAuth, ActionCodeSettings, AuthDataResult,
        // EmailLinkError) over TesseraAuth's EmailLinkClient: `import TesseraAuthFirebase`.
        .target(
            name: "TesseraAuthFirebase",
            dependencies: ["TesseraAuth", "TesseraAuthCore"]
        ),
        .testTarget(name: "TesseraCoreTests", dependencies: ["TesseraCore"]),
        // The SDK's own tests, without a server (the SDK against a running provider is tested in
        // the server's package, Server/Tests/TesseraAuthIntegrationTests).
        .testTarget(name: "TesseraAuthTests", dependencies: ["TesseraAuth", "TesseraAuthCore", "TesseraCore", "TesseraAuthSberID", "TesseraAuthMSAL", "TesseraAuthFirebase"]),
    ],
    swiftLanguageModes: [.v6]
)
