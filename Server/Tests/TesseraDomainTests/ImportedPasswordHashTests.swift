import Foundation
import Testing
import TesseraDomain
import TesseraInfrastructure

// Vectors: RFC 7693 Appendix A (BLAKE2b), RFC 9106 §5 (Argon2), RFC 7914 §11 (PBKDF2-HMAC-SHA256),
// the firebase/scrypt README (Firebase), and strings made by pyca bcrypt 4.3/5.0, argon2-cffi 25.1,
// passlib 1.7.4 and Django 5 (cheap parameters, so that the debug build stays quick).

@Suite("Imported password hashes: formats")
struct ImportedPasswordHashFormatTests {
    @Test("recognises the imported formats and not Tessera's own scrypt", arguments: [
        ("$2b$04$/7uLTDCOouCBDvfUUK7ISuFnt0gTsjI2rnMPRY08ZcaTXY9d93y9u", true),
        ("$2a$05$x", true),
        ("$2y$05$x", true),
        ("$2x$05$/7uLTDCOouCBDvfUUK7ISuFnt0gTsjI2rnMPRY08ZcaTXY9d93y9u", false),
        ("$argon2id$v=19$m=256,t=2,p=2$a$b", true),
        ("$argon2i$v=19$m=64,t=3,p=1$a$b", true),
        ("$argon2d$v=19$m=64,t=3,p=1$a$b", true),
        ("$argon2$v=19$m=64,t=3,p=1$a$b", false),
        ("$pbkdf2-sha256$1000$a$b", true),
        ("$pbkdf2-sha512$1000$a$b", true),
        ("$pbkdf2$1000$a$b", true),
        ("pbkdf2_sha256$1000$a$b", true),
        ("pbkdf2_sha1$1000$a$b", true),
        ("argon2$argon2id$v=19$m=128,t=1,p=2$a$b", true),
        ("bcrypt$$2b$04$x", true),
        ("bcrypt_sha256$$2b$04$x", true),
        ("$firebase-scrypt$r=8,m=14$a$b$c$d", true),
        ("$scrypt$ln=10,r=8,p=1$2TvH+D+HMGYMQWhtbS1lTA$aHCnVVdDIKgxamGzjF4z0WagBiwJP9qk5pWH5/OzJ6I", false),
        ("$7$C6..../....SodiumChloride$kBGj9fHznVYFQMEn/qDCfrDevf9YDtcDdKvEqHJLV8D", false),
        ("sha1$salt$hash", false),
        ("md5$salt$hash", false),
        ("plaintext", false),
        ("", false),
    ])
    func recognition(stored: String, expected: Bool) {
        #expect(ImportedPasswordHash.recognises(stored) == expected)
    }

