import Logging

/// When a deferred message is tried again: after 1 minute, then 2, 4, 8, … capped at an
/// hour, and not after a day: a message still undelivered 24 hours after it was
/// accepted is marked failed.
public struct RetryPolicy: Sendable {
    public var firstDelay: Int64 = 60
    public var maximumDelay: Int64 = 3600
    public var giveUpAfter: Int64 = 86_400

    public init() {}

    /// Seconds to wait after the `attempt`-th attempt (1-based) failed.
    public func delay(afterAttempt attempt: Int) -> Int64 {
        let doublings = Int64(max(0, min(attempt - 1, 30)))
        return min(maximumDelay, firstDelay << doublings)
    }
}

/// Moves messages from the outbox to a ``MailTransport``: claims one due message at a
/// time, hands it on, and records the outcome (delivered, retry later, or failed).
package struct OutboxDelivery: Sendable {
    package let store: any OutboxStore
    package let transport: any MailTransport
    package let clock: WallClock
    let retry: RetryPolicy
    /// How long a claim lasts: longer than any one attempt can take with its timeouts.
    let leaseDuration: Int64
    package let logger: Logger
    /// Rung by the ``OutboxMailer`` when it queues a message.
    package let signal: DeliverySignal

    package init(store: any OutboxStore, transport: any MailTransport, clock: WallClock, retry: RetryPolicy = RetryPolicy(),
         leaseDuration: Int64 = 600, logger: Logger, signal: DeliverySignal = DeliverySignal()) {
        self.store = store
        self.transport = transport
        self.clock = clock
        self.retry = retry
        self.leaseDuration = leaseDuration
        self.logger = logger
        self.signal = signal
    }

    /// What one round did.
    package struct Round: Equatable {
        package var delivered = 0
        package var deferred = 0
        package var failed = 0

        package init(delivered: Int = 0, deferred: Int = 0, failed: Int = 0) {
            self.delivered = delivered
            self.deferred = deferred
            self.failed = failed
        }
    }

    /// Delivers the messages that are due, one after another, until none is left, the
    /// relay fails (the rest would fail the same way: they wait for the next round) or
    /// `shouldStop` says so.
    @discardableResult
    package func deliverDue(shouldStop: () -> Bool = { false }) async throws -> Round {
        var round = Round()
        while !shouldStop(), !Task.isCancelled {
            let now = clock.now()
            guard let message = try await store.claimDueMessage(now: now, leaseUntil: now + leaseDuration) else { break }
            var log = logger
            log[metadataKey: "mail.id"] = "\(message.id)"
            log[metadataKey: "mail.to"] = "\(message.recipient)"
            log[metadataKey: "mail.attempt"] = "\(message.attempts)"
            for (name, value) in message.metadata { log[metadataKey: "mail.\(name)"] = "\(value)" }

            if let expiresAt = message.expiresAt, now >= expiresAt {
                if try await store.markFailed(message, now: now, error: "expired before it could be delivered") { round.failed += 1 }
                log.warning("mail expired before it could be delivered")
                continue
            }
            if now - message.createdAt >= retry.giveUpAfter {
                // Failures give up before this (below); a message whose attempts never finished
                // (a node died each time) gets here.
                let text = "not delivered within \(retry.giveUpAfter / 3600) hours (\(message.attempts - 1) attempts)"
                    + (message.lastError.map { "; last error: \($0)" } ?? "")
                if try await store.markFailed(message, now: now, error: text) { round.failed += 1 }
                log.error("mail not delivered; giving up", metadata: ["error": "\(text)"])
                continue
            }
            do {
                try await transport.deliver(message)
                if try await store.markDelivered(message, now: clock.now()) { round.delivered += 1 }
                log.info("mail delivered")
            } catch {
                if Task.isCancelled {
                    try? await store.releaseClaim(message)
                    throw CancellationError()
                }
                let failure = error as? MailDeliveryError ?? .relay("\(error)")
                let now = clock.now()
                if failure.isPermanent {
                    if try await store.markFailed(message, now: now, error: failure.description) { round.failed += 1 }
                    log.error("mail refused permanently; not retrying", metadata: ["error": "\(failure)"])
                } else if now + retry.delay(afterAttempt: message.attempts) - message.createdAt > retry.giveUpAfter {
                    // The next attempt would come after the deadline.
                    let text = "gave up after \(message.attempts) attempts: \(failure)"
                    if try await store.markFailed(message, now: now, error: text) { round.failed += 1 }
                    log.error("mail not delivered; giving up", metadata: ["error": "\(text)"])
                } else {
                    let delay = retry.delay(afterAttempt: message.attempts)
                    if try await store.scheduleRetry(message, at: now + delay, error: failure.description) { round.deferred += 1 }
                    log.warning("mail delivery failed; will retry", metadata: ["error": "\(failure)", "retry_in_s": "\(delay)"])
                }
                if failure.concernsRelay { break }
            }
        }
        Signals.mail("delivered", count: round.delivered)
        Signals.mail("deferred", count: round.deferred)
        Signals.mail("failed", count: round.failed)
        return round
    }

    /// The latest messages, newest first (`recipient`'s only, when given): the development
    /// outbox, where a developer reads codes and links.
    package func latest(recipient: String?, limit: Int) async throws -> [OutboxMessage] {
        try await store.outboxMessages(recipient: recipient, limit: limit)
    }
}
