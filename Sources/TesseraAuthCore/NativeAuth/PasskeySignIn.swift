import Foundation
import TesseraCore

// Passkeys in an app (docs/passkeys.md): the server's options go to the platform's passkey API
// (`ASAuthorizationPlatformPublicKeyCredentialProvider` on iOS and macOS, Credential Manager
// on Android), and what it answers comes back here. This file is the platform-neutral part:
// the calls, and the WebAuthn JSON made from the raw pieces every platform hands out.
// `TesseraAuth`'s Apple file is only the glue to AuthenticationServices.

extension NativeAuthClient {
    /// A challenge for signing in with a passkey (`/passkey/v1.0/options`): no address is
    /// needed, the platform offers the passkeys it holds for the issuer's domain.
    public func passkeySignInOptions() async throws -> PasskeyRequestOptions {
        try await post(.passkeyOptions, []).decode(PasskeyRequestOptions.self, "passkey request options")
    }

    /// Signs in with what the platform's passkey API answered to ``passkeySignInOptions()``
    /// (`/passkey/v1.0/signin`): validated tokens; `amr` says `hwk` or `swk`, with `pin` and
    /// `mfa` when the device verified the person.
    ///
    /// - Throws: ``AuthError`` — ``AuthError/Code/invalidPasskey`` (refused: its challenge,
    ///   origin, signature…; ask for new options), suberror `passkey_blocked`, or `mfa_required` for a
    ///   passkey that didn't verify the person of an account with two-step verification
    ///   (``mfaRequired(by:username:scopes:)`` goes on).
    public func signIn(passkey assertion: PasskeyAssertion, scopes: [String]? = nil) async throws -> AuthorizationResult {
        var scope = scopes ?? configuration.scopes
        if !scope.contains("openid") { scope.insert("openid", at: 0) }
        let credential = String(decoding: try CanonicalJSON.encode(assertion), as: UTF8.self)
        let receivedAt = oidc.now()
        let answer = try await post(.passkeySignIn, [("credential", credential), ("scope", scope.joined(separator: " "))])
        return try await authorizationResult(from: try answer.decode(TokenResponse.self, "token response"), receivedAt: receivedAt)
    }
}

extension PasskeyAssertion {
    /// The WebAuthn JSON of an assertion from its raw parts, as a platform's passkey API hands
    /// them out (`credentialID`, `rawClientDataJSON`, `rawAuthenticatorData`, `signature`, `userID`).
    public init(credentialID: Data, clientDataJSON: Data, authenticatorData: Data, signature: Data, userHandle: Data?) {
        let id = Base64URL.encode(credentialID)
        self.init(id: id, rawId: id, response: Response(clientDataJSON: Base64URL.encode(clientDataJSON),
                                                        authenticatorData: Base64URL.encode(authenticatorData),
                                                        signature: Base64URL.encode(signature),
                                                        userHandle: userHandle.map { Base64URL.encode($0) }))
    }
}

extension PasskeyRegistration {
    /// The WebAuthn JSON of a new passkey from its raw parts (`credentialID`,
    /// `rawClientDataJSON`, `rawAttestationObject`).
    public init(credentialID: Data, clientDataJSON: Data, attestationObject: Data, transports: [String]? = ["internal", "hybrid"],
                authenticatorAttachment: String? = "platform") {
        let id = Base64URL.encode(credentialID)
        self.init(id: id, rawId: id, response: Response(clientDataJSON: Base64URL.encode(clientDataJSON),
                                                        attestationObject: Base64URL.encode(attestationObject), transports: transports),
                  authenticatorAttachment: authenticatorAttachment)
    }
}

extension PasskeyRequestOptions {
    /// The challenge's bytes, for the platform's passkey API.
    public var challengeBytes: Data? { Base64URL.decode(challenge) }
}

extension PasskeyCreationOptions {
    /// The challenge's bytes, for the platform's passkey API.
    public var challengeBytes: Data? { Base64URL.decode(challenge) }
    /// The user handle's bytes (an opaque id, never the address).
    public var userIDBytes: Data? { Base64URL.decode(user.id) }
}
