// swift-tools-version:6.0
import PackageDescription

// The SDK's examples, a package depending on the repository's root package as an app's does (here
// by path; an app would use the repository's URL):
//
// - `tessera-example`: a command-line app — native sign-in, refresh, Native SSO to a sibling app,
//   a partner's sign-in approved by the authenticator app. Tests/e2e/test_examples.py runs it
//   against the release server.
// - `SignInApp`: a SwiftUI app (iOS 17, macOS 14; on Linux it builds to a note) whose screens
//   only draw `SignInModel`, the platform-neutral model that `SignInModelTests` drives on Linux
//   against a real `tessera serve` (TESSERA_BIN).
let package = Package(
    name: "tessera-examples",
    platforms: [.iOS(.v17), .macOS(.v14)],
    dependencies: [
        .package(name: "tessera", path: ".."),
    ],
    targets: [
        .executableTarget(name: "tessera-example", dependencies: [.product(name: "TesseraAuth", package: "tessera")]),
        .target(name: "SignInModel", dependencies: [.product(name: "TesseraAuth", package: "tessera")]),
        .executableTarget(name: "SignInApp", dependencies: ["SignInModel", .product(name: "TesseraAuth", package: "tessera")]),
        .testTarget(name: "SignInModelTests", dependencies: ["SignInModel", .product(name: "TesseraAuth", package: "tessera")]),
    ],
    swiftLanguageModes: [.v6]
)
