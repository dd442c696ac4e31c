/// The passwords ``PasswordPolicy`` refuses as `password_banned`: the 10,000 most common,
/// lowercase ASCII, from `Resources/common-passwords.txt` (one a line, most common first;
/// `#` lines say where the list comes from), which the build embeds in the binary.
package enum CommonPasswords {
    /// Parsed once, on first use.
    package static let all = Set(passwords(in: PackageResources.common_passwords_txt))

    /// The file's passwords in its order, read again at every call (for checks of the list).
    package static var inFileOrder: [String] { passwords(in: PackageResources.common_passwords_txt) }

    /// The file's passwords, in order.
    static func passwords(in file: [UInt8]) -> [String] {
        let newline = UInt8(ascii: "\n")
        var lines = file.split(separator: newline, omittingEmptySubsequences: false)
        if file.last == newline { lines.removeLast() }
        return lines.compactMap { $0.first == UInt8(ascii: "#") ? nil : String(decoding: $0, as: UTF8.self) }
    }
}