    @Test("validate names what is wrong", arguments: [
        ("$2b$03$/7uLTDCOouCBDvfUUK7ISuFnt0gTsjI2rnMPRY08ZcaTXY9d93y9u", "bcrypt cost must be 4 to 13"),
        ("$2b$14$/7uLTDCOouCBDvfUUK7ISuFnt0gTsjI2rnMPRY08ZcaTXY9d93y9u", "bcrypt cost must be 4 to 13"),
        ("$2b$4$/7uLTDCOouCBDvfUUK7ISuFnt0gTsjI2rnMPRY08ZcaTXY9d93y9u", "bcrypt cost must be two digits"),
        ("$2b$04$/7uLTDCOouCBDvfUUK7ISuFnt0gTsjI2rnMPRY08ZcaTXY9d93y9", "53 characters"),
        ("$2b$04$/7uLTDCOouCBDvfUUK7ISuFnt0gTsjI2rnMPRY08ZcaTXY9d93y9+", "bcrypt's base64 alphabet"),
        ("$argon2id$v=19$m=256,t=2,p=2$Z3/LPEarA+NQ5XyTPfhD3A", "argon2 hash must be"),
        ("$argon2id$v=18$m=256,t=2,p=2$Z3/LPEarA+NQ5XyTPfhD3A$Lvk41lsV/8UMfMOFEF4UkvkBKCRQD95eMCY6+B3kom0", "argon2 version must be v=19 or v=16"),
        ("$argon2id$v=19$m=8388608,t=2,p=2$Z3/LPEarA+NQ5XyTPfhD3A$Lvk41lsV/8UMfMOFEF4UkvkBKCRQD95eMCY6+B3kom0", "argon2 memory m (KiB) must be 16 to 131072"),
        ("$argon2id$v=19$m=131072,t=3,p=2$Z3/LPEarA+NQ5XyTPfhD3A$Lvk41lsV/8UMfMOFEF4UkvkBKCRQD95eMCY6+B3kom0", "(m·t) must be at most 256 MiB, here 384 MiB"),
        ("$argon2id$v=19$m=8,t=2,p=2$Z3/LPEarA+NQ5XyTPfhD3A$Lvk41lsV/8UMfMOFEF4UkvkBKCRQD95eMCY6+B3kom0", "argon2 memory m (KiB) must be 16 to"),
        ("$argon2id$v=19$m=256,t=33,p=2$Z3/LPEarA+NQ5XyTPfhD3A$Lvk41lsV/8UMfMOFEF4UkvkBKCRQD95eMCY6+B3kom0", "argon2 passes t must be 1 to 32"),
        ("$argon2id$v=19$m=65536,t=2,p=17$Z3/LPEarA+NQ5XyTPfhD3A$Lvk41lsV/8UMfMOFEF4UkvkBKCRQD95eMCY6+B3kom0", "argon2 parallelism p must be 1 to 16"),
        ("$argon2id$v=19$m=256,t=2$Z3/LPEarA+NQ5XyTPfhD3A$Lvk41lsV/8UMfMOFEF4UkvkBKCRQD95eMCY6+B3kom0", "must include m, t and p"),
        ("$argon2id$v=19$m=256,t=2,p=2,keyid=AA$Z3/LPEarA+NQ5XyTPfhD3A$Lvk41lsV/8UMfMOFEF4UkvkBKCRQD95eMCY6+B3kom0", "\"keyid=AA\" is not one of them"),
        ("$argon2id$v=19$m=256,t=2,p=2$c2FsdA$Lvk41lsV/8UMfMOFEF4UkvkBKCRQD95eMCY6+B3kom0", "argon2 salt must be at least 8 bytes, found 4"),
        ("$argon2id$v=19$m=256,t=2,p=2$Z3/LPEarA+NQ5XyTPfhD3A$Lvk*1lsV", "argon2 hash is not valid base64"),
        ("$pbkdf2-sha256$0$O4fwHoMQAiBEqDWG0No7Jw$yPDld4XHASdFReS076/2TiVbWjXZX4Gz/xM/RsEQEa4", "PBKDF2 rounds must be 1 to 2000000"),
        ("$pbkdf2-sha512$2000001$O4fwHoMQAiBEqDWG0No7Jw$yPDld4XHASdFReS076/2TiVbWjXZX4Gz/xM/RsEQEa4", "PBKDF2 rounds must be 1 to 2000000"),
        ("$pbkdf2-sha256$-5$O4fwHoMQAiBEqDWG0No7Jw$yPDld4XHASdFReS076/2TiVbWjXZX4Gz/xM/RsEQEa4", "PBKDF2 rounds must be 1 to"),
        ("$pbkdf2-sha256$1000$O4fwHoMQAiBEqDWG0No7Jw$yPDld4XHASdFReS076+2TiVbWjXZX4Gz/xM/RsEQEa4", "PBKDF2 hash (adapted base64) is not valid base64"),
        ("$pbkdf2-sha256$1000$O4fwHoMQAiBEqDWG0No7Jw$yPDld4XH", "PBKDF2 hash must be 16 to 128 bytes, found 6"),
        ("pbkdf2_sha256$1000$x5YtR4S7pcaf4sCa9hpxvs", "Django PBKDF2 hash must be"),
        ("$firebase-scrypt$r=9,m=14$42xEC+ixf3L2lw$Bw$\(FirebaseVector.signerKey)$\(FirebaseVector.hash)", "Firebase rounds r must be 1 to 8"),
        ("$firebase-scrypt$r=8,m=14$42xEC+ixf3L2lw$Bw$\(FirebaseVector.signerKey)$lSrfV15cpx95", "must be as long as the signer key (64 bytes), found 9"),
        ("$scrypt$ln=10,r=8,p=1$2TvH+D+HMGYMQWhtbS1lTA$aHCnVVdDIKgxamGzjF4z0WagBiwJP9qk5pWH5/OzJ6I", "Tessera's own format"),
        ("md5$salt$hash", "unrecognised password hash format"),
    ])
    func validation(stored: String, message: String) {
        let error = #expect(throws: ImportedHashError.self) { try ImportedPasswordHash.validate(stored) }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error")")
        // verify refuses the same way instead of answering false.
        #expect(throws: ImportedHashError.self) { _ = try ImportedPasswordHash.verify("password", against: stored) }
    }

