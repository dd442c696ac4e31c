/// Sends the emails of the sign-in methods (codes, links, notices): a typed ``Email``, in
/// the user's language, from this server, through the outbox.
package struct FlowMail: Sendable {
    let mailer: any Mailer
    let templates: MailTemplates
    let issuerHost: String

    package init(mailer: any Mailer, templates: MailTemplates, issuerHost: String) {
        self.mailer = mailer
        self.templates = templates
        self.issuerHost = issuerHost
    }

    /// `flow` names what sent it in the outbox's metadata (`signup`, `emaillink`, …).
    func send(_ email: Email, to address: String, language: PageLanguage, flow: String, expiresAt: Int64?) async throws {
        try await mailer.send(try templates.message(email, to: address, language: language, issuerHost: issuerHost,
                                                    metadata: ["flow": flow], expiresAt: expiresAt))
    }
}
