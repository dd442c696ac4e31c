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
            RETURNING \(grantAndUser)),
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

    /// What a rotation returns of grant `g` and user `u`: the grant's columns (prefixed), then the user's.
    static let grantAndUser = SQLStore.grantColumns.map { "g.\($0) AS grant_\($0)" }.joined(separator: ", ") + ", "
        + SQLStore.userColumns.map { "u.\($0)" }.joined(separator: ", ")

    /// Where the grant's columns are in a row (first, in ``SQLStore/grantColumns``' order), and the user's (after them).
    static let grantPositions = positions(SQLStore.grantColumns, from: 0)
    static let userPositions = positions(SQLStore.userColumns, from: SQLStore.grantColumns.count)

    private static func positions(_ columns: [String], from start: Int) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, start + $0) })
    }
}

/// A ``FamilyToken``'s common rotation on PostgreSQL in one statement, prepared once per
/// connection: its grant's row, when the token is the family's current one, takes the successor
/// (the next generation); the grant and its user are returned side by side, as
/// ``RefreshTokenRotation`` returns them. One row written, and none of its indexed columns, so
/// PostgreSQL can update it in place (no index written).
struct FamilyTokenRotation: PostgresPreparedStatement {
    static let name = "tessera_family_token_rotation"
    static let sql = """
        UPDATE grants AS g SET refresh_token_hash = $4, refresh_generation = g.refresh_generation + 1,
            refresh_expires_at = LEAST($5, g.expires_at), refresh_predecessor = g.refresh_generation, refresh_rotated_at = $1
        FROM users AS u
        WHERE g.id = $6 AND g.refresh_token_hash = $2 AND g.client_id = $3 AND g.refresh_expires_at > $1
            AND g.revoked_at IS NULL AND g.expires_at > $1 AND g.device_session_id IS NULL
            AND u.id = g.user_id AND u.disabled_at IS NULL
        RETURNING \(RefreshTokenRotation.grantAndUser)
        """
    typealias Row = PostgresRow

    let now: Int64
    let tokenHash: String
    let clientID: String
    let successorHash: String
    /// The successor's expiry before its grant's caps it.
    let successorExpiry: Int64
    let grantID: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 6)
        bindings.append(now)
        bindings.append(tokenHash)
        bindings.append(clientID)
        bindings.append(successorHash)
        bindings.append(successorExpiry)
        bindings.append(grantID)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// One table's columns among a row's cells, by the position its statement gives each: a cell is
/// decoded as the column's type directly (PostgresKit's rows look each column up by name and cast
/// the type at run time: with the user's profile, 2.9 % of a refresh's CPU on PostgreSQL).
struct PostgresCells: StoreColumns {
    let cells: [PostgresCell]
    let positions: [String: Int]

    struct MissingColumn: Error, CustomStringConvertible {
        let column: String
        var description: String { "the row has no column \(column)" }
    }

    private func cell(_ column: String) throws -> PostgresCell {
        guard let position = positions[column], cells.indices.contains(position) else { throw MissingColumn(column: column) }
        return cells[position]
    }

    func string(_ column: String) throws -> String { try cell(column).decode(String.self) }
    func optionalString(_ column: String) throws -> String? { try cell(column).decode(String?.self) }
    func int(_ column: String) throws -> Int64 { try cell(column).decode(Int64.self) }
    func optionalInt(_ column: String) throws -> Int64? { try cell(column).decode(Int64?.self) }
    func bool(_ column: String) throws -> Bool { try cell(column).decode(Bool.self) }
}
