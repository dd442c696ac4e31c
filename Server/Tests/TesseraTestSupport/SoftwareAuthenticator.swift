import Crypto
import Foundation
import TesseraCore

/// A passkey authenticator in software, for tests: it answers the provider's WebAuthn options
/// the way a browser and a platform authenticator together would (client data, authenticator
/// data, a `none` attestation, an ES256 signature), with switches for what tests need to
/// vary (the origin, user verification, backup flags, the counter).
package struct SoftwareAuthenticator: Sendable {
    package let key = P256.Signing.PrivateKey()
    package let credentialID = Data(SecureRandom.bytes(16))
    package var signCount: UInt32 = 0
    /// Counts up by this much per signature (0: a synced passkey that doesn't count).
    package var counterStep: UInt32 = 1
    package var origin: String
    package var userVerified = true
    package var backupEligible = false
    package var backedUp = false
    /// The user handle the options gave at registration, sent back with each assertion.
    package var userHandle: String?

    package init(origin: String) {
        self.origin = origin
    }

    package var credentialIDText: String { Base64URL.encode(credentialID) }

    /// `navigator.credentials.create`'s answer to `options`.
    package mutating func register(_ options: PasskeyCreationOptions) -> PasskeyRegistration {
        userHandle = options.user.id
        let clientData = Self.clientData(type: "webauthn.create", challenge: options.challenge, origin: origin)
        var attested = Data(credentialID.count.bigEndianBytes(2))
        attested = Data(repeating: 0, count: 16) + attested + credentialID + cosePublicKey
        let authData = authenticatorData(rpID: options.rp.id, attested: attested)
        let attestation = CBORWriter.map([
            (CBORWriter.text("fmt"), CBORWriter.text("none")),
            (CBORWriter.text("attStmt"), CBORWriter.map([])),
            (CBORWriter.text("authData"), CBORWriter.bytes(authData)),
        ])
        return PasskeyRegistration(id: credentialIDText, rawId: credentialIDText,
                                   response: .init(clientDataJSON: Base64URL.encode(clientData), attestationObject: Base64URL.encode(attestation),
                                                   transports: ["internal"]),
                                   authenticatorAttachment: "platform")
    }

    /// `navigator.credentials.get`'s answer to `options`.
    package mutating func assert(_ options: PasskeyRequestOptions) -> PasskeyAssertion {
        let clientData = Self.clientData(type: "webauthn.get", challenge: options.challenge, origin: origin)
        let authData = authenticatorData(rpID: options.rpId, attested: nil)
        let signature = try! key.signature(for: authData + Data(SHA256.hash(data: clientData))).derRepresentation
        return PasskeyAssertion(id: credentialIDText, rawId: credentialIDText,
                                response: .init(clientDataJSON: Base64URL.encode(clientData), authenticatorData: Base64URL.encode(authData),
                                                signature: Base64URL.encode(signature), userHandle: userHandle))
    }

    /// The credential public key as COSE (RFC 9053 EC2, P-256, ES256).
    package var cosePublicKey: Data {
        let point = key.publicKey.x963Representation
        return CBORWriter.map([
            (CBORWriter.int(1), CBORWriter.int(2)), (CBORWriter.int(3), CBORWriter.int(-7)), (CBORWriter.int(-1), CBORWriter.int(1)),
            (CBORWriter.int(-2), CBORWriter.bytes(point.dropFirst().prefix(32))), (CBORWriter.int(-3), CBORWriter.bytes(point.suffix(32))),
        ])
    }

    mutating func authenticatorData(rpID: String, attested: Data?) -> Data {
        signCount += counterStep
        var flags: UInt8 = 0x01
        if userVerified { flags |= 0x04 }
        if backupEligible { flags |= 0x08 }
        if backedUp { flags |= 0x10 }
        if attested != nil { flags |= 0x40 }
        return Data(SHA256.hash(data: Data(rpID.utf8))) + [flags] + Int(signCount).bigEndianBytes(4) + (attested ?? Data())
    }

    package static func clientData(type: String, challenge: String, origin: String) -> Data {
        Data(#"{"type":"\#(type)","challenge":"\#(challenge)","origin":"\#(origin)","crossOrigin":false}"#.utf8)
    }
}

/// Just enough CBOR (RFC 8949) writing for the authenticator above.
package enum CBORWriter {
    static func head(_ major: UInt8, _ value: UInt64) -> Data {
        switch value {
        case 0..<24: Data([major << 5 | UInt8(value)])
        case 24..<256: Data([major << 5 | 24, UInt8(value)])
        case 256..<65536: Data([major << 5 | 25]) + Int(value).bigEndianBytes(2)
        default: Data([major << 5 | 26]) + Int(value).bigEndianBytes(4)
        }
    }

    package static func int(_ value: Int) -> Data { value >= 0 ? head(0, UInt64(value)) : head(1, UInt64(-1 - value)) }
    package static func bytes(_ value: some DataProtocol) -> Data { head(2, UInt64(value.count)) + Data(value) }
    package static func text(_ value: String) -> Data { head(3, UInt64(value.utf8.count)) + Data(value.utf8) }
    package static func map(_ pairs: [(Data, Data)]) -> Data { pairs.reduce(head(5, UInt64(pairs.count))) { $0 + $1.0 + $1.1 } }
}

extension Int {
    /// The low `count` bytes, most significant first.
    func bigEndianBytes(_ count: Int) -> Data {
        Data((0..<count).reversed().map { UInt8(truncatingIfNeeded: self >> ($0 * 8)) })
    }
}
