import Foundation

/// Which new passwords Tessera accepts, after NIST SP 800-63B §5.1.1.2: a length range counted
/// in characters (so "пароль" is 6, not 12), no composition rules, and a refusal of passwords
/// that are common or trivially guessed.
public struct PasswordPolicy: Sendable {
    /// In `Character`s (extended grapheme clusters).
    public var minimumLength = 8
    /// In `Character`s. Long enough for any passphrase; it only bounds the hashing work.
    public var maximumLength = 256

    public init() {}

    /// Why a password is refused; the raw values are the native auth API's suberrors.
    public enum Violation: String, Sendable, Error, CaseIterable {
        case tooShort = "password_too_short"
        case tooLong = "password_too_long"
        /// Among the 10,000 most common passwords (``CommonPasswords``).
        case banned = "password_banned"
        /// The account's email, its local part, or a trivial pattern.
        case tooWeak = "password_too_weak"
    }

    /// Nil when `password` is acceptable for the account with `email`. The checks run in the
    /// order of ``Violation``'s cases and the first that fails is returned:
    ///
    /// - `tooShort` / `tooLong`: fewer than ``minimumLength`` or more than ``maximumLength`` characters.
    /// - `banned`: the lowercased password is exactly one of ``CommonPasswords`` (itself all
    ///   lowercase). No other normalisation: "Password1" is refused, "password1!" is not.
    /// - `tooWeak`, case-insensitively: the password is the email address or its local part
    ///   (before the last "@"); or it repeats a unit of one to three characters ("aaaaaaaa",
    ///   "abababab", "xyzxyzxyz"); or each character is the next, or each the previous, one in
    ///   Unicode order ("abcdefgh", "98765432").
    public func check(_ password: String, email: String?) -> Violation? {
        let length = password.count
        if length < minimumLength { return .tooShort }
        if length > maximumLength { return .tooLong }
        let lowered = password.lowercased()
        if CommonPasswords.all.contains(lowered) { return .banned }
        if let email = email?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased(), !email.isEmpty {
            if lowered == email { return .tooWeak }
            if let at = email.lastIndex(of: "@"), at != email.startIndex, lowered == email[..<at] { return .tooWeak }
        }
        if Self.isRepeatedUnit(Array(lowered)) || Self.isStraightRun(Array(lowered.unicodeScalars)) { return .tooWeak }
        return nil
    }

    /// An English sentence for `error_description`; `policy` supplies the limits it quotes.
    public static func explanation(_ violation: Violation, policy: PasswordPolicy) -> String {
        let (minimumLength, maximumLength) = (policy.minimumLength, policy.maximumLength)
        return switch violation {
        case .tooShort: "The password must be at least \(minimumLength) characters long."
        case .tooLong: "The password must be at most \(maximumLength) characters long."
        case .banned: "This password is one of the most commonly used passwords. Choose another one."
        case .tooWeak: "This password is too easy to guess: it matches the email address or is a simple pattern. Choose another one."
        }
    }

    /// The whole string repeats its first 1, 2 or 3 characters (the last repetition may be cut short).
    static func isRepeatedUnit(_ characters: [Character]) -> Bool {
        (1...3).contains { unit in
            characters.count > unit && characters.indices.dropFirst(unit).allSatisfy { characters[$0] == characters[$0 - unit] }
        }
    }

    /// Every scalar is one more than the one before it, or every scalar is one less.
    static func isStraightRun(_ scalars: [Unicode.Scalar]) -> Bool {
        guard scalars.count > 2 else { return false }
        let steps = zip(scalars, scalars.dropFirst()).map { Int($1.value) - Int($0.value) }
        return steps.allSatisfy { $0 == 1 } || steps.allSatisfy { $0 == -1 }
    }
}
