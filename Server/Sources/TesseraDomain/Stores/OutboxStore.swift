import Foundation
import TesseraCore

/// Where a queued email stands.
public enum OutboxStatus: String, Sendable, Codable {
    /// Waiting for its next attempt (``OutboxMessage/nextAttemptAt``).
    case pending
    /// Claimed by a delivery worker until its lease ends.
    case sending
    case delivered
    /// Refused permanently, expired, or given up on after retrying.
    case failed
}

/// A row of the outbox: the message as accepted (rendered once, so every retry sends
/// the same bytes and Message-ID) and its delivery state.
public struct OutboxMessage: Sendable, Equatable {
    public var id: String
    /// The envelope sender (`MAIL FROM`).
    public var sender: String
    public var recipient: String
    public var subject: String
    public var text: String
    public var html: String?
    public var language: String
    public var metadata: [String: String]
    /// The RFC 5322 message, CRLF line endings, not dot-stuffed.
    public var mime: String
    public var status: OutboxStatus
    /// Attempts started so far (a claim counts as one).
    public var attempts: Int
    public var nextAttemptAt: Int64
    public var lastError: String?
    public var createdAt: Int64
    public var expiresAt: Int64?
    /// When it was delivered or marked failed.
    public var finishedAt: Int64?
    /// Identifies the current claim while ``status`` is ``OutboxStatus/sending``.
    package var leaseToken: String?

    package init(id: String, sender: String, message: MailMessage, mime: String, createdAt: Int64) {
        self.id = id
        self.sender = sender
        recipient = message.to
        subject = message.subject
        text = message.text
        html = message.html
        language = message.language
        metadata = message.metadata
        self.mime = mime
        status = .pending
        attempts = 0
        nextAttemptAt = createdAt
        self.createdAt = createdAt
        expiresAt = message.expiresAt
    }

    /// Random, and sorting by creation time: milliseconds since 1970, then 72 random bits.
    static func newID() -> String {
        let milliseconds = String(Int64(Date().timeIntervalSince1970 * 1000))
        return String(repeating: "0", count: max(0, 13 - milliseconds.count)) + milliseconds + "-" + SecureRandom.token(bytes: 9)
    }
}

/// The persistent queue of outgoing email. Several nodes may deliver from it: a worker
/// claims one message at a time with a conditional update and holds it under a lease,
/// so each message is sent by one worker (or again, after the lease ends, if that
/// worker died mid-send: delivery is at least once).
public protocol OutboxStore: Sendable {
    func enqueue(_ message: OutboxMessage) async throws
    /// Messages not yet delivered or given up: pending, or being sent.
    func outboxDepth() async throws -> Int
    /// Claims the message due first (pending and due, or sending with an ended lease),
    /// counting an attempt; nil when none is due.
    func claimDueMessage(now: Int64, leaseUntil: Int64) async throws -> OutboxMessage?
    /// The outcome of a claim; false when the claim was lost (the lease ended and another
    /// worker took the message), in which case nothing changes.
    func markDelivered(_ message: OutboxMessage, now: Int64) async throws -> Bool
    func scheduleRetry(_ message: OutboxMessage, at: Int64, error: String) async throws -> Bool
    func markFailed(_ message: OutboxMessage, now: Int64, error: String) async throws -> Bool
    /// Returns a claimed message to the queue, uncounted (delivery was interrupted).
    func releaseClaim(_ message: OutboxMessage) async throws
    func outboxMessage(id: String) async throws -> OutboxMessage?
    /// Newest first, optionally only those to one address.
    func outboxMessages(recipient: String?, limit: Int) async throws -> [OutboxMessage]
    /// Deletes delivered messages finished before `deliveredBefore` and failed ones
    /// finished before `failedBefore`.
    func purgeOutbox(deliveredBefore: Int64, failedBefore: Int64) async throws
}
