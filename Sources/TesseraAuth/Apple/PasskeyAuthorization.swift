#if canImport(AuthenticationServices) && (os(iOS) || os(macOS))
import AuthenticationServices
import Foundation
import TesseraAuthCore
import TesseraCore

// The glue between Tessera's passkey options and AuthenticationServices (iOS 15, macOS 12):
// the requests to hand an `ASAuthorizationController`, and the WebAuthn JSON of what it
// answers. Everything else (the calls, the JSON from raw parts) is platform-neutral and tested
// in TesseraAuthCore. The app's associated domains need `webcredentials:<issuer host>`; the
// issuer serves the matching apple-app-site-association (docs/passkeys.md).
//
// ```swift
// let options = try await native.passkeySignInOptions()
// let controller = ASAuthorizationController(authorizationRequests: [try options.assertionRequest()])
// // ... in the delegate's didCompleteWithAuthorization:
// if let credential = authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion {
//     let result = try await native.signIn(passkey: PasskeyAssertion(credential))
// }
// ```

@available(iOS 15.0, macOS 12.0, *)
extension PasskeyRequestOptions {
    /// The assertion request for these options (discoverable: the platform offers the
    /// passkeys it holds for the relying party).
    public func assertionRequest() throws -> ASAuthorizationPlatformPublicKeyCredentialAssertionRequest {
        guard let challenge = challengeBytes else { throw AuthError.invalidResponse("the passkey challenge is not base64url") }
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: rpId)
        let request = provider.createCredentialAssertionRequest(challenge: challenge)
        request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: userVerification)
        return request
    }
}

@available(iOS 15.0, macOS 12.0, *)
extension PasskeyCreationOptions {
    /// The registration request for these options: the account's name and opaque user handle.
    public func registrationRequest() throws -> ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest {
        guard let challenge = challengeBytes, let userID = userIDBytes else {
            throw AuthError.invalidResponse("the passkey options' challenge or user id is not base64url")
        }
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: rp.id)
        let request = provider.createCredentialRegistrationRequest(challenge: challenge, name: user.name, userID: userID)
        request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(
            rawValue: authenticatorSelection.userVerification)
        return request
    }
}

@available(iOS 15.0, macOS 12.0, *)
extension PasskeyAssertion {
    /// What the platform answered to ``PasskeyRequestOptions/assertionRequest()``, as WebAuthn JSON.
    public init(_ credential: ASAuthorizationPlatformPublicKeyCredentialAssertion) {
        self.init(credentialID: credential.credentialID, clientDataJSON: credential.rawClientDataJSON,
                  authenticatorData: credential.rawAuthenticatorData, signature: credential.signature, userHandle: credential.userID)
    }
}

@available(iOS 15.0, macOS 12.0, *)
extension PasskeyRegistration {
    /// What the platform answered to ``PasskeyCreationOptions/registrationRequest()``, as WebAuthn JSON.
    public init(_ credential: ASAuthorizationPlatformPublicKeyCredentialRegistration) throws {
        guard let attestation = credential.rawAttestationObject else {
            throw AuthError.invalidResponse("the platform made a passkey without an attestation object")
        }
        self.init(credentialID: credential.credentialID, clientDataJSON: credential.rawClientDataJSON, attestationObject: attestation)
    }
}
#endif
