import Crypto
import CryptoExtras
import Foundation
import TesseraWebAuthn
import X509

// A test-only authenticator: it makes authenticator data, COSE keys, attestation objects,
// client data and signatures with swift-crypto keys, so each rule can be broken one at a
// time on otherwise valid input. Its CBOR encoder is separate from the decoder under test.

extension Data {
    /// Bytes from a hex string (the spec's test vectors); traps on bad hex, which is a test bug.
    init(hex: String) {
        var bytes: [UInt8] = []
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            bytes.append(UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)!)
        }
        precondition(bytes.count * 2 == hex.utf8.count, "odd-length hex")
        self.init(bytes)
    }

    var base64URL: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// A CBOR item to encode (RFC 8949 §3), in the order given: maps are lists of pairs, so a
/// test can write a repeated key or any order it likes.
indirect enum TestCBOR {
    case int(Int64)
    case bytes(Data)
    case text(String)
    case array([TestCBOR])
    case map([(TestCBOR, TestCBOR)])
    case bool(Bool)
    case null

    /// The definite-length, shortest-form encoding.
    var encoded: Data {
        var out = Data()
        func head(_ major: UInt8, _ argument: UInt64) {
            switch argument {
            case 0..<24: out.append(major << 5 | UInt8(argument))
            case 24..<0x100: out.append(major << 5 | 24); out.append(UInt8(argument))
            case 0x100..<0x10000: out.append(major << 5 | 25); out.append(contentsOf: withUnsafeBytes(of: UInt16(argument).bigEndian, Array.init))
            case 0x10000..<0x1_0000_0000: out.append(major << 5 | 26); out.append(contentsOf: withUnsafeBytes(of: UInt32(argument).bigEndian, Array.init))
            default: out.append(major << 5 | 27); out.append(contentsOf: withUnsafeBytes(of: argument.bigEndian, Array.init))
            }
        }
        switch self {
        case .int(let value):
            if value >= 0 { head(0, UInt64(value)) } else { head(1, UInt64(-(value + 1))) }
        case .bytes(let value):
            head(2, UInt64(value.count)); out.append(value)
        case .text(let value):
            head(3, UInt64(value.utf8.count)); out.append(contentsOf: value.utf8)
        case .array(let items):
            head(4, UInt64(items.count))
            for item in items { out.append(item.encoded) }
        case .map(let pairs):
            head(5, UInt64(pairs.count))
            for (key, value) in pairs { out.append(key.encoded); out.append(value.encoded) }
        case .bool(let value):
            out.append(value ? 0xF5 : 0xF4)
        case .null:
            out.append(0xF6)
        }
        return out
    }
}

/// A credential key pair of one of the three algorithms.
struct TestCredential: Sendable {
    enum Key: Sendable {
        case p256(P256.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
    }

    let key: Key
    let id: Data

    init(_ key: Key, id: Data = Data((0..<32).map { UInt8($0) })) {
        self.key = key
        self.id = id
    }

    static func p256() -> TestCredential { TestCredential(.p256(P256.Signing.PrivateKey())) }
    static func ed25519() -> TestCredential { TestCredential(.ed25519(Curve25519.Signing.PrivateKey())) }
    /// One RSA key for the whole run: making one takes a while.
    static let rsa: TestCredential = TestCredential(.rsa(try! _RSA.Signing.PrivateKey(keySize: .bits2048)))

    var algorithm: COSEAlgorithm {
        switch key {
        case .p256: .es256
        case .ed25519: .edDSA
        case .rsa: .rs256
        }
    }

    /// The COSE_Key of the public key (WebAuthn §6.5.1.1's layouts), in CTAP2 canonical order.
    var coseKey: TestCBOR {
        switch key {
        case .p256(let privateKey):
            let point = privateKey.publicKey.x963Representation
            return .map([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)),
                         (.int(-2), .bytes(point[1..<33])), (.int(-3), .bytes(point[33..<65]))])
        case .ed25519(let privateKey):
            return .map([(.int(1), .int(1)), (.int(3), .int(-8)), (.int(-1), .int(6)), (.int(-2), .bytes(privateKey.publicKey.rawRepresentation))])
        case .rsa(let privateKey):
            let components = try! privateKey.publicKey.getKeyPrimitives()
            return .map([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes(components.modulus)),
                         (.int(-2), .bytes(components.publicExponent))])
        }
    }

    /// The signature of `data` in WebAuthn's format for the algorithm (§6.5.5).
    func sign(_ data: Data) -> Data {
        switch key {
        case .p256(let privateKey): try! privateKey.signature(for: data).derRepresentation
        case .ed25519(let privateKey): try! privateKey.signature(for: data)
        case .rsa(let privateKey): try! privateKey.signature(for: data, padding: .insecurePKCS1v1_5).rawRepresentation
        }
    }
}

/// Builds the parts of registration and assertion responses; every field can be changed to
/// break one rule.
struct TestAuthenticator {
    static let rpID = "login.example.com"
    static let origin = "https://login.example.com"
    static let relyingParty = RelyingParty(id: rpID, origins: [origin])
    static let challenge = Data((0..<32).map { UInt8(255 - $0) })

    enum Flag {
        static let up: UInt8 = 0x01, uv: UInt8 = 0x04, be: UInt8 = 0x08, bs: UInt8 = 0x10, at: UInt8 = 0x40, ed: UInt8 = 0x80
    }

    var credential: TestCredential
    var rpID = TestAuthenticator.rpID
    var flags: UInt8 = Flag.up | Flag.uv
    var signCount: UInt32 = 0
    var aaguid = Data(repeating: 0xAA, count: 16)
    /// The COSE key written into the attested credential data; the credential's by default.
    var coseKey: Data?
    /// The extensions map, written (with the ED flag) when set.
    var extensions: Data?
    /// Bytes appended after everything the flags announce.
    var trailing = Data()

