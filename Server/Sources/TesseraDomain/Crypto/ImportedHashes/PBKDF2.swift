import Crypto
import CryptoExtras
import TesseraCore

/// A PBKDF2 hash (RFC 8018 §5.2) with HMAC-SHA-1, -SHA-256 or -SHA-512, in one of two forms:
/// - passlib: `$pbkdf2-sha256$<rounds>$<salt>$<hash>` (`$pbkdf2-sha512$`, and `$pbkdf2$` for
///   SHA-1), salt and hash in passlib's adapted base64 (`.` for `+`, no padding), the salt
///   used as the bytes it decodes to;
/// - Django: `pbkdf2_sha256$<iterations>$<salt>$<hash>` (and `pbkdf2_sha1`), the salt used as
///   its text, the hash in standard base64.
struct PBKDF2Hash: ImportedHash {
    let function: KDF.Insecure.PBKDF2.HashFunction
    let rounds: Int
    let salt: [UInt8]
    let hash: [UInt8]

    /// Up to two million rounds (``PasswordCostCaps``): Django asks for 1.2 million today.
    static let roundsRange = PasswordCostCaps.pbkdf2Rounds
    static let hashLength = 16...128

    init(passlib text: String) throws {
        let parts = text.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty else {
            throw ImportedHashError("passlib PBKDF2 hash must be $pbkdf2-sha256$<rounds>$<salt>$<hash>")
        }
        switch parts[1] {
        case "pbkdf2": function = .insecureSHA1
        case "pbkdf2-sha256": function = .sha256
        case "pbkdf2-sha512": function = .sha512
        default: throw ImportedHashError("passlib PBKDF2 digest must be pbkdf2, pbkdf2-sha256 or pbkdf2-sha512")
        }
        rounds = try ImportedFields.decimal(parts[2], "PBKDF2 rounds", in: Self.roundsRange)
        salt = try ImportedFields.decode(parts[3], "PBKDF2 salt (adapted base64)", with: ImportedFields.adapted)
        hash = try ImportedFields.decode(parts[4], "PBKDF2 hash (adapted base64)", with: ImportedFields.adapted)
        try checkLengths()
    }

    init(django text: String) throws {
        let parts = text.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4 else {
            throw ImportedHashError("Django PBKDF2 hash must be pbkdf2_sha256$<iterations>$<salt>$<hash>")
        }
        switch parts[0] {
        case "pbkdf2_sha1": function = .insecureSHA1
        case "pbkdf2_sha256": function = .sha256
        default: throw ImportedHashError("Django PBKDF2 algorithm must be pbkdf2_sha256 or pbkdf2_sha1")
        }
        rounds = try ImportedFields.decimal(parts[1], "PBKDF2 iterations", in: Self.roundsRange)
        salt = Array(parts[2].utf8)
        hash = try ImportedFields.decode(parts[3], "PBKDF2 hash (base64)", with: ImportedFields.standard)
        try checkLengths()
    }

    func checkLengths() throws {
        guard !salt.isEmpty else { throw ImportedHashError("PBKDF2 salt is empty") }
        guard Self.hashLength.contains(hash.count) else {
            throw ImportedHashError("PBKDF2 hash must be 16 to 128 bytes, found \(hash.count)")
        }
    }

    func matches(_ password: [UInt8]) throws -> Bool {
        let derived = try KDF.Insecure.PBKDF2.deriveKey(from: password, salt: salt, using: function,
                                                        outputByteCount: hash.count, unsafeUncheckedRounds: rounds)
        return derived.withUnsafeBytes { constantTimeEquals($0, hash) }
    }
}
