import Foundation
import Testing
import TesseraCore
import TesseraDomain
import TesseraSQL
import TesseraTestSupport

/// Cross-app sign-in's rules in the domain: a hand-off ticket answers one request of its own
/// client, once, with the sign-in it carries, and never a request that sign-in can't answer.
@Suite("Cross-app sign-in")
struct CrossAppTests {
    /// A ticket for `client`, issued by the authenticator app `bank` for Alice, signed in `ago` seconds before now.
    func ticket(_ h: AuthorizationHarness, for client: String, signedIn ago: Int64 = 0) async throws -> String {
        let ticket = SecureRandom.token(), now = h.time.clock.now()
        try await h.store.insertHandoffTicket(hash: tokenHash(ticket), HandoffTicket(clientID: client, userID: h.alice.id, issuedBy: "bank",
                                                                                     authTime: now - ago, amr: ["pwd"], expiresAt: now + 60),
                                              now: now)
        return ticket
    }

    @Test("a ticket signs its client's user in without a page, once; another client's ticket, or a used one, is login_required")
    func ticketOnce() async throws {
        try await AuthorizationHarness.with { h in
            let ticket = try await self.ticket(h, for: "partner")
            let (request, partner) = try await h.validated(h.parameters(client: "partner", [("handoff_ticket", ticket)]))
            let first = try await h.authorizer.decide(request, client: partner, session: nil, signedInNow: false)
            #expect(first.answer["code"] != nil)
            let again = try await h.authorizer.decide(request, client: partner, session: nil, signedInNow: false)
            #expect(again.answer["error"] == "login_required")
            let webs = try await self.ticket(h, for: "web")
            let (stolen, _) = try await h.validated(h.parameters(client: "partner", [("handoff_ticket", webs)]))
            #expect(try await h.authorizer.decide(stolen, client: partner, session: nil, signedInNow: false).answer["error"] == "login_required")
        }
    }

    @Test("a ticket can't answer a request its sign-in doesn't (max_age, prompt=login): login_required, and the ticket stays unused")
    func ticketTooOld() async throws {
        try await AuthorizationHarness.with { h in
            let ticket = try await self.ticket(h, for: "partner", signedIn: 600)
            let (old, partner) = try await h.validated(h.parameters(client: "partner", [("handoff_ticket", ticket), ("max_age", "300")]))
            let refused = try await h.authorizer.decide(old, client: partner, session: nil, signedInNow: false)
            #expect(refused.answer["error"] == "login_required")
            #expect(refused.answer["error_description"]?.contains("A hand-off ticket can't answer it") == true)
            #expect(try await h.store.handoffTicket(hash: tokenHash(ticket), now: h.time.clock.now()) != nil)
        }
    }

    @Test("a partner that needs consent: the consent page, carrying the ticket's sign-in; prompt=none is consent_required")
    func ticketNeedsConsent() async throws {
        try await AuthorizationHarness.with { h in
            let silent = try await self.ticket(h, for: "web")
            let (none, web) = try await h.validated(h.parameters([("handoff_ticket", silent), ("prompt", "none")]))
            #expect(try await h.authorizer.decide(none, client: web, session: nil, signedInNow: false).answer["error"] == "consent_required")
            let ticket = try await self.ticket(h, for: "web")
            let (request, _) = try await h.validated(h.parameters([("handoff_ticket", ticket)]))
            guard case .consent(_, let pending, _, _, let scopes, _) = try await h.authorizer.decide(request, client: web, session: nil,
                                                                                                    signedInNow: false) else {
                Issue.record("consent page expected"); return
            }
            #expect(scopes == ScopeSet(["openid", "email"]))
            #expect(pending.handedOver?.userID == h.alice.id && pending.handoffTicketHash == nil)
        }
    }
}
