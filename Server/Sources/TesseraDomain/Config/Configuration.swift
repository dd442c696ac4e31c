import Foundation
import TesseraCore

/// A configuration value that can't be used, with a message for the operator.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// How log lines are written.
public enum LogFormat: String, Sendable, CaseIterable {
    case text, json
}

/// Everything `tessera serve` can be told. Defaults are the embedded ones of DESIGN §4.
public struct ServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    /// The issuer identifier; defaults to `http://HOST:PORT`.
    public var issuer: String?
    public var database = DatabaseLocation.sqliteFile("tessera-data/tessera.sqlite")
    /// The most PostgreSQL connections this node opens.
    public var databasePoolSize = 10
    /// How long a request waits for a PostgreSQL connection before it is answered 503 (seconds).
    public var databaseTimeout: Int64 = 5
    /// How long a stopping node lets the requests under way finish (seconds).
    public var shutdownTimeout: Int64 = 25
    public var signingAlgorithm = JWSAlgorithm.rs256
    /// How long a retired signing key stays published (seconds).
    public var keyGracePeriod: Int64 = 7 * 86_400
    /// How often a node re-reads the keys to notice a rotation made elsewhere (seconds).
    public var keyReloadInterval: Int64 = 5
    /// Base64 or hex AES-256 key that seals private keys at rest.
    public var masterKey: String?
    /// Where the master key is kept when ``masterKey`` is not set (``MasterKey/defaultFile(for:)`` otherwise).
    public var masterKeyFile: String?
    public var smtpURL: String?
    public var mailFrom: String?
    /// How long audit events are kept (seconds).
    public var auditRetention: Int64 = 180 * 86_400
    /// The management listener's port (`/metrics`, `/health/live`, `/health/ready`); none when nil.
    public var metricsPort: Int?
    /// Where the management listener binds: loopback unless told otherwise.
    public var metricsHost = "127.0.0.1"
    /// How log lines are written: text (the default) or one JSON object per line.
    public var logFormat = LogFormat.text
    /// The least severe level logged.
    public var logLevel = "info"
    /// Development conveniences; never on by default.
    public var dev = false
    /// Creates a demo client and user and prints an authorization URL (implies `dev`).
    public var demo = false
    /// Native API answers don't reveal whether an account exists.
    public var enumerationProtection = true
    /// Connection timeouts and request-head size limits.
    public var connectionLimits = ConnectionLimits()
    /// Reverse proxies whose `Forwarded` / `X-Forwarded-For` headers name the client.
    public var trustedProxies = TrustedProxies()

    public var accessTokenLifetime: Int64 = 900
    public var idTokenLifetime: Int64 = 3600
    public var authorizationCodeLifetime: Int64 = 120
    /// How long a pushed request's `request_uri` works (RFC 9126): the time a person has to
    /// approve it in an authenticator app.
    public var pushedRequestLifetime: Int64 = 90
    /// How long a hand-off ticket works.
    public var handoffTicketLifetime: Int64 = 60
    public var refreshTokenLifetime: Int64 = 30 * 86_400
    /// How long after its rotation a refresh token may be presented again by a client retrying a
    /// refresh whose answer it never got (seconds; 0: never).
    public var refreshTokenReuseInterval: Int64 = 0
    /// Whether new grants get refresh tokens with rows of their own (`refresh_tokens`), which
    /// nodes of releases before family tokens rotate too, rather than ``FamilyToken``s: for the
    /// time of a rolling upgrade from such a release.
    public var storedRefreshTokens = false
    public var sessionLifetime: Int64 = 7 * 86_400
    /// How recent a sign-in must be to delete the account or connect an identity (seconds).
    public var reauthenticateAfter: Int64 = 600
    public var interactionLifetime: Int64 = 1800
    public var passwordHashing = ScryptParameters.owasp

    /// Failed password sign-ins allowed per account and address, per address, and per account.
    public var loginLimits = LoginLimits()
    /// Password hashings and sign-ins started per client address and per client, and the hashing queue.
    public var workLimits = WorkLimitSettings()

    /// The native sign-in API: one-time codes, continuation tokens, sign-up requirements.
    public var nativeAuth = NativeAuthSettings()
    /// How long an email sign-in link works (seconds).
    public var emailLinkLifetime: Int64 = 3600
    /// Identity providers users may sign in with (Sign in with Apple, OpenID providers).
    public var upstreamProviders: [UpstreamProviderSettings] = []
    /// The operator's face on the hosted pages: a name, a logo, a colour, a stylesheet, templates.
    public var branding = Branding()
    /// The passkeys' relying party ID: the issuer's host unless set (a parent domain of it, so
    /// passkeys outlive a move between subdomains).
    public var passkeyRelyingPartyID: String?
    /// Origins besides the issuer's that may use the passkeys (an Android app's
    /// `android:apk-key-hash:…`, another https origin under the relying party ID).
    public var passkeyOrigins: [String] = []

    public init() {}

    /// The issuer's origin: `scheme://host[:port]`.
    public var issuerOrigin: String {
        guard let url = URL(string: issuerURL), let scheme = url.scheme, let host = issuerHost else { return issuerURL }
        return "\(scheme)://\(host.contains(":") ? "[\(host)]" : host)" + (url.port.map { ":\($0)" } ?? "")
    }

    /// The relying party ID passkeys are made for.
    public var passkeyRPID: String {
        passkeyRelyingPartyID ?? issuerHost?.lowercased() ?? "localhost"
    }

    /// The issuer's host as written (an IPv6 address without its brackets). Read with `URL`, not
    /// `URLComponents`, whose `host` decodes IDNA through ICU: that alone loaded 1.3 MB of ICU
    /// into every server at start, for a host that must be ASCII in an origin anyway.
    public var issuerHost: String? {
        guard let host = URL(string: issuerURL)?.host(percentEncoded: false), !host.isEmpty else { return nil }
        return host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// The issuer URL, without a trailing slash.
    public var issuerURL: String {
        var value = issuer ?? "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        while value.hasSuffix("/") { value.removeLast() }
        return value
    }

    /// Session cookies get `Secure` when the issuer is https.
    public var secureCookies: Bool { issuerURL.hasPrefix("https://") }

    /// Checks values that would make the server unsafe or unreachable.
    public func validate() throws {
        guard let url = URL(string: issuerURL), let scheme = url.scheme, url.host != nil,
              url.query == nil, url.fragment == nil else {
            throw ConfigurationError("issuer '\(issuerURL)' must be an absolute URL without query or fragment")
        }
        let loopback = ["127.0.0.1", "localhost", "::1", "[::1]"].contains(url.host ?? "")
        guard scheme == "https" || (scheme == "http" && (loopback || dev)) else {
            throw ConfigurationError("issuer '\(issuerURL)' must use https (http is allowed for loopback addresses and --dev only)")
        }
        guard (1...65535).contains(port) else { throw ConfigurationError("port \(port) is out of range") }
        if let masterKey { _ = try SecretBox(masterKey: masterKey) }
        if let smtpURL { _ = try SMTPSettings(parsing: smtpURL) }
        if let mailFrom, (try? MailAddress(parsing: mailFrom)) == nil {
            throw ConfigurationError("mail-from '\(mailFrom)' is not an email address (use addr@domain or \"Name <addr@domain>\")")
        }
        let issuerHost = url.host?.lowercased() ?? ""
        if let rpID = passkeyRelyingPartyID, rpID != issuerHost, !issuerHost.hasSuffix("." + rpID) || !rpID.contains(".") {
            throw ConfigurationError("passkey-rp-id '\(rpID)' must be the issuer's host (\(issuerHost)) or a domain it is under")
        }
        for origin in passkeyOrigins {
            let web = URLComponents(string: origin)
            let isWebOrigin = (web?.scheme == "https" || web?.scheme == "http") && web?.host != nil && (web?.path ?? "").isEmpty
            guard isWebOrigin || origin.hasPrefix("android:apk-key-hash:") else {
                throw ConfigurationError("passkey-origins: '\(origin)' is neither an origin (https://host[:port]) nor android:apk-key-hash:…")
            }
        }
        if let name = branding.productName, name.count > 64 || name.unicodeScalars.contains(where: { $0.value < 32 || $0.value == 127 }) {
            throw ConfigurationError("product-name must be at most 64 characters on one line")
        }
        for (name, value) in [("access token", accessTokenLifetime), ("ID token", idTokenLifetime),
                              ("authorization code", authorizationCodeLifetime), ("refresh token", refreshTokenLifetime),
                              ("session", sessionLifetime), ("email link", emailLinkLifetime),
                              ("reauthenticate-after", reauthenticateAfter), ("pushed request", pushedRequestLifetime),
                              ("hand-off ticket", handoffTicketLifetime)] where value <= 0 {
            throw ConfigurationError("the \(name) lifetime must be positive")
        }
        guard pushedRequestLifetime <= 600 else {
            throw ConfigurationError("pushed-request-lifetime can be at most 10m: a request_uri is a short-lived reference (RFC 9126)")
        }
        guard handoffTicketLifetime <= 300 else {
            throw ConfigurationError("handoff-ticket-lifetime can be at most 5m: a ticket is for the moment the person switches apps")
        }
        guard (0...300).contains(refreshTokenReuseInterval) else {
            throw ConfigurationError("refresh-token-reuse-interval must be between 0 and 5m: it is a window for retries, not a lifetime")
        }
        try nativeAuth.validate()
        try connectionLimits.validate()
    }
}

