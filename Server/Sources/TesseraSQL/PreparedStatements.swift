import PostgresNIO

/// A refresh token's rotation on PostgreSQL in one statement, prepared once per connection: the
/// token's row taken (marked used), its grant and user read beside it, the successor inserted
/// when a row was taken (``SQLStore/rotateRefreshTokenAtOnce(tokenHash:clientID:successor:clock:)``).
///
/// Prepared because PostgreSQL spent longer planning this statement (a three-table `UPDATE … FROM`
/// in a data-modifying CTE: ≈ 0.25 ms) than running it (≈ 0.05 ms), at every refresh. The user's
/// columns are named rather than `u.*`: a prepared statement's result keeps the shape it was
/// prepared with, and a column another node's migration adds must not change it.
struct RefreshTokenRotation: PostgresPreparedStatement {
    static let name = "tessera_refresh_token_rotation"
    static let sql = """
        WITH taken AS (
            UPDATE refresh_tokens AS t SET used_at = $1
            FROM grants AS g, users AS u
            WHERE t.token_hash = $2 AND t.client_id = $3 AND t.used_at IS NULL AND t.expires_at > $1
                AND g.id = t.grant_id AND g.revoked_at IS NULL AND g.expires_at > $1 AND g.device_session_id IS NULL
                AND u.id = g.user_id AND u.disabled_at IS NULL
            RETURNING \(SQLStore.grantColumns.map { "g.\($0) AS grant_\($0)" }.joined(separator: ", ")),
                \(SQLStore.userColumns.map { "u.\($0)" }.joined(separator: ", "))),
        successor AS (
            INSERT INTO refresh_tokens (token_hash, grant_id, client_id, created_at, expires_at, replaces)
            SELECT $4, grant_id, $3, $1, LEAST($5, grant_expires_at), $2
            FROM taken)
        SELECT * FROM taken
        """
    typealias Row = PostgresRow

    let now: Int64
    let tokenHash: String
    let clientID: String
    let successorHash: String
    /// The successor's expiry before its grant's caps it.
    let successorExpiry: Int64

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(now)
        bindings.append(tokenHash)
        bindings.append(clientID)
        bindings.append(successorHash)
        bindings.append(successorExpiry)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
