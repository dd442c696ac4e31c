import Foundation
import Testing
@testable import TesseraCore

@Suite("PKCE")
struct PKCETests {
    @Test("S256 matches RFC 7636 Appendix B")
    func appendixB() {
        #expect(PKCE.createChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test("verifiers are 43 unreserved characters and all differ")
    func verifiers() {
        let a = PKCE.createVerifier(), b = PKCE.createVerifier()
        #expect(a != b)
        #expect(PKCE.isValidVerifier(a))
        #expect(!PKCE.isValidVerifier("short"))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 42) + "!"))
        #expect(PKCE.isValidChallenge(PKCE.createChallenge(a)))
    }
}

@Suite("SecureRandom")
struct SecureRandomTests {
    @Test("bytes of every length, each byte from the generator: no length is short, no tail left at zero", arguments: [0, 1, 7, 8, 9, 12, 32, 33])
    func lengths(count: Int) {
        let draws = (0..<64).map { _ in SecureRandom.bytes(count) }
        #expect(draws.allSatisfy { $0.count == count })
        guard count > 0 else { return }
        // Over 64 draws every position takes a non-zero value at least once (a byte left unfilled stays 0).
        for position in 0..<count { #expect(draws.contains { $0[position] != 0 }, "byte \(position) of \(count)") }
        #expect(Set(draws).count == (count >= 4 ? 64 : Set(draws).count))
        #expect(SecureRandom.token(bytes: 12).count == 16)
    }
}

@Suite("Scopes")
struct ScopeTests {
    @Test("a scope string parses into an ordered set without duplicates")
    func parsing() {
        let set = ScopeSet(parsing: "openid  email openid profile")
        #expect(set.values == ["openid", "email", "profile"])
        #expect(set.description == "openid email profile")
        #expect(ScopeSet(parsing: "email").isSubset(of: set))
        #expect(!ScopeSet(parsing: "phone").isSubset(of: set))
    }

    @Test("scopes map to the OpenID claims")
    func claims() {
        #expect(ScopeCatalogue.claims(for: ["email"]) == ["email", "email_verified"])
        #expect(ScopeCatalogue.claims(for: ["profile"]).contains("name"))
        #expect(ScopeCatalogue.claims(for: ["unknown"]).isEmpty)
    }
}

@Suite("OAuth errors")
struct OAuthErrorTests {
    @Test("codes carry the HTTP status of RFC 6749 and RFC 6750")
    func statuses() {
        #expect(OAuthError(.invalidClient).status == 401)
        #expect(OAuthError(.invalidGrant).status == 400)
        #expect(OAuthError(.insufficientScope).status == 403)
        #expect(OAuthError(.serverError).status == 500)
    }

    @Test("the response body never contains the log-only detail")
    func detailStaysPrivate() {
        let error = OAuthError(.invalidGrant, "bad code", detail: "row 17 had hash abc")
        #expect(error.responseBody == ["error": "invalid_grant", "error_description": "bad code"])
    }

    @Test("unknown codes round-trip")
    func unknownCode() throws {
        let code = try JSONDecoder().decode(OAuthError.Code.self, from: Data(#""slow_down""#.utf8))
        #expect(code.rawValue == "slow_down")
    }
}

@Suite("Form encoding")
struct FormEncodingTests {
    @Test("decoding handles plus, percent escapes, UTF-8 and stray percent signs")
    func decode() {
        #expect(FormEncoding.decode("a+b%20c") == "a b c")
        #expect(FormEncoding.decode("%D0%9F%D1%80%D0%B8%D0%B2%D0%B5%D1%82") == "Привет")
        #expect(FormEncoding.decode("100%") == "100%")
        #expect(FormEncoding.decode("%zz%4") == "%zz%4")
        #expect(FormEncoding.decode("%2B") == "+")
    }

    @Test("encoding round-trips every character")
    func roundTrip() {
        let value = "a b+c&d=e/f?g#h%i кириллица 🙂 \u{01}"
        let pairs = FormEncoding.pairs(FormEncoding.encode([("k", value), ("empty", "")]))
        #expect(pairs.count == 2 && pairs[0].0 == "k" && pairs[0].1 == value && pairs[1].1 == "")
    }
}
