import Foundation
import NIOConcurrencyHelpers
import TesseraCore

/// Sends email. `send` returns once the message is durably accepted: written to the
/// outbox table, so that nothing acknowledged is lost if the relay is down or the
/// process stops. A background service delivers it (``MailDeliveryService``).
public protocol Mailer: Sendable {
    func send(_ message: MailMessage) async throws
}

/// The ``Mailer`` of a running provider: validates and renders the message, stores it
/// in the outbox and wakes the delivery service. Whether it goes out over SMTP or to
/// the log is the delivery side's business (``MailTransport``).
public struct OutboxMailer: Mailer {
    let store: any OutboxStore
    let sender: MailAddress
    /// Right-hand side of Message-IDs: the issuer's host.
    let domain: String
    let clock: WallClock
    let signal: DeliverySignal

    package init(store: any OutboxStore, sender: MailAddress, domain: String, clock: WallClock, signal: DeliverySignal) {
        self.store = store
        self.sender = sender
        self.domain = domain
        self.clock = clock
        self.signal = signal
    }

    public func send(_ message: MailMessage) async throws {
        try await enqueue(message)
    }

    /// Stores the message; returns its outbox id.
    @discardableResult
    package func enqueue(_ message: MailMessage) async throws -> String {
        let prepared = try prepare(message)
        try await store.enqueue(prepared)
        signal.notify()
        return prepared.id
    }

    /// The outbox row for a message: checked, rendered and dated now.
    func prepare(_ message: MailMessage) throws -> OutboxMessage {
        var message = message
        message.to = message.to.trimmingCharacters(in: .whitespaces)
        guard MailAddress.isValid(address: message.to) else { throw MailError.invalidAddress(message.to) }
        let now = clock.now()
        let mime = MIMEMessage.render(message, from: sender, messageID: MIMEMessage.newMessageID(domain: domain), date: now)
        return OutboxMessage(id: OutboxMessage.newID(), sender: sender.address, message: message, mime: mime, createdAt: now)
    }
}

/// Wakes the delivery service when a message is queued, so that mail goes out at once
/// rather than at the next poll. One waiter at a time; a notification with no waiter
/// is remembered.
package final class DeliverySignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = NIOLockedValueBox(State())

    package init() {}

    func notify() {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns on a notification, on cancellation, or after `timeout`.
    package func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait() }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLockedValue { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    if Task.isCancelled { return true }
                    state.waiter?.resume()
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
