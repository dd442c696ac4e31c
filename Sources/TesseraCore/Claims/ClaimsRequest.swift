import Foundation

/// The `claims` request parameter (OpenID Connect Core §5.5): individual claims asked
/// for the ID token and for userinfo.
public struct ClaimsRequest: Codable, Sendable, Equatable {
    /// One requested claim (§5.5.1): `null` in JSON, or an object with these members.
    public struct Entry: Codable, Sendable, Equatable {
        public var essential: Bool?
        public var value: JSONValue?
        public var values: [JSONValue]?
        public init(essential: Bool? = nil, value: JSONValue? = nil, values: [JSONValue]? = nil) {
            self.essential = essential
            self.value = value
            self.values = values
        }
    }

    public var userinfo: [String: Entry?]?
    public var idToken: [String: Entry?]?

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

    public var isEmpty: Bool { allClaims.isEmpty }
}

/// Authentication context classes (`acr`, OpenID Connect Core §2, §3.1.2.1 `acr_values`): how
/// strongly a sign-in established the person. Every sign-in method Tessera has today (a password,
/// an emailed code or link, an upstream provider) is one factor.
public enum AuthenticationContext {
    /// One factor.
    public static let singleFactor = "urn:tessera:acr:1fa"
    /// The classes a sign-in here can reach, for discovery's `acr_values_supported`.
    public static let supported = [singleFactor]

    /// The class a sign-in with these methods (`amr`) reached.
    public static func achieved(amr: [String]) -> String { singleFactor }
}
