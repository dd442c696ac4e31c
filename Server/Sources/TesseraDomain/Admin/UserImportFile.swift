import Foundation
import TesseraCore

/// The files an import reads, each row checked before any is written: a Firebase Auth export
/// (`firebase auth:export users.json`), JSON Lines, or CSV with a header row.
public enum UserImportFile {
    public enum Format: String, Sendable, CaseIterable {
        case firebase, jsonl, csv
    }

    /// The rows of `text` in `format`; a row that can't be imported is a failure naming its
    /// line and why. A file that is not of the format at all throws ``ImportFileError``.
    /// `providers` maps Firebase's provider ids (`google.com`, `apple.com`) to this server's
    /// upstream providers (`google`, `apple`): those identities are linked; others are not.
    public static func rows(_ text: String, format: Format, hashConfig: FirebaseHashConfig? = nil, providers: [String: String] = [:]) throws
        -> [Result<UserImportRow, UserImportFailure>] {
        switch format {
        case .firebase: try firebase(text, hashConfig: hashConfig, providers: providers)
        case .jsonl: jsonLines(text)
        case .csv: try csv(text)
        }
    }

    /// The format a file's name and first character say.
    public static func guess(path: String, text: String) -> Format {
        let lower = path.lowercased()
        if lower.hasSuffix(".csv") { return .csv }
        if lower.hasSuffix(".jsonl") || lower.hasSuffix(".ndjson") { return .jsonl }
        let start = text.drop { $0.isWhitespace }
        if start.hasPrefix("{\"users\"") || start.hasPrefix("{") && !start.contains("\n{") { return .firebase }
        return start.hasPrefix("{") ? .jsonl : .csv
    }

    public struct ImportFileError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: Firebase

