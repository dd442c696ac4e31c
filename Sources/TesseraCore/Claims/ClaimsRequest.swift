import Foundation

/// The `claims` request parameter (OpenID Connect Core §5.5): individual claims asked
/// for the ID token and for userinfo.
public struct ClaimsRequest: Codable, Sendable, Equatable {
    /// One requested claim (§5.5.1): `null` in JSON, or an object with these members.
    public struct Entry: Codable, Sendable, Equatable {
        /// `essential` (§5.5.1): whether the client marks the claim essential; nil when not stated.
        public var essential: Bool?
        /// `value` (§5.5.1): the one value the claim is asked to have; nil when not stated.
        public var value: JSONValue?
        /// `values` (§5.5.1): the values the claim is asked to have, in order of preference; nil when not stated.
        public var values: [JSONValue]?
        /// `value` and `values` together, the strings among them (an `acr` entry's classes).
        public var stringValues: [String] { ((values ?? []) + [value].compactMap { $0 }).compactMap(\.stringValue) }

        /// Makes an entry from its members.
        public init(essential: Bool? = nil, value: JSONValue? = nil, values: [JSONValue]? = nil) {
            self.essential = essential
            self.value = value
            self.values = values
        }
    }

    /// `userinfo`: the claims asked for from the UserInfo endpoint, by name, each nil for JSON `null`; nil
    /// when the member is absent.
    public var userinfo: [String: Entry?]?
    /// `id_token`: the claims asked for in the ID token, by name, each nil for JSON `null`; nil when the
    /// member is absent.
    public var idToken: [String: Entry?]?

    /// Makes a request from its two members.
    public init(userinfo: [String: Entry?]? = nil, idToken: [String: Entry?]? = nil) {
        self.userinfo = userinfo
        self.idToken = idToken
    }

    enum CodingKeys: String, CodingKey {
        case userinfo
        case idToken = "id_token"
    }

    /// Parses the parameter's JSON; anything but an object of objects is refused.
    public init(parsing text: String) throws {
        guard let value = try? JSONDecoder().decode(ClaimsRequest.self, from: Data(text.utf8)) else {
            throw OAuthError.invalidRequest("The claims parameter must be a JSON object with userinfo and/or id_token members (OpenID Connect Core §5.5).")
        }
        self = value
    }

    /// Every claim named, in either member.
    public var allClaims: Set<String> {
        Set((userinfo ?? [:]).keys).union((idToken ?? [:]).keys)
    }

    /// Claims marked `essential`.
    public var essentialClaims: Set<String> {
        var marked = Set<String>()
        for member in [userinfo, idToken] {
            for (name, entry) in member ?? [:] where entry?.essential == true { marked.insert(name) }
        }
        return marked
    }

    /// Keeps only the claims `allowed` accepts.
    public func filtered(_ allowed: (String) -> Bool) -> ClaimsRequest {
        ClaimsRequest(userinfo: userinfo?.filter { allowed($0.key) }, idToken: idToken?.filter { allowed($0.key) })
    }

    /// Whether neither member names a claim.
    public var isEmpty: Bool { allClaims.isEmpty }
}

/// Authentication context classes (`acr`, OpenID Connect Core §2, §3.1.2.1 `acr_values`): how
/// strongly a sign-in established the person, read from its methods (`amr`, RFC 8176).
///
/// - `urn:tessera:acr:1fa`: one factor (a password, an emailed code or link, an upstream provider).
/// - `urn:tessera:acr:mfa`: more than one (`amr` has `mfa`): a passkey with user verification (the
///   device's PIN or biometric with the key), or a second factor after the first.
/// - `phr`, `phrh` (OpenID Extended Authentication Profile ACR values 1.0): phishing-resistant,
///   a passkey, which signs only for this origin; `phrh` when the key is hardware-bound (not
///   synced: `amr` has `hwk`).
public enum AuthenticationContext {
    /// One factor.
    public static let singleFactor = "urn:tessera:acr:1fa"
    /// Multi-factor.
    public static let multiFactor = "urn:tessera:acr:mfa"
    /// Phishing-resistant.
    public static let phishingResistant = "phr"
    /// Phishing-resistant, hardware-protected.
    public static let phishingResistantHardware = "phrh"

    /// The classes a sign-in here can reach, weakest first, for discovery's `acr_values_supported`.
    public static let supported = [singleFactor, multiFactor, phishingResistant, phishingResistantHardware]

    /// Whether a sign-in with these methods reaches the class.
    public static func satisfies(amr: [String], _ acr: String) -> Bool {
        switch acr {
        case singleFactor: true
        case multiFactor: amr.contains("mfa")
        case phishingResistant: amr.contains("hwk") || amr.contains("swk")
        case phishingResistantHardware: amr.contains("hwk")
        default: false
        }
    }

    /// The class a sign-in with these methods (`amr`) reached: the first of `requested` it
    /// reaches (what the client asked for, in its order of preference), else the strongest.
    public static func achieved(amr: [String], requested: [String] = []) -> String {
        if let asked = requested.first(where: { supported.contains($0) && satisfies(amr: amr, $0) }) { return asked }
        return supported.last { satisfies(amr: amr, $0) } ?? singleFactor
    }

    /// The methods (RFC 8176) of a sign-in with a passkey: its key, `swk` when it can be synced
    /// between devices (backup-eligible) and `hwk` when bound to one; `pin` when the
    /// authenticator verified the person (a PIN or a biometric: WebAuthn doesn't say which), with
    /// `mfa`; else `user` (presence only).
    public static func passkeyMethods(userVerified: Bool, synced: Bool) -> [String] {
        [synced ? "swk" : "hwk"] + (userVerified ? ["pin", "mfa"] : ["user"])
    }
}