/// Settings of the native sign-in API (docs/native-auth.md).
public struct NativeAuthSettings: Sendable, Equatable {
    /// Digits in a one-time code.
    public var codeLength = 8
    /// How long a code works (seconds).
    public var codeLifetime: Int64 = 600
    /// Wrong entries allowed per code; then a new code must be requested.
    public var maxCodeAttempts = 5
    /// Seconds before another code may be sent in the same flow (`interval`).
    public var resendInterval: Int64 = 60
    /// Codes sent per hour to one address, and from one client address.
    public var codesPerEmailPerHour = 5
    public var codesPerAddressPerHour = 30
    /// How long a continuation token works (seconds).
    public var continuationTokenLifetime: Int64 = 600
    /// Whether sign-up insists on a password (`credential_required`) or also makes
    /// accounts that sign in by code only.
    public var signUpPasswordRequired = false
    public var signUpAttributes = try! SignUpAttributes()

    public init() {}

    func validate() throws {
        guard (6...10).contains(codeLength) else { throw ConfigurationError("otp-length must be 6 to 10 digits") }
        guard (1...20).contains(maxCodeAttempts) else { throw ConfigurationError("otp-max-attempts must be 1 to 20") }
        guard codesPerEmailPerHour >= 1, codesPerAddressPerHour >= 1 else {
            throw ConfigurationError("the hourly code limits must be at least 1")
        }
        for (name, value) in [("otp-lifetime", codeLifetime), ("otp-resend-interval", resendInterval),
                              ("continuation-token-lifetime", continuationTokenLifetime)] where value <= 0 {
            throw ConfigurationError("\(name) must be positive")
        }
    }
}

