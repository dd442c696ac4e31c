
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
}

/// Every store the provider's services use: what the wiring hands them (the SQL store, on
/// SQLite or PostgreSQL). Nothing above the domain holds one but the wiring.
public typealias ServiceStores = TransactionStores & StoreTransactions & ClientStore & ConsentStore & InteractionStore & KeyStore
    & OutboxStore & ThrottleStore & UsedOnceStore
