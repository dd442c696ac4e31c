import ArgumentParser
import Foundation
import Logging
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain

struct Tessera: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tessera",
        abstract: "Tessera: a self-hosted OpenID Connect provider.",
        subcommands: [Serve.self, Clients.self, Users.self, Keys.self, AuditCommand.self, SettingsCommand.self, Login.self])
}

/// The entry point: a synchronous `main`, so that `serve` keeps its main thread.
///
/// An `async` main hands the main thread to Dispatch (`dispatch_main`), which leaves it through
/// `pthread_exit`: the thread is unwound, and the unwinder's code and its binary search through
/// the binary's frame tables map ≈ 0.8 MiB of an idle node (docs/performance.md, "Start-up and
/// memory").
/// `serve` runs as a task on the event loops, the main thread waiting for it; the other commands
/// run as an `async` main would run them, on the main actor with the main thread given to Dispatch.
@main
enum Main {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "serve" {
            // The server's tasks run on its event loops (Node.runTasksOnEventLoops): set before any
            // task of the command's is made. The admin commands keep Swift's pool.
            Node.runTasksOnEventLoops()
            let settings = Array(arguments.dropFirst())
            if Serve.skipsParser(settings) {
                var serve = Serve()
                serve.settings = settings
                waitFor { [serve] in
                    do { try await serve.run() } catch { Tessera.exit(withError: error) }
                }
                return
            }
        }
        Task { @MainActor in
            await Tessera.main(nil)
            exit(0)
        }
        dispatchMain()
    }

    /// Runs `body` as a task on the global executor, the calling thread blocked until it ends.
    private static func waitFor(_ body: @escaping @Sendable () async -> Void) {
        let finished = DispatchSemaphore(value: 0)
        Task {
            await body()
            finished.signal()
        }
        finished.wait()
    }
}

extension Serve {
    /// Whether `tessera serve SETTINGS` can start without the argument parser. `serve` takes
    /// only settings, which ``SettingFlags`` reads itself, and the parser first builds the tree
    /// of every command by reflection: ≈ 15 ms of a 75 ms start (measured with `perf`). Help,
    /// the parser's other flags and anything with a single dash still go through it; the
    /// errors are the same either way (they come from `run`).
    static func skipsParser(_ settings: [String]) -> Bool {
        settings.allSatisfy { argument in
            guard argument.hasPrefix("-") else { return true }
            return argument.hasPrefix("--") && !parserFlags.contains(String(argument.prefix { $0 != "=" }))
        }
    }

    /// The flags the argument parser answers itself, for any command.
    static let parserFlags: Set<String> = ["--", "--help", "--help-hidden", "--experimental-dump-help", "--version",
                                           "--generate-completion-script"]
}

/// Options every command shares: where the data is.
struct StorageOptions: ParsableArguments {
    @Option(help: StorageOptions.help("database")) var database: String?
    @Option(help: StorageOptions.help("config")) var config: String?

    /// The setting's own summary, default and variable.
    static func help(_ name: String) -> ArgumentHelp {
        ArgumentHelp(Setting.named(name)?.helpLine ?? "")
    }

    var flags: [String: String] {
        var flags: [String: String] = [:]
        flags["database"] = database
        flags["config"] = config
        return flags
    }
}

/// Opens the provider for an admin command: same settings as `serve`, no HTTP.
func withProvider<T>(_ flags: [String: String], _ body: (Provider) async throws -> T) async throws -> T {
    let configuration = try ConfigurationLoader(flags: flags).configuration()
    var logger = Logger(label: "tessera")
    logger.logLevel = .warning
    return try await Provider.with(configuration, logger: logger, body)
}

