import Foundation
import Testing
import TesseraAuth
import TesseraCore
import TesseraDomain
import TesseraNode
import TesseraServer
import TesseraTestSupport

/// Passkeys in an app, through the SDK against the provider: the account API makes one (its
/// options, then what the platform answered), the native API signs in with it (no address),
/// and the raw parts a platform hands out become the same WebAuthn JSON the browser sends.
/// `SoftwareAuthenticator` plays the platform's passkey API.
@Suite("Passkeys through the SDK against the provider")
struct PasskeyClientTests {
    @Test("added through the account API, signed in with at the native API (amr hwk pin mfa); removed, it signs nobody in")
    func addSignInRemove() async throws {
        try await withLiveProvider { live in
            let client = live.nativeClient()
            guard case .completed(let signedIn) = await client.signIn(username: aliceEmail, password: alicePassword) else {
                Issue.record("Alice signs in with her password"); return
            }
            let session = AuthState(client: client.oidc)
            try await session.adopt(signedIn)
            let account = AccountClient(state: session)
            #expect(try await account.passkeys().isEmpty)

            let origin = live.issuer.absoluteString.hasSuffix("/") ? String(live.issuer.absoluteString.dropLast()) : live.issuer.absoluteString
            var device = SoftwareAuthenticator(origin: origin)
            let options = try await account.passkeyCreationOptions()
            #expect(options.rp.id == live.issuer.host && options.challengeBytes?.count == 32 && options.userIDBytes?.count == 32)
            // The platform hands out raw parts; the SDK makes the JSON.
            let made = device.register(options)
            let raw = PasskeyRegistration(credentialID: try #require(Base64URL.decode(made.rawId)),
                                          clientDataJSON: try #require(Base64URL.decode(made.response.clientDataJSON)),
                                          attestationObject: try #require(Base64URL.decode(made.response.attestationObject)))
            let added = try await account.addPasskey(raw, name: "Alice's phone")
            #expect(added.name == "Alice's phone" && !added.synced && !added.blocked && added.id == device.credentialIDText)
            #expect(try await account.passkeys().map(\.id) == [added.id])
            await #expect { _ = try await account.addPasskey(raw) } throws: { ($0 as? AuthError)?.code == .invalidPasskey }

            let requestOptions = try await client.passkeySignInOptions()
            #expect(requestOptions.rpId == live.issuer.host && requestOptions.allowCredentials.isEmpty)
            let asserted = device.assert(requestOptions)
            let assertion = PasskeyAssertion(credentialID: try #require(Base64URL.decode(asserted.rawId)),
                                             clientDataJSON: try #require(Base64URL.decode(asserted.response.clientDataJSON)),
                                             authenticatorData: try #require(Base64URL.decode(asserted.response.authenticatorData)),
                                             signature: try #require(Base64URL.decode(asserted.response.signature)),
                                             userHandle: asserted.response.userHandle.flatMap { Base64URL.decode($0) })
            #expect(assertion == asserted, "the raw parts make the browser's JSON")
            let result = try await client.signIn(passkey: assertion)
            #expect(result.user?.email == aliceEmail && result.idToken?.authenticationMethods == ["hwk", "pin", "mfa"])
            // The challenge was used: the same assertion again is refused.
            await #expect { _ = try await client.signIn(passkey: assertion) } throws: { error in
                (error as? AuthError)?.code == .invalidPasskey
            }

            try await account.removePasskey(id: added.id)
            await #expect { try await account.removePasskey(id: added.id) } throws: { ($0 as? AuthError)?.code == .notFound }
            let again = device.assert(try await client.passkeySignInOptions())
            await #expect { _ = try await client.signIn(passkey: again) } throws: { error in
                (error as? AuthError)?.code == .invalidPasskey
            }
        }
    }

    @Test("each challenge is a stored row: asking for them counts as sign-ins started, so a network can't fill the table")
    func challengesAreCounted() async throws {
        try await withLiveProvider(configure: { $0.workLimits.flowsPerAddress = 3 }) { live in
            let client = live.nativeClient()
            for _ in 0..<3 { _ = try await client.passkeySignInOptions() }
            await #expect { _ = try await client.passkeySignInOptions() } throws: { error in
                let failure = error as? AuthError
                return failure?.code == .slowDown && failure?.serverError == "slow_down" && failure?.retryAfter != nil
            }
        }
    }
}
