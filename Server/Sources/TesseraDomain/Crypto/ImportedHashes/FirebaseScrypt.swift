import Crypto
import CryptoExtras
import Foundation
import TesseraCore

/// A Firebase project's password hash parameters (Authentication → Users → ⋮ → Password hash
/// parameters): the same for every user of the project.
public struct FirebaseHashConfig: Sendable, Equatable {
    public let signerKey: [UInt8]
    public let saltSeparator: [UInt8]
    /// scrypt's block size r; Firebase allows 1 to 8.
    public let rounds: Int
    /// log2 of scrypt's cost N; Firebase allows 1 to 14.
    public let memCost: Int

    static let roundsRange = 1...8
    static let memCostRange = 1...14

    public init(signerKey: [UInt8], saltSeparator: [UInt8], rounds: Int, memCost: Int) throws {
        guard !signerKey.isEmpty, signerKey.count <= 1024 else { throw ImportedHashError("Firebase signer key must be 1 to 1024 bytes") }
        guard saltSeparator.count <= 64 else { throw ImportedHashError("Firebase salt separator must be at most 64 bytes") }
        guard Self.roundsRange.contains(rounds) else { throw ImportedHashError("Firebase rounds must be 1 to 8, not \(rounds)") }
        guard Self.memCostRange.contains(memCost) else { throw ImportedHashError("Firebase mem_cost must be 1 to 14, not \(memCost)") }
        self.signerKey = signerKey
        self.saltSeparator = saltSeparator
        self.rounds = rounds
        self.memCost = memCost
    }

    public init(base64SignerKey: String, base64SaltSeparator: String, rounds: Int, memCost: Int) throws {
        try self.init(
            signerKey: ImportedFields.decode(Self.trimmed(base64SignerKey), "Firebase signer key", with: ImportedFields.standard),
            saltSeparator: ImportedFields.decode(Self.trimmed(base64SaltSeparator), "Firebase salt separator", with: ImportedFields.standard),
            rounds: rounds, memCost: memCost)
    }

    /// Reads the parameters as people copy them:
    /// - the console's text, `hash_config { algorithm: SCRYPT, base64_signer_key: …,
    ///   base64_salt_separator: …, rounds: 8, mem_cost: 14 }`;
    /// - the same as JSON, `{"algorithm":"SCRYPT","base64_signer_key":"…",…}`;
    /// - Identity Platform's `hashConfig` object (`signerKey`, `saltSeparator`, `rounds`,
    ///   `memoryCost`), alone or inside the project configuration (`signIn.hashConfig`);
    /// - the flags of `firebase auth:import` (`--hash-key=… --salt-separator=… --rounds=8 --mem-cost=14`).
    ///
    /// Key spelling is free (snake or camel case, with or without `base64`).
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let fields: [String: String]
        if trimmed.hasPrefix("{") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8)) as? [String: Any] else {
                throw ImportedHashError("Firebase hash configuration is not valid JSON")
            }
            fields = Self.fields(json: object)
        } else {
            fields = Self.fields(text: trimmed)
        }
        if let algorithm = fields["algorithm"], algorithm.uppercased() != "SCRYPT" {
            throw ImportedHashError("Firebase hash algorithm must be SCRYPT, not \(String(algorithm.prefix(20)).debugDescription)")
        }
        let missing = ["signer key": fields["signer"], "salt separator": fields["separator"], "rounds": fields["rounds"], "mem_cost": fields["memCost"]]
            .filter { $0.value == nil }.map(\.key).sorted()
        guard missing.isEmpty, let signer = fields["signer"], let separator = fields["separator"],
              let roundsText = fields["rounds"], let memCostText = fields["memCost"] else {
            throw ImportedHashError("Firebase hash configuration lacks \(missing.joined(separator: ", "))")
        }
        guard let rounds = ImportedFields.decimal(roundsText[...]) else {
            throw ImportedHashError("Firebase rounds must be a number, not \(String(roundsText.prefix(12)).debugDescription)")
        }
        guard let memCost = ImportedFields.decimal(memCostText[...]) else {
            throw ImportedHashError("Firebase mem_cost must be a number, not \(String(memCostText.prefix(12)).debugDescription)")
        }
        try self.init(base64SignerKey: signer, base64SaltSeparator: separator, rounds: rounds, memCost: memCost)
    }

    /// The field a key names, whatever its spelling: `base64_signer_key`, `signerKey`, `hash-key` → `signer`.
    static func field(_ key: String) -> String? {
        let normalised = String(key.lowercased().filter { $0.isLetter || $0.isNumber })
        switch normalised {
        case "base64signerkey", "signerkey", "hashkey", "key": return "signer"
        case "base64saltseparator", "saltseparator": return "separator"
        case "rounds": return "rounds"
        case "memcost", "memorycost": return "memCost"
        case "algorithm", "hashalgo", "hashalgorithm": return "algorithm"
        default: return nil
        }
    }

    /// Fields of a JSON object, or of the first `hashConfig` / `hash_config` object inside it.
    static func fields(json object: [String: Any]) -> [String: String] {
        var values: [String: String] = [:]
        for (key, value) in object {
            guard let name = field(key) else { continue }
            switch value {
            case let text as String: values[name] = text
            case let number as Int: values[name] = String(number)
            case let number as NSNumber: values[name] = number.stringValue
            default: continue
            }
        }
        if values["signer"] == nil {
            for (key, value) in object.sorted(by: { $0.key < $1.key }) {
                guard let nested = value as? [String: Any] else { continue }
                let found = fields(json: nested)
                if found["signer"] != nil || key.lowercased().contains("hash") { return found }
            }
        }
        return values
    }

    /// Fields of `key: value` lines (the console), or of `--key=value` flags.
    static func fields(text: String) -> [String: String] {
        var values: [String: String] = [:]
        for piece in text.split(whereSeparator: { $0.isNewline || $0 == "," || $0 == "{" || $0 == "}" }) {
            let flags = piece.split(whereSeparator: \.isWhitespace).filter { $0.hasPrefix("--") }
            for pair in flags.isEmpty ? [piece] : flags.map({ $0.dropFirst(2) }) {
                guard let separator = pair.firstIndex(where: { $0 == ":" || $0 == "=" }),
                      let name = field(String(pair[..<separator])) else { continue }
                values[name] = String(trimmed(String(pair[pair.index(after: separator)...])))
            }
        }
        return values
    }

    static func trimmed(_ text: String) -> Substring {
        Substring(text.trimmingCharacters(in: CharacterSet.whitespaces.union(CharacterSet(charactersIn: "\"'"))))
    }
}

