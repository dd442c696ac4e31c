import Foundation
import Testing
import TesseraAuth
import TesseraCore

func failedCheck(_ body: () throws -> Any) -> AuthError.IDTokenCheck? {
    do {
        _ = try body()
        return nil
    } catch let error as AuthError {
        return error.idTokenCheck
    } catch {
        return nil
    }
}

@Suite("IDTokenValidator")
struct IDTokenValidatorTests {
    let signer: TestSigner
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    init() throws { signer = try TestSigner() }

    func validate(_ claims: [String: JSONValue], nonce: String? = "n-1", accessToken: String? = nil,
                  validator: IDTokenValidator? = nil, at time: Date? = nil) throws -> IDToken {
        try (validator ?? signer.validator).validate(try signer.sign(claims), keys: [signer.key.publicKey], nonce: nonce,
                                                     accessToken: accessToken, now: time ?? now)
    }

    @Test("a valid token yields its claims")
    func valid() throws {
        let token = try validate(signer.claims(now: now, extra: ["email": "a@example.com", "email_verified": true, "name": "Anna"]))
        #expect(token.subject == "user-1")
        #expect(token.email == "a@example.com" && token.emailVerified == true && token.name == "Anna")
        #expect(token.audience == ["app"])
        let user = try #require(AuthUser(idToken: token))
        #expect(user.uid == "user-1" && user.emailVerified && user.name == "Anna")
    }

    @Test("each rule of OpenID Connect Core §3.1.3.7 has its failure", arguments: [
        (["iss": "https://evil.example.com"], AuthError.IDTokenCheck.issuer),
        (["aud": "other-app"], .audience),
        (["aud": .array(["app", "other-app"]), "azp": .null], .authorizedParty),
        (["azp": "other-app"], .authorizedParty),
        (["nonce": "n-2"], .nonce),
        (["nonce": .null], .nonce),
        (["exp": .int(1_800_000_000 - 300)], .expired),
        (["iat": .int(1_800_000_000 + 3600)], .issuedAt),
        (["sub": .null], .format),
    ] as [([String: JSONValue], AuthError.IDTokenCheck)])
    func failures(changes: [String: JSONValue], expected: AuthError.IDTokenCheck) throws {
        var claims = signer.claims(now: now)
        for (name, value) in changes { claims[name] = value == .null ? nil : value }
        #expect(failedCheck { try validate(claims) } == expected)
    }

    @Test("exp and iat are checked with the clock skew")
    func skew() throws {
        var claims = signer.claims(now: now)
        claims["exp"] = .int(1_800_000_000 - 60)
        _ = try validate(claims)
        claims["iat"] = .int(1_800_000_000 + 60)
        _ = try validate(claims)
    }

    @Test("several audiences are fine with azp naming the client")
    func audiences() throws {
        _ = try validate(signer.claims(now: now, extra: ["aud": .array(["app", "api"]), "azp": "app"]))
    }

    @Test("a tampered payload fails the signature")
    func tampered() throws {
        let token = try signer.sign(signer.claims(now: now))
        let parts = token.split(separator: ".").map(String.init)
        let forged = signer.claims(now: now, extra: ["sub": "admin"])
        let payload = Base64URL.encode(try CanonicalJSON.encode(forged))
        let tamperedToken = [parts[0], payload, parts[2]].joined(separator: ".")
        #expect(failedCheck { try signer.validator.validate(tamperedToken, keys: [signer.key.publicKey], nonce: "n-1", now: now) } == .signature)
    }

    @Test("another key's signature, an unknown kid, alg none and unannounced algorithms are refused")
    func keysAndAlgorithms() throws {
        let other = try TestSigner(kid: "k1")
        let token = try other.sign(signer.claims(now: now))
        #expect(failedCheck { try signer.validator.validate(token, keys: [signer.key.publicKey], nonce: "n-1", now: now) } == .signature)

        let stranger = try TestSigner(kid: "k9")
        let unknown = try stranger.sign(signer.claims(now: now))
        #expect(failedCheck { try signer.validator.validate(unknown, keys: [signer.key.publicKey], nonce: "n-1", now: now) } == .unknownKey)

        let header = Base64URL.encode(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))
        let payload = Base64URL.encode(try CanonicalJSON.encode(signer.claims(now: now)))
        #expect(failedCheck { try signer.validator.validate("\(header).\(payload).", keys: [signer.key.publicKey], nonce: "n-1", now: now) } == .algorithm)

        var rsaOnly = signer.validator
        rsaOnly.allowedAlgorithms = [.rs256]
        #expect(failedCheck { try validate(signer.claims(now: now), validator: rsaOnly) } == .algorithm)
        #expect(failedCheck { try signer.validator.validate("not.a.jwt", keys: [], nonce: nil, now: now) } == .format)
    }

    @Test("at_hash must match the access token (§3.1.3.8)")
    func atHash() throws {
        let hash = IDTokenValidator.halfHash("access-1", algorithm: .es256)
        _ = try validate(signer.claims(now: now, extra: ["at_hash": .string(hash)]), accessToken: "access-1")
        #expect(failedCheck { try validate(signer.claims(now: now, extra: ["at_hash": .string(hash)]), accessToken: "access-2") } == .accessTokenHash)
        #expect(IDTokenValidator.halfHash("access-1", algorithm: .edDSA).count == 43)
        #expect(hash.count == 22)
    }

    @Test("a refreshed ID token must be about the same user and authentication (§12.2)")
    func refreshed() throws {
        let original = try validate(signer.claims(now: now, extra: ["auth_time": .int(1_799_999_000)]))
        let claims = signer.claims(now: now, nonce: nil, extra: ["auth_time": .int(1_799_999_000)])
        _ = try signer.validator.validate(try signer.sign(claims), keys: [signer.key.publicKey], nonce: nil, original: original, now: now)
        var other = claims
        other["sub"] = "user-2"
        #expect(failedCheck {
            try signer.validator.validate(try signer.sign(other), keys: [signer.key.publicKey], nonce: nil, original: original, now: now)
        } == .subject)
    }
}
