// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for TesseraCore's and TesseraWebAuthn's parsers. Not part of the main build or CI:
// `scripts/fuzz` builds this package with `-sanitize=fuzzer,address` and runs each target.
let package = Package(
    name: "tessera-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named, so the product reference does not depend on the checkout's folder name.
        .package(name: "tessera", path: ".."),
        .package(name: "tessera-server", path: "../Server"),
    ],
    targets: [
        .target(name: "FuzzSupport"),
        .executableTarget(name: "FuzzJOSE", dependencies: ["FuzzSupport", .product(name: "TesseraCore", package: "tessera")]),
        .executableTarget(name: "FuzzForm", dependencies: ["FuzzSupport", .product(name: "TesseraCore", package: "tessera")]),
        .executableTarget(name: "FuzzClaims", dependencies: ["FuzzSupport", .product(name: "TesseraCore", package: "tessera")]),
        .executableTarget(name: "FuzzJSON", dependencies: ["FuzzSupport", .product(name: "TesseraCore", package: "tessera")]),
        .executableTarget(name: "FuzzWebAuthn", dependencies: ["FuzzSupport", .product(name: "TesseraWebAuthn", package: "tessera-server")]),
    ],
    swiftLanguageModes: [.v6]
)
