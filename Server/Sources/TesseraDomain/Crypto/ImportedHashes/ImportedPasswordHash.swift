import Foundation
import TesseraCore

/// A password hash made elsewhere, in one of the formats an import accepts, so that people
/// moved in from another system keep their password: it is checked once against the foreign
/// hash, then hashed again with ``PasswordHasher``.
///
/// | format | example |
/// |---|---|
/// | bcrypt (OpenBSD, PHP, pyca `bcrypt`, Go, jBCrypt) | `$2b$12$<22 salt><31 hash>`, also `$2a$`, `$2y$` |
/// | Django's bcrypt hashers | `bcrypt$$2b$…`, `bcrypt_sha256$$2b$…` |
/// | Argon2 (RFC 9106) in PHC form | `$argon2id$v=19$m=65536,t=3,p=4$<salt>$<hash>`, also `argon2i`, `argon2d`, `v=16` |
/// | Django's Argon2 hasher | `argon2$argon2id$v=19$…` |
/// | passlib PBKDF2 | `$pbkdf2-sha256$<rounds>$<salt>$<hash>`, `$pbkdf2-sha512$…`, `$pbkdf2$…` (SHA-1) |
/// | Django PBKDF2 | `pbkdf2_sha256$<iterations>$<salt>$<hash>`, `pbkdf2_sha1$…` |
/// | Firebase Auth's modified scrypt | `$firebase-scrypt$…`, made by ``firebaseScrypt(passwordHash:salt:config:)`` |
///
/// Tessera's own `$scrypt$` strings (which passlib's scrypt strings also are) are not imported
/// hashes: ``PasswordHasher`` verifies them.
///
/// Passwords are hashed as their UTF-8 bytes, without normalisation, as every system above does.
/// These functions are CPU-bound (the stored parameters decide for how long): call them off the
/// event loops, as ``PasswordHasher`` does its own work.
public enum ImportedPasswordHash {
    /// Whether `stored` names a format this type verifies (by its prefix; ``validate(_:)`` checks
    /// the rest). False for Tessera's own `$scrypt$` format.
    public static func recognises(_ stored: String) -> Bool {
        Scheme(stored) != nil
    }

    /// Checks that `stored` is well formed with sane parameters; throws ``ImportedHashError``
    /// naming what is wrong otherwise. Used when importing, to report a bad row.
    public static func validate(_ stored: String) throws {
        _ = try parse(stored)
    }

    /// Whether `password` matches `stored`, comparing the final bytes in constant time.
    ///
    /// A malformed or unrecognised `stored` throws ``ImportedHashError`` (the message
    /// ``validate(_:)`` gives) rather than returning false, so that a bad import shows in the
    /// logs instead of looking like a wrong password.
    public static func verify(_ password: String, against stored: String) throws -> Bool {
        try parse(stored).matches(Array(password.utf8))
    }

    /// The stored form of a Firebase Auth user's hash: the user's `passwordHash` and `salt` as
    /// `firebase auth:export` writes them (base64), with the project's hash parameters, in one
    /// string that ``verify(_:against:)`` understands:
    /// `$firebase-scrypt$r=<rounds>,m=<memCost>$<salt>$<salt separator>$<signer key>$<hash>`
    /// (each field base64 without padding, as in PHC strings).
    public static func firebaseScrypt(passwordHash: String, salt: String, config: FirebaseHashConfig) throws -> String {
        try FirebaseScryptHash(passwordHash: passwordHash, salt: salt, config: config).stored
    }

    static func parse(_ stored: String) throws -> any ImportedHash {
        guard let scheme = Scheme(stored) else {
            if stored.hasPrefix("$scrypt$") {
                throw ImportedHashError("$scrypt$ is Tessera's own format, not an imported hash")
            }
            let shown = stored.split(separator: "$", omittingEmptySubsequences: false).prefix(2).joined(separator: "$")
            throw ImportedHashError("unrecognised password hash format (starts \(String(shown.prefix(20)).debugDescription))")
        }
        return try scheme.parse(stored)
    }

    /// The formats, told apart by prefix.
    enum Scheme: CaseIterable {
        case bcrypt, djangoBcrypt, djangoBcryptSHA256, argon2, djangoArgon2, passlibPBKDF2, djangoPBKDF2, firebaseScrypt

        var prefixes: [String] {
            switch self {
            case .bcrypt: ["$2a$", "$2b$", "$2y$"]
            case .djangoBcrypt: ["bcrypt$$2"]
            case .djangoBcryptSHA256: ["bcrypt_sha256$$2"]
            case .argon2: ["$argon2id$", "$argon2i$", "$argon2d$"]
            case .djangoArgon2: ["argon2$argon2"]
            case .passlibPBKDF2: ["$pbkdf2$", "$pbkdf2-sha256$", "$pbkdf2-sha512$"]
            case .djangoPBKDF2: ["pbkdf2_sha256$", "pbkdf2_sha1$"]
            case .firebaseScrypt: [FirebaseScryptHash.identifier]
            }
        }

        init?(_ stored: String) {
            guard let scheme = Self.allCases.first(where: { $0.prefixes.contains { stored.hasPrefix($0) } }) else { return nil }
            self = scheme
        }

