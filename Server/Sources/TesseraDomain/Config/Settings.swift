import TesseraCore

/// Every setting, in the order `--help` and docs/configuration.md list them. Adding a
/// setting is adding its property (with its default) to ``ServerConfiguration`` and one
/// entry here; `scripts/generate-configuration-doc` then rewrites the docs table.
extension Setting {
    public static let all: [Setting] = [
        Setting(name: "host", kind: .text, hasFlag: true, summary: "Address to listen on.", details: "",
                defaultText: defaults.host) { $0.host = $1 },
        .integer("port", \.port, "Port to listen on."),
        .text("issuer", \.issuer, default: "http://HOST:PORT", "Issuer URL.",
              details: "the issuer identifier; every endpoint URL starts with it. Must be https unless the host is a loopback "
                  + "address or `--dev` is on"),
        Setting(name: "database", kind: .text, hasFlag: true, summary: "Database: a SQLite file path or a postgres:// URL.",
                details: "a SQLite file path, `sqlite:PATH`, or `sqlite::memory:` (tests): the directory is created `0700`, "
                    + "the file `0600`; WAL mode. Or a PostgreSQL server, shared by any number of nodes: "
                    + "`postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=verify-full` (`sslmode` as libpq: `disable`, "
                    + "`prefer` (the default), `require`, `verify-ca`, `verify-full`; `sslrootcert=FILE`; `host=/SOCKET/DIR`; "
                    + "`options=-csearch_path%3DSCHEMA`). See [deployment.md](deployment.md)",
                defaultText: "\(defaults.database)".replacingOccurrences(of: "sqlite:", with: "")) {
            $0.database = try DatabaseLocation(parsing: $1)
        },
        .integer("database-pool-size", \.databasePoolSize, minimum: 1, "PostgreSQL connections this node may open.",
                 details: "the most connections to PostgreSQL this node opens, shared out between its event loops (one a core; "
                     + "each loop's share keeps two open, the others are opened on demand and closed after a minute idle); the "
                     + "server's `max_connections` must cover every node's pool plus the CLI's. SQLite uses one connection"),
        .duration("database-timeout", \.databaseTimeout, "How long a request waits for a database connection.",
                  details: "how long a request waits for a PostgreSQL connection (every one busy, or the database away) before "
                      + "it is answered `503` with `Retry-After` (`temporarily_unavailable` at `/token`); the work it came for "
                      + "is then never done. A request whose connection breaks under it is answered the same. See "
                      + "[deployment.md](deployment.md#database-outages)"),
        .duration("shutdown-timeout", \.shutdownTimeout, "How long a stopping node lets requests finish.",
                  details: "after SIGTERM or SIGINT, how long the node lets the requests under way finish before it cancels "
                      + "them and exits (keep it below the supervisor's own limit: systemd's `TimeoutStopSec`, Kubernetes' "
                      + "`terminationGracePeriodSeconds`)"),
        // Read by the loader itself, before everything else.
        Setting(name: "config", kind: .text, hasFlag: true, summary: "A JSON config file.", details: "the JSON config file",
                defaultText: "—") { _, _ in },
        Setting(name: "signing-algorithm", kind: .choice(JWSAlgorithm.allCases.map(\.rawValue)), hasFlag: true,
                summary: "Signing algorithm of new keys: RS256, ES256 or EdDSA.",
                details: "algorithm of newly generated signing keys: `RS256`, `ES256` or `EdDSA`. Existing keys keep theirs "
                    + "until rotated out",
                defaultText: defaults.signingAlgorithm.rawValue) { configuration, value in
            guard let algorithm = JWSAlgorithm(rawValue: value) else {
                throw ConfigurationError("signing-algorithm must be RS256, ES256 or EdDSA, not '\(value)'")
            }
            configuration.signingAlgorithm = algorithm
        },
        .text("master-key", \.masterKey, flag: false, default: "— (a key file, below)", "The master key (environment or file only).",
              details: "32 random bytes as base64 (`openssl rand -base64 32`) or 64 hex digits: the key that seals private "
                  + "signing keys and upstream refresh tokens at rest (AES-256-GCM). Once they are sealed the server refuses "
                  + "to start without the same key. Several nodes on one database need the same key: set it here"),
        .text("master-key-file", \.masterKeyFile,
              default: "beside the database: `tessera-data/tessera.master-key` for `tessera-data/tessera.sqlite`",
              "Where the master key is kept when master-key is not set.",
              details: "where the master key is kept when `master-key` is not set. Created on first start (mode 0600, 32 random "
                  + "bytes); a file other users may read is refused. Back it up with the database. See "
                  + "[security.md](security.md#secrets-at-rest)"),
        .duration("key-grace-period", \.keyGracePeriod, "How long a retired key stays published.",
                  details: "how long a retired key stays in the JWKS after `tessera keys rotate`"),
        .duration("access-token-lifetime", \.accessTokenLifetime, "Lifetime of access tokens."),
        .duration("id-token-lifetime", \.idTokenLifetime, "Lifetime of ID tokens."),
        .duration("refresh-token-lifetime", \.refreshTokenLifetime, "Lifetime of a grant (a refresh-token family).",
                  details: "lifetime of a grant (a refresh-token family); rotation never extends it"),
        .duration("refresh-token-reuse-interval", \.refreshTokenReuseInterval, allowsZero: true,
                  "How long a rotated refresh token may be presented again (retries).",
                  details: "how long after its rotation a refresh token may be presented again, by a client retrying a refresh "
                      + "whose answer it never got (a node died, the connection dropped): the successor nobody has used is "
                      + "retired and another issued. Once the successor is used, or after this interval, a second "
                      + "presentation revokes the whole family. 0 (the default) allows no retry; at most 5m. See "
                      + "[deployment.md](deployment.md#losing-a-node)"),
        .boolean("stored-refresh-tokens", \.storedRefreshTokens, kind: .flag,
                 "Issue refresh tokens that nodes of earlier releases can rotate (a rolling upgrade).",
                 details: "new grants get refresh tokens kept in rows of their own, as releases before family tokens issued "
                     + "them, instead of family tokens (kept on their grant's row), which those releases can't rotate: set it "
                     + "on the upgraded nodes while nodes of such a release still serve, and remove it once none does. See "
                     + "[deployment.md](deployment.md#migrations-and-upgrades)"),
        .duration("authorization-code-lifetime", \.authorizationCodeLifetime, "Lifetime of authorization codes."),
        .duration("pushed-request-lifetime", \.pushedRequestLifetime, "Lifetime of a pushed request's request_uri (RFC 9126).",
                  details: "how long a pushed authorization request's request_uri works: also the time a person has to approve "
                      + "it in an authenticator app; at most 10m. See [cross-app.md](cross-app.md)"),
        .duration("handoff-ticket-lifetime", \.handoffTicketLifetime, "Lifetime of a hand-off ticket.",
                  details: "how long a hand-off ticket from an authenticator app works; used once; at most 5m"),
        .duration("session-lifetime", \.sessionLifetime, "Lifetime of the browser session at the provider.",
                  details: "the browser session at the provider (silent SSO)"),
        .duration("reauthenticate-after", \.reauthenticateAfter, "How recent a sign-in sensitive account changes need.",
                  details: "deleting the account and connecting an identity on the account page need a sign-in this recent; "
                      + "otherwise the page asks for the password (or sends a sign-in link) again"),
        .integer("login-failures-per-account", \.loginLimits.perAccountAndAddress,
                 "Wrong passwords per 15 minutes from one address to one account.",
                 details: "wrong passwords allowed in 15 minutes from one client address to one account (and from one device "
                     + "the owner signed in from before) before that address's attempts on that account are refused; the owner "
                     + "elsewhere is not locked out. See [security.md](security.md#password-guessing-without-a-lockout-weapon)"),
        .integer("login-failures-per-address", \.loginLimits.perAddress, "Wrong passwords per 15 minutes from one address.",
                 details: "wrong passwords allowed in 15 minutes from one client address over all accounts (IPv6 counted by "
                     + "/64; behind a proxy set `trusted-proxy`)"),
        .integer("login-failures-per-account-total", \.loginLimits.perAccount, "Wrong passwords per 15 minutes to one account.",
                 details: "wrong passwords allowed in 15 minutes to one account from all addresses together; a browser the "
                     + "owner signed in from before is still let in. All three are counted in the database, by every node together"),
        .integer("flows-per-address", \.workLimits.flowsPerAddress, minimum: 1, "Sign-ins started per minute from one address.",
                 details: "sign-ins started per minute (authorization requests that open a hosted page, native "
                     + "sign-up/sign-in/reset starts, upstream sign-ins) from one client address; past it "
                     + "`temporarily_unavailable` / `slow_down`. See [security.md](security.md#bounded-work)"),
        .integer("flows-per-client", \.workLimits.flowsPerClient, minimum: 1, "Sign-ins started per minute for one client.",
                 details: "the same, for one client, from all addresses together"),
        .integer("hashing-per-address", \.workLimits.hashingPerAddress, minimum: 1,
                 "New passwords hashed per minute from one address.",
                 details: "new passwords hashed per minute (native sign-up, reset) from one client address"),
        .integer("hashing-per-client", \.workLimits.hashingPerClient, minimum: 1, "New passwords hashed per minute for one client.",
                 details: "the same, for one client"),
        .integer("password-hashing-queue", \.workLimits.hashingQueue, minimum: 1, "Password hashings that may wait for a thread.",
                 details: "password hashings that may wait for a thread; sign-ins go first, new work may fill a quarter; beyond "
                     + "it the answer is `temporarily_unavailable` (503)"),
        .text("smtp-url", \.smtpURL, default: "— (nothing is sent: emails fail in the outbox; with `--dev` they go to the log)",
              "SMTP relay URL, e.g. smtp://user:pass@mail.example.com:587.",
              details: "the SMTP relay: `smtp://user:password@host:port` (port 587, STARTTLS when offered; "
                  + "`?starttls=required` to insist) or `smtps://user:password@host:port` (implicit TLS, port 465). "
                  + "Percent-encode special characters in the user name and password. `?tls_verify=none` disables "
                  + "certificate checks — unsafe, tests only. See [Email](#email)"),
        .text("mail-from", \.mailFrom, default: "`PRODUCT <no-reply@HOST>` (the product name, HOST from the issuer)", "Sender address of emails.",
              details: "sender of emails, `addr@domain` or `Name <addr@domain>`; also the envelope sender (`MAIL FROM`)"),
        .text("product-name", \.branding.productName, default: "Tessera", "The name the hosted pages show.",
              details: "the name at the top of every hosted page and in its title. See [branding](configuration.md#branding)"),
        Setting(name: "brand-color", kind: .text, hasFlag: true, summary: "The pages' accent colour, #rgb or #rrggbb.",
                details: "the hosted pages' accent colour (buttons, links, focus rings), `#rgb` or `#rrggbb`",
                defaultText: "`#1f6f43`") { configuration, value in
            guard value.isEmpty || Branding.isColor(value) else {
                throw ConfigurationError("brand-color must be a colour such as #1f6f43 or #26a, not '\(value)'")
            }
            configuration.branding.accentColor = value.isEmpty ? nil : value
        },
        .text("logo", \.branding.logoFile, "A logo file (PNG, SVG, JPEG or WebP) for the hosted pages.",
              details: "a PNG, SVG, JPEG or WebP file (at most 256 KiB) shown above the product name; the server serves it "
                  + "itself at `/assets/logo`, so the pages' Content-Security-Policy stays `img-src 'self'`"),
        .text("stylesheet", \.branding.stylesheetFile, "A CSS file for the hosted pages, after the built-in one.",
              details: "a CSS file served at `/assets/brand.css` after the built-in stylesheet, so its rules win; the "
                  + "built-in one's colours are CSS variables (`--accent`, `--bg`, `--card`, `--text`…) to override"),
        .text("pages-dir", \.branding.pagesDirectory, "A folder of page templates that replace the built-in ones.",
              details: "a folder whose `NAME.mustache` files replace the built-in page templates of that name "
                  + "(`login.mustache`, `header.mustache`…; start from a copy of `Server/Sources/TesseraServer/Resources/pages`); "
                  + "read at start: an unknown name or a template that doesn't compile stops the start with the reason"),
        .text("mail-dir", \.branding.mailDirectory, "A folder of email templates that replace the built-in ones.",
              details: "a folder whose `mail-header.html` and `mail-footer.html` replace the emails' layout, and whose "
                  + "`NAME.LANG.subject`, `NAME.LANG.txt` and `NAME.LANG.html` files replace one part of one email "
                  + "(`sign-in-code.ru.html`); read at start like `pages-dir`. See [branding](configuration.md#branding)"),
        .boolean("enumeration-protection", \.enumerationProtection,
                 "on or off: whether native API answers may reveal if an account exists.",
                 details: "`on`/`off` (`true`/`false` too) for the native sign-in API: off answers `user_already_exists` / "
                     + "`user_not_found` as the reference API does"),
        .integer("otp-length", \.nativeAuth.codeLength, "Digits in a one-time code.",
                 details: "digits in a one-time code of the native sign-in API; see [native-auth.md](native-auth.md#settings)"),
        .duration("otp-lifetime", \.nativeAuth.codeLifetime, "How long a code works."),
        .integer("otp-max-attempts", \.nativeAuth.maxCodeAttempts, "Wrong entries allowed per code."),
        .duration("otp-resend-interval", \.nativeAuth.resendInterval, "Wait before another code may be sent in a flow."),
        .integer("otp-per-email-per-hour", \.nativeAuth.codesPerEmailPerHour, "Codes sent per hour to one email address.",
                 details: "codes sent per hour to one email address (email links count too)"),
        .integer("otp-per-address-per-hour", \.nativeAuth.codesPerAddressPerHour, "Codes sent per hour from one client address.",
                 details: "codes sent per hour from one client address (email links count too)"),
        .duration("continuation-token-lifetime", \.nativeAuth.continuationTokenLifetime, "How long a continuation token works."),
        Setting(name: "signup-password", kind: .choice(["required", "optional"]), hasFlag: true,
                summary: "required or optional: whether sign-up needs a password.",
                details: "`required`: native sign-up insists on a password (`credential_required`)",
                defaultText: defaults.nativeAuth.signUpPasswordRequired ? "required" : "optional") { configuration, value in
            switch value.lowercased() {
            case "required": configuration.nativeAuth.signUpPasswordRequired = true
            case "optional": configuration.nativeAuth.signUpPasswordRequired = false
            default: throw ConfigurationError("signup-password must be required or optional, not '\(value)'")
            }
        },
        Setting(name: "signup-attributes", kind: .json, hasFlag: true,
                summary: #"Sign-up attributes as a JSON array, e.g. '[{"name":"given_name","required":true}]'."#,
                details: "JSON array of sign-up attributes (an array in the config file); see "
                    + "[native-auth.md](native-auth.md#attributes)",
                defaultText: "none") { $0.nativeAuth.signUpAttributes = try SignUpAttributes(json: $1) },
        .duration("email-link-lifetime", \.emailLinkLifetime, "How long an email sign-in link works.",
                  details: "see [email-link.md](email-link.md)"),
        Setting(name: "upstream-providers", kind: .json, hasFlag: true,
                summary: "Upstream identity providers as a JSON array (see docs/federation.md); usually in the --config file.",
                details: "JSON array of upstream identity providers (usually `upstream_providers` in the config file); see "
                    + "[federation.md](federation.md)",
                defaultText: "none") { $0.upstreamProviders = try UpstreamProviderSettings.parse($1) },
        .duration("idle-timeout", \.connectionLimits.idleTimeout, "Close a connection idle this long.",
                  details: "a connection with no request in progress (one that sends nothing, or nothing more after its answer) "
                      + "is closed after this long; also the time a request body has to arrive once its head is in"),
        .duration("request-head-timeout", \.connectionLimits.requestHeadTimeout,
                  "A request head must arrive within this long of its first byte.",
                  details: "once a request's first byte arrives, its request line and headers must be complete within this "
                      + "long, else `408 Request Timeout` and the connection closes (slowloris)"),
        .integer("max-header-bytes", \.connectionLimits.maxHeaderBytes, "Largest request head in bytes.",
                 details: "the largest request head (request line and header fields together); a larger one is answered `400` "
                     + "and the connection closes"),
        .integer("max-header-count", \.connectionLimits.maxHeaderCount, "Most header fields in a request.",
                 details: "the most header fields a request may have; more is `400`"),
        .text("passkey-rp-id", \.passkeyRelyingPartyID, default: "the issuer's host", "The relying party ID of passkeys.",
              details: "the WebAuthn relying party ID passkeys are made for: the issuer's host, or a domain it is under "
                  + "(`example.com` for `https://login.example.com`). A passkey is bound to it for ever: choose it before "
                  + "people make passkeys. See [passkeys.md](passkeys.md)"),
        Setting(name: "passkey-origins", kind: .list, hasFlag: true,
                summary: "Other origins that may use the passkeys (an Android app's android:apk-key-hash:…).",
                details: "origins besides the issuer's whose pages or apps may sign in with the passkeys: `https://host[:port]` "
                    + "under the relying party ID, or an Android app's `android:apk-key-hash:…` (an array in the config file). "
                    + "See [passkeys.md](passkeys.md)",
                defaultText: "none") { configuration, value in
            configuration.passkeyOrigins = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        },
        Setting(name: "trusted-proxy", kind: .list, hasFlag: true,
                summary: "A reverse proxy (address or CIDR range) whose Forwarded / X-Forwarded-For headers name the client.",
                details: "reverse proxies (an address or a CIDR range; an array in the config file) whose `Forwarded` / "
                    + "`X-Forwarded-For` headers name the client. From any other peer those headers are ignored. Behind a "
                    + "proxy, set it: otherwise every user shares the proxy's address, and its limits. See "
                    + "[security.md](security.md#client-addresses)",
                defaultText: "none") { $0.trustedProxies = try TrustedProxies(parsing: $1) },
        .duration("audit-retention", \.auditRetention, "How long audit events are kept.",
                  details: "how long audit events (sign-ins, password and address changes, linked identities, consents, "
                      + "deleted accounts, administrators' changes) are kept before they are purged. See "
                      + "[deployment.md](deployment.md#audit-events)"),
        Setting(name: "metrics-port", kind: .integer, hasFlag: true,
                summary: "Port of the management listener: /metrics (Prometheus), /health/live, /health/ready.",
                details: "the port of a second listener with `GET /metrics` (Prometheus text format) and the two health "
                    + "paths; no listener when absent, so metrics are never public by accident. See "
                    + "[deployment.md](deployment.md#metrics)",
                defaultText: "none") { configuration, value in
            guard value != "none", !value.isEmpty else {
                configuration.metricsPort = nil
                return
            }
            let port = try Setting.integer(value, "metrics-port")
            guard (1...65_535).contains(port) else { throw ConfigurationError("metrics-port must be a port (1–65535), not \(port)") }
            configuration.metricsPort = port
        },
        Setting(name: "metrics-host", kind: .text, hasFlag: true, summary: "Address the management listener binds to.",
                details: "the address the management listener binds to; loopback by default, so that only this machine (or a "
                    + "Prometheus agent beside it) can read the metrics",
                defaultText: defaults.metricsHost) { $0.metricsHost = $1 },
        Setting(name: "log-format", kind: .choice(LogFormat.allCases.map(\.rawValue)), hasFlag: true,
                summary: "Log lines as text or JSON (one object per line).",
                details: "`text`, or `json`: one object per line with `time`, `level`, `logger`, `message` and the "
                    + "metadata, and the `request_id` of the request the line belongs to (also returned as the "
                    + "`X-Request-Id` header). See [deployment.md](deployment.md#logs)",
                defaultText: defaults.logFormat.rawValue) { configuration, value in
            guard let format = LogFormat(rawValue: value) else { throw ConfigurationError("log-format must be text or json, not '\(value)'") }
            configuration.logFormat = format
        },
        Setting(name: "log-level", kind: .choice(LogLevels.all), hasFlag: true, summary: "The least severe level logged.",
                details: "`trace`, `debug`, `info`, `notice`, `warning`, `error` or `critical`; at `debug` every request is "
                    + "logged (method, path without its query, status, duration)",
                defaultText: defaults.logLevel) { configuration, value in
            guard LogLevels.all.contains(value) else {
                throw ConfigurationError("log-level must be one of \(LogLevels.all.joined(separator: ", ")), not '\(value)'")
            }
            configuration.logLevel = value
        },
        .boolean("dev", \.dev, kind: .flag, "Development conveniences (never on by default).",
                 details: "development conveniences (`/dev/callback`, `GET /dev/outbox`); never on by default"),
        .boolean("demo", \.demo, kind: .flag, "Implies --dev; creates a demo client and user and prints an authorization URL.",
                 details: "implies `--dev`; creates the demo client and user and prints an authorization URL"),
    ]
}

/// The log levels, least severe first (swift-log's names).
enum LogLevels {
    static let all = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
}
