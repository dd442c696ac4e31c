import Metrics

/// What the provider counts for its operators, through swift-metrics: nothing is recorded
/// until the process bootstraps a metrics backend (`tessera serve --metrics-port`, which
/// exports them in Prometheus's format). Labels take a handful of fixed values each, never a
/// user, address or client id.
public enum Signals {
    /// A sign-in attempt by `method` (`password`, `email_code`, `email_link`, `upstream`, `passkey`),
    /// ending in `result` (`success`, `failure`, `throttled`, `busy`, `expired`).
    public static func signIn(_ method: String, _ result: String) {
        Counter(label: "tessera_sign_ins_total", dimensions: [("method", method), ("result", result)]).increment()
    }

    /// Tokens handed out by a grant at a token endpoint.
    public static func tokensIssued(grant: String) {
        Counter(label: "tessera_token_responses_total", dimensions: [("grant_type", grant)]).increment()
    }

    /// A refresh token presented again after it was rotated: its family was revoked.
    public static func refreshReuse() {
        Counter(label: "tessera_refresh_token_reuse_total").increment()
    }

    /// A request refused by a limit (`login`, `flow`, `hashing`).
    public static func throttled(_ limit: String) {
        Counter(label: "tessera_throttled_total", dimensions: [("limit", limit)]).increment()
    }

    /// Emails handed to the relay (`delivered`), attempts that will be retried (`deferred`),
    /// and emails given up (`failed`).
    public static func mail(_ outcome: String, count: Int) {
        guard count > 0 else { return }
        Counter(label: "tessera_mail_deliveries_total", dimensions: [("outcome", outcome)]).increment(by: count)
    }

    /// Emails waiting in the outbox (pending or being sent), across all nodes.
    public static func outboxDepth(_ count: Int) {
        Gauge(label: "tessera_outbox_depth").record(count)
    }
}
