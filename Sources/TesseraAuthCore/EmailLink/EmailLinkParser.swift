import Foundation

/// Reads sign-in links: `mode=signIn` and `oob_code` in the query (or in a fragment written
/// as a query), directly or inside a `link` / `deep_link_id` parameter that wraps the link.
package enum EmailLinkParser {
    /// The link's one-time code (`oob_code`), when it is a sign-in link.
    package static func oobCode(in link: String) -> String? {
        oobCode(in: link, depth: 0)
    }

    private static func oobCode(in link: String, depth: Int) -> String? {
        guard depth < 3, let components = URLComponents(string: link.trimmingCharacters(in: .whitespacesAndNewlines)),
              components.scheme != nil else { return nil }
        var items = components.queryItems ?? []
        if let fragment = components.fragment, let fromFragment = URLComponents(string: "?" + fragment)?.queryItems {
            items += fromFragment
        }
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        if value("mode") == "signIn", let code = value("oob_code"), !code.isEmpty { return code }
        for wrapper in ["link", "deep_link_id"] {
            if let inner = value(wrapper), let code = oobCode(in: inner, depth: depth + 1) { return code }
        }
        return nil
    }
}
