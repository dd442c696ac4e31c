import Foundation

/// Base64url without padding (RFC 7515 §2).
public enum Base64URL {
    public static func encode<S: Sequence>(_ data: S) -> String where S.Element == UInt8 {
        Data(data).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url; refuses padding and characters outside the alphabet.
    public static func decode(_ string: some StringProtocol) -> Data? {
        var base64 = String(string)
        guard !base64.contains("="), !base64.contains("+"), !base64.contains("/") else { return nil }
        base64 = base64.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let remainder = base64.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { base64 += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: base64)
    }
}
