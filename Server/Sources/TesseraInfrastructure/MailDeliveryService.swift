import Logging
import ServiceLifecycle
import TesseraDomain

/// Runs ``OutboxDelivery`` in the background of `tessera serve`: at once when a message
/// is queued on this node, and every `pollInterval` for retries and messages queued on
/// other nodes. Also purges old messages: delivered ones after a day (they may hold
/// codes and links), failed ones after a week.
package struct MailDeliveryService: Service {
    let delivery: OutboxDelivery
    var pollInterval: Duration = .seconds(15)
    var keepDelivered: Int64 = 86_400
    var keepFailed: Int64 = 7 * 86_400

    package init(delivery: OutboxDelivery, pollInterval: Duration = .seconds(15), keepDelivered: Int64 = 86_400,
                 keepFailed: Int64 = 7 * 86_400) {
        self.delivery = delivery
        self.pollInterval = pollInterval
        self.keepDelivered = keepDelivered
        self.keepFailed = keepFailed
    }

    package func run() async throws {
        if delivery.transport is LogTransport {
            delivery.logger.notice("--dev without --smtp-url: emails are written to this log instead of being sent")
        } else if delivery.transport is UnsentTransport {
            delivery.logger.warning("no --smtp-url: emails (sign-in codes, links, notices) are not sent; set --smtp-url to send them")
        } else if let smtp = delivery.transport as? SMTPTransport {
            delivery.logger.info("emails are delivered through \(smtp.settings)")
        }
        var lastPurge: Int64 = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                // A delivery under way when shutdown starts finishes (its timeouts bound it); no new one starts.
                try await delivery.deliverDue(shouldStop: { Task.isShuttingDownGracefully })
                let now = delivery.clock.now()
                if now - lastPurge >= 3600 {
                    try await delivery.store.purgeOutbox(deliveredBefore: now - keepDelivered, failedBefore: now - keepFailed)
                    lastPurge = now
                }
            } catch is CancellationError {
                break
            } catch is DatabaseUnavailable {
                // Logged by the database; the next round tries again.
            } catch {
                delivery.logger.error("mail delivery round failed", metadata: ["error": "\(error)"])
            }
            await cancelWhenGracefulShutdown {
                await delivery.signal.wait(timeout: pollInterval)
            }
        }
    }
}
