import TesseraDomain

/// The provider's endpoint paths; discovery publishes them, nobody should guess them.
enum Endpoint: String, CaseIterable {
    case authorization = "/authorize"
    case token = "/token"
    case userinfo = "/userinfo"
    case jwks = "/jwks.json"
    case revocation = "/revoke"
    case introspection = "/introspect"
    case endSession = "/logout"

    var path: String { rawValue }
    static var all: [Endpoint] { allCases }
}