/// A Firebase Auth password hash with everything needed to verify it:
/// `$firebase-scrypt$r=<rounds>,m=<memCost>$<salt>$<salt separator>$<signer key>$<hash>`, each
/// binary field in base64 without padding.
///
/// Firebase's modified scrypt (github.com/firebase/scrypt README): the key is
/// scrypt(password, salt ‖ salt separator, N = 2^memCost, r = rounds, p = 1), and the hash is
/// the project's signer key encrypted with AES-256-CTR under that key's first 32 bytes, the
/// counter block starting at zero.
struct FirebaseScryptHash: ImportedHash {
    static let identifier = "$firebase-scrypt$"

    let config: FirebaseHashConfig
    let salt: [UInt8]
    let hash: [UInt8]

    init(passwordHash: String, salt: String, config: FirebaseHashConfig) throws {
        self.config = config
        self.salt = try ImportedFields.decode(FirebaseHashConfig.trimmed(salt), "Firebase salt", with: ImportedFields.standard)
        hash = try ImportedFields.decode(FirebaseHashConfig.trimmed(passwordHash), "Firebase password hash", with: ImportedFields.standard)
        try check()
    }

    init(stored text: String) throws {
        let parts = text.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 7, parts[0].isEmpty, parts[1] == "firebase-scrypt" else {
            throw ImportedHashError("Firebase hash must be $firebase-scrypt$r=<rounds>,m=<mem cost>$<salt>$<salt separator>$<signer key>$<hash>")
        }
        let settings = parts[2].split(separator: ",", omittingEmptySubsequences: false)
        guard settings.count == 2, settings[0].hasPrefix("r="), settings[1].hasPrefix("m=") else {
            throw ImportedHashError("Firebase hash parameters must be r=<rounds>,m=<mem cost>")
        }
        config = try FirebaseHashConfig(
            signerKey: ImportedFields.decode(parts[5], "Firebase signer key", with: ImportedFields.standard),
            saltSeparator: ImportedFields.decode(parts[4], "Firebase salt separator", with: ImportedFields.standard),
            rounds: ImportedFields.decimal(settings[0].dropFirst(2), "Firebase rounds r", in: FirebaseHashConfig.roundsRange),
            memCost: ImportedFields.decimal(settings[1].dropFirst(2), "Firebase mem cost m", in: FirebaseHashConfig.memCostRange))
        salt = try ImportedFields.decode(parts[3], "Firebase salt", with: ImportedFields.standard)
        hash = try ImportedFields.decode(parts[6], "Firebase password hash", with: ImportedFields.standard)
        try check()
    }

    func check() throws {
        guard !salt.isEmpty else { throw ImportedHashError("Firebase salt is empty") }
        guard hash.count == config.signerKey.count else {
            throw ImportedHashError("Firebase password hash must be as long as the signer key (\(config.signerKey.count) bytes), found \(hash.count)")
        }
    }

    var stored: String {
        Self.identifier + "r=\(config.rounds),m=\(config.memCost)$" + [salt, config.saltSeparator, config.signerKey, hash]
            .map(ImportedFields.encode).joined(separator: "$")
    }

    func matches(_ password: [UInt8]) throws -> Bool {
        let key = try KDF.Scrypt.deriveKey(from: password, salt: salt + config.saltSeparator, outputByteCount: 32,
                                           rounds: 1 << config.memCost, blockSize: config.rounds, parallelism: 1)
        let encrypted = try AES._CTR.encrypt(config.signerKey, using: key, nonce: AES._CTR.Nonce(nonceBytes: [UInt8](repeating: 0, count: 16)))
        return constantTimeEquals(encrypted, hash)
    }
}
