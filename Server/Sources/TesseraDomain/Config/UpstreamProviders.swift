import Foundation
import TesseraCore

/// An upstream identity provider users may sign in with (`upstream_providers` in the config
/// file; docs/federation.md): Sign in with Apple, or any OpenID provider found by discovery.
public struct UpstreamProviderSettings: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable {
        case apple
        case oidc
    }

    /// Names the provider in URLs (`/federation/{id}/callback`) and in stored identities.
    public var id: String
    public var type: Kind
    /// The button label: "Continue with {name}".
    public var name: String
    public var clientID: String
    /// `oidc`: the client secret (`client_secret_basic`).
    public var clientSecret: String?
    /// `apple`: the team id, the key id and the `.p8` file of the Sign in with Apple key.
    public var teamID: String?
    public var keyID: String?
    public var privateKeyPath: String?
    /// `apple`: bundle ids of the iOS apps whose identity tokens may be exchanged (their `aud`).
    public var nativeClientIDs: [String]
    /// `oidc`: the issuer to discover. `apple`: Apple's, unless overridden (tests).
    public var issuer: String?
    /// `apple` (or an `oidc` provider without discovery): the endpoints, overriding Apple's.
    public var authorizationEndpoint: String?
    public var tokenEndpoint: String?
    public var jwksURI: String?
    public var revocationEndpoint: String?
    /// Scopes asked for; `apple`: `name email`, `oidc`: `openid email profile` by default.
    public var scopes: [String]?

    enum CodingKeys: String, CodingKey {
        case id, type, name, scopes, issuer
        case clientID = "client_id", clientSecret = "client_secret", teamID = "team_id", keyID = "key_id"
        case privateKeyPath = "private_key_path", nativeClientIDs = "native_client_ids"
        case authorizationEndpoint = "authorization_endpoint", tokenEndpoint = "token_endpoint", jwksURI = "jwks_uri"
        case revocationEndpoint = "revocation_endpoint"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        type = try container.decode(Kind.self, forKey: .type)
        name = try container.decodeIfPresent(String.self, forKey: .name) ?? (type == .apple ? "Apple" : id)
        clientID = try container.decode(String.self, forKey: .clientID)
        clientSecret = try container.decodeIfPresent(String.self, forKey: .clientSecret)
        teamID = try container.decodeIfPresent(String.self, forKey: .teamID)
        keyID = try container.decodeIfPresent(String.self, forKey: .keyID)
        privateKeyPath = try container.decodeIfPresent(String.self, forKey: .privateKeyPath)
        nativeClientIDs = try container.decodeIfPresent([String].self, forKey: .nativeClientIDs) ?? []
        issuer = try container.decodeIfPresent(String.self, forKey: .issuer)
        authorizationEndpoint = try container.decodeIfPresent(String.self, forKey: .authorizationEndpoint)
        tokenEndpoint = try container.decodeIfPresent(String.self, forKey: .tokenEndpoint)
        jwksURI = try container.decodeIfPresent(String.self, forKey: .jwksURI)
        revocationEndpoint = try container.decodeIfPresent(String.self, forKey: .revocationEndpoint)
        scopes = try container.decodeIfPresent([String].self, forKey: .scopes)
    }

    /// Apple's documented Sign in with Apple endpoints.
    static let apple = (issuer: "https://appleid.apple.com", authorize: "https://appleid.apple.com/auth/authorize",
                        token: "https://appleid.apple.com/auth/token", keys: "https://appleid.apple.com/auth/keys",
                        revoke: "https://appleid.apple.com/auth/revoke")

    /// The providers of the JSON array of the configuration, checked.
    public static func parse(_ json: String) throws -> [UpstreamProviderSettings] {
        let providers: [UpstreamProviderSettings]
        do { providers = try JSONDecoder().decode([UpstreamProviderSettings].self, from: Data(json.utf8)) } catch {
            throw ConfigurationError("upstream-providers must be a JSON array of providers (see docs/federation.md): \(error)")
        }
        var ids = Set<String>()
        for provider in providers {
            guard ids.insert(provider.id).inserted else { throw ConfigurationError("upstream provider '\(provider.id)' is listed twice") }
            try provider.validate()
        }
        return providers
    }

    func validate() throws {
        let where_ = "upstream provider '\(id)'"
        guard !id.isEmpty, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw ConfigurationError("\(where_): the id must be letters, digits, - and _")
        }
        for (name, value) in [("issuer", issuer), ("authorization_endpoint", authorizationEndpoint), ("token_endpoint", tokenEndpoint),
                              ("jwks_uri", jwksURI), ("revocation_endpoint", revocationEndpoint)] {
            guard let value else { continue }
            guard let url = URL(string: value), let scheme = url.scheme?.lowercased(), let host = url.host else {
                throw ConfigurationError("\(where_): \(name) '\(value)' is not a URL")
            }
            let loopback = ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)
            guard scheme == "https" || (scheme == "http" && loopback) else {
                throw ConfigurationError("\(where_): \(name) must use https (http only on a loopback address)")
            }
        }
        switch type {
        case .apple:
            guard let teamID, teamID.count == 10, let keyID, !keyID.isEmpty, let privateKeyPath else {
                throw ConfigurationError("\(where_): Sign in with Apple needs team_id (10 characters), key_id and private_key_path (the .p8 file)")
            }
            guard FileManager.default.isReadableFile(atPath: privateKeyPath) else {
                throw ConfigurationError("\(where_): cannot read the key file \(privateKeyPath)")
            }
            if clientSecret != nil { throw ConfigurationError("\(where_): Apple's client secret is made from the .p8 key; remove client_secret") }
        case .oidc:
            guard issuer != nil else { throw ConfigurationError("\(where_): an OpenID provider needs its issuer (for discovery)") }
            guard clientSecret != nil else { throw ConfigurationError("\(where_): an OpenID provider needs the client_secret Tessera was given") }
        }
    }
}
