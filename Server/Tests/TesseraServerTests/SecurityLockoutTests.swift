import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraSQL

@Suite("Security: lockout is not a weapon")
struct LockoutTests {
    func attempt(_ provider: Provider, _ password: String, from address: String, device: KnownDevice? = nil) async throws
        -> Result<User, PasswordSignIn.Failure> {
        try await provider.passwordSignIn.signIn(email: "alice@example.com", password: password,
                                                 from: .init(address: address, device: device))
    }

    @Test("five wrong passwords from one address lock that address out of the account, not the owner elsewhere")
    func perAccountAndAddress() async throws {
        try await withApp { provider, _ in
            for _ in 0..<5 { _ = try await attempt(provider, "wrong guess", from: "198.51.100.1") }
            #expect(try await attempt(provider, "correct horse", from: "198.51.100.1") == .failure(.throttled))
            #expect(try await attempt(provider, "correct horse", from: "203.0.113.7").isSuccess, "the owner, from their own address")
        }
    }

    @Test("guesses from many addresses lock strangers out of the account, but not a browser the owner signed in from")
    func knownDevice() async throws {
        try await withApp(configure: { $0.loginLimits.perAccount = 10 }) { provider, _ in
            let user = try #require(try await provider.store.user(email: "alice@example.com"))
            let device = KnownDevice(userID: user.id, id: "owners-laptop")
            for i in 0..<10 { _ = try await attempt(provider, "wrong guess", from: "198.51.100.\(i)") }
            #expect(try await attempt(provider, "correct horse", from: "203.0.113.7") == .failure(.throttled),
                    "an unknown browser is refused the account's locked state")
            #expect(try await attempt(provider, "correct horse", from: "203.0.113.7", device: device).isSuccess)
            // A device cookie for another account counts for nothing here; its own guesses are limited too.
            let stolen = KnownDevice(userID: "someone-else", id: "x")
            #expect(try await attempt(provider, "correct horse", from: "203.0.113.8", device: stolen) == .failure(.throttled))
            for _ in 0..<5 { _ = try await attempt(provider, "typo", from: "203.0.113.7", device: device) }
            #expect(try await attempt(provider, "correct horse", from: "203.0.113.7", device: device) == .failure(.throttled))
        }
    }

    @Test("credential stuffing from one address is stopped over all accounts")
    func perAddress() async throws {
        try await withApp(configure: { $0.loginLimits.perAddress = 4 }) { provider, _ in
            for i in 0..<4 {
                _ = try await provider.passwordSignIn.signIn(email: "user\(i)@example.com", password: "guess", from: .init(address: "192.0.2.9"))
            }
            #expect(try await attempt(provider, "correct horse", from: "192.0.2.9") == .failure(.throttled))
            #expect(try await attempt(provider, "correct horse", from: "192.0.2.10").isSuccess)
        }
    }

    @Test("a password sign-in sets a signed device cookie; a forged or altered one proves nothing")
    func deviceCookie() async throws {
        try await withApp { provider, browser in
            _ = try await browser.code()
            let value = try #require(browser.cookies["tessera_device"])
            let user = try #require(try await provider.store.user(email: "alice@example.com"))
            func device(_ cookie: String) -> KnownDevice? {
                provider.deviceCookies.device(in: Request(head: .init(method: .get, scheme: "http", authority: "x", path: "/",
                                                                      headerFields: [.cookie: "tessera_device=\(cookie)"]),
                                                          body: .init(buffer: ByteBuffer())))
            }
            #expect(device(value)?.userID == user.id)
            let parts = value.split(separator: ".")
            #expect(device("someone-else.\(parts[1]).\(parts[2])") == nil)
            #expect(device("\(parts[0]).another-id.\(parts[2])") == nil)
            #expect(device("garbage") == nil)
        }
    }
}

extension Result {
    var isSuccess: Bool { if case .success = self { true } else { false } }
}
