import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real `tessera serve` on a free loopback port with a database of its own, for the model's
/// tests: the binary is TESSERA_BIN (scripts/test sets it to the release build), the clients and
/// users are made with the same binary's admin commands.
final class LocalServer: @unchecked Sendable {
    let binary: String
    let folder: URL
    let port: Int
    var issuer: URL { URL(string: "http://127.0.0.1:\(port)")! }
    private let process = Process()

    init() async throws {
        guard let binary = ProcessInfo.processInfo.environment["TESSERA_BIN"], FileManager.default.isExecutableFile(atPath: binary) else {
            throw Failure("set TESSERA_BIN to a tessera binary (swift build --package-path Server -c release --product tessera)")
        }
        self.binary = binary
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-example-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        port = try Self.freePort()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["serve", "--port", "\(port)", "--database", database]
        process.currentDirectoryURL = folder
        process.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        try await waitUntilReady()
    }

    var database: String { folder.appendingPathComponent("tessera.sqlite").path }
    /// `tessera serve`'s standard error: its last lines go into a start-up failure.
    var log: URL { folder.appendingPathComponent("serve.log") }

    private func failure(_ what: String) -> Failure {
        let lines = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(10)
        return Failure(what + (lines.isEmpty ? "" : ":\n" + lines.joined(separator: "\n")))
    }

    func stop() {
        if process.isRunning { process.terminate(); process.waitUntilExit() }
        try? FileManager.default.removeItem(at: folder)
    }

    /// `tessera ARGS --database …`, with `input` on standard input; its standard output.
    @discardableResult
    func admin(_ arguments: [String], input: String? = nil) throws -> String {
        let admin = Process(), output = Pipe(), errors = Pipe(), stdin = Pipe()
        admin.executableURL = URL(fileURLWithPath: binary)
        admin.arguments = arguments + ["--database", database]
        admin.currentDirectoryURL = folder
        admin.standardOutput = output
        admin.standardError = errors
        admin.standardInput = stdin
        try admin.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let problem = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        admin.waitUntilExit()
        guard admin.terminationStatus == 0 else { throw Failure("tessera \(arguments.joined(separator: " ")): \(problem)") }
        return text
    }

    private func waitUntilReady() async throws {
        for _ in 0..<300 {
            guard process.isRunning else { throw failure("tessera serve exited (\(process.terminationStatus))") }
            if let (_, response) = try? await URLSession.shared.data(from: issuer.appendingPathComponent("health")),
               (response as? HTTPURLResponse)?.statusCode == 200 {
                return
            }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        let timedOut = failure("tessera serve was not ready in 30 s")
        stop()
        throw timedOut
    }

    private static func freePort() throws -> Int {
        #if canImport(Darwin)
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw Failure("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
