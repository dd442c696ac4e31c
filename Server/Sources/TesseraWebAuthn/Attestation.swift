import Crypto
import CryptoExtras
import Foundation
import X509

/// The attestation object (WebAuthn §6.5.4): `{ fmt: text, attStmt: map or array, authData: bytes }`,
/// the authenticator's statement about the credential it made.
struct AttestationObject {
    let format: String
    /// The attestation statement, whose shape is its format's to define (§6.5.4 `attStmtTemplate`).
    let statement: CBORValue
    /// The authenticator data, parsed; its bytes are what the attestation signature covers.
    let authenticatorData: AuthenticatorData

    /// Decodes the CBOR map that fills `bytes`. Members other than the three are ignored:
    /// §6.5.4 defines no others and none of them is signed.
    init(bytes: Data) throws(WebAuthnError) {
        let value: CBORValue
        do {
            value = try CBORDecoder.decode(bytes)
        } catch {
            throw .malformed("attestation object: \(error.detail)")
        }
        guard value.mapValue != nil else { throw .malformed("attestation object: not a CBOR map") }
        guard let format = value["fmt"]?.textValue else { throw .malformed("attestation object: no text fmt") }
        guard let statement = value["attStmt"], statement.mapValue != nil || statement.arrayValue != nil else {
            throw .malformed("attestation object: no attStmt map or array")
        }
        guard let authData = value["authData"]?.bytesValue else { throw .malformed("attestation object: no authData byte string") }
        self.format = format
        self.statement = statement
        self.authenticatorData = try AuthenticatorData(bytes: authData)
    }
}

/// What an attestation statement's verification procedure returns (§6.5.3, §8).
struct VerifiedAttestation {
    /// `none`, `self` or `basic`.
    let type: String
    /// The attestation trust path, `x5c` as sent, the attestation certificate first; empty for none and self.
    let trustPath: [Data]
}

/// The verification procedures of the attestation statement formats this library supports.
enum AttestationFormats {
    /// §8.7: `attStmt` is the empty map; nothing is attested.
    static func verifyNone(_ statement: CBORValue) throws(WebAuthnError) -> VerifiedAttestation {
        guard statement == .map([:]) else {
            throw .badAttestation("a none attestation statement must be the empty map, it is \(statement) (§8.7)")
        }
        return VerifiedAttestation(type: "none", trustPath: [])
    }

    /// §8.2's verification procedure. `signedData` is authenticatorData ‖ clientDataHash.
    ///
    /// With `x5c`, the signature is checked with the first certificate's key and that
    /// certificate against §8.2.1; the chain is returned but not validated, since there are no
    /// trust anchors here (§7.1 steps "obtain a list of acceptable trust anchors" and "assess
    /// the attestation trustworthiness" are the caller's). Without `x5c` it is self
    /// attestation: signed by the credential key itself, with the same algorithm.
    static func verifyPacked(_ statementValue: CBORValue, credential: AuthenticatorData.AttestedCredential,
                             signedData: Data) throws(WebAuthnError) -> VerifiedAttestation {
        guard let statement = statementValue.mapValue else { throw .badAttestation("the packed attestation statement is not a map (§8.2)") }
        for key in statement.keys where !["alg", "sig", "x5c"].contains(key.textValue ?? "") {
            throw .badAttestation("the packed attestation statement has a member it must not have (\(key)) (§8.2)")
        }
        guard let algorithmNumber = statement[.text("alg")]?.integerValue else {
            throw .badAttestation("the packed attestation statement has no integer alg (§8.2)")
        }
        guard let signature = statement[.text("sig")]?.bytesValue else {
            throw .badAttestation("the packed attestation statement has no byte string sig (§8.2)")
        }
        guard let algorithm = Int(exactly: algorithmNumber).flatMap(COSEAlgorithm.init(rawValue:)) else {
            throw .unsupportedAlgorithm(algorithmNumber, "the packed attestation's alg")
        }

        guard let x5c = statement[.text("x5c")] else {
            guard algorithm == credential.publicKey.algorithm else {
                throw .badAttestation("self attestation with alg \(algorithm.rawValue), but the credential key is \(credential.publicKey.algorithm.rawValue) (§8.2)")
            }
            guard credential.publicKey.isValidSignature(signature, for: signedData) else {
                throw WebAuthnError(.badSignature, "the packed self-attestation signature does not verify with the credential key (§8.2)")
            }
            return VerifiedAttestation(type: "self", trustPath: [])
        }

        guard let elements = x5c.arrayValue, !elements.isEmpty else {
            throw .badAttestation("x5c is not a non-empty array (§8.2)")
        }
        var chain: [Data] = []
        var certificates: [Certificate] = []
        for (index, element) in elements.enumerated() {
            guard let der = element.bytesValue else { throw .badAttestation("x5c[\(index)] is not a byte string") }
            do {
                certificates.append(try Certificate(derEncoded: [UInt8](der)))
            } catch {
                throw .badAttestation("x5c[\(index)] is not a DER X.509 certificate swift-certificates reads: \(error)")
            }
            chain.append(der)
        }
        let attestationCertificate = certificates[0]
        guard isValid(signature, of: signedData, algorithm: algorithm, key: attestationCertificate.publicKey) else {
            throw WebAuthnError(.badSignature, "the packed attestation signature does not verify with x5c[0]'s key as \(algorithm.name) (§8.2)")
        }
        try checkRequirements(attestationCertificate, aaguid: credential.aaguid)
        return VerifiedAttestation(type: "basic", trustPath: chain)
    }