    @Test("every well-formed vector validates")
    func wellFormed() throws {
        for (stored, _) in BcryptVectors.all + Argon2Vectors.all + PBKDF2Vectors.all {
            try ImportedPasswordHash.validate(stored)
            #expect(ImportedPasswordHash.recognises(stored), "\(stored)")
        }
    }
}

private enum BcryptVectors {
    /// 72 letters, then 8 bytes that `$2b$` ignores.
    static let long80 = "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTTAIL-XYZ"

    static let all: [(String, String)] = [
        ("$2b$04$/7uLTDCOouCBDvfUUK7ISuFnt0gTsjI2rnMPRY08ZcaTXY9d93y9u", ""),
        ("$2a$05$loOdBXzWAt7eooZg16HbVOyzLb5ZsuK5lNhTSH.0CpJGkEOvbv6zK", "correct horse"),
        ("$2y$05$3e9VNB.Y5uNnZPkxw0OckunAezuSqjBgmH5o2o6Fjalu2u13WeKzy", "correct horse"),
        ("$2b$06$WgqPmiKq0EklsxFq6aeqqO46MLA68r37VABEY2bl1KgJu/.hVwYiy", "pässwörd 🔑"),
        // pyca bcrypt 4.3 of the 80-byte password (it truncates to 72 as OpenBSD does).
        ("$2b$04$AYJV7lkoGi68vUnjCpA64eQWLJG5HsamKwecfAUHiX0YAeSBvE8Fm", long80),
        // Django 5's BCryptPasswordHasher and BCryptSHA256PasswordHasher.
        ("bcrypt$$2b$04$3u1heyivkEIZoKOvWzjwc./Z6cgfSBeOAf6MwM8G8Vyb2/EGvL8ka", "password"),
        ("bcrypt_sha256$$2b$04$746.UPqIoy1d6vcOzgUiAe2jixAfKszRG6hbKmKuTczcoM8QDSZNS", "password"),
    ]
}

@Suite("Imported password hashes: bcrypt")
struct BcryptImportTests {
    @Test("pyca bcrypt and Django strings verify, a wrong password does not", arguments: BcryptVectors.all)
    func vectors(stored: String, password: String) throws {
        #expect(try ImportedPasswordHash.verify(password, against: stored))
        #expect(try !ImportedPasswordHash.verify("x" + password, against: stored))
    }

    @Test("only the first 72 bytes count")
    func truncation() throws {
        let stored = "$2b$04$AYJV7lkoGi68vUnjCpA64eQWLJG5HsamKwecfAUHiX0YAeSBvE8Fm"
        #expect(try ImportedPasswordHash.verify(String(BcryptVectors.long80.prefix(72)), against: stored))
        #expect(try ImportedPasswordHash.verify(String(BcryptVectors.long80.prefix(72)) + "anything", against: stored))
        #expect(try !ImportedPasswordHash.verify(String(BcryptVectors.long80.prefix(71)), against: stored))
    }

    @Test("a NUL ends the password, as in C's crypt")
    func nul() throws {
        let empty = "$2b$04$/7uLTDCOouCBDvfUUK7ISuFnt0gTsjI2rnMPRY08ZcaTXY9d93y9u"
        #expect(try ImportedPasswordHash.verify("\u{0}", against: empty))
        #expect(try !ImportedPasswordHash.verify(" ", against: empty))
        let horse = "$2a$05$loOdBXzWAt7eooZg16HbVOyzLb5ZsuK5lNhTSH.0CpJGkEOvbv6zK"
        #expect(try ImportedPasswordHash.verify("correct horse\u{0}battery", against: horse))
        #expect(try !ImportedPasswordHash.verify("correct hors\u{0}e", against: horse))
    }