    /// `{"users": [...]}` as `firebase auth:export --format=json` writes it. Passwords need the
    /// project's hash parameters (`hashConfig`); users signed up by phone alone have no address
    /// and are refused (Tessera's accounts are email accounts).
    static func firebase(_ text: String, hashConfig: FirebaseHashConfig?, providers: [String: String]) throws
        -> [Result<UserImportRow, UserImportFailure>] {
        guard let document = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)),
              case .array(let users)? = document.objectValue?["users"] else {
            throw ImportFileError("not a Firebase Auth export: expected a JSON object with a \"users\" array (firebase auth:export users.json)")
        }
        return users.enumerated().map { index, value in
            let line = index + 1
            guard let user = value.objectValue else {
                return .failure(UserImportFailure(line: line, reference: "", reason: "is not a JSON object"))
            }
            let id = user["localId"]?.stringValue
            return Result {
                guard let email = user["email"]?.stringValue, !email.isEmpty else {
                    throw RowProblem("has no email address (a phone-only account): Tessera's accounts are email accounts")
                }
                var profile: [String: JSONValue] = [:]
                profile["name"] = user["displayName"]?.stringValue.flatMap { $0.isEmpty ? nil : .string($0) }
                profile["phone_number"] = user["phoneNumber"]?.stringValue.flatMap { $0.isEmpty ? nil : .string($0) }
                profile["picture"] = user["photoUrl"]?.stringValue.flatMap { $0.isEmpty ? nil : .string($0) }
                var hash: String?
                if let passwordHash = user["passwordHash"]?.stringValue, !passwordHash.isEmpty {
                    guard let hashConfig else {
                        throw RowProblem("has a password hash, but no hash configuration was given (--hash-config: the project's base64_signer_key, base64_salt_separator, rounds and mem_cost)")
                    }
                    do {
                        hash = try ImportedPasswordHash.firebaseScrypt(passwordHash: passwordHash, salt: user["salt"]?.stringValue ?? "",
                                                                       config: hashConfig)
                    } catch let error as ImportedHashError {
                        throw RowProblem("password hash: \(error.message)")
                    }
                }
                var row = try check(UserImportRow(
                    line: line, id: id, email: email, emailVerified: user["emailVerified"]?.boolValue ?? false, passwordHash: hash,
                    profile: profile, createdAt: milliseconds(user["createdAt"]).map { $0 / 1000 },
                    disabled: user["disabled"]?.boolValue ?? false))
                for info in user["providerUserInfo"]?.arrayValue?.compactMap(\.objectValue) ?? [] {
                    guard let firebaseID = info["providerId"]?.stringValue, let providerID = providers[firebaseID],
                          let subject = info["rawId"]?.stringValue, !subject.isEmpty else { continue }
                    row.identities.append(ImportedIdentity(providerID: providerID, subject: subject, email: info["email"]?.stringValue))
                }
                return row
            }.mapError { UserImportFailure(line: line, reference: id ?? user["email"]?.stringValue ?? "", reason: "\($0)") }
        }
    }

    /// Firebase writes times as strings of milliseconds.
    static func milliseconds(_ value: JSONValue?) -> Int64? {
        switch value {
        case .string(let text)?: Int64(text)
        case .int(let number)?: number
        default: nil
        }
    }

    // MARK: JSON Lines

    /// One JSON object per line: `email`, and any of `id`, `email_verified`, `password_hash`
    /// (a PHC string: bcrypt, argon2, scrypt from elsewhere, PBKDF2), `name`, `profile` (claims
    /// by name), `created_at` (seconds), `disabled`.
    static func jsonLines(_ text: String) -> [Result<UserImportRow, UserImportFailure>] {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { return nil }
            let number = index + 1
            guard let object = (try? JSONDecoder().decode(JSONValue.self, from: Data(trimmed.utf8)))?.objectValue else {
                return .failure(UserImportFailure(line: number, reference: "", reason: "is not a JSON object"))
            }
            return Result {
                let known: Set = ["id", "email", "email_verified", "password_hash", "name", "profile", "created_at", "disabled"]
                if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
                    throw RowProblem("has an unknown member '\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
                }
                var profile = object["profile"]?.objectValue ?? [:]
                if object["profile"] != nil && object["profile"]?.objectValue == nil { throw RowProblem("profile must be a JSON object of claims") }
                if let name = object["name"]?.stringValue { profile["name"] = .string(name) }
                return try check(UserImportRow(
                    line: number, id: object["id"]?.stringValue, email: object["email"]?.stringValue ?? "",
                    emailVerified: object["email_verified"]?.boolValue ?? false, passwordHash: object["password_hash"]?.stringValue,
                    profile: profile, createdAt: object["created_at"]?.intValue, disabled: object["disabled"]?.boolValue ?? false))
            }.mapError { UserImportFailure(line: number, reference: object["id"]?.stringValue ?? object["email"]?.stringValue ?? "",
                                           reason: "\($0)") }
        }
    }

    // MARK: CSV

    /// A header row, then a user per row (RFC 4180 quoting). Columns: `email`, and any of `id`,
    /// `email_verified` (true/false), `password_hash`, `created_at`, `disabled`, and profile
    /// claims by name (text claims: `name`, `given_name`, `phone_number`, `birthdate`, …); an
    /// empty cell is no value.
    static func csv(_ text: String) throws -> [Result<UserImportRow, UserImportFailure>] {
        let records = try CSV.records(text)
        guard let header = records.first?.fields.map({ $0.trimmingCharacters(in: .whitespaces) }), header.contains("email") else {
            throw ImportFileError("the CSV file needs a header row with an email column")
        }
        let special: Set = ["id", "email", "email_verified", "password_hash", "created_at", "disabled"]
        for column in header where !special.contains(column) {
            guard let claim = ScopeCatalogue.claim(column), !claim.managed else {
                throw ImportFileError("the column '\(column)' is neither a user field (\(special.sorted().joined(separator: ", "))) nor a profile claim")
            }
        }
        return records.dropFirst().map { record in
            var cells: [String: String] = [:]
            for (column, value) in zip(header, record.fields) where !value.isEmpty { cells[column] = value }
            return Result {
                guard record.fields.count == header.count else {
                    throw RowProblem("has \(record.fields.count) cells for \(header.count) columns")
                }
                var profile: [String: JSONValue] = [:]
                for (column, value) in cells where !special.contains(column) { profile[column] = try claimValue(column, value) }
                return try check(UserImportRow(
                    line: record.line, id: cells["id"], email: cells["email"] ?? "", emailVerified: try flag(cells["email_verified"], "email_verified"),
                    passwordHash: cells["password_hash"], profile: profile,
                    createdAt: try cells["created_at"].map { guard let seconds = Int64($0) else { throw RowProblem("created_at must be seconds since 1970") }; return seconds },
                    disabled: try flag(cells["disabled"], "disabled")))
            }.mapError { UserImportFailure(line: record.line, reference: cells["id"] ?? cells["email"] ?? "", reason: "\($0)") }
        }
    }

    static func flag(_ text: String?, _ name: String) throws -> Bool {
        switch text?.lowercased() {
        case nil, "false", "0", "no": false
        case "true", "1", "yes": true
        default: throw RowProblem("\(name) must be true or false")
        }
    }

    /// A CSV cell as the claim's value: text claims as they are, numbers and booleans parsed.
    static func claimValue(_ claim: String, _ text: String) throws -> JSONValue {
        switch ScopeCatalogue.claim(claim)?.shape {
        case .boolean?: return JSONValue.bool(try flag(text, claim))
        case .integer?, .integerEnum?:
            guard let number = Int64(text) else { throw RowProblem("claim '\(claim)' must be a whole number") }
            return .int(number)
        case .object?:
            guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else {
                throw RowProblem("claim '\(claim)' must be a JSON object in its cell")
            }
            return value
        default: return JSONValue.string(text)
        }
    }

    // MARK: Checking a row

    /// Ids as other systems make them (Firebase's 28 characters, UUIDs): letters, digits, `-_.:`.
    static func isPlausibleID(_ id: String) -> Bool {
        (1...128).contains(id.count) && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.:".contains($0)) }
    }

    static func check(_ row: UserImportRow) throws -> UserImportRow {
        var row = row
        row.email = MailAddress.normalise(row.email)
        guard MailAddress.isPlausible(row.email) else { throw RowProblem("'\(row.email)' is not an email address") }
        if let id = row.id, !isPlausibleID(id) {
            throw RowProblem("the id must be 1 to 128 letters, digits or -_.: (it becomes the account's id)")
        }
        if let hash = row.passwordHash {
            if hash.hasPrefix("$scrypt$") {
                if let problem = PasswordHasher.problem(with: hash) { throw RowProblem("password_hash: \(problem)") }
            } else if ImportedPasswordHash.recognises(hash) {
                do { try ImportedPasswordHash.validate(hash) } catch let error as ImportedHashError { throw RowProblem("password_hash: \(error.message)") }
            } else {
                throw RowProblem("password_hash is not in a supported format (bcrypt, argon2, scrypt, PBKDF2-SHA256, Firebase scrypt)")
            }
        }
        row.profile = ScopeCatalogue.normalised(profile: row.profile)
        do { try ScopeCatalogue.validate(profile: row.profile) } catch { throw RowProblem(error.description) }
        return row
    }
}

