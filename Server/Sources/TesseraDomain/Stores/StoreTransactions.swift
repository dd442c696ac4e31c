
/// The stores a domain rule can use inside one transaction.
public typealias TransactionStores = UserStore & SessionStore & GrantStore & IdentityStore & NativeFlowStore & EmailLinkStore & AuditStore
    & CrossAppStore & ConsentStore & EmailChangeStore & PasskeyStore & SecondFactorStore

/// Runs domain rules that change several tables at once: `store.transaction { tx in … }`
/// hands every store bound to one transaction, committed when the body returns and
/// rolled back when it throws. Stores do only primitive, conditional writes; the rule
/// (which rows, in which order, under which condition) is written once, in the domain,
/// and runs on every backend.
///
/// Inside the body, use `tx` only: a call through the outer store would wait for the
/// connection the transaction holds. Hash passwords before the transaction, not in it.
public protocol StoreTransactions: Sendable {
    func transaction<T: Sendable>(_ body: @Sendable (any TransactionStores) async throws -> T) async throws -> T

    /// ``transaction(_:)`` on the calling thread, where the database would otherwise run its
    /// statements on a thread of its own and can begin one here without waiting (SQLite, unless
    /// another process holds its write lock); nil, having run nothing, where it can't: then
    /// ``transaction(_:)``. For a request's short transaction, whose hops between threads would
    /// cost more than its statements.
    func transactionHere<T: Sendable>(_ body: @Sendable (any TransactionStores) async throws -> T) async throws -> T?

    /// The common refresh-token rotation in one statement, where the database can run one that
    /// writes twice (PostgreSQL: one round trip instead of a transaction's six): takes `tokenHash`
    /// if it is `clientID`'s, unused and unexpired, its grant live and of no Native SSO device
    /// session, and its user enabled; records `successor` in its family, dated by `clock` once the
    /// statement has its connection; returns the grant and its user. Nil when the database can't,
    /// or when nothing was taken: then ``TokenFamilies`` runs the whole rotation in a transaction,
    /// which answers every other case (reuse, a retry, a refusal) as before, having changed nothing.
    func rotateRefreshTokenAtOnce(tokenHash: String, clientID: String, successor: PendingRefreshToken,
                                  clock: WallClock) async throws -> (grant: Grant, user: User)?

    /// The common rotation of a ``FamilyToken`` at once: when `tokenHash` is the current token of
    /// `grantID`'s family, of `clientID`, unexpired, its grant live and of no Native SSO device
    /// session, and its user enabled, `successor` becomes the current token (of the next
    /// generation); returns the grant and its user. One statement on PostgreSQL; on SQLite a
    /// transaction on the calling thread when it can begin there at once. Nil when nothing was
    /// taken or the database can't: then ``TokenFamilies`` decides in a transaction.
    func rotateFamilyTokenAtOnce(grantID: String, tokenHash: String, clientID: String, successor: PendingRefreshToken,
                                 clock: WallClock) async throws -> (grant: Grant, user: User)?
}

/// Every store the provider's services use: what the wiring hands them (the SQL store, on
/// SQLite or PostgreSQL). Nothing above the domain holds one but the wiring.
public typealias ServiceStores = TransactionStores & StoreTransactions & ClientStore & ConsentStore & InteractionStore & KeyStore
    & OutboxStore & ThrottleStore & UsedOnceStore