/// Prints a configuration error the way a person wants to read it, and exits 2.
func fail(_ error: any Error) -> Never {
    FileHandle.standardError.write(Data("tessera: error: \(error)\n".utf8))
    Foundation.exit(2)
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start the server.",
        discussion: "With no settings: http://127.0.0.1:8080, SQLite in ./tessera-data/, keys generated on first start. "
            + "Every setting can also be given as its TESSERA_* environment variable or in the --config file "
            + "(docs/configuration.md).\n\nSETTINGS:\n" + SettingFlags.help)

    /// The settings' flags, read by ``SettingFlags`` from the one table of settings.
    @Argument(parsing: .allUnrecognized, help: .hidden) var settings: [String] = []

    func run() async throws {
        let flags = try SettingFlags.parse(settings)
        let configuration: ServerConfiguration
        var logger: Logger
        var provider: Provider?
        var waitingFor: DatabaseUnavailable?
        do {
            configuration = try ConfigurationLoader(flags: flags).configuration()
            let branding = configuration.branding
            CompiledTemplates.shared.compileAhead {
                [PageRenderer.compileAhead(branding: branding), MailTemplates.compileAhead(branding: branding)].compactMap { $0 }
            }
            bootstrapLogging(format: configuration.logFormat)
            if configuration.metricsPort != nil { bootstrapMetrics() }
            logger = Logger(label: "tessera")  // after the bootstrap: a logger keeps the handler it was made with
            logger.logLevel = Logger.Level(rawValue: configuration.logLevel) ?? .info
            do {
                provider = try await Provider.start(configuration, logger: logger)
            } catch let error as DatabaseUnavailable {
                // PostgreSQL may come after the node (a host's boot, a failover): the node waits for it.
                guard case .postgres = configuration.database else { throw error }
                waitingFor = error
            }
        } catch let error as ConfigurationError {
            fail(error)
        } catch let error as DatabaseUnavailable {
            fail(error)
        }
        let app = try Node.application(configuration, provider: provider, waitingFor: waitingFor, logger: logger) { provider, port in
            let demoText = configuration.demo ? try await Demo.prepare(provider) : nil
            // Written unbuffered: scripts wait for this line.
            FileHandle.standardOutput.write(Data("Tessera is ready: issuer \(provider.issuer), listening on \(configuration.host):\(port), database \(configuration.database), signing \((try? provider.keys.signingDescription) ?? "?")\n".utf8))
            if let demoText { FileHandle.standardOutput.write(Data((demoText + "\n").utf8)) }
        }
        try await Node.run(app, configuration: configuration, logger: logger)
    }
}

struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings", abstract: "List every setting: its flag, environment variable and default (--clients: every client setting).")

    @Flag(help: "The table of docs/configuration.md (with --clients: of docs/admin.md), in markdown.") var markdown = false
    @Flag(help: "The settings of a client instead: clients add and clients update, and the admin API's members.") var clients = false

    func run() {
        if clients {
            print(markdown ? ClientSetting.markdownTable : AdminClientSettings.help(changeableOnly: false), terminator: markdown ? "" : "\n")
        } else {
            print(markdown ? Setting.markdownTable : SettingFlags.help, terminator: markdown ? "" : "\n")
        }
    }
}

/// `--demo`: a client and a user to try the flow with, and a URL to click.
enum Demo {
    static let clientID = "demo"
    static let clientSecret = "demo-secret-for-local-development-only"
    static let email = "demo@example.com"
    static let password = "tessera-demo"

    static func prepare(_ provider: Provider) async throws -> String {
        let callback = provider.issuer + "/dev/callback"
        if try await provider.store.client(id: clientID) == nil {
            var registration = Provider.ClientRegistration(name: "Tessera demo app", redirectURIs: [callback])
            registration.id = clientID
            registration.secret = clientSecret
            registration.postLogoutRedirectURIs = [provider.issuer + "/dev/callback"]
            _ = try await provider.registerClient(registration)
        }
        if try await provider.store.user(email: email) == nil {
            _ = try await provider.createUser(email: email, password: password, name: "Demo User")
        }
        let query = RequestParameters.encode([
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", callback),
            ("scope", "openid profile email offline_access"), ("state", SecureRandom.token(bytes: 8)),
            ("nonce", SecureRandom.token(bytes: 8)),
        ])
        return """

        Demo ready. Sign in as \(email) / \(password) at:

            \(provider.issuer)/authorize?\(query)

        The demo client is '\(clientID)' with secret '\(clientSecret)'; its callback page shows the code and the curl command that redeems it.

        """
    }
}
