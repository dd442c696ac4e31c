import Foundation
import FuzzSupport
import TesseraWebAuthn

/// libFuzzer entry point. Every input is tried as each thing a browser sends a relying party:
/// CBOR, authenticator data, a COSE key, clientDataJSON, an attestation object, and, in
/// place of one part of a valid assertion or registration (the WebAuthn Level 3 §16.2 test
/// vector), each of its parts. Nothing may trap, and nothing but the vector's own bytes may verify.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(fuzzInput(start, count))
    checkCBOR(data)
    checkAuthenticatorData(data)
    checkCOSEKey(data)
    checkClientData(data)
    checkRegistration(attestationObject: data)
    checkRegistration(clientDataJSON: data)
    checkAssertion(data)
    return 0
}

/// The §16.2 ceremony ("ES256 Credential with No Attestation"): RP ID example.org, origin
/// https://example.org. Kept as byte arrays, which LeakSanitizer follows, rather than `Data`
/// or keys, whose references Swift may keep in an enum payload's spare bits, so that the
/// process-lifetime globals are not reported as leaks.
enum Vector {
    static var relyingParty: RelyingParty { RelyingParty(id: "example.org", origins: ["https://example.org"]) }
    static let registrationChallenge = hex("00c30fb78531c464d2b6771dab8d7b603c01162f2fa486bea70f283ae556e130")
    static let registrationClientDataJSON = hex("7b2274797065223a22776562617574686e2e637265617465222c226368616c6c656e6765223a22414d4d507434557878475453746e63647134313759447742466938767049612d7077386f4f755657345441222c226f726967696e223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c73652c22657874726144617461223a22636c69656e74446174614a534f4e206d617920626520657874656e6465642077697468206164646974696f6e616c206669656c647320696e20746865206675747572652c207375636820617320746869733a20426b5165446a646354427258426941774a544c453551227d")
    static let attestationObject = hex("a363666d74646e6f6e656761747453746d74a068617574684461746158a4bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b559000000008446ccb9ab1db374750b2367ff6f3a1f0020f91f391db4c9b2fde0ea70189cba3fb63f579ba6122b33ad94ff3ec330084be4a5010203262001215820afefa16f97ca9b2d23eb86ccb64098d20db90856062eb249c33a9b672f26df61225820930a56b87a2fca66334b03458abf879717c12cc68ed73290af2e2664796b9220")
    static let authenticationChallenge = hex("39c0e7521417ba54d43e8dc95174f423dee9bf3cd804ff6d65c857c9abf4d408")
    static let authenticationClientDataJSON = hex("7b2274797065223a22776562617574686e2e676574222c226368616c6c656e6765223a224f63446e55685158756c5455506f334a5558543049393770767a7a59425039745a63685879617630314167222c226f726967696e223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c73657d")
    static let authenticatorData = hex("bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b51900000000")
    static let signature = hex("3046022100f50a4e2e4409249c4a853ba361282f09841df4dd4547a13a87780218deffcd380221008480ac0f0b93538174f575bf11a1dd5d78c6e486013f937295ea13653e331e87")

    /// The credential key's COSE bytes, registered through the code under test: the fuzzer
    /// starts from a ceremony that verifies.
    static let credentialKey: [UInt8] = {
        let result = try? WebAuthn.verifyRegistration(clientDataJSON: Data(registrationClientDataJSON), attestationObject: Data(attestationObject),
                                                      expectedChallenge: Data(registrationChallenge), relyingParty: relyingParty,
                                                      requireUserVerification: false)
        require(result != nil, "the §16.2 registration verifies")
        let key = result!.publicKey
        require((try? verifyAssertion(key: key)) != nil, "the §16.2 assertion verifies")
        return Array(key.coseBytes)
    }()

    static func verifyAssertion(clientDataJSON: Data = Data(authenticationClientDataJSON), authenticatorData: Data = Data(authenticatorData),
                                signature: Data = Data(signature), key: CredentialPublicKey? = nil) throws -> AssertionResult {
        try WebAuthn.verifyAssertion(clientDataJSON: clientDataJSON, authenticatorData: authenticatorData, signature: signature,
                                     expectedChallenge: Data(authenticationChallenge), relyingParty: relyingParty,
                                     credentialPublicKey: key ?? CredentialPublicKey(cose: Data(credentialKey)), storedSignCount: 0,
                                     requireUserVerification: false)
    }

    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<($0 + 2)], as: UTF8.self), radix: 16)! }
    }
}

/// The decoder reports how much it read, and that prefix alone decodes to the same item;
/// the whole input decodes exactly when nothing follows the item.
func checkCBOR(_ data: Data) {
    guard let (value, count) = try? CBORDecoder.decodePrefix(data) else {
        require((try? CBORDecoder.decode(data)) == nil, "decode accepts only what decodePrefix accepts")
        return
    }
    require(count > 0 && count <= data.count, "the item's length lies within the input")
    require((try? CBORDecoder.decode(data.prefix(count))) == value, "the item's own bytes decode to the same item")
    require(((try? CBORDecoder.decode(data)) != nil) == (count == data.count), "decode refuses exactly the inputs with bytes after the item")
}

