import Foundation
import Synchronization
import TesseraCore

/// Registered clients.
public protocol ClientStore: Sendable {
    func client(id: String) async throws -> Client?
    func insert(_ client: Client) async throws
    /// The app-link settings of every client that has some (for the association files).
    func clientAppLinks() async throws -> [ClientAppLinks]
}
