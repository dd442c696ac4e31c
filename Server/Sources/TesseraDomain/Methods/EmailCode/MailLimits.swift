/// How many codes and links may be mailed per hour: to one address, and from one client
/// address. Counted in the database, so across nodes; every method that mails a secret
/// (one-time codes, sign-in links) checks and records here.
package struct MailLimits: Sendable {
    let settings: NativeAuthSettings
    let store: any NativeFlowStore
    let clock: WallClock

    package init(settings: NativeAuthSettings, store: any NativeFlowStore, clock: WallClock) {
        self.settings = settings
        self.store = store
        self.clock = clock
    }

    /// Throws ``FlowFailure/tooManyCodes`` past either hourly limit.
    package func check(email: String, clientAddress: String) async throws {
        let sent = try await store.codesSent(email: email, clientAddress: clientAddress, since: clock.now() - 3600)
        if sent.toEmail >= settings.codesPerEmailPerHour || sent.fromAddress >= settings.codesPerAddressPerHour {
            throw FlowFailure.tooManyCodes
        }
    }

    func record(email: String, clientAddress: String) async throws {
        try await store.recordCodeSent(email: email, clientAddress: clientAddress, now: clock.now())
    }
}
