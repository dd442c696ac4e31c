import Foundation
import TesseraCore

/// Registered clients.
public protocol ClientStore: Sendable {
    /// The client, possibly as a node read it a few seconds ago.
    func client(id: String) async throws -> Client?
    /// The client as stored now: what a change starts from.
    func currentClient(id: String) async throws -> Client?
    func insert(_ client: Client) async throws
    /// The app links of every client that has some (for the association files), and whether
    /// the client is first-party and an authenticator app.
    func clientAppLinks() async throws -> [(links: ClientAppLinks, firstParty: Bool, authenticator: Bool)]
    /// Clients by name (then id), starting after `cursor`.
    func clients(after cursor: ClientCursor?, limit: Int) async throws -> [Client]
    /// Writes the client's settings when its version is still `version` (and counts the
    /// change); false when someone changed it since, or it is gone.
    func update(_ client: Client, ifVersion version: Int64) async throws -> Bool
    /// Replaces the secret; the previous one is accepted until `previousExpiresAt` (when given).
    func replaceSecret(clientID: String, hash: String, previousHash: String?, previousExpiresAt: Int64?) async throws
    /// Deletes the client with its grants, tokens and consents; false when there was none.
    func deleteClient(id: String) async throws -> Bool
}

/// Where a listing of clients goes on: after this name and id.
public struct ClientCursor: Sendable, Equatable, Codable {
    public var name: String
    public var id: String
    public init(name: String, id: String) { self.name = name; self.id = id }
}
