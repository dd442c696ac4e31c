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

    /// The registered iOS apps (Apple's `TEAMID.bundle`) for the universal-links file, in one
    /// read. Every app opens the email sign-in links (a path of their own); an authenticator's
    /// apps also claim the issuer's `/authorize` links (a partner app's request opens them, and
    /// the hosted page when none is installed). Only first-party apps share the issuer's
    /// credentials (`webcredentials`: saved passwords and passkeys): a partner's app is not the
    /// provider's and must not be offered the people's passwords for it.
    package func appleAppIDs() async throws -> (authenticators: [String], others: [String], credentials: [String]) {
        let links = try await store.clientAppLinks()
        let authenticators = links.filter(\.authenticator).flatMap(\.links.appleAppIDs)
        let others = links.filter { !$0.authenticator }.flatMap(\.links.appleAppIDs).filter { !authenticators.contains($0) }
        var credentials: [String] = []
        for id in links.filter(\.firstParty).flatMap(\.links.appleAppIDs) where !credentials.contains(id) { credentials.append(id) }
        return (authenticators, others, credentials)
    }

    /// The Android apps of first-party clients, for the Digital Asset Links file. Its statements
    /// can't be limited to some paths: an app named there may verify itself for every URL of the
    /// issuer (`handle_all_urls`, the hosted login included) and is offered the saved passwords
    /// (`get_login_creds`), which only the provider's own apps may be.
    package func firstPartyAndroidApps() async throws -> [ClientAppLinks.AndroidApp] {
        try await store.clientAppLinks().filter(\.firstParty).flatMap(\.links.androidApps)
    }
}