    init(_ credential: TestCredential) {
        self.credential = credential
    }

    /// Authenticator data (§6.1); with attested credential data (and the AT flag) when `attested`.
    func authenticatorData(attested: Bool) -> Data {
        var out = Data(SHA256.hash(data: Data(rpID.utf8)))
        var flags = self.flags
        if attested { flags |= Flag.at }
        if extensions != nil { flags |= Flag.ed }
        out.append(flags)
        out.append(contentsOf: withUnsafeBytes(of: signCount.bigEndian, Array.init))
        if attested {
            out.append(aaguid)
            out.append(contentsOf: withUnsafeBytes(of: UInt16(credential.id.count).bigEndian, Array.init))
            out.append(credential.id)
            out.append(coseKey ?? credential.coseKey.encoded)
        }
        if let extensions { out.append(extensions) }
        out.append(trailing)
        return out
    }

    /// clientDataJSON as browsers serialize it (§5.8.1.1), with `extra` members appended.
    static func clientDataJSON(type: String, challenge: Data = challenge, origin: String = origin, extra: String = "") -> Data {
        Data(#"{"type":"\#(type)","challenge":"\#(challenge.base64URL)","origin":"\#(origin)","crossOrigin":false\#(extra)}"#.utf8)
    }

    /// An attestation object (§6.5.4) over `authData`.
    static func attestationObject(format: String, statement: TestCBOR, authData: Data) -> Data {
        TestCBOR.map([(.text("fmt"), .text(format)), (.text("attStmt"), statement), (.text("authData"), .bytes(authData))]).encoded
    }

    /// A `none` registration: (clientDataJSON, attestationObject).
    func noneRegistration(clientDataJSON: Data = clientDataJSON(type: "webauthn.create")) -> (Data, Data) {
        (clientDataJSON, Self.attestationObject(format: "none", statement: .map([]), authData: authenticatorData(attested: true)))
    }

    /// A `packed` self-attestation registration (§8.2), signed by the credential key with `alg`.
    func packedSelfRegistration(alg: Int64? = nil, clientDataJSON: Data = clientDataJSON(type: "webauthn.create")) -> (Data, Data) {
        let authData = authenticatorData(attested: true)
        let signature = credential.sign(authData + Data(SHA256.hash(data: clientDataJSON)))
        let statement = TestCBOR.map([(.text("alg"), .int(alg ?? Int64(credential.algorithm.rawValue))), (.text("sig"), .bytes(signature))])
        return (clientDataJSON, Self.attestationObject(format: "packed", statement: statement, authData: authData))
    }

    /// A `packed` registration with x5c (§8.2): signed by `attestation.key`, which `attestation.certificate` holds.
    func packedX5CRegistration(_ attestation: TestAttestation, clientDataJSON: Data = clientDataJSON(type: "webauthn.create")) -> (Data, Data) {
        let authData = authenticatorData(attested: true)
        let signature = try! attestation.key.signature(for: authData + Data(SHA256.hash(data: clientDataJSON))).derRepresentation
        let statement = TestCBOR.map([(.text("alg"), .int(-7)), (.text("sig"), .bytes(signature)),
                                      (.text("x5c"), .array([.bytes(attestation.certificate)]))])
        return (clientDataJSON, Self.attestationObject(format: "packed", statement: statement, authData: authData))
    }

    /// An assertion: (clientDataJSON, authenticatorData, signature).
    func assertion(clientDataJSON: Data = clientDataJSON(type: "webauthn.get")) -> (Data, Data, Data) {
        let authData = authenticatorData(attested: false)
        return (clientDataJSON, authData, credential.sign(authData + Data(SHA256.hash(data: clientDataJSON))))
    }

    /// The credential's public key as the relying party stored it at registration.
    var storedKey: CredentialPublicKey {
        try! CredentialPublicKey(cose: credential.coseKey.encoded)
    }
}

/// A P-256 attestation key and its certificate (DER), made to break §8.2.1's rules one at a time.
struct TestAttestation: Sendable {
    let key: P256.Signing.PrivateKey
    let certificate: Data

    /// A certificate meeting §8.2.1 unless told otherwise, issued by a throwaway CA.
    static func make(organizationalUnit: String = "Authenticator Attestation", isCA: Bool = false, basicConstraints: Bool = true,
                     aaguid: Data? = Data(repeating: 0xAA, count: 16), aaguidCritical: Bool = false,
                     country: String? = "AA") throws -> TestAttestation {
        let caKey = P256.Signing.PrivateKey()
        let key = P256.Signing.PrivateKey()
        let issuer = try DistinguishedName {
            CountryName("AA")
            OrganizationName("Tessera Test CA")
            CommonName("Tessera Test Attestation Root")
        }
        let subject = try DistinguishedName {
            if let country { CountryName(country) }
            OrganizationName("Tessera Test")
            OrganizationalUnitName(organizationalUnit)
            CommonName("Tessera Test Authenticator")
        }
        var extensions = Certificate.Extensions()
        if basicConstraints {
            try extensions.append(Certificate.Extension(
                isCA ? BasicConstraints.isCertificateAuthority(maxPathLength: nil) : .notCertificateAuthority, critical: true))
        }
        if let aaguid {
            try extensions.append(Certificate.Extension(oid: [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4], critical: aaguidCritical,
                                                        value: ArraySlice([0x04, 0x10] + Array(aaguid))))
        }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(3600 * 24 * 365),
            issuer: issuer, subject: subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: .init(caKey))
        return TestAttestation(key: key, certificate: Data(try certificate.serializeAsPEM().derBytes))
    }
}
