import TesseraCore

/// "Does this sign-in need a second factor before it counts, and which can the person give?",
/// asked after every first factor (a password, an emailed code or link, an upstream provider)
/// and of every session a request finds (``InteractionPolicy``).
///
/// A second factor is asked when the sign-in has only one (`amr` without `mfa`) and:
/// - the person turned two-step verification on (a confirmed authenticator app), for every
///   sign-in, the account page's too;
/// - the client requires it (`--require-mfa`);
/// - the request demands `urn:tessera:acr:mfa` (an essential `acr` in `claims`);
/// - the request asks for it (`acr_values`, voluntary) and the person has a passkey or an app to
///   give it with: a voluntary class is never a reason to make someone set one up.
///
/// The factors: the authenticator app's code, a recovery code, a passkey. A person with none
/// who must give one sets up an authenticator app on the way.
public struct SecondFactorPolicy: Sendable {
    let factors: any SecondFactorStore & PasskeyStore

    package init(factors: any SecondFactorStore & PasskeyStore) {
        self.factors = factors
    }

    /// A second factor the sign-in needs: why, and what the person can give.
    public struct Requirement: Sendable, Equatable {
        public enum Reason: String, Sendable, Equatable {
            /// The person has an authenticator app.
            case turnedOn
            /// The client requires every sign-in to have two factors.
            case clientRequires
            /// The request demands (essential `acr`) or asks for (`acr_values`) `urn:tessera:acr:mfa`.
            case requestDemands, requestAsks
        }

        public var reason: Reason
        /// The person has a confirmed authenticator app (and so recovery codes).
        public var authenticatorApp: Bool
        /// The person has a passkey that isn't blocked.
        public var passkey: Bool

        package init(reason: Reason, authenticatorApp: Bool, passkey: Bool) {
            self.reason = reason
            self.authenticatorApp = authenticatorApp
            self.passkey = passkey
        }

        /// The person has nothing to give yet: they set up an authenticator app first.
        public var mustEnrol: Bool { !authenticatorApp && !passkey }

        /// In words, for an `error_description`.
        public var explanation: String {
            switch reason {
            case .turnedOn: "The account has two-step verification: the sign-in needs its second factor."
            case .clientRequires: "The client requires a second factor (require_mfa)."
            case .requestDemands: "The request demands acr \(AuthenticationContext.multiFactor): the sign-in needs a second factor."
            case .requestAsks: "The request asks for acr \(AuthenticationContext.multiFactor): the sign-in needs a second factor."
            }
        }
    }

    /// The second factor a sign-in with methods `amr` by `user` needs, or nil when it needs
    /// none. `client` and `request`: what it signs in to (none for the account page).
    package func requirement(user: User, amr: [String], client: Client? = nil, request: AuthorizationRequest? = nil) async throws
        -> Requirement? {
        guard !AuthenticationContext.satisfies(amr: amr, AuthenticationContext.multiFactor) else { return nil }
        let app = try await factors.totpFactor(userID: user.id)?.isConfirmed == true
        let asks = request?.requestedContexts.contains(AuthenticationContext.multiFactor) == true
        let reason: Requirement.Reason? = if app {
            .turnedOn
        } else if client?.requireMFA == true {
            .clientRequires
        } else if request?.demandedContexts.contains(AuthenticationContext.multiFactor) == true {
            .requestDemands
        } else {
            asks ? .requestAsks : nil
        }
        // Every request a signed-in browser makes asks this: the passkeys are read only when a
        // second factor may be wanted.
        guard let reason else { return nil }
        let passkey = try await factors.passkeys(userID: user.id).contains { !$0.isSuspended }
        guard reason != .requestAsks || passkey else { return nil }
        return Requirement(reason: reason, authenticatorApp: app, passkey: passkey)
    }

    /// The methods of a sign-in after its second factor: the first's and the second's, and `mfa`.
    package static func combined(_ first: [String], _ second: [String]) -> [String] {
        var amr: [String] = []
        for method in first + second + ["mfa"] where !amr.contains(method) { amr.append(method) }
        return amr
    }
}

/// A sign-in waiting for its second factor: who gave the first, how, and where they were going.
/// The browser keeps it sealed with the master key (a cookie living five minutes); a node
/// that didn't make it opens it all the same.
package struct PendingSecondFactor: Sendable, Codable, Equatable {
    /// Where the sign-in goes once the second factor is given.
    package enum Continuation: Sendable, Codable, Equatable {
        /// Back into an authorization request (its interaction).
        case authorization(String)
        /// To a page of the provider's own (`/account`, `/admin/users`), or an app's continue URL.
        case location(String)
        /// A page that says the person is signed in.
        case signedIn
    }

    package var id: String
    package var userID: String
    package var amr: [String]
    package var issuedAt: Int64
    package var next: Continuation
    /// Set when the session exists and a page stands between it and the app (the recovery codes
    /// of an app set up on the way, the passkey offered after a sign-up): the session, whose
    /// "continue" finishes the sign-in as one made for the request.
    package var sessionID: String?

    package init(userID: String, amr: [String], issuedAt: Int64, next: Continuation) {
        id = SecureRandom.token(bytes: 16)
        self.userID = userID
        self.amr = amr
        self.issuedAt = issuedAt
        self.next = next
    }

    /// Seconds a first factor waits for its second.
    package static let lifetime: Int64 = 300
}