        func parse(_ stored: String) throws -> any ImportedHash {
            switch self {
            case .bcrypt: try BcryptHash(stored[...])
            case .djangoBcrypt: try BcryptHash(stored.dropFirst("bcrypt$".count))
            case .djangoBcryptSHA256: try BcryptHash(stored.dropFirst("bcrypt_sha256$".count), prehash: true)
            case .argon2: try Argon2Hash(stored[...])
            case .djangoArgon2: try Argon2Hash(stored.dropFirst("argon2".count))
            case .passlibPBKDF2: try PBKDF2Hash(passlib: stored)
            case .djangoPBKDF2: try PBKDF2Hash(django: stored)
            case .firebaseScrypt: try FirebaseScryptHash(stored: stored)
            }
        }
    }
}

/// The most work one password check may cost, for every stored format: near the server's
/// own hash (scrypt N=2^15, r=8, p=3: 32 MiB and about 0.17 s here), at most about four
/// times it in time and 128 MiB in memory. A password check runs on every sign-in attempt,
/// wrong guesses included, on a hashing thread: a hash past these would let each guess hold a
/// thread for seconds (or gigabytes), which exhausts the server rather than defends the
/// password. An import refuses a row over a cap (a row error in its report); a stored hash
/// over one (written before the caps, or by hand) is refused at sign-in without being run,
/// and the person sets a new password by email code.
///
/// | format | cap | about |
/// |---|---|---|
/// | scrypt (`$scrypt$`) | 128·N·r ≤ 128 MiB and N·r·p ≤ 2^21 | 0.45 s |
/// | Firebase scrypt | mem_cost ≤ 14, rounds ≤ 8 (Firebase's own maximum) | 16 MiB, 0.03 s |
/// | bcrypt | cost ≤ 13 | 0.5 s |
/// | Argon2 | m ≤ 128 MiB, m·t ≤ 256 MiB, p ≤ 16 | 0.5 s |
/// | PBKDF2 | rounds ≤ 2,000,000 | 0.25–0.5 s |
public enum PasswordCostCaps {
    /// scrypt: N·r, which decides the memory (128·N·r bytes): 128 MiB.
    static let scryptMemoryUnits = 1 << 20
    /// scrypt: N·r·p, which decides the time.
    static let scryptWork = 1 << 21
    static let bcryptCost = 4...13
    static let argon2MemoryKiB = 8...(128 << 10)
    /// Argon2: m·t in KiB, the memory filled over all passes.
    static let argon2MemoryPasses = 256 << 10
    static let argon2Iterations = 1...32
    static let argon2Parallelism = 1...16
    static let pbkdf2Rounds = 1...2_000_000

    /// Why scrypt parameters are over the caps, or nil when they are within them.
    package static func scryptProblem(logN: Int, r: Int, p: Int) -> String? {
        guard (1...24).contains(logN), (1...32).contains(r), (1...16).contains(p) else {
            return "scrypt parameters must be ln 1 to 24, r 1 to 32, p 1 to 16"
        }
        let units = (1 << logN) * r
        if units > scryptMemoryUnits { return "scrypt memory 128·N·r must be at most 128 MiB (here \(units >> 13) MiB)" }
        if units * p > scryptWork { return "scrypt work N·r·p must be at most 2^21 (here \(units * p))" }
        return nil
    }
}

/// A parsed foreign hash.
protocol ImportedHash: Sendable {
    /// Whether `password` (UTF-8 bytes) derives the stored hash.
    func matches(_ password: [UInt8]) throws -> Bool
}

/// Why an imported password hash (or Firebase hash configuration) was refused, in words fit
/// for an import report: `bcrypt cost must be 4 to 31, not "45"`.
public struct ImportedHashError: Error, CustomStringConvertible, Sendable, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The field syntaxes of the formats above.
enum ImportedFields {
    /// Standard base64, padding optional (PHC strings, Django, Firebase).
    static func standard(_ text: Substring) -> [UInt8]? {
        PasswordHasher.phcDecode(text)
    }

    /// passlib's "adapted base64": `.` instead of `+`, no padding.
    static func adapted(_ text: Substring) -> [UInt8]? {
        guard !text.contains("+"), !text.contains("=") else { return nil }
        return PasswordHasher.phcDecode(Substring(text.replacingOccurrences(of: ".", with: "+")))
    }

    /// Standard base64 without padding, as PHC strings write it.
    static func encode(_ bytes: [UInt8]) -> String {
        PasswordHasher.phcBase64(bytes)
    }

    /// A decoded field, or an error naming it.
    static func decode(_ text: Substring, _ name: String, with decode: (Substring) -> [UInt8]?) throws -> [UInt8] {
        guard let bytes = decode(text) else { throw ImportedHashError("\(name) is not valid base64") }
        return bytes
    }

    /// A decimal parameter: digits only, no sign, at most 10 of them.
    static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 10, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    /// A decimal parameter in `range`, or an error naming it and the range.
    static func decimal(_ text: Substring, _ name: String, in range: ClosedRange<Int>) throws -> Int {
        guard let value = decimal(text), range.contains(value) else {
            throw ImportedHashError("\(name) must be \(range.lowerBound) to \(range.upperBound), not \(String(text.prefix(12)).debugDescription)")
        }
        return value
    }
}
