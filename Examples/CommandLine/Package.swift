// swift-tools-version:6.0
import PackageDescription

// A command-line app using the SDK as an app does: a package of its own that depends on the
// repository's root package (here by path; an app would use the repository's URL). CI builds it
// and runs it against a real server (Tests/e2e/test_examples.py), so the code the docs show is
// compiled and works.
let package = Package(
    name: "tessera-example",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "tessera", path: "../.."),
    ],
    targets: [
        .executableTarget(name: "tessera-example", dependencies: [.product(name: "TesseraAuth", package: "tessera")]),
    ],
    swiftLanguageModes: [.v6]
)