    @Test("bcrypt's base64 decodes as OpenBSD's does")
    func base64() {
        // The 16-byte salt of the empty-password vector, as passlib's bcrypt64 decodes it.
        #expect(BcryptBase64.decode("/7uLTDCOouCBDvfUUK7ISu") == [
            0x07, 0xDC, 0x0D, 0x54, 0x51, 0x10, 0xAB, 0x01, 0x03, 0x17, 0x18, 0x56, 0x58, 0xCF, 0x4A, 0x53,
        ])
        #expect(BcryptBase64.decode("ab$") == nil)
    }

    @Test("the Blowfish constants are pi's hex digits")
    func constants() {
        #expect(BlowfishConstants.p.count == 18 && BlowfishConstants.p[0] == 0x243F_6A88 && BlowfishConstants.p[1] == 0x85A3_08D3)
        #expect(BlowfishConstants.s0[0] == 0xD131_0BA6 && BlowfishConstants.s3.last == 0x3AC3_72E6)
        #expect([BlowfishConstants.s0, BlowfishConstants.s1, BlowfishConstants.s2, BlowfishConstants.s3].allSatisfy { $0.count == 256 })
    }
}

private enum Argon2Vectors {
    static let all: [(String, String)] = [
        // argon2-cffi 25.1, PasswordHasher(...).hash
        ("$argon2id$v=19$m=256,t=2,p=2$Z3/LPEarA+NQ5XyTPfhD3A$Lvk41lsV/8UMfMOFEF4UkvkBKCRQD95eMCY6+B3kom0", "password"),
        ("$argon2i$v=19$m=64,t=3,p=1$MJqycbPT+/XA2ztVC99Yvw$++oP3ZydT9k3QFOfOj+QgYEPWxhonZ40fIB2jRz1Uws", "password"),
        ("$argon2d$v=19$m=128,t=1,p=4$KmoIVrE/0hG6HvsTXvTxXw$QDVZjNd9Dj7mJd0U8LJf/A", "pässwörd 🔑"),
        // argon2-cffi low_level.hash_secret with version=16, then the same with version=19.
        ("$argon2id$v=16$m=64,t=2,p=1$c2FsdHNhbHRzYWx0MTIzNA$cJft2shZ9NIzji0k6BzKfubyIh3yTHxUp77jvCvVSus", "password"),
        ("$argon2id$v=19$m=64,t=2,p=1$c2FsdHNhbHRzYWx0MTIzNA$LPlYK5BqlsPSB5K8ElSX58ht50x990OSthlSSVsJCFQ", "password"),
        // Django 5's Argon2PasswordHasher (time_cost 1, memory_cost 128, parallelism 2).
        ("argon2$argon2id$v=19$m=128,t=1,p=2$aGNLVWtzOENxeFBxRzhiRTdzREhMMQ$hkVu56GK3sLD1a2UHhuE+h8KVgo/RWatHuBTMdSNtEs", "password"),
    ]
}

@Suite("Imported password hashes: Argon2 and BLAKE2b")
struct Argon2ImportTests {
    @Test("BLAKE2b-512 of \"abc\" (RFC 7693 Appendix A)")
    func blake2b() {
        #expect(hexString(Blake2b.hash(Array("abc".utf8))) == "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
            + "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")
        // The empty message, and a two-block one whose last block is full (Python's hashlib).
        #expect(hexString(Blake2b.hash([], outputLength: 32)) == "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8")
        #expect(hexString(Blake2b.hash([UInt8](repeating: 0x61, count: 256), outputLength: 64)) == Self.blake2b256a)
    }

    static let blake2b256a = "0eee13d0c73a2710c5015a8b4be0a16120bb88f826b662951ffe4b3b81441cfd"
        + "ce1f712c58e237dba72a0dad7f9c86b9745ea0b4b3b850ff3a260fb7df9d3e81"

    @Test("RFC 9106 §5 test vectors", arguments: [
        (Argon2.Variant.d, "512b391b6f1162975371d30919734294f868e3be3984f3c1a13a4db9fabe4acb"),
        (.i, "c814d9d1dc7f37aa13f0d77f2494bda1c8de6b016dd388d29952a4c4672b6ce8"),
        (.id, "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"),
    ])
    func rfc9106(variant: Argon2.Variant, tag: String) {
        let parameters = Argon2.Parameters(variant: variant, version: Argon2.version13, memoryKiB: 32, iterations: 3, parallelism: 4)
        let result = Argon2.hash(password: [UInt8](repeating: 1, count: 32), salt: [UInt8](repeating: 2, count: 16),
                                 secret: [UInt8](repeating: 3, count: 8), associatedData: [UInt8](repeating: 4, count: 12),
                                 parameters: parameters, tagLength: 32)
        #expect(hexString(result) == tag)
    }

    @Test("argon2-cffi and Django strings verify, a wrong password does not", arguments: Argon2Vectors.all)
    func vectors(stored: String, password: String) throws {
        #expect(try ImportedPasswordHash.verify(password, against: stored))
        #expect(try !ImportedPasswordHash.verify(password + "x", against: stored))
    }
}

