import Foundation
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import TesseraCore
import TesseraDomain

/// The request being served, for every line logged while it is: its id rides in a task-local
/// value, which the logging system's metadata provider adds to each line (the domain's lines
/// too, although they log through the provider's logger, not the request's).
enum RequestID {
    @TaskLocal static var current: String?

    /// An id a proxy in front already gave the request (`X-Request-Id`), when it is a plain
    /// token; otherwise a new random one. Nothing else from the request reaches the logs.
    static func make(from header: String?) -> String {
        if let header, isPlain(header) { return header }
        return SecureRandom.token(bytes: 12)
    }

    /// Whether a proxy's `X-Request-Id` is a plain token (8 to 128 letters, digits, `-_.:`), kept as the id.
    static func isPlain(_ header: String) -> Bool {
        (8...128).contains(header.utf8.count)
            && header.utf8.allSatisfy({ $0 < 128 && (isalnum(Int32($0)) != 0 || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
                                                     || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ":")) })
    }
}

/// Starts the process's logging: to standard error, as text or one JSON object per line,
/// every line with the request id of the request it belongs to.
public func bootstrapLogging(format: LogFormat) {
    let metadata = Logger.MetadataProvider {
        RequestID.current.map { ["request_id": .string($0)] } ?? [:]
    }
    switch format {
    case .text:
        LoggingSystem.bootstrap({ label, provider in StreamLogHandler.standardError(label: label, metadataProvider: provider) },
                                metadataProvider: metadata)
    case .json:
        LoggingSystem.bootstrap({ label, provider in JSONLogHandler(label: label, metadataProvider: provider) },
                                metadataProvider: metadata)
    }
}

/// One JSON object per line on standard error: `time` (RFC 3339, UTC, milliseconds), `level`,
/// `logger`, `message`, `source`, then the metadata (request id, error, …) as members.
/// Nothing secret is logged by the server in the first place (codes, tokens, passwords and
/// secrets never reach a log call); this only changes the shape.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    /// Lines from many threads are written whole, one at a time.
    private static let output = NIOLockedValueBox(())

    init(label: String, metadataProvider: Logger.MetadataProvider?) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String, file: String,
             function: String, line: UInt) {
        var fields = self.metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { $1 } }
        if let explicit { fields.merge(explicit) { $1 } }
        var object: [String: JSONValue] = [:]
        for (key, value) in fields { object[key] = Self.json(value) }
        object["time"] = .string(Self.timestamp(Date()))
        object["level"] = .string(level.rawValue)
        object["logger"] = .string(label)
        object["message"] = .string(message.description)
        object["source"] = .string(source)
        guard var data = try? CanonicalJSON.encode(object) else { return }
        data.append(UInt8(ascii: "\n"))
        Self.output.withLockedValue { _ in
            // write(2) on descriptor 2, unbuffered: a line is out before the process can die.
            data.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = write(2, bytes.baseAddress! + offset, bytes.count - offset)
                    if written <= 0 { break }
                    offset += written
                }
            }
        }
    }

    static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let convertible): .string(convertible.description)
        case .array(let values): .array(values.map(json))
        case .dictionary(let values): .object(values.mapValues(json))
        }
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }
}

/// Gives every request an id (the proxy's `X-Request-Id` when it sent a plain one), returns
/// it in the `X-Request-Id` header, makes it part of every line logged while the request is
/// served, and logs the request when it ends: method, path (never the query, which may
/// carry codes and personal data), status and duration.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = TesseraRequestContext
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let id = RequestID.make(from: request.headers[.xRequestID])
        let started = ContinuousClock.now
        return try await RequestID.$current.withValue(id) {
            do {
                var response = try await next(request, context)
                response.headers[.xRequestID] = id
                log(request, status: response.status.code, since: started)
                return response
            } catch {
                let status = (error as? any HTTPResponseError)?.status.code ?? 500
                log(request, status: status, since: started)
                throw error
            }
        }
    }

    /// At `debug` (the load balancer in front keeps the access log); a 5xx at `warning`.
    private func log(_ request: Request, status: Int, since started: ContinuousClock.Instant) {
        let level: Logger.Level = status >= 500 ? .warning : .debug
        guard logger.logLevel <= level else { return }
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        logger.log(level: level, "request", metadata: [
            "method": .string(request.method.rawValue),
            "path": .string(request.uri.path),
            "status": .stringConvertible(status),
            "duration_ms": .string(String(format: "%.1f", milliseconds)),
        ])
    }
}
