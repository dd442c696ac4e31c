import Foundation
import TesseraCore

/// Renders a ``MailMessage`` as an Internet message (RFC 5322) with MIME parts
/// (RFC 2045–2047): 7-bit clean, CRLF line endings, no line longer than 76 octets
/// (the hard limit is 998, RFC 5322 §2.1.1), UTF-8 text in quoted-printable, non-ASCII
/// header text as encoded-words.
package enum MIMEMessage {
    /// The rendered message, ending in CRLF; dot-stuffing is the SMTP layer's job.
    package static func render(_ message: MailMessage, from: MailAddress, messageID: String, date: Int64,
                       boundary: String = "=_tessera_" + SecureRandom.token(bytes: 12)) -> String {
        var headers = [
            "Date: " + rfc5322Date(date),
            "From: " + mailbox(from),
            "To: " + message.to,
            foldedHeader("Subject", message.subject),
            "Message-ID: <\(messageID)>",
            "MIME-Version: 1.0",
            // RFC 3834 §5: transactional mail must not trigger vacation auto-replies.
            "Auto-Submitted: auto-generated",
        ]
        if message.language.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }), !message.language.isEmpty {
            headers.append("Content-Language: " + message.language)
        }
        var lines: [String]
        if let html = message.html {
            headers.append("Content-Type: multipart/alternative; boundary=\"\(boundary)\"")
            lines = headers + ["", "This is a multi-part message in MIME format.", "--" + boundary]
            lines += part("text/plain", message.text)
            lines.append("--" + boundary)
            lines += part("text/html", html)
            lines.append("--" + boundary + "--")
        } else {
            lines = headers + part("text/plain", message.text)
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// The headers and quoted-printable body of one UTF-8 text part.
    static func part(_ type: String, _ text: String) -> [String] {
        ["Content-Type: \(type); charset=UTF-8", "Content-Transfer-Encoding: quoted-printable", "", quotedPrintable(text)]
    }

    /// RFC 2045 §6.7: line breaks become CRLF, encoded lines stay within 76 octets
    /// (soft breaks `=` CRLF), and whitespace at the end of a line is encoded.
    package static func quotedPrintable(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [String] = []
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        for line in normalized.split(separator: "\n", omittingEmptySubsequences: false) {
            let bytes = Array(line.utf8)
            var current: [UInt8] = []
            for (index, byte) in bytes.enumerated() {
                let isLast = index == bytes.count - 1
                let literal = (byte >= 33 && byte <= 126 && byte != UInt8(ascii: "=")) || ((byte == 32 || byte == 9) && !isLast)
                let token = literal ? [byte] : [UInt8(ascii: "="), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
                // Leave room for the soft break's "=" (76 octets in all).
                if current.count + token.count > 75 {
                    output.append(String(decoding: current + [UInt8(ascii: "=")], as: UTF8.self))
                    current = []
                }
                current += token
            }
            output.append(String(decoding: current, as: UTF8.self))
        }
        return output.joined(separator: "\r\n")
    }

    /// A header field whose value is free text: as is when it is short printable ASCII,
    /// otherwise as UTF-8 "B" encoded-words (RFC 2047 §4.1), each line ≤ 76 octets
    /// (RFC 2047 §2) and never splitting a character.
    static func foldedHeader(_ name: String, _ value: String) -> String {
        // A header is one line: line breaks and tabs in the value become spaces.
        let value = String(value.map { $0.isNewline || $0 == "\t" ? " " : $0 })
        let plain = value.unicodeScalars.allSatisfy { $0.value >= 32 && $0.value < 127 } && !value.contains("=?")
        if plain && name.count + 2 + value.utf8.count <= 78 { return "\(name): \(value)" }
        return "\(name): " + encodedWords(value).joined(separator: "\r\n ")
    }

    /// Encoded-words of at most 39 UTF-8 octets of text each (52 base64 characters,
    /// 64 in all with `=?UTF-8?B?` and `?=`).
    static func encodedWords(_ text: String) -> [String] {
        let limit = 39
        var chunks: [[UInt8]] = []
        var current: [UInt8] = []
        func add(_ bytes: [UInt8]) {
            if current.count + bytes.count > limit, !current.isEmpty {
                chunks.append(current)
                current = []
            }
            current += bytes
        }
        for character in text {
            let bytes = Array(String(character).utf8)
            if bytes.count <= limit {
                add(bytes)
            } else {
                for scalar in character.unicodeScalars { add(Array(String(scalar).utf8)) }
            }
        }
        if !current.isEmpty || chunks.isEmpty { chunks.append(current) }
        return chunks.map { "=?UTF-8?B?" + Data($0).base64EncodedString() + "?=" }
    }

    /// `Name <address>`, the name as atoms, a quoted string or encoded-words (RFC 5322 §3.4,
    /// RFC 2047 §5(3)).
    package static func mailbox(_ address: MailAddress) -> String {
        guard let name = address.displayName else { return address.address }
        let atext = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/=?^_`{|}~ ")
        let phrase: String
        if name.unicodeScalars.allSatisfy(atext.contains) && !name.contains("=?") {
            phrase = name
        } else if name.unicodeScalars.allSatisfy({ $0.value >= 32 && $0.value < 127 }) && !name.contains("=?") {
            phrase = "\"" + name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        } else {
            phrase = encodedWords(name).joined(separator: "\r\n ")
        }
        return "\(phrase) <\(address.address)>"
    }

    /// RFC 5322 §3.3 date-time in UTC: `Tue, 14 Jan 2025 10:00:00 +0000`.
    static func rfc5322Date(_ unixTime: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(unixTime)))
    }

    /// A Message-ID's `id-left "@" id-right` (RFC 5322 §3.6.4): random, then the issuer's host.
    package static func newMessageID(domain: String) -> String {
        SecureRandom.token(bytes: 18) + "@" + domain
    }
}