private enum PBKDF2Vectors {
    static let all: [(String, String)] = [
        // passlib 1.7.4, rounds 1000
        ("$pbkdf2-sha256$1000$O4fwHoMQAiBEqDWG0No7Jw$yPDld4XHASdFReS076/2TiVbWjXZX4Gz/xM/RsEQEa4", "password"),
        ("$pbkdf2-sha512$1000$uNfaey/l3FtLqfV.L2XMuQ$1Iscm/bVhZ3jySEc0ccFzUTjqdAmzUWKSy5FqvqNDd9EBdBGI.nSlySyUu0oWdCJydr/yZQiI8XG/Qw28nzSrA", "pässwörd 🔑"),
        ("$pbkdf2$1000$HmMshZAS4pyzFuLcW0vJmQ$0OQx3DKi1g94UQwE/2DL65lKhXo", "password"),
        // RFC 7914 §11: PBKDF2-HMAC-SHA256("passwd", "salt", c = 1, dkLen = 64), written in passlib's form.
        ("$pbkdf2-sha256$1$c2FsdA$VawEblbjCJ/sFpHCJUS2BflBhSFt3gRl5oudV8INrLxJypzM8Xm2RZkWZLOdd.8xfHG4RbHjC9UJESBB06GXgw", "passwd"),
        // Django 5's PBKDF2PasswordHasher and PBKDF2SHA1PasswordHasher, 1000 iterations.
        ("pbkdf2_sha256$1000$x5YtR4S7pcaf4sCa9hpxvs$1qrosqFlWhB65V8ioDwiLULYhowvX1WfxQLU3h+66WY=", "password"),
        ("pbkdf2_sha1$1000$msjQVpwhJF4QA4oEOM4z20$h+AgHbb1RFmIWjAcv6+M+pc02RA=", "password"),
    ]
}

@Suite("Imported password hashes: PBKDF2")
struct PBKDF2ImportTests {
    @Test("passlib, Django and RFC 7914 strings verify, a wrong password does not", arguments: PBKDF2Vectors.all)
    func vectors(stored: String, password: String) throws {
        #expect(try ImportedPasswordHash.verify(password, against: stored))
        #expect(try !ImportedPasswordHash.verify(password + "x", against: stored))
    }

    @Test("RFC 7914 §11 second vector: c = 80000")
    func rfc7914Slow() throws {
        let stored = "$pbkdf2-sha256$80000$TmFDbA$TdzY9guYviGDDO5e8icB.WQaRBjQTAQUrv8Ih2s0q1ah1CWhIlgzVJrbhBtRybMXaicr3ruh0HhHj2Kzl/M8jQ"
        #expect(try ImportedPasswordHash.verify("Password", against: stored))
        #expect(try !ImportedPasswordHash.verify("password", against: stored))
    }
}

/// The example in github.com/firebase/scrypt's README: project parameters, one exported user.
private enum FirebaseVector {
    static let signerKey = "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="
    static let saltSeparator = "Bw=="
    static let salt = "42xEC+ixf3L2lw=="
    static let password = "user1password"
    static let hash = "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="

    static func config() throws -> FirebaseHashConfig {
        try FirebaseHashConfig(base64SignerKey: signerKey, base64SaltSeparator: saltSeparator, rounds: 8, memCost: 14)
    }
}

