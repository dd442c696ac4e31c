import Foundation

/// The languages of the hosted pages and the mail (the strings are where each is written).
public enum PageLanguage: String, Sendable, CaseIterable {
    case en, ru

    /// Picks a language: the first supported of `ui_locales`, then of `Accept-Language`, then English.
    public static func negotiate(uiLocales: [String], acceptLanguage: String?) -> PageLanguage {
        for tag in uiLocales {
            if let language = match(tag) { return language }
        }
        if let acceptLanguage {
            let ranked = acceptLanguage.split(separator: ",").compactMap { item -> (String, Double)? in
                let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                guard let tag = parts.first, !tag.isEmpty else { return nil }
                let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
                return (tag, q)
            }
            for (tag, q) in ranked.sorted(by: { $0.1 > $1.1 }) where q > 0 {
                if let language = match(tag) { return language }
            }
        }
        return .en
    }

    package static func match(_ tag: String) -> PageLanguage? {
        let primary = tag.lowercased().split(separator: "-").first.map(String.init) ?? ""
        return PageLanguage(rawValue: primary)
    }
}