/// How the hosted pages look (docs/configuration.md, "Branding"). Files are read at start, and
/// a template that does not compile stops the start with its name and the reason.
public struct Branding: Sendable, Equatable {
    /// Shown at the top of every page and in its title; nil: "Tessera".
    public var productName: String?
    /// The accent colour (buttons, links, focus rings): `#rgb` or `#rrggbb`.
    public var accentColor: String?
    /// A PNG, SVG, JPEG or WebP file shown above the product name (at most 256 KiB).
    public var logoFile: String?
    /// A CSS file served after the built-in stylesheet, so its rules win.
    public var stylesheetFile: String?
    /// A folder whose `NAME.mustache` files replace the built-in page templates of that name.
    public var pagesDirectory: String?
    /// A folder whose files replace the emails' layout (`mail-header.html`, `mail-footer.html`)
    /// or parts of one email (`NAME.LANG.subject`, `NAME.LANG.txt`, `NAME.LANG.html`).
    public var mailDirectory: String?

    public init() {}

    /// The name pages show.
    public var name: String { productName.flatMap { $0.isEmpty ? nil : $0 } ?? "Tessera" }

    /// The accent colour pages and emails use.
    public var accent: String { accentColor ?? Self.defaultAccent }

    public static let defaultAccent = "#1f6f43"
}

extension Branding {
    /// `#rgb` or `#rrggbb`.
    public static func isColor(_ text: String) -> Bool {
        text.first == "#" && [4, 7].contains(text.count) && text.dropFirst().allSatisfy(\.isHexDigit)
    }
}
