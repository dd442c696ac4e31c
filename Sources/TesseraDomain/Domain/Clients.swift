import TesseraCore

/// The registered clients, as requests name them.
package struct Clients: Sendable {
    let store: any ClientStore

    package init(store: any ClientStore) {
        self.store = store
    }

    package func client(id: String) async throws -> Client? {
        try await store.client(id: id)
    }

    /// Every registered iOS app (Apple's `TEAMID.bundle`), for the universal-links file.
    package func appleAppIDs() async throws -> [String] {
        try await store.clientAppLinks().flatMap(\.links.appleAppIDs)
    }

    /// The iOS apps of authenticator clients: they claim the issuer's `/authorize` links, so a
    /// partner app's request opens them (and the hosted page when none is installed).
    package func authenticatorAppleAppIDs() async throws -> [String] {
        try await store.clientAppLinks().filter(\.authenticator).flatMap(\.links.appleAppIDs)
    }

    /// Every registered Android app, for the Digital Asset Links file.
    package func androidApps() async throws -> [ClientAppLinks.AndroidApp] {
        try await store.clientAppLinks().flatMap(\.links.androidApps)
    }
}
