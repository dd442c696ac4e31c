import ArgumentParser
import Foundation
import TesseraCore
import TesseraDomain
import TesseraNode
import TesseraServer

// The admin commands: clients, users, keys and the audit trail. Each runs one or two
// ``AdminOperations`` on its ``AdminTarget`` (a running server, or the database) and prints the
// typed answer: as the admin API's JSON with --json, else as text for people.

// MARK: clients

struct Clients: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage clients.", subcommands: [Add.self, List.self, Show.self, Update.self, RotateSecret.self, Delete.self])

    /// A client for people: its settings in the table's order, then when it was registered.
    static func describe(_ client: AdminClientInfo) -> String {
        Table.fields(Table.members(client), ClientSetting.all.map(\.member) + ["created_at", "previous_secret_expires_at", "version"])
    }

    /// The client settings of a command line, or the command's end with what is wrong.
    static func settings(_ arguments: [String]) -> AdminClientSettings {
        do { return try AdminClientSettings(arguments: arguments) } catch let error as ConfigurationError { fail(error) } catch {
            fail(ConfigurationError("\(error)"))
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a client.",
            discussion: "The client's settings, each as its flag (every one is also a member of the admin API's NewClient):\n\n"
                + AdminClientSettings.help(changeableOnly: false))

        @OptionGroup var target: AdminTarget
        /// The settings' flags, read by ``AdminClientSettings`` from the table of client settings.
        @Argument(parsing: .allUnrecognized, help: .hidden) var settings: [String] = []

        func run() async throws {
            let settings = Clients.settings(settings)
            guard settings["client_name"] != nil else { fail(ConfigurationError("a client needs a --name")) }
            let client = try await target.run { try await $0.registerClient(settings) }
            try target.print(client) { client in
                "client_id: \(client.clientID)\n" + (client.clientSecret.map { "client_secret: \($0)   (shown once; stored hashed)\n" } ?? "")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the clients, by name.")
        @OptionGroup var target: AdminTarget
        @Option(help: "At most this many (1–200).") var limit = 50
        @Option(help: "Where to go on: the page token the previous page printed.") var pageToken: String?

        func run() async throws {
            let list = try await target.run { try await $0.clients(pageToken: pageToken, limit: limit) }
            try target.print(list) { list in
                let rows = list.clients.map { client in
                    [client.clientID, client.clientName, client.tokenEndpointAuthMethod, client.grantTypes.joined(separator: " "),
                     Table.yesNo(client.firstParty)]
                }
                var text = Table.render(["CLIENT ID", "NAME", "AUTHENTICATION", "GRANTS", "FIRST PARTY"], rows)
                if let next = list.nextPageToken { text += "more: --page-token \(next)\n" }
                return text
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a client (never its secret).")
        @OptionGroup var target: AdminTarget
        @Argument(help: "The client id.") var clientID: String

        func run() async throws {
            try target.print(try await target.run { try await $0.client(clientID) }, text: Clients.describe)
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a client's settings.",
            discussion: "Each setting given replaces that setting (a repeatable one: all of its values). The change is made only if nobody changed the client since it was read.\n\n"
                + AdminClientSettings.help(changeableOnly: true))
        @OptionGroup var target: AdminTarget
        @Argument(help: "The client id.") var clientID: String
        @Argument(parsing: .allUnrecognized, help: .hidden) var settings: [String] = []

        func run() async throws {
            let settings = Clients.settings(settings)
            guard !settings.isEmpty else { fail(ConfigurationError("nothing to change: give at least one setting (see --help)")) }
            let client = try await target.run { admin in
                let current = try await admin.client(clientID)
                return try await admin.updateClient(clientID, settings, ifVersion: current.version)
            }
            try target.print(client, text: Clients.describe)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a client: every token issued to it stops working, and consents given to it go.")
        @OptionGroup var target: AdminTarget
        @Argument(help: "The client id.") var clientID: String

        func run() async throws {
            try await target.run { try await $0.deleteClient(clientID) }
            if !target.json { print("client \(clientID) deleted") }
        }
    }

    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-secret",
            abstract: "Give a client a new secret (printed once); the old one works for the grace period.")
        @OptionGroup var target: AdminTarget
        @Argument(help: "The client id.") var clientID: String
        @Option(help: "How long the old secret keeps working, e.g. 1h or 7d (default 0: it stops now; at most 30d).")
        var gracePeriod: String = "0"

        func run() async throws {
            let seconds = gracePeriod == "0" ? 0 : (try? Setting.duration(gracePeriod, "--grace-period")) ?? {
                fail(ConfigurationError("--grace-period must be a duration such as 0, 3600, 1h or 7d, not '\(gracePeriod)'"))
            }()
            let client = try await target.run { try await $0.rotateSecret(clientID, AdminSecretRotation(gracePeriod: seconds)) }
            try target.print(client) { client in
                var text = "client_id: \(clientID)\nclient_secret: \(client.clientSecret ?? "")   (shown once; stored hashed)\n"
                if let until = client.previousSecretExpiresAt { text += "the previous secret works until \(Table.time(until))\n" }
                return text
            }
        }
    }
}

// MARK: users

struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage users.",
        subcommands: [Add.self, List.self, Show.self, Update.self, Disable.self, Enable.self, SignOut.self, Delete.self, Import.self])

    /// One user action of the admin API, by email or id.
    struct Action: ParsableArguments {
        @OptionGroup var target: AdminTarget
        @Argument(help: "The user's email address or id.") var user: String
    }

    /// Reads a profile file: a JSON object of claims (see docs/claims.md).
    static func profile(_ path: String?) -> [String: JSONValue]? {
        guard let path else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { fail(ConfigurationError("cannot read \(path)")) }
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: data) else {
            fail(ConfigurationError("\(path) must hold a JSON object of claims"))
        }
        return object
    }

    /// The first line of standard input, when the command reads a password there.
    static func password(fromStandardInput: Bool) -> String? {
        guard fromStandardInput else { return nil }
        guard let line = readLine(strippingNewline: true), !line.isEmpty else { fail(ConfigurationError("no password on standard input")) }
        return line
    }

    static func summary(_ user: AdminUserInfo) -> String {
        "user \(user.id) <\(user.email)>" + (user.profile["name"]?.stringValue.map { " \($0)" } ?? "")
    }

    /// The user's page for people: fields, then identities, sessions and consents.
    static func describe(_ user: AdminUserInfo) -> String {
        var text = Table.fields(Table.members(user), ["id", "email", "email_verified", "has_password", "disabled", "disabled_at", "roles",
                                                      "created_at", "updated_at", "version"])
        if !user.profile.isEmpty {
            text += "profile:\n" + Table.fields(user.profile, user.profile.keys.sorted()).split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
        }
        return text
    }

    static func describe(_ details: AdminUserDetails) -> String {
        var text = describe(details.user)
        if let last = details.lastSignIn {
            text += "last sign-in: \(Table.time(last.at)) \(last.method ?? "") from \(last.ip ?? "?")\n"
        }
        for identity in details.identities { text += "identity: \(identity.provider) \(identity.subject)\n" }
        for session in details.sessions {
            text += "session: signed in \(Table.time(session.signedInAt)) by \(session.methods.joined(separator: " ")), until \(Table.time(session.expiresAt))\n"
        }
        for consent in details.consents { text += "consent: \(consent.clientName) (\(consent.clientID)): \(consent.scope)\n" }
        return text
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a user (with a verified email unless --unverified).")

        @OptionGroup var target: AdminTarget
        @Argument(help: "The user's email address.") var email: String
        @Flag(help: "Read the password from standard input (first line).") var passwordStdin = false
        @Option(help: "The user's full name (the name claim).") var name: String?
        @Option(help: "A JSON file of profile claims, e.g. {\"given_name\": \"Anna\", \"birthdate\": \"1990-05-01\"}.") var profile: String?
        @Option(help: "A role the user holds (repeatable): admin opens the admin console and API.") var role: [String] = []
        @Flag(help: "The email address was not verified (an imported account): the first email-link sign-in removes the password.")
        var unverified = false

        func run() async throws {
            var user = AdminNewUser(email: email, password: Users.password(fromStandardInput: passwordStdin), emailVerified: !unverified,
                                    profile: Users.profile(profile), roles: role.isEmpty ? nil : role)
            if let name { user.profile = (user.profile ?? [:]).merging(["name": .string(name)]) { $1 } }
            let created = try await target.run { try await $0.createUser(user) }
            try target.print(created) { "\(Users.summary($0)) created\n" }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List or search the users, by email address.")
        @OptionGroup var target: AdminTarget
        @Option(help: "Part of an address or of a profile value (a name, a phone number), or an id.") var query: String?
        @Option(help: "At most this many (1–200).") var limit = 50
        @Option(help: "Where to go on: the page token the previous page printed.") var pageToken: String?

        func run() async throws {
            let list = try await target.run { try await $0.users(matching: query, pageToken: pageToken, limit: limit) }
            try target.print(list) { list in
                let rows = list.users.map { user in
                    [user.id, user.email, user.profile["name"]?.stringValue ?? "", Table.yesNo(user.emailVerified), user.disabled ? "disabled" : "",
                     user.roles.joined(separator: " ")]
                }
                var text = Table.render(["ID", "EMAIL", "NAME", "VERIFIED", "STATE", "ROLES"], rows)
                if let next = list.nextPageToken { text += "more: --page-token \(next)\n" }
                return text
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a user: profile, roles, linked identities, sessions, consents and the last sign-in.")

        @OptionGroup var action: Action

        func run() async throws {
            try action.target.print(try await action.target.run { try await $0.user(action.user) }, text: Users.describe)
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a user's profile claims, roles, password or address verification.",
            discussion: "The file's claims are merged into the profile; a claim set to null is removed. Nothing is written if any value is invalid, or if someone changed the user since it was read.")

        @OptionGroup var action: Action
        @Option(help: "A JSON file of profile claims.") var profile: String?
        @Option(help: "A role the user holds (repeatable; replaces the roles): admin opens the admin console and API.") var role: [String] = []
        @Flag(help: "Take every role away.") var noRoles = false
        @Flag(help: "Read a new password from standard input (first line).") var passwordStdin = false
        @Flag(help: "Remove the password: the user signs in by email code or link, or an upstream provider.") var clearPassword = false
        @Flag(help: "Mark the email address verified.") var verifyEmail = false

        func run() async throws {
            let user = action.user
            let password = Users.password(fromStandardInput: passwordStdin)
            let changes = AdminUserChanges(profile: Users.profile(profile), roles: noRoles || !role.isEmpty ? role : nil)
            let changesProfileOrRoles = changes.profile != nil || changes.roles != nil
            guard changesProfileOrRoles || password != nil || clearPassword || verifyEmail else {
                fail(ConfigurationError("nothing to change: give --profile, --role, --password-stdin, --clear-password or --verify-email"))
            }
            let result = try await action.target.run { admin -> AdminUserInfo? in
                var result: AdminUserInfo?
                if changesProfileOrRoles {
                    let current = try await admin.user(user)
                    result = try await admin.updateUser(user, changes, ifVersion: current.user.version)
                }
                if let password {
                    result = try await admin.setPassword(user, AdminPasswordChange(password: password))
                } else if clearPassword {
                    result = try await admin.setPassword(user, nil)
                }
                if verifyEmail { result = try await admin.markEmailVerified(user) }
                return result
            }
            if let result { try action.target.print(result, text: Users.describe) }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disable a user: sessions end, tokens stop working, and no sign-in works until enabled.")
        @OptionGroup var action: Action

        func run() async throws {
            let user = try await action.target.run { try await $0.disableUser(action.user) }
            try action.target.print(user) { "user \($0.id) <\($0.email)> disabled\n" }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled user again.")
        @OptionGroup var action: Action

        func run() async throws {
            let user = try await action.target.run { try await $0.enableUser(action.user) }
            try action.target.print(user) { "user \($0.id) <\($0.email)> enabled\n" }
        }
    }

    struct SignOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-out", abstract: "Sign a user out everywhere: every session ends and every token stops working.")
        @OptionGroup var action: Action

        func run() async throws {
            try await action.target.run { try await $0.signOutEverywhere(action.user) }
            if !action.target.json { print("\(action.user) signed out everywhere") }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a user: their sessions and tokens end, and upstream tokens (Apple's) are revoked first.")
        @OptionGroup var action: Action

        func run() async throws {
            try await action.target.run { try await $0.deleteUser(action.user) }
            if !action.target.json { print("user \(action.user) deleted") }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import users from a Firebase Auth export, JSON Lines or CSV; they keep their passwords.",
            discussion: """
                A Firebase export (firebase auth:export users.json --format=json) needs the project's password hash \
                parameters (--hash-config: a file with the hash_config block the Firebase console shows, or its JSON). \
                JSON Lines and CSV take email, id, email_verified, password_hash (bcrypt, argon2, scrypt, PBKDF2 in \
                PHC form), name, created_at, disabled and profile claims. A user is found by id, then by address, and \
                updated, or else created: importing again changes nothing twice. Rows that can't be imported are listed \
                (never with their hash) and the others go on. Passwords are checked against the imported hash at the \
                first sign-in, then hashed again by Tessera. See docs/admin.md.
                """)

        @OptionGroup var target: AdminTarget
        @Argument(help: "The file to import.") var file: String
        @Option(help: "firebase, jsonl or csv (default: from the file's name and content).") var format: String?
        @Option(help: "Firebase: the project's hash parameters (base64_signer_key, base64_salt_separator, rounds, mem_cost).")
        var hashConfig: String?
        @Option(help: "Users written per transaction.") var batchSize = UserImport.defaultBatchSize
        @Option(help: ArgumentHelp("Firebase: link this provider's identities, FIREBASE_ID=ID (repeatable), e.g. google.com=google.",
                                   discussion: "ID is the upstream provider's id in this server's configuration; identities of providers not named are not linked."))
        var provider: [String] = []

        var providerMap: [String: String] {
            var map: [String: String] = [:]
            for entry in provider {
                let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                    fail(ConfigurationError("--provider takes FIREBASE_PROVIDER_ID=PROVIDER_ID (e.g. google.com=google), not '\(entry)'"))
                }
                map[parts[0]] = parts[1]
            }
            return map
        }

        func run() async throws {
            guard let data = FileManager.default.contents(atPath: file) else { fail(ConfigurationError("cannot read \(file)")) }
            let text = String(decoding: data, as: UTF8.self)
            let chosen: UserImportFile.Format
            if let format {
                guard let parsed = UserImportFile.Format(rawValue: format) else {
                    fail(ConfigurationError("--format must be firebase, jsonl or csv, not '\(format)'"))
                }
                chosen = parsed
            } else {
                chosen = UserImportFile.guess(path: file, text: text)
            }
            var configText: String?
            if let hashConfig {
                guard let config = FileManager.default.contents(atPath: hashConfig) else { fail(ConfigurationError("cannot read \(hashConfig)")) }
                configText = String(decoding: config, as: UTF8.self)
            }
            let report: AdminImportReport
            if let server = target.server {
                let request = AdminImportRequest(format: chosen.rawValue, data: text, hashConfig: configText.map(JSONValue.string), batchSize: batchSize,
                                                 providers: providerMap.isEmpty ? nil : providerMap)
                FileHandle.standardError.write(Data("sending \(data.count) bytes to \(server)…\n".utf8))
                report = try await target.run { try await $0.importUsers(request) }
            } else {
                report = try await importHere(text, format: chosen, configText: configText)
            }
            try target.print(report) { report in
                for failure in report.failures {
                    let reference = failure.reference.isEmpty ? "" : " (\(failure.reference))"
                    FileHandle.standardError.write(Data("refused: \(chosen == .firebase ? "user" : "line") \(failure.line)\(reference): \(failure.reason)\n".utf8))
                }
                return "imported: \(report.created) created, \(report.updated) updated, \(report.refused) refused\n"
            }
            if report.refused > 0 { Foundation.exit(1) }
        }

        /// On the database, with progress on a terminal.
        func importHere(_ text: String, format: UserImportFile.Format, configText: String?) async throws -> AdminImportReport {
            do {
                let config = try configText.map { try FirebaseHashConfig(parsing: $0) }
                let rows = try UserImportFile.rows(text, format: format, hashConfig: config, providers: providerMap)
                let terminal = isatty(STDERR_FILENO) == 1, total = rows.count
                let report = try await withProvider(target.storage.flags) { provider in
                    try await provider.userImport.run(rows, batchSize: batchSize, by: .operator) { done in
                        if terminal { FileHandle.standardError.write(Data("\rimporting: \(done)/\(total)".utf8)) }
                    }
                }
                if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
                return AdminImportReport(report)
            } catch let error as ImportedHashError {
                fail(ConfigurationError("--hash-config: \(error.message)"))
            } catch let error as UserImportFile.ImportFileError {
                fail(ConfigurationError("\(file): \(error.description)"))
            } catch let error as ConfigurationError { fail(error) } catch let error as DatabaseUnavailable { fail(error) }
        }
    }
}

// MARK: audit

struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Show the audit events: sign-ins, password and address changes, linked identities, consents, deletions, administrators' changes.",
        discussion: "Newest first. Kept for the audit-retention setting (180 days by default). With --json, one event per line.")

    @OptionGroup var target: AdminTarget
    @Option(help: "One account's events: its email address, or its id (a deleted account's id still finds its events).") var user: String?
    @Option(help: "Only events of this kind (\(AuditEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))).") var kind: String?
    @Option(help: "At most this many events (1–200).") var limit = 50

    func run() async throws {
        if let kind, AuditEvent.Kind(rawValue: kind) == nil {
            fail(ConfigurationError("--kind must be one of \(AuditEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))"))
        }
        let events = try await target.run { try await $0.audit(AdminAuditQuery(kind: kind, user: user, limit: limit)) }.events
        for event in events {
            try target.print(event) { event in
                let time = Table.time(event.at)
                let fields = [event.email, event.clientID.map { "client \($0)" }, event.ip.map { "from \($0)" }, event.detail]
                return "\(time)  \(event.kind)  by \(event.actor)  " + fields.compactMap { $0 }.joined(separator: "  ") + "\n"
            }
        }
    }
}

// MARK: keys

struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage signing keys.", subcommands: [List.self, Rotate.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the signing keys: current, next and retired.")
        @OptionGroup var target: AdminTarget

        func run() async throws {
            try target.print(try await target.run { try await $0.keys() }) { list in
                Table.render(["KID", "ALG", "STATUS", "PUBLISHED", "CREATED", "RETIRED"], list.keys.map { key in
                    [key.kid, key.alg, key.status, Table.yesNo(key.published), Table.time(key.createdAt), Table.time(key.retiredAt)]
                })
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make the next key current.",
            discussion: "The previous key stays in the JWKS for the grace period, so tokens it signed keep verifying. "
                + "Running servers pick the change up within seconds.")

        @OptionGroup var target: AdminTarget
        @Option(help: "Signing algorithm of the new next key: RS256, ES256 or EdDSA (on the database; a server uses its own setting).")
        var signingAlgorithm: String?

        func run() async throws {
            var settings: [String: String] = [:]
            if let signingAlgorithm {
                guard target.server == nil else {
                    fail(ConfigurationError("--signing-algorithm works on the database; a running server makes keys with its own signing-algorithm setting"))
                }
                settings["signing-algorithm"] = signingAlgorithm
            }
            let list = try await target.run(settings: settings) { try await $0.rotateKeys() }
            try target.print(list) { "current signing key is now \($0.current ?? $0.keys.first?.kid ?? "")\n" }
        }
    }
}
