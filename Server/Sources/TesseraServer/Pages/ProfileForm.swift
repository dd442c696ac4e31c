import TesseraCore
import TesseraDomain

/// The account page's profile form: one field per claim, a group of fields per structured
/// claim (an address's street, city, postal code…), typed by the claim's shape; and the
/// changes a posted form makes. Field names are `claim.NAME` and `claim.NAME.MEMBER`; the form
/// lists the claims it holds in `fields` (forms leave empty fields out, and an empty field
/// means "remove"), so a claim it doesn't list (a sensitive one shown read-only) stays as it is.
struct ProfileForm {
    static let prefix = "claim."

    /// The claims offered to everyone, in this order; any other claim the person has follows.
    static let offered = ["name", "given_name", "middle_name", "family_name", "nickname", "birthdate", "gender", "phone_number", "address"]

    /// The claims the form shows for `user`.
    static func claims(of user: User) -> [String] {
        let others = user.profile.keys.filter { SelfService.isEditable($0) && !offered.contains($0) }
        return offered + others.sorted { ScopeCatalogue.claimsSupported.firstIndex(of: $0) ?? 0 < ScopeCatalogue.claimsSupported.firstIndex(of: $1) ?? 0 }
    }

    /// The changes a posted form makes to the profile (`null`: removed), for the claims it lists.
    static func changes(from form: RequestParameters, claims: [String]) -> [String: JSONValue] {
        let listed = Set((form["fields"] ?? "").split(separator: " ").map(String.init))
        var changes: [String: JSONValue] = [:]
        for claim in claims where listed.contains(claim) {
            guard let shape = ScopeCatalogue.claim(claim)?.shape else { continue }
            if case .object(let members) = shape {
                var object: [String: JSONValue] = [:]
                for (member, memberShape) in members {
                    if let value = value(form[prefix + claim + "." + member] ?? "", memberShape) { object[member] = value }
                }
                changes[claim] = object.isEmpty ? .null : .object(object)
            } else {
                changes[claim] = value(form[prefix + claim] ?? "", shape) ?? .null
            }
        }
        return changes
    }

    /// The `fields` value of the form: the claims it lets the person change now.
    static func listed(_ fields: [[String: Any]]) -> String {
        fields.filter { $0["locked"] as? Bool != true }.compactMap { ($0["id"] as? String)?.dropFirst("claim-".count) }.joined(separator: " ")
    }

    /// What was typed, as the claim's JSON value; nil for nothing typed.
    static func value(_ text: String, _ shape: ClaimShape) -> JSONValue? {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return nil }
        switch shape {
        case .integer, .integerEnum: return Int64(text).map(JSONValue.int) ?? .string(text)
        case .boolean: return text == "true" ? .bool(true) : text == "false" ? .bool(false) : .string(text)
        default: return .string(text)
        }
    }

    /// The fields of `claims`: their values from `typed` (a refused form, shown again) or the
    /// profile, each problem next to its claim, sensitive ones read-only without a recent sign-in.
    static func fields(_ claims: [String], user: User, typed: RequestParameters?, problems: [String: String], recentSignIn: Bool,
                       language: PageLanguage) -> [[String: Any]] {
        var firstError = true
        return claims.compactMap { claim -> [String: Any]? in
            guard let shape = ScopeCatalogue.claim(claim)?.shape else { return nil }
            let locked = ScopeCatalogue.isSensitive(claim: claim) && !recentSignIn
            var item: [String: Any] = ["id": "claim-" + claim, "label": language.claimLabel(claim), "locked": locked]
            if let problem = problems[claim] {
                item["error"] = language.text(.attributeInvalid).replacingOccurrences(of: "{reason}", with: problem)
                item["autofocus"] = firstError
                firstError = false
            }
            if ScopeCatalogue.isSensitive(claim: claim) { item["sensitive"] = language.text(.scopeSensitive) }
            let current = user.profile[claim]
            if case .object(let members) = shape {
                let object = current?.objectValue ?? [:]
                item["group"] = true
                item["fields"] = orderedMembers(members).map { member, memberShape -> [String: Any] in
                    let name = prefix + claim + "." + member
                    let value = typed?[name] ?? object[member].map(display) ?? ""
                    return input(name: name, id: "claim-\(claim)-\(member)", label: language.memberLabel(member), shape: memberShape,
                                 value: value, locked: locked, language: language)
                }
            } else {
                let name = prefix + claim
                item.merge(input(name: name, id: "claim-" + claim, label: language.claimLabel(claim), shape: shape,
                                 value: typed?[name] ?? current.map(display) ?? "", locked: locked, language: language)) { old, _ in old }
            }
            return item
        }
    }

    static func input(name: String, id: String, label: String, shape: ClaimShape, value: String, locked: Bool,
                      language: PageLanguage) -> [String: Any] {
        var field: [String: Any] = ["name": name, "id": id, "label": label, "value": value, "locked": locked]
        switch shape {
        case .integerEnum(let values):
            field["select"] = true
            field["options"] = ([""] + values.map(String.init)).map { option in
                ["value": option, "text": language.optionLabel(name: name, value: option), "selected": option == value] as [String: Any]
            }
        case .boolean:
            field["select"] = true
            field["options"] = ["", "true", "false"].map { option in
                ["value": option, "text": language.optionLabel(name: name, value: option), "selected": option == value] as [String: Any]
            }
        default:
            field["type"] = switch shape {
            case .date: "date"
            case .integer: "number"
            case .url: "url"
            case .email: "email"
            case .phone: "tel"
            default: "text"
            }
            field["autocomplete"] = autocomplete[String(name.dropFirst(prefix.count))] ?? "off"
        }
        return field
    }

    /// HTML autocomplete tokens, so browsers fill the common claims in.
    static let autocomplete = [
        "name": "name", "given_name": "given-name", "middle_name": "additional-name", "family_name": "family-name",
        "nickname": "nickname", "birthdate": "bday", "phone_number": "tel", "address.street_address": "street-address",
        "address.locality": "address-level2", "address.region": "address-level1", "address.postal_code": "postal-code",
        "address.country": "country-name", "website": "url",
    ]

    static func display(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): text
        case .int(let number): String(number)
        case .bool(let flag): flag ? "true" : "false"
        default: ""
        }
    }

    /// A structured claim's members in the order people fill them in.
    static func orderedMembers(_ members: [String: ClaimShape]) -> [(String, ClaimShape)] {
        members.sorted { a, b in
            let i = memberOrder.firstIndex(of: a.key) ?? memberOrder.count, j = memberOrder.firstIndex(of: b.key) ?? memberOrder.count
            return i != j ? i < j : a.key < b.key
        }
    }

    static let memberOrder = [
        "formatted", "full_address", "street_address", "street", "house", "building", "bulk", "apartment", "settlement", "city",
        "district", "locality", "region", "post_index", "postal_code", "country", "fias_code", "type", "series", "number", "issued_by",
        "issued_date", "planned_end_date", "code", "name", "surname", "country_code", "country_name", "description",
    ]
}
