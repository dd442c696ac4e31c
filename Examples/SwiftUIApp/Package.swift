// swift-tools-version:6.0
import PackageDescription

// A SwiftUI app on the SDK: sign in (the browser, a password, an email link, a passkey) and
// approve partner apps' requests as the operator's authenticator app. What the screens decide is
// in `SignInModel`, platform-neutral and tested on Linux against a real server; `SignInApp` is
// the SwiftUI views over it (on Linux it builds to a note saying so).
let package = Package(
    name: "tessera-swiftui-example",
    platforms: [.iOS(.v17), .macOS(.v14)],
    dependencies: [
        .package(name: "tessera", path: "../.."),
    ],
    targets: [
        .target(name: "SignInModel", dependencies: [.product(name: "TesseraAuth", package: "tessera")]),
        .executableTarget(name: "SignInApp", dependencies: ["SignInModel", .product(name: "TesseraAuth", package: "tessera")]),
        .testTarget(name: "SignInModelTests", dependencies: ["SignInModel", .product(name: "TesseraAuth", package: "tessera")]),
    ],
    swiftLanguageModes: [.v6]
)