/// Why a row can't be imported, in words for the report.
struct RowProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// RFC 4180 records, each with the line it starts on.
enum CSV {
    struct Record {
        var line: Int
        var fields: [String]
    }

    static func records(_ text: String) throws -> [Record] {
        var records: [Record] = [], fields: [String] = [], field = "", quoted = false, line = 1, start = 1
        var iterator = text.makeIterator()
        var pending: Character? = nil
        func next() -> Character? {
            if let value = pending { pending = nil; return value }
            return iterator.next()
        }
        while let character = next() {
            if quoted {
                if character == "\"" {
                    let following = next()
                    if following == "\"" { field.append("\"") } else { quoted = false; pending = following }
                } else {
                    if character == "\n" || character == "\r\n" { line += 1 }
                    field.append(character)
                }
                continue
            }
            switch character {
            case "\"" where field.isEmpty: quoted = true
            case ",": fields.append(field); field = ""
            case "\n", "\r\n", "\r":
                fields.append(field); field = ""
                if !(fields.count == 1 && fields[0].isEmpty) { records.append(Record(line: start, fields: fields)) }
                fields = []
                line += 1
                start = line
            default: field.append(character)
            }
        }
        if quoted { throw UserImportFile.ImportFileError("the CSV file ends inside a quoted cell (line \(start))") }
        fields.append(field)
        if !(fields.count == 1 && fields[0].isEmpty) { records.append(Record(line: start, fields: fields)) }
        return records
    }
}
