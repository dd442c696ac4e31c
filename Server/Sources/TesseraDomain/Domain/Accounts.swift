import TesseraCore

/// What the account page and the account API read and change about one user's account.
package struct Accounts: Sendable {
    let users: any UserStore
    let clients: any ClientStore
    let consents: any ConsentStore & StoreTransactions
    let identities: any IdentityStore
    let audit: AuditTrail
    let clock: WallClock

    package init(users: any UserStore, clients: any ClientStore, consents: any ConsentStore & StoreTransactions, identities: any IdentityStore,
                 audit: AuditTrail, clock: WallClock) {
        self.audit = audit
        self.users = users
        self.clients = clients
        self.consents = consents
        self.identities = identities
        self.clock = clock
    }

    package func user(id: String) async throws -> User? {
        try await users.user(id: id)
    }

    /// How the user can sign in: `password`, `email` (codes and links, for a verified address)
    /// and the ids of the upstream providers linked to the account.
    package func linkedProviders(of user: User) async throws -> [String] {
        var providers: [String] = []
        if user.passwordHash != nil { providers.append("password") }
        if user.emailVerified && !user.email.hasSuffix(".upstream.invalid") { providers.append("email") }
        providers += try await identities.identities(userID: user.id).map(\.providerID)
        return providers
    }

    /// The user a browser session belongs to (nil once the account is gone).
    package func user(of session: BrowserSession) async throws -> User? {
        try await users.user(id: session.userID)
    }

    /// The user and the client a grant (an access token's) is for; nil for a grant without
    /// a user (client credentials) or when either is gone.
    package func owner(of grant: Grant) async throws -> (user: User, client: Client)? {
        guard let userID = grant.userID, let user = try await users.user(id: userID),
              let client = try await clients.client(id: grant.clientID) else { return nil }
        return (user, client)
    }

    /// The apps the user allowed, each with its client's name (its id when it is gone).
    package func apps(of userID: String) async throws -> [(consent: Consent, clientName: String)] {
        var apps: [(Consent, String)] = []
        for consent in try await consents.consents(userID: userID) {
            apps.append((consent, try await clients.client(id: consent.clientID)?.name ?? consent.clientID))
        }
        return apps
    }

    /// The upstream identities linked to the account.
    package func identities(of userID: String) async throws -> [UpstreamIdentity] {
        try await identities.identities(userID: userID)
    }

    /// The user withdraws an app's consent: its grants end with it.
    package func withdrawConsent(userID: String, clientID: String) async throws {
        let now = clock.now()
        try await consents.transaction { tx in try await TokenFamilies.consentWithdrawn(userID: userID, clientID: clientID, now: now, in: tx) }
        await audit.record(.consentWithdrawn, userID: userID, clientID: clientID)
    }
}
