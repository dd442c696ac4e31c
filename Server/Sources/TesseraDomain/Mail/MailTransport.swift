import Logging

/// The last hop of delivery: hands one stored message on. Throws a
/// ``MailDeliveryError`` that says whether a retry can help.
public protocol MailTransport: Sendable {
    func deliver(_ message: OutboxMessage) async throws
}

/// Why a delivery attempt failed, with the relay's reply when there was one.
public struct MailDeliveryError: Error, CustomStringConvertible, Equatable {
    /// What happened, including the server's reply; never a password.
    public let description: String
    /// The relay refused this message for good (a 5xx reply to RCPT or DATA): retrying won't help.
    public let isPermanent: Bool
    /// The failure is about the relay (unreachable, TLS, authentication, a refused
    /// sender), not this message: the rest of the queue would fail the same way now.
    public let concernsRelay: Bool
    /// The SMTP reply code, when the failure is a reply.
    public let replyCode: Int?

    /// The relay is unreachable or unusable for now; retried with backoff.
    package static func relay(_ description: String, replyCode: Int? = nil) -> MailDeliveryError {
        MailDeliveryError(description: description, isPermanent: false, concernsRelay: true, replyCode: replyCode)
    }

    /// This message was deferred (4xx); retried with backoff.
    package static func deferred(_ description: String, replyCode: Int?) -> MailDeliveryError {
        MailDeliveryError(description: description, isPermanent: false, concernsRelay: false, replyCode: replyCode)
    }

    /// This message was refused (5xx); never retried.
    package static func rejected(_ description: String, replyCode: Int?) -> MailDeliveryError {
        MailDeliveryError(description: description, isPermanent: true, concernsRelay: false, replyCode: replyCode)
    }
}

/// Used when no SMTP URL is set outside `--dev`: sends nothing and writes nothing of the
/// message to the log (it holds codes and links). Each message fails at once with the
/// reason, and stays in the outbox until it is purged.
public struct UnsentTransport: MailTransport {
    public init() {}

    public func deliver(_ message: OutboxMessage) async throws {
        throw MailDeliveryError.rejected("not sent: no SMTP server is configured (--smtp-url)", replyCode: nil)
    }
}

/// The development transport, used with `--dev` when no SMTP URL is set: "delivers" a
/// message by writing its recipient, subject and text to the log, where a developer reads the code.
public struct LogTransport: MailTransport {
    let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    public func deliver(_ message: OutboxMessage) async throws {
        var metadata: Logger.Metadata = ["mail.id": "\(message.id)", "mail.to": "\(message.recipient)",
                                         "mail.subject": "\(message.subject)"]
        for (name, value) in message.metadata { metadata["mail.\(name)"] = "\(value)" }
        logger.info("development mail (not sent; no --smtp-url) to \(message.recipient): \(message.subject)\n\(message.text)",
                    metadata: metadata)
    }
}
