import Foundation
import TesseraCore

/// Native sign-up, sign-in and reset flows between their steps, and the record of codes
/// sent. Every change is conditional on the continuation token still being the flow's
/// current one, so two requests racing with one token can't both move the flow on.
public protocol NativeFlowStore: Sendable {
    func insertFlow(_ flow: NativeFlow, tokenHash: String) async throws
    /// The flow whose current continuation token has this hash (expired ones included).
    func flow(tokenHash: String) async throws -> NativeFlow?
    /// Saves the flow and moves it to a new continuation token (`to` nil ends the flow).
    /// False when `from` is no longer current: another request used it first.
    func advanceFlow(_ flow: NativeFlow, from: String, to: String?) async throws -> Bool
    /// Takes one of the current code's `limit` entries before it is compared; nil when none
    /// is left (or the token is no longer current). Returns how many are used.
    func reserveCodeAttempt(flowID: String, tokenHash: String, limit: Int) async throws -> Int?
    /// A new code: its entries start from zero.
    func resetCodeAttempts(flowID: String) async throws
    func recordCodeSent(email: String, clientAddress: String, now: Int64) async throws
    /// Codes sent since `since` to `email`, and to anyone from `clientAddress`.
    func codesSent(email: String, clientAddress: String, since: Int64) async throws -> (toEmail: Int, fromAddress: Int)
}
