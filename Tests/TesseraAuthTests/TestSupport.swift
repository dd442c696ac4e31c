import Foundation
import TesseraAuthCore
import TesseraCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Helpers of the SDK's own tests (no server). The SDK against a running provider is tested in the
// server's package: Server/Tests/TesseraAuthIntegrationTests.

/// An ES256 key and an ID token signer for unit tests of validation.
struct TestSigner {
    let key: JWSSigningKey
    let issuer = "https://id.example.com"
    let clientID = "app"

    init(kid: String = "k1") throws { key = try JWSSigningKey.generate(.es256, kid: kid) }

    /// Claims of a valid ID token issued `now`.
    func claims(now: Date = Date(), nonce: String? = "n-1", extra: [String: JSONValue] = [:]) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "sub": "user-1", "aud": .string(clientID), "azp": .string(clientID),
            "iat": .int(Int64(now.timeIntervalSince1970)), "exp": .int(Int64(now.timeIntervalSince1970) + 600),
        ]
        if let nonce { claims["nonce"] = .string(nonce) }
        claims.merge(extra) { _, new in new }
        return claims
    }

    func sign(_ claims: [String: JSONValue]) throws -> String { try JWT.sign(claims, with: key) }

    var validator: IDTokenValidator { IDTokenValidator(issuer: issuer, clientID: clientID, allowedAlgorithms: [.es256]) }
}

/// The POSIX permission bits of a file.
func permissions(_ path: String) -> Int {
    var info = stat()
    guard stat(path, &info) == 0 else { return -1 }
    return Int(info.st_mode) & 0o777
}

/// A TCP connection to 127.0.0.1:`port` that sends nothing, like a browser's speculative one.
func openIdleConnection(port: UInt16) -> Int32 {
    #if canImport(Darwin)
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #else
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #endif
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    return fd
}