@Suite("Imported password hashes: Firebase scrypt")
struct FirebaseScryptImportTests {
    @Test("the firebase/scrypt README example verifies, a wrong password does not")
    func readmeExample() throws {
        let stored = try ImportedPasswordHash.firebaseScrypt(passwordHash: FirebaseVector.hash, salt: FirebaseVector.salt,
                                                             config: FirebaseVector.config())
        #expect(stored == "$firebase-scrypt$r=8,m=14$42xEC+ixf3L2lw$Bw$"
            + FirebaseVector.signerKey.replacingOccurrences(of: "=", with: "") + "$" + FirebaseVector.hash.replacingOccurrences(of: "=", with: ""))
        #expect(ImportedPasswordHash.recognises(stored))
        try ImportedPasswordHash.validate(stored)
        #expect(try ImportedPasswordHash.verify(FirebaseVector.password, against: stored))
        #expect(try !ImportedPasswordHash.verify("user1password ", against: stored))
        #expect(try !ImportedPasswordHash.verify("user2password", against: stored))
    }

    @Test("another project's signer key does not verify")
    func otherProject() throws {
        var key = Array(Data(base64Encoded: FirebaseVector.signerKey)!)
        key[0] ^= 1
        let config = try FirebaseHashConfig(signerKey: key, saltSeparator: [7], rounds: 8, memCost: 14)
        let stored = try ImportedPasswordHash.firebaseScrypt(passwordHash: FirebaseVector.hash, salt: FirebaseVector.salt, config: config)
        #expect(try !ImportedPasswordHash.verify(FirebaseVector.password, against: stored))
    }

    @Test("the configuration reads as the console, the JSON, Identity Platform and the CLI give it", arguments: [
        """
        hash_config {
          algorithm: SCRYPT,
          base64_signer_key: \(FirebaseVector.signerKey),
          base64_salt_separator: Bw==,
          rounds: 8,
          mem_cost: 14,
        }
        """,
        #"{"algorithm":"SCRYPT","base64_signer_key":"\#(FirebaseVector.signerKey)","base64_salt_separator":"Bw==","rounds":8,"mem_cost":14}"#,
        #"{"signIn":{"hashConfig":{"algorithm":"SCRYPT","signerKey":"\#(FirebaseVector.signerKey)","saltSeparator":"Bw==","rounds":8,"memoryCost":14}}}"#,
        #"{"hash_config":{"base64SignerKey":"\#(FirebaseVector.signerKey)","base64SaltSeparator":"Bw==","rounds":"8","memCost":"14"}}"#,
        "firebase auth:import users.json --hash-algo=SCRYPT --hash-key=\(FirebaseVector.signerKey) --salt-separator=Bw== --rounds=8 --mem-cost=14",
    ])
    func parsing(text: String) throws {
        #expect(try FirebaseHashConfig(parsing: text) == FirebaseVector.config())
    }

    @Test("a configuration that is not usable is refused with its reason", arguments: [
        (#"{"algorithm":"HMAC_SHA256","base64_signer_key":"AAAA","base64_salt_separator":"Bw==","rounds":8,"mem_cost":14}"#, "algorithm must be SCRYPT"),
        (#"{"algorithm":"SCRYPT","base64_salt_separator":"Bw==","rounds":8}"#, "lacks mem_cost, signer key"),
        (#"{"base64_signer_key":"AAAA","base64_salt_separator":"Bw==","rounds":9,"mem_cost":14}"#, "rounds must be 1 to 8, not 9"),
        (#"{"base64_signer_key":"AAAA","base64_salt_separator":"Bw==","rounds":8,"mem_cost":15}"#, "mem_cost must be 1 to 14, not 15"),
        (#"{"base64_signer_key":"A*AA","base64_salt_separator":"Bw==","rounds":8,"mem_cost":14}"#, "signer key is not valid base64"),
        (#"{"base64_signer_key":"AAAA""#, "not valid JSON"),
    ])
    func refusal(text: String, message: String) {
        let error = #expect(throws: ImportedHashError.self) { try FirebaseHashConfig(parsing: text) }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error")")
    }

    @Test("a hash of the wrong length is refused at import")
    func wrongLength() throws {
        let error = #expect(throws: ImportedHashError.self) {
            try ImportedPasswordHash.firebaseScrypt(passwordHash: "AAAA", salt: FirebaseVector.salt, config: FirebaseVector.config())
        }
        #expect(error?.message.contains("as long as the signer key") == true)
    }
}

private func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}
