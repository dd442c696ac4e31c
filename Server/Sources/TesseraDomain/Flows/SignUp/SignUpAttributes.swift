import Foundation
import TesseraCore

/// One attribute the sign-up collects, as the operator configured it
/// (`signup_attributes` in the config file, or `--signup-attributes JSON`).
///
/// It is stored as a profile claim: an attribute named like a claim of the catalogue
/// (`given_name`, `birthdate`) is that claim; Entra's built-in names are mapped
/// (`city` → `address.locality`, `surname` → `family_name`); `claim` names any other
/// target, a member of `address` included.
public struct SignUpAttribute: Sendable, Equatable, Codable {
    public var name: String
    /// The profile claim it fills: `given_name`, or `address.locality` for a member.
    public var claim: String
    public var required: Bool
    /// A regular expression the whole value must match (strings only).
    public var pattern: String?
    /// Sign-up screens are numbered from 1: `attributes_required` asks for one page at a time.
    public var page: Int

    enum CodingKeys: String, CodingKey { case name, claim, required, pattern, page }

    public init(name: String, claim: String? = nil, required: Bool = false, pattern: String? = nil, page: Int = 1) throws {
        self.name = name
        self.required = required
        self.pattern = pattern
        self.page = page
        self.claim = claim ?? Self.builtInClaims[name] ?? name
        try validate()
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(name: try container.decode(String.self, forKey: .name),
                      claim: try container.decodeIfPresent(String.self, forKey: .claim),
                      required: try container.decodeIfPresent(Bool.self, forKey: .required) ?? false,
                      pattern: try container.decodeIfPresent(String.self, forKey: .pattern),
                      page: try container.decodeIfPresent(Int.self, forKey: .page) ?? 1)
    }

    /// Entra External ID's built-in sign-up attributes, by the claim that holds each.
    static let builtInClaims: [String: String] = [
        "displayName": "name", "givenName": "given_name", "surname": "family_name", "jobTitle": "job_title",
        "city": "address.locality", "country": "address.country", "postalCode": "address.postal_code",
        "state": "address.region", "streetAddress": "address.street_address",
    ]

    /// The shape the claim (or the member of `address`) must have.
    var shape: ClaimShape? {
        let path = claim.split(separator: ".", maxSplits: 1).map(String.init)
        guard let definition = ScopeCatalogue.claim(path[0]), !definition.managed else { return nil }
        if path.count == 1 {
            if case .object = definition.shape { return nil }
            return definition.shape
        }
        guard case .object(let members) = definition.shape, let member = members[path[1]] else { return nil }
        return member
    }

    /// The `type` the app is told in `required_attributes`.
    package var type: String {
        switch shape {
        case .boolean: "boolean"
        case .integer, .integerEnum: "integer"
        case .date: "date"
        default: "string"
        }
    }

    func validate() throws {
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
            throw ConfigurationError("signup attribute '\(name)': a name is letters, digits and _")
        }
        guard shape != nil else {
            throw ConfigurationError("signup attribute '\(name)': '\(claim)' is not a profile claim (or address member) a user may set; "
                                     + "name one with \"claim\"")
        }
        guard page >= 1 else { throw ConfigurationError("signup attribute '\(name)': page numbers start at 1") }
        if let pattern {
            guard (try? NSRegularExpression(pattern: pattern)) != nil else {
                throw ConfigurationError("signup attribute '\(name)': '\(pattern)' is not a valid regular expression")
            }
        }
    }

    /// The value as the profile stores it, or why it is refused. Apps often send every
    /// attribute as a string, so `"true"` and `"42"` are accepted for booleans and integers.
    func value(from sent: JSONValue) -> Result<JSONValue, AttributeProblem> {
        guard let shape else { return .failure(AttributeProblem(name: name, reason: "is not collected here")) }
        var value = sent
        if case .string(let text) = sent {
            switch shape {
            case .boolean where ["true", "false"].contains(text.lowercased()): value = .bool(text.lowercased() == "true")
            case .integer, .integerEnum: if let number = Int64(text) { value = .int(number) }
            default: value = .string(text.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }
        if let problem = shape.problem(with: value) { return .failure(AttributeProblem(name: name, reason: problem)) }
        if case .string(let text) = value {
            if text.count > 256 { return .failure(AttributeProblem(name: name, reason: "must be at most 256 characters")) }
            if let pattern, let expression = try? NSRegularExpression(pattern: "^(?:\(pattern))$"),
               expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil {
                return .failure(AttributeProblem(name: name, reason: "does not have the expected format"))
            }
        }
        return .success(value)
    }
}

/// An attribute value the sign-up refuses, and why ("must be at most 256 characters").
package struct AttributeProblem: Error, Sendable, Equatable {
    package var name: String
    package var reason: String
}

/// The configured sign-up attributes, and how collected values become a profile.
public struct SignUpAttributes: Sendable, Equatable {
    public var attributes: [SignUpAttribute]

    public init(_ attributes: [SignUpAttribute] = []) throws {
        var seen = Set<String>(), claims = Set<String>()
        for attribute in attributes {
            guard seen.insert(attribute.name).inserted else { throw ConfigurationError("signup attribute '\(attribute.name)' is listed twice") }
            guard claims.insert(attribute.claim).inserted else {
                throw ConfigurationError("signup attributes: two attributes fill '\(attribute.claim)'")
            }
        }
        self.attributes = attributes
    }

    /// Parses the JSON array of the configuration.
    public init(json: String) throws {
        do {
            try self.init(try JSONDecoder().decode([SignUpAttribute].self, from: Data(json.utf8)))
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError("signup-attributes must be a JSON array of {\"name\", \"required\", \"pattern\", \"page\", \"claim\"} objects")
        }
    }

    /// Checks the attributes the app sent (a JSON object's members); returns the accepted
    /// values by attribute name, or every problem at once.
    func parse(_ object: [String: JSONValue]) -> Result<[String: JSONValue], FlowFailure> {
        var accepted: [String: JSONValue] = [:], problems: [AttributeProblem] = []
        let byName = Dictionary(uniqueKeysWithValues: attributes.map { ($0.name, $0) })
        for (name, sent) in object.sorted(by: { $0.key < $1.key }) {
            // As in the reference API, names the sign-up doesn't collect are ignored.
            guard let attribute = byName[name] else { continue }
            if sent == .null { continue }
            switch attribute.value(from: sent) {
            case .success(let value): accepted[name] = value
            case .failure(let problem): problems.append(problem)
            }
        }
        return problems.isEmpty ? .success(accepted) : .failure(.invalidAttributes(problems))
    }

    /// The required attributes still missing, of the first page that has any.
    func missing(from collected: [String: JSONValue]) -> [SignUpAttribute] {
        let missing = attributes.filter { $0.required && collected[$0.name] == nil }
        guard let page = missing.map(\.page).min() else { return [] }
        return missing.filter { $0.page == page }
    }

    /// The profile the collected attributes make.
    func profile(from collected: [String: JSONValue]) -> [String: JSONValue] {
        var profile: [String: JSONValue] = [:]
        for attribute in attributes {
            guard let value = collected[attribute.name] else { continue }
            let path = attribute.claim.split(separator: ".", maxSplits: 1).map(String.init)
            if path.count == 1 {
                profile[path[0]] = value
            } else {
                var object = profile[path[0]]?.objectValue ?? [:]
                object[path[1]] = value
                profile[path[0]] = .object(object)
            }
        }
        return profile
    }
}
