import SQLKit
import TesseraDomain

/// A schema change, applied once, in order, inside one transaction.
package struct Migration: Sendable {
    let version: Int
    let name: String
    let statements: [String]
}

/// The schema, as numbered migrations. Never edit a released migration: add one.
///
/// Portable SQL only (SQLite and PostgreSQL): TEXT, BIGINT, BOOLEAN; times are
/// Unix seconds; secrets and tokens are stored as SHA-256 hashes.
package enum Migrations {
    package static let all: [Migration] = [
        Migration(version: 1, name: "core", statements: [
            """
            CREATE TABLE settings (
                name TEXT PRIMARY KEY,
                value TEXT NOT NULL)
            """,
            """
            CREATE TABLE clients (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                secret_hash TEXT,
                auth_method TEXT NOT NULL,
                redirect_uris TEXT NOT NULL,
                post_logout_redirect_uris TEXT NOT NULL,
                grant_types TEXT NOT NULL,
                scopes TEXT NOT NULL,
                first_party BOOLEAN NOT NULL,
                jwks TEXT,
                assertion_issuer TEXT,
                subject_type TEXT NOT NULL,
                created_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE users (
                id TEXT PRIMARY KEY,
                email TEXT NOT NULL UNIQUE,
                email_verified BOOLEAN NOT NULL,
                password_hash TEXT,
                profile TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE sessions (
                token_hash TEXT PRIMARY KEY,
                sid TEXT NOT NULL UNIQUE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                auth_time BIGINT NOT NULL,
                amr TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                revoked_at BIGINT)
            """,
            """
            CREATE TABLE interactions (
                id_hash TEXT PRIMARY KEY,
                request TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE grants (
                id TEXT PRIMARY KEY,
                client_id TEXT NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
                user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                scope TEXT NOT NULL,
                claims TEXT,
                auth_time BIGINT,
                amr TEXT,
                sid TEXT,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                revoked_at BIGINT)
            """,
            "CREATE INDEX grants_sid ON grants (sid)",
            """
            CREATE TABLE authorization_codes (
                code_hash TEXT PRIMARY KEY,
                client_id TEXT NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                redirect_uri TEXT NOT NULL,
                scope TEXT NOT NULL,
                claims TEXT,
                nonce TEXT,
                code_challenge TEXT,
                auth_time BIGINT NOT NULL,
                amr TEXT NOT NULL,
                sid TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                redeemed_at BIGINT,
                grant_id TEXT)
            """,
            """
            CREATE TABLE refresh_tokens (
                token_hash TEXT PRIMARY KEY,
                grant_id TEXT NOT NULL REFERENCES grants(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT)
            """,
            "CREATE INDEX refresh_tokens_grant ON refresh_tokens (grant_id)",
            """
            CREATE TABLE revoked_access_tokens (
                jti TEXT PRIMARY KEY,
                expires_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE consents (
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
                scope TEXT NOT NULL,
                granted_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, client_id))
            """,
            """
            CREATE TABLE signing_keys (
                kid TEXT PRIMARY KEY,
                algorithm TEXT NOT NULL,
                state TEXT NOT NULL,
                private_key TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                activated_at BIGINT,
                retired_at BIGINT)
            """,
            """
            CREATE TABLE client_assertions (
                client_id TEXT NOT NULL,
                jti TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
                PRIMARY KEY (client_id, jti))
            """,
        ]),
        // The email outbox: a message is stored here before `Mailer.send` returns and
        // delivered by a background worker (see Mail/ and docs/email.md).
        Migration(version: 2, name: "outbox", statements: [
            """
            CREATE TABLE outbox (
                id TEXT PRIMARY KEY,
                sender TEXT NOT NULL,
                recipient TEXT NOT NULL,
                subject TEXT NOT NULL,
                text_body TEXT NOT NULL,
                html_body TEXT,
                language TEXT NOT NULL,
                metadata TEXT NOT NULL,
                mime TEXT NOT NULL,
                status TEXT NOT NULL,
                attempts BIGINT NOT NULL,
                next_attempt_at BIGINT NOT NULL,
                lease_token TEXT,
                lease_until BIGINT,
                last_error TEXT,
                created_at BIGINT NOT NULL,
                expires_at BIGINT,
                finished_at BIGINT)
            """,
            "CREATE INDEX outbox_due ON outbox (status, next_attempt_at)",
            "CREATE INDEX outbox_created ON outbox (created_at)",
        ]),
        // Native sign-up, sign-in and password reset between their steps (Flows/NativeAuth/):
        // one row per flow, found by the hash of its current continuation token; and the
        // one-time codes sent, counted per address and per client address for the hourly limits.
        Migration(version: 3, name: "native_auth", statements: [
            """
            CREATE TABLE native_flows (
                id TEXT PRIMARY KEY,
                token_hash TEXT NOT NULL UNIQUE,
                kind TEXT NOT NULL,
                client_id TEXT NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
                state TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL)
            """,
            "CREATE INDEX native_flows_expiry ON native_flows (expires_at)",
            """
            CREATE TABLE code_sends (
                id TEXT PRIMARY KEY,
                email TEXT NOT NULL,
                client_address TEXT NOT NULL,
                sent_at BIGINT NOT NULL)
            """,
            "CREATE INDEX code_sends_email ON code_sends (email, sent_at)",
            "CREATE INDEX code_sends_address ON code_sends (client_address, sent_at)",
        ]),
        // Email-link sign-in (Flows/EmailLink/): the links sent, by the hash of their code; and
        // each client's app-link settings (continue-URL domains, iOS and Android apps).
        Migration(version: 4, name: "email_links", statements: [
            """
            CREATE TABLE email_links (
                code_hash TEXT PRIMARY KEY,
                client_id TEXT NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
                email TEXT NOT NULL,
                continue_url TEXT,
                handle_in_app BOOLEAN NOT NULL,
                interaction TEXT,
                device_hash TEXT,
                language TEXT NOT NULL,
                wrong_attempts BIGINT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT)
            """,
            "CREATE INDEX email_links_expiry ON email_links (expires_at)",
            "ALTER TABLE clients ADD COLUMN app_links TEXT",
        ]),
        // Federation (Flows/Federation/): identities at upstream providers linked to accounts, the
        // requests on their way to an upstream, and identities waiting for the owner of an
        // existing account to prove it before they are linked.
        Migration(version: 5, name: "federation", statements: [
            """
            CREATE TABLE upstream_identities (
                provider_id TEXT NOT NULL,
                subject TEXT NOT NULL,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                email TEXT,
                proven BOOLEAN NOT NULL,
                refresh_token TEXT,
                client_id TEXT,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT NOT NULL,
                PRIMARY KEY (provider_id, subject))
            """,
            "CREATE INDEX upstream_identities_user ON upstream_identities (user_id)",
            """
            CREATE TABLE upstream_requests (
                state_hash TEXT PRIMARY KEY,
                provider_id TEXT NOT NULL,
                nonce TEXT NOT NULL,
                code_verifier TEXT,
                interaction TEXT,
                link_user_id TEXT,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE pending_links (
                token_hash TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                identity TEXT NOT NULL,
                interaction TEXT,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL)
            """,
        ]),
        // Entries of a flow's current one-time code, counted in SQL so that parallel guesses
        // can't all read the same count.
        Migration(version: 6, name: "code_attempts", statements: [
            "ALTER TABLE native_flows ADD COLUMN code_attempts BIGINT NOT NULL DEFAULT 0",
        ]),
        // The browser that started a federated sign-in (a cookie's hash): the provider's answer
        // completes only there, so nobody can sign a victim's browser in with their own answer.
        Migration(version: 7, name: "upstream_request_browser", statements: [
            "ALTER TABLE upstream_requests ADD COLUMN browser_hash TEXT",
        ]),
        // The longest client-assertion lifetime a client may use (default: five minutes). Clients
        // registered Sign-in-with-Apple style before keep the six months they were accepted with.
        Migration(version: 8, name: "assertion_lifetime", statements: [
            "ALTER TABLE clients ADD COLUMN assertion_lifetime BIGINT",
            "UPDATE clients SET assertion_lifetime = 15777000 WHERE assertion_issuer IS NOT NULL",
        ]),
        // Things accepted once, remembered until they could no longer be accepted anyway:
        // Sign in with Apple's nonces, Apple's notifications.
        Migration(version: 9, name: "used_once", statements: [
            """
            CREATE TABLE used_once (
                kind TEXT NOT NULL,
                id_hash TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
                PRIMARY KEY (kind, id_hash))
            """,
        ]),
        // Clients that are APIs: they may introspect tokens carrying their scopes.
        Migration(version: 10, name: "resource_server", statements: [
            "ALTER TABLE clients ADD COLUMN resource_server BOOLEAN NOT NULL DEFAULT FALSE",
        ]),
        // Links the account page sends to confirm a sign-in belong to no client (client_id NULL).
        Migration(version: 11, name: "account_email_links", statements: [
            """
            CREATE TABLE email_links_new (
                code_hash TEXT PRIMARY KEY,
                client_id TEXT REFERENCES clients(id) ON DELETE CASCADE,
                email TEXT NOT NULL,
                continue_url TEXT,
                handle_in_app BOOLEAN NOT NULL,
                interaction TEXT,
                device_hash TEXT,
                language TEXT NOT NULL,
                wrong_attempts BIGINT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT)
            """,
            """
            INSERT INTO email_links_new (code_hash, client_id, email, continue_url, handle_in_app, interaction, device_hash, language,
                wrong_attempts, created_at, expires_at, used_at)
            SELECT code_hash, client_id, email, continue_url, handle_in_app, interaction, device_hash, language,
                wrong_attempts, created_at, expires_at, used_at FROM email_links
            """,
            "DROP TABLE email_links",
            "ALTER TABLE email_links_new RENAME TO email_links",
            "CREATE INDEX email_links_expiry ON email_links (expires_at)",
        ]),
        // Throttles shared by every node: failed sign-ins (a row each) and work limits (a token
        // bucket per key). Keys are SHA-256 hashes: no address or IP is kept for this.
        Migration(version: 12, name: "throttles", statements: [
            """
            CREATE TABLE throttle_failures (
                key_hash TEXT NOT NULL,
                at BIGINT NOT NULL)
            """,
            "CREATE INDEX throttle_failures_key ON throttle_failures (key_hash, at)",
            "CREATE INDEX throttle_failures_at ON throttle_failures (at)",
            """
            CREATE TABLE rate_buckets (
                key_hash TEXT PRIMARY KEY,
                tokens DOUBLE PRECISION NOT NULL,
                updated_at BIGINT NOT NULL)
            """,
            "CREATE INDEX rate_buckets_updated ON rate_buckets (updated_at)",
        ]),
        // What happened to accounts and clients, for their owners and operators; kept for
        // `audit-retention`. Not tied to users by a foreign key: a deleted account's events stay.
        Migration(version: 13, name: "audit_events", statements: [
            """
            CREATE TABLE audit_events (
                id TEXT PRIMARY KEY,
                kind TEXT NOT NULL,
                at BIGINT NOT NULL,
                actor TEXT NOT NULL,
                user_id TEXT,
                client_id TEXT,
                email TEXT,
                ip TEXT,
                detail TEXT)
            """,
            "CREATE INDEX audit_events_at ON audit_events (at)",
            "CREATE INDEX audit_events_user ON audit_events (user_id, at)",
        ]),
        // Which token a refresh token replaced: a retry within `refresh-token-reuse-interval`
        // finds the successor it may retire.
        Migration(version: 14, name: "refresh_token_predecessor", statements: [
            "ALTER TABLE refresh_tokens ADD COLUMN replaces TEXT",
        ]),
        // Administration: versions for ETags, a client's previous secret during a rotation's
        // grace period, disabled accounts, roles, and the orders the admin lists page in.
        Migration(version: 15, name: "administration", statements: [
            "ALTER TABLE clients ADD COLUMN version BIGINT NOT NULL DEFAULT 1",
            "ALTER TABLE clients ADD COLUMN previous_secret_hash TEXT",
            "ALTER TABLE clients ADD COLUMN previous_secret_expires_at BIGINT",
            "ALTER TABLE users ADD COLUMN version BIGINT NOT NULL DEFAULT 1",
            "ALTER TABLE users ADD COLUMN disabled_at BIGINT",
            "ALTER TABLE users ADD COLUMN roles TEXT NOT NULL DEFAULT ''",
            "CREATE INDEX clients_name ON clients (name, id)",
            "CREATE INDEX sessions_user ON sessions (user_id)",
        ]),
        // Cross-app sign-in: pushed authorization requests (RFC 9126), authenticator apps and their
        // hand-off tickets, and Native SSO's device sessions, whose grants end with them.
        Migration(version: 16, name: "cross_app", statements: [
            "ALTER TABLE clients ADD COLUMN require_pushed_requests BOOLEAN NOT NULL DEFAULT FALSE",
            "ALTER TABLE clients ADD COLUMN authenticator BOOLEAN NOT NULL DEFAULT FALSE",
            "ALTER TABLE clients ADD COLUMN device_sso_group TEXT",
            """
            CREATE TABLE pushed_requests (
                uri_hash TEXT PRIMARY KEY,
                client_id TEXT NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
                request TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT)
            """,
            """
            CREATE TABLE handoff_tickets (
                ticket_hash TEXT PRIMARY KEY,
                client_id TEXT NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                issued_by TEXT NOT NULL,
                auth_time BIGINT NOT NULL,
                amr TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT)
            """,
            """
            CREATE TABLE device_sessions (
                id TEXT PRIMARY KEY,
                secret_hash TEXT NOT NULL UNIQUE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                sso_group TEXT NOT NULL,
                auth_time BIGINT NOT NULL,
                amr TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                ended_at BIGINT)
            """,
            "CREATE INDEX device_sessions_user ON device_sessions (user_id)",
            "ALTER TABLE grants ADD COLUMN device_session_id TEXT",
            "CREATE INDEX grants_device_session ON grants (device_session_id)",
        ]),
        // The ds_hash of a device session's ID tokens, so refreshed ID tokens carry it too.
        Migration(version: 17, name: "device_session_hash", statements: [
            "ALTER TABLE device_sessions ADD COLUMN ds_hash TEXT",
        ]),
        // A sign-in attempt counts its failure before the password is checked, under an id
        // that a right password takes back (docs/security.md, "Guessing passwords").
        Migration(version: 18, name: "throttle_attempts", statements: [
            "ALTER TABLE throttle_failures ADD COLUMN attempt TEXT",
            "CREATE INDEX throttle_failures_attempt ON throttle_failures (attempt)",
        ]),
        // What the account page shows of each browser session: the device and address it
        // signed in from, and when it was last used.
        Migration(version: 19, name: "session_devices", statements: [
            "ALTER TABLE sessions ADD COLUMN user_agent TEXT",
            "ALTER TABLE sessions ADD COLUMN address TEXT",
            "ALTER TABLE sessions ADD COLUMN last_seen_at BIGINT",
        ]),
        // A change of address waits here for the code mailed to the new one.
        Migration(version: 20, name: "email_changes", statements: [
            """
            CREATE TABLE email_changes (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
                new_email TEXT NOT NULL,
                code_hash TEXT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL)
            """,
        ]),
        // Passkeys (WebAuthn credentials) and the challenges of their ceremonies, by hash.
        Migration(version: 21, name: "passkeys", statements: [
            """
            CREATE TABLE passkeys (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                public_key TEXT NOT NULL,
                algorithm INTEGER NOT NULL,
                sign_count BIGINT NOT NULL,
                transports TEXT NOT NULL,
                backup_eligible BOOLEAN NOT NULL,
                backed_up BOOLEAN NOT NULL,
                aaguid TEXT NOT NULL,
                attestation_format TEXT NOT NULL,
                name TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT,
                suspended_at BIGINT)
            """,
            "CREATE INDEX passkeys_user ON passkeys (user_id)",
            """
            CREATE TABLE passkey_challenges (
                hash TEXT PRIMARY KEY,
                purpose TEXT NOT NULL,
                user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                binding TEXT,
                expires_at BIGINT NOT NULL)
            """,
        ]),
        // Second factors: an authenticator app's sealed secret, and recovery codes by hash.
        Migration(version: 22, name: "second_factors", statements: [
            """
            CREATE TABLE totp_factors (
                user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                sealed_secret TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                confirmed_at BIGINT,
                last_step BIGINT)
            """,
            """
            CREATE TABLE recovery_codes (
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                code_hash TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                used_at BIGINT,
                PRIMARY KEY (user_id, code_hash))
            """,
        ]),
        // A client may require a second factor of every sign-in (`--require-mfa`).
        Migration(version: 23, name: "client_require_mfa", statements: [
            "ALTER TABLE clients ADD COLUMN require_mfa BOOLEAN NOT NULL DEFAULT FALSE",
        ]),
        // The purge finds expired rows through an index, a few at a time, and a user's grants
        // (signing out everywhere, deleting the account) are found without reading them all.
        Migration(version: 24, name: "expiry_indexes", statements: [
            "CREATE INDEX grants_expiry ON grants (expires_at)",
            "CREATE INDEX refresh_tokens_expiry ON refresh_tokens (expires_at)",
            "CREATE INDEX sessions_expiry ON sessions (expires_at)",
            "CREATE INDEX authorization_codes_expiry ON authorization_codes (expires_at)",
            "CREATE INDEX revoked_access_tokens_expiry ON revoked_access_tokens (expires_at)",
            "CREATE INDEX grants_user ON grants (user_id)",
        ]),
        // A family's current refresh token on its grant's row (`FamilyTokens`): a rotation writes
        // that row alone. No index: the token names its grant. Tokens issued before keep their
        // rows in refresh_tokens until they expire.
        Migration(version: 25, name: "family_tokens", statements: [
            "ALTER TABLE grants ADD COLUMN refresh_token_hash TEXT",
            "ALTER TABLE grants ADD COLUMN refresh_generation BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE grants ADD COLUMN refresh_expires_at BIGINT",
            "ALTER TABLE grants ADD COLUMN refresh_predecessor BIGINT",
            "ALTER TABLE grants ADD COLUMN refresh_rotated_at BIGINT",
        ]),
    ]

    /// PostgreSQL's advisory-lock key for migrations (a fixed number, "tessera" in ASCII).
    static let migrationLock: Int64 = 0x7465_7373_6572_61

    /// Brings the schema up to date; safe to call from several processes at once.
    static func run(on database: any TransactionalDatabase) async throws {
        try await database.transaction { db in
            if db.dialect.name == "postgresql" {
                // Nodes starting together wait here for the first, then find its work done. The
                // lock is the transaction's: released at commit or rollback, or when a node dies.
                try await db.raw("SELECT pg_advisory_xact_lock(\(bind: migrationLock))").run()
            }
            try await db.raw("CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)").run()
            let applied = Set(try await db.raw("SELECT version FROM schema_migrations").all().map { try $0.decode(column: "version", as: Int.self) })
            for migration in all where !applied.contains(migration.version) {
                for statement in migration.statements {
                    try await db.raw(SQLQueryString(statement)).run()
                }
                try await db.raw("INSERT INTO schema_migrations (version, name, applied_at) VALUES (\(bind: migration.version), \(bind: migration.name), \(bind: WallClock.system.now()))").run()
            }
        }
    }
}