    /// §8.2.1: version 3; subject C, O, OU "Authenticator Attestation" and CN; Basic
    /// Constraints with CA false; and when id-fido-gen-ce-aaguid is present, not critical and
    /// equal to the attested credential's AAGUID.
    static func checkRequirements(_ certificate: Certificate, aaguid: Data) throws(WebAuthnError) {
        guard certificate.version == .v3 else {
            throw .badAttestation("the attestation certificate is \(certificate.version), not v3 (§8.2.1)")
        }
        var subject: [String: [String]] = [:]
        for relativeName in certificate.subject {
            for attribute in relativeName {
                let name: String
                switch attribute.type {
                case .RDNAttributeType.countryName: name = "C"
                case .RDNAttributeType.organizationName: name = "O"
                case .RDNAttributeType.organizationalUnitName: name = "OU"
                case .RDNAttributeType.commonName: name = "CN"
                default: continue
                }
                subject[name, default: []].append(String(attribute.value) ?? "")
            }
        }
        for name in ["C", "O", "CN"] where !(subject[name]?.contains { !$0.isEmpty } ?? false) {
            throw .badAttestation("the attestation certificate's subject has no \(name) (§8.2.1)")
        }
        guard subject["OU"] == ["Authenticator Attestation"] else {
            throw .badAttestation("the attestation certificate's subject OU is \(subject["OU"] ?? []), not \"Authenticator Attestation\" (§8.2.1)")
        }

        let basicConstraints: BasicConstraints?
        do {
            basicConstraints = try certificate.extensions.basicConstraints
        } catch {
            throw .badAttestation("the attestation certificate's Basic Constraints do not parse (§8.2.1)")
        }
        switch basicConstraints {
        case .notCertificateAuthority?: break
        case .isCertificateAuthority?: throw .badAttestation("the attestation certificate is a CA (Basic Constraints CA true) (§8.2.1)")
        case nil: throw .badAttestation("the attestation certificate has no Basic Constraints extension (§8.2.1)")
        }

        // id-fido-gen-ce-aaguid, 1.3.6.1.4.1.45724.1.1.4: the AAGUID the certificate vouches for.
        if let fidoAAGUID = certificate.extensions.first(where: { $0.oid == [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4] }) {
            guard !fidoAAGUID.critical else {
                throw .badAttestation("the attestation certificate's id-fido-gen-ce-aaguid extension is critical (§8.2.1)")
            }
            // The extension's value is the DER OCTET STRING of the 16 AAGUID bytes.
            guard Array(fidoAAGUID.value) == [0x04, 0x10] + Array(aaguid) else {
                throw .badAttestation("the attestation certificate's id-fido-gen-ce-aaguid is not the authenticator data's AAGUID (§8.2)")
            }
        }
    }

    /// Verifies `signature` over `data` with a certificate's key, as `algorithm` says (§6.5.5).
    static func isValid(_ signature: Data, of data: Data, algorithm: COSEAlgorithm, key: Certificate.PublicKey) -> Bool {
        switch algorithm {
        case .es256:
            guard let publicKey = P256.Signing.PublicKey(key),
                  let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return publicKey.isValidSignature(parsed, for: data)
        case .rs256:
            guard let publicKey = _RSA.Signing.PublicKey(key), publicKey.keySizeInBits >= 2048 else { return false }
            return publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: data, padding: .insecurePKCS1v1_5)
        case .edDSA:
            guard let publicKey = Curve25519.Signing.PublicKey(key) else { return false }
            return publicKey.isValidSignature(signature, for: data)
        }
    }
}
