import Foundation
import Testing
import TesseraAuth
import TesseraCore

func temporaryDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("tessera-auth-\(UUID().uuidString)", isDirectory: true)
}

let sampleTokens = TokenSet(accessToken: "at-1", expiresAt: Date(timeIntervalSince1970: 1_800_000_900), refreshToken: "rt-1",
                            idToken: "id.token.here", scope: "openid email", issuer: "https://id.example.com", clientID: "app")

@Suite("Token storage")
struct TokenStoreTests {
    @Test("the file is written 0600 in a directory created 0700, and read back")
    func filePermissions() async throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let file = root.appendingPathComponent("tessera/tokens.json")
        let store = FileTokenStore(fileURL: file)
        #expect(try await store.load() == nil)
        try await store.save(sampleTokens)
        #expect(permissions(file.path) == 0o600)
        #expect(permissions(file.deletingLastPathComponent().path) == 0o700)
        #expect(try await store.load() == sampleTokens)
        // No temporary file is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path) == ["tokens.json"])
    }

    @Test("rewriting a file someone made world-readable leaves it 0600")
    func rewriteNarrows() async throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let file = root.appendingPathComponent("tokens.json")
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data("{}".utf8), attributes: [.posixPermissions: 0o644]))
        let store = FileTokenStore(fileURL: file)
        var tokens = sampleTokens
        tokens.refreshToken = "rt-2"
        try await store.save(tokens)
        #expect(permissions(file.path) == 0o600)
        #expect(try await store.load()?.refreshToken == "rt-2")
    }

    @Test("remove forgets the file; removing twice is fine")
    func remove() async throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FileTokenStore(fileURL: root.appendingPathComponent("t/tokens.json"))
        try await store.save(sampleTokens)
        try await store.remove()
        try await store.remove()
        #expect(try await store.load() == nil)
    }

    @Test("a file that doesn't hold tokens is a storage error")
    func garbage() async throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let file = root.appendingPathComponent("tokens.json")
        try Data("not json".utf8).write(to: file)
        await #expect { try await FileTokenStore(fileURL: file).load() } throws: { ($0 as? AuthError)?.code == .storage }
    }

    @Test("the default file is under the XDG config directory")
    func defaultLocation() {
        #expect(FileTokenStore.defaultFileURL.path.hasSuffix("/tessera/tokens.json"))
    }

    @Test("the memory store keeps what it's given")
    func memory() async throws {
        let store = MemoryTokenStore()
        try await store.save(sampleTokens)
        #expect(try await store.load() == sampleTokens)
        try await store.remove()
        #expect(try await store.load() == nil)
    }
}

@Suite("TokenSet")
struct TokenSetTests {
    @Test("JSON with the wire names and expires_at in Unix seconds")
    func coding() throws {
        let json = String(decoding: try CanonicalJSON.encode(sampleTokens), as: UTF8.self)
        #expect(json.contains("\"expires_at\":1800000900"))
        #expect(json.contains("\"refresh_token\":\"rt-1\""))
        #expect(try JSONDecoder().decode(TokenSet.self, from: Data(json.utf8)) == sampleTokens)
    }

    @Test("a refresh answer without refresh token, ID token or scope keeps the previous ones (RFC 6749 §6)")
    func merge() {
        let response = TokenResponse(accessToken: "at-2", expiresIn: 900)
        let merged = TokenSet(response: response, receivedAt: Date(timeIntervalSince1970: 1_900_000_000), previous: sampleTokens)
        #expect(merged.accessToken == "at-2")
        #expect(merged.refreshToken == "rt-1" && merged.idToken == "id.token.here" && merged.scope == "openid email")
        #expect(merged.expiresAt == Date(timeIntervalSince1970: 1_900_000_900))
        #expect(merged.issuer == "https://id.example.com" && merged.clientID == "app")
    }

    @Test("validity counts the margin")
    func validity() {
        #expect(sampleTokens.isAccessTokenValid(at: Date(timeIntervalSince1970: 1_800_000_000)))
        #expect(!sampleTokens.isAccessTokenValid(at: Date(timeIntervalSince1970: 1_800_000_850), margin: 60))
        #expect(TokenSet(accessToken: "x").isAccessTokenValid())
        #expect(sampleTokens.authorizationHeader == "Bearer at-1")
    }
}
