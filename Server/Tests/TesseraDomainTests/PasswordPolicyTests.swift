import Testing
import TesseraDomain

@Suite("Password policy")
struct PasswordPolicyTests {
    let policy = PasswordPolicy()
    /// Not in the list, no pattern: accepted at any length the policy allows.
    let base = "Zebra-Kettle-Orbit-Lantern-"

    func word(_ length: Int) -> String { String(String(repeating: base, count: length / base.count + 1).prefix(length)) }

    @Test("length is 8 to 256 characters: 7 and 257 are refused")
    func lengthBoundaries() {
        #expect(policy.check(word(7), email: nil) == .tooShort)
        #expect(policy.check(word(8), email: nil) == nil)
        #expect(policy.check(word(256), email: nil) == nil)
        #expect(policy.check(word(257), email: nil) == .tooLong)
        #expect(policy.check("", email: nil) == .tooShort)
    }

    @Test("length counts characters, not bytes or scalars")
    func lengthInCharacters() {
        #expect(policy.check("пароль", email: nil) == .tooShort, "6 characters, 12 bytes")
        #expect(policy.check("жёлтыйкот", email: nil) == nil)
        let family = "👨‍👩‍👧" // one Character, five scalars, 18 bytes
        #expect(policy.check(String(repeating: family, count: 3) + "ab12", email: nil) == .tooShort)
        #expect(policy.check("Съешь ещё" + family, email: nil) == nil)
        #expect(policy.check(String(repeating: "ж", count: 255) + "z", email: nil) == nil, "256 characters, 511 bytes")
    }

    @Test("the limits are configurable")
    func configurable() {
        var strict = PasswordPolicy()
        strict.minimumLength = 12
        strict.maximumLength = 64
        #expect(strict.check(word(11), email: nil) == .tooShort)
        #expect(strict.check(word(12), email: nil) == nil)
        #expect(strict.check(word(65), email: nil) == .tooLong)
        #expect(PasswordPolicy.explanation(.tooShort, policy: strict) == "The password must be at least 12 characters long.")
        #expect(PasswordPolicy.explanation(.tooLong, policy: strict) == "The password must be at most 64 characters long.")
    }

    @Test("common passwords are refused, compared lowercased and otherwise exactly")
    func banned() {
        for password in ["password", "qwertyuiop", "password1", "iloveyou", "sunshine", "trustno1", "1qaz2wsx"] {
            #expect(policy.check(password, email: nil) == .banned, "\(password)")
        }
        #expect(policy.check("PassWord", email: nil) == .banned)
        #expect(policy.check("Password1", email: nil) == .banned)
        #expect(policy.check("QWERTYUIOP", email: nil) == .banned)
        #expect(policy.check("password1!", email: nil) == nil, "no stripping of punctuation")
        #expect(policy.check(" password", email: nil) == nil, "no trimming")
    }

    @Test("the list holds exactly the first 10,000 passwords, lowercase, most common first")
    func list() {
        let lines = CommonPasswords.inFileOrder
        #expect(lines.count == 10_000)
        #expect(CommonPasswords.all.count == 10_000, "no duplicates, no empty line")
        #expect(lines.prefix(4) == ["123456", "password", "12345678", "qwerty"])
        #expect(CommonPasswords.all.allSatisfy { $0 == $0.lowercased() && !$0.isEmpty })
    }

    @Test("the account's email or its local part is too weak, in any case")
    func email() {
        let email = "Alexandra.Smith@example.com"
        #expect(policy.check("alexandra.smith@example.com", email: email) == .tooWeak)
        #expect(policy.check("ALEXANDRA.SMITH", email: email) == .tooWeak)
        #expect(policy.check("Alexandra.Smith", email: " alexandra.smith@example.com ") == .tooWeak)
        #expect(policy.check("Alexandra.Smith", email: nil) == nil)
        #expect(policy.check("Alexandra.Smith", email: "someone.else@example.com") == nil)
        #expect(policy.check("Alexandra.Smith!", email: email) == nil, "only equality is refused")
        #expect(policy.check("example.com", email: "@example.com") == nil, "an empty local part matches nothing")
    }

    @Test("repeated characters and straight runs are too weak", arguments: [
        "zzzzzzzzzzzz", "ЖЖЖЖЖЖЖЖЖ", "xyxyxyxyxy", "q7wq7wq7wq7", "abcdefghijklm", "LMNOPQRSTU", "3456789:;<", "zyxwvutsrq", "98765432",
    ])
    func trivialPatterns(_ password: String) {
        #expect(policy.check(password, email: nil) == .tooWeak)
    }

    @Test("strong passwords and passphrases are accepted", arguments: [
        "correct horse battery staple", "Tr0ub4dor&3x", "q7wq7wq7wq7x", "abcdefgh1", "мой кот любит сметану", "7f3K9pQ2vX8mL4nR",
    ])
    func accepted(_ password: String) {
        #expect(policy.check(password, email: "alice@example.com") == nil)
    }

    @Test("each violation is named as the API's suberror and explained in a sentence")
    func violations() {
        #expect(PasswordPolicy.Violation.allCases.map(\.rawValue)
            == ["password_too_short", "password_too_long", "password_banned", "password_too_weak"])
        for violation in PasswordPolicy.Violation.allCases {
            let sentence = PasswordPolicy.explanation(violation, policy: policy)
            #expect(sentence.first?.isUppercase == true && sentence.hasSuffix("."))
        }
        #expect(PasswordPolicy.explanation(.tooShort, policy: policy) == "The password must be at least 8 characters long.")
    }
}
