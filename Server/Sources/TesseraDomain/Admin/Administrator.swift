import TesseraCore

/// Who makes an administrative change: the operator at the server's own database (the CLI
/// with `--database`), a client holding the `tessera:admin` scope, or a user with the admin
/// role (the console, or a token of theirs with that scope). Recorded with every change.
public enum Administrator: Sendable, Equatable {
    case `operator`
    case client(String)
    case user(id: String, email: String)

    /// The scope a token needs for the admin API.
    public static let scope = "tessera:admin"

    /// How the audit trail names who acted.
    public var description: String {
        switch self {
        case .operator: "the operator"
        case .client(let id): "client \(id)"
        case .user(_, let email): email
        }
    }
}

// Who may administer: a token at the admin API (`UserAdministration.administrator(for:)`) and a
// browser session at the console (`Administrator.console(session:user:now:)`), both below.

/// Who may use the admin console from a browser, decided by ``Administrator/console(session:user:now:)``.
public enum ConsoleAccess: Sendable, Equatable {
    /// Nobody is signed in, or the sign-in is older than ``Administrator/consoleSessionLimit``.
    case signIn
    /// Signed in, but the account holds no admin role (or is disabled).
    case notAdministrator(email: String)
    case granted(Administrator)
}

extension Administrator {
    /// How old a sign-in the console accepts (12 hours): an administrator's forgotten browser
    /// session is worth less than a user's.
    public static let consoleSessionLimit: Int64 = 12 * 3600

    /// Whether the browser's session (and its user) may administer: a user with the admin role,
    /// not disabled, signed in within ``consoleSessionLimit``.
    public static func console(session: BrowserSession?, user: User?, now: Int64) -> ConsoleAccess {
        guard let session, let user, session.isRecent(now: now, within: consoleSessionLimit) else { return .signIn }
        guard user.mayAdminister else { return .notAdministrator(email: user.email) }
        return .granted(.user(id: user.id, email: user.email))
    }
}

extension UserAdministration {
    /// Who an access token speaks for at the admin API: its client, while the client is still
    /// allowed the `tessera:admin` scope, or — a user's token — its user, while the user may
    /// administer. Checked at every call, so taking the scope or the role away ends access at once.
    public func administrator(for token: AccessTokenValidator.Validated) async throws -> Administrator {
        guard token.scope.contains(Administrator.scope) else {
            throw AdminError.forbidden("The access token lacks the \(Administrator.scope) scope.")
        }
        guard let clientID = token.clientID, let client = try await store.client(id: clientID),
              client.scopes.contains(Administrator.scope) else {
            throw AdminError.forbidden("The token's client is no longer allowed the \(Administrator.scope) scope.")
        }
        // Registered before the rule: such a client keeps the scope on paper but administers nothing.
        guard client.firstParty else {
            throw AdminError.forbidden("The token's client is not first-party: only a first-party client may hold the "
                                       + "\(Administrator.scope) scope (tessera clients update \(client.id) --first-party true).")
        }
        guard let userID = token.grant?.userID else { return .client(client.id) }
        guard let user = try await store.user(id: userID), user.mayAdminister else {
            throw AdminError.forbidden("The token's user does not hold the admin role.")
        }
        return .user(id: user.id, email: user.email)
    }
}

/// Why an administrative request cannot be done, in words an administrator can act on.
public enum AdminError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No such client, user or key.
    case notFound(String)
    /// The resource changed since the caller read it (its version is now `current`).
    case versionMismatch(current: Int64)
    /// The request asks for something the rules do not allow.
    case invalid(String)
    /// The request conflicts with what exists (an address another account has).
    case conflict(String)
    /// The caller may not administer (no `tessera:admin` scope, or no admin role).
    case forbidden(String)

    public var description: String {
        switch self {
        case .notFound(let what): "\(what) was not found"
        case .versionMismatch(let current):
            "it was changed by someone else since you read it (it is now version \(current)): read it again and repeat the change"
        case .invalid(let message), .conflict(let message), .forbidden(let message): message
        }
    }
}

/// One page of a listing, and where the next one starts (nil on the last page).
public struct Page<Item: Sendable, Cursor: Sendable>: Sendable {
    public var items: [Item]
    public var next: Cursor?

    /// The page from `limit + 1` rows read: the extra row only says there is more.
    init(reading rows: [Item], limit: Int, cursor: (Item) -> Cursor) {
        items = Array(rows.prefix(limit))
        next = rows.count > limit ? items.last.map(cursor) : nil
    }
}