/// Parsed authenticator data is its input: the flags announce exactly the parts present, the
/// credential key's COSE bytes are the input's bytes right after the credential ID and parse
/// alone to the same key.
func checkAuthenticatorData(_ data: Data) {
    guard let parsed = try? AuthenticatorData(bytes: data) else { return }
    let bytes = [UInt8](data)
    require(parsed.bytes == data && parsed.rpIDHash == Data(bytes[0..<32]), "the bytes and RP ID hash are the input's")
    require(parsed.flags.rawValue == bytes[32], "the flags are the input's")
    require((parsed.attestedCredential != nil) == parsed.flags.contains(.attestedCredentialData), "attested credential data exactly with AT")
    require((parsed.extensions != nil) == parsed.flags.contains(.extensionData), "extensions exactly with ED")
    guard let credential = parsed.attestedCredential else {
        require(parsed.extensions != nil || bytes.count == 37, "without AT and ED the data is 37 bytes")
        return
    }
    require(credential.aaguid == Data(bytes[37..<53]), "the AAGUID is bytes 37..<53")
    require(credential.credentialID.count <= 1023, "credential IDs are at most 1023 bytes")
    let keyStart = 55 + credential.credentialID.count
    let cose = credential.publicKey.coseBytes
    require(bytes.count >= keyStart + cose.count && Data(bytes[keyStart..<(keyStart + cose.count)]) == cose, "the COSE bytes are the input's")
    require((try? CredentialPublicKey(cose: cose))?.algorithm == credential.publicKey.algorithm, "the COSE bytes parse alone to the same key")
}

/// A key that parses keeps its bytes, and accepts no empty signature and no signature of its own bytes made from nothing.
func checkCOSEKey(_ data: Data) {
    guard let key = try? CredentialPublicKey(cose: data) else { return }
    require(key.coseBytes == data, "coseBytes are the input")
    require(!key.isValidSignature(Data(), for: data), "an empty signature never verifies")
    _ = key.isValidSignature(data, for: data)
}

/// Client data that parses parses again the same; verification of it never traps.
func checkClientData(_ data: Data) {
    guard let parsed = try? ClientData(json: data) else { return }
    require((try? ClientData(json: data)) == parsed, "parsing is deterministic")
}

/// An attestation object that verifies with the §16.2 client data carries authenticator data
/// for example.org with UP set, and a credential key that parses from its stored bytes.
func checkRegistration(attestationObject data: Data) {
    guard let result = try? WebAuthn.verifyRegistration(clientDataJSON: Data(Vector.registrationClientDataJSON), attestationObject: data,
                                                        expectedChallenge: Data(Vector.registrationChallenge), relyingParty: Vector.relyingParty,
                                                        requireUserVerification: false) else { return }
    require(["none", "packed"].contains(result.attestationFormat), "only none and packed verify")
    require(result.credentialID.count <= 1023, "credential IDs are at most 1023 bytes")
    let authData = (try? CBORDecoder.decode(data))?["authData"]?.bytesValue
    let parsed = authData.flatMap { try? AuthenticatorData(bytes: $0) }
    require(parsed?.userPresent == true, "a verified registration has UP")
    require(parsed?.rpIDHash == Data(Vector.authenticatorData.prefix(32)), "a verified registration is for example.org (the vector's RP ID hash)")
    require(!(parsed?.backedUp == true && parsed?.backupEligible == false), "a verified registration has no BS without BE")
    require((try? CredentialPublicKey(cose: result.publicKey.coseBytes)) == result.publicKey, "the stored key parses again")
}

/// Client data that verifies with the §16.2 attestation object says webauthn.create, the
/// challenge and the origin, and nothing about iframes.
func checkRegistration(clientDataJSON data: Data) {
    guard (try? WebAuthn.verifyRegistration(clientDataJSON: data, attestationObject: Data(Vector.attestationObject),
                                            expectedChallenge: Data(Vector.registrationChallenge), relyingParty: Vector.relyingParty,
                                            requireUserVerification: false)) != nil else { return }
    let parsed = try? ClientData(json: data)
    require(parsed?.type == "webauthn.create" && parsed?.challenge == Data(Vector.registrationChallenge), "type and challenge are checked")
    require(parsed?.origin == "https://example.org", "the origin is checked")
    require(parsed?.crossOrigin != true && parsed?.topOrigin == nil, "cross-origin use is refused")
}

/// The §16.2 assertion's signature binds its authenticator data and client data: replacing
/// either with anything else never verifies. Any input as the signature never traps.
func checkAssertion(_ data: Data) {
    _ = Vector.credentialKey
    if (try? Vector.verifyAssertion(authenticatorData: data)) != nil {
        require(data.elementsEqual(Vector.authenticatorData), "only the signed authenticator data verifies")
    }
    if (try? Vector.verifyAssertion(clientDataJSON: data)) != nil {
        require(data.elementsEqual(Vector.authenticationClientDataJSON), "only the signed client data verifies")
    }
    _ = try? Vector.verifyAssertion(signature: data)
    if let key = try? CredentialPublicKey(cose: data) {
        _ = try? Vector.verifyAssertion(key: key)
    }
}
