/// Text in the languages of the hosted pages.
public struct LocalizedText: Sendable, Hashable {
    /// The English text.
    public let en: String
    /// The Russian text.
    public let ru: String
    /// Makes a text from its English and Russian versions.
    public init(en: String, ru: String) { self.en = en; self.ru = ru }
    /// The Russian text when `language` is `ru`, else the English one.
    public func text(_ language: String) -> String { language == "ru" ? ru : en }
}

/// A claim the provider can release, and the shape of its value.
public struct ClaimDefinition: Sendable, Hashable {
    /// The claim's name as released, e.g. `family_name` (OpenID Connect Core §5.1).
    public let name: String
    /// The shape every value of the claim must have.
    public let shape: ClaimShape
    /// Maintained by the provider (the account's email, its verification, the update time),
    /// never written through a profile.
    public let managed: Bool
    init(_ name: String, _ shape: ClaimShape, managed: Bool = false) {
        self.name = name
        self.shape = shape
        self.managed = managed
    }
    public static func == (a: ClaimDefinition, b: ClaimDefinition) -> Bool { a.name == b.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// A scope value, the claims it releases (OpenID Connect Core §5.4, Sber ID's scope table),
/// whether it is sensitive, and what the consent page says it shares.
public struct ScopeDefinition: Sendable, Hashable {
    /// The scope value as it appears in `scope` (RFC 6749 §3.3), e.g. `profile`.
    public let name: String
    /// The names of the claims the scope releases; empty for `offline_access` and `device_sso`.
    public let claims: [String]
    /// Sensitive scopes (documents, tax numbers, addresses, ...) always need the user's
    /// explicit consent, even for first-party clients.
    public let sensitive: Bool
    /// What the consent page says the scope shares.
    public let description: LocalizedText

    init(_ name: String, _ claims: [String], sensitive: Bool = false, en: String, ru: String) {
        self.name = name
        self.claims = claims
        self.sensitive = sensitive
        self.description = LocalizedText(en: en, ru: ru)
    }
}

/// The one table of scopes and claims, shared by the server and the SDK.
public enum ScopeCatalogue {
    /// `openid`: makes the request an OpenID Connect one and releases `sub` (OpenID Connect Core §3.1.2.1).
    public static let openid = "openid"
    /// `offline_access`: asks for a refresh token (OpenID Connect Core §11).
    public static let offlineAccess = "offline_access"
    /// OpenID Connect Native SSO for Mobile Apps: the token response carries a `device_secret`
    /// that the vendor's other apps on the device can exchange for their own tokens.
    public static let deviceSSO = "device_sso"

    static let address: ClaimShape = .object(Dictionary(uniqueKeysWithValues: [
        "full_address", "fias_code", "post_index", "country", "region", "district", "city", "settlement", "street", "house",
        "building", "bulk", "apartment",
    ].map { ($0, ClaimShape.string) }))
    static func document(_ members: [String: ClaimShape]) -> ClaimShape { .object(members) }
    static let number: ClaimShape = .object(["number": .string])

    /// Every claim, standard ones first (OpenID Connect Core §5.1), then Sber ID's.
    public static let claims: [ClaimDefinition] = [
        ClaimDefinition("sub", .string, managed: true),
        ClaimDefinition("name", .string),
        ClaimDefinition("family_name", .string),
        ClaimDefinition("given_name", .string),
        ClaimDefinition("middle_name", .string),
        ClaimDefinition("nickname", .string),
        ClaimDefinition("preferred_username", .string),
        ClaimDefinition("profile", .url),
        ClaimDefinition("picture", .url),
        ClaimDefinition("website", .url),
        ClaimDefinition("gender", .integerEnum([1, 2])),
        ClaimDefinition("birthdate", .date),
        ClaimDefinition("zoneinfo", .string),
        ClaimDefinition("locale", .string),
        ClaimDefinition("updated_at", .integer, managed: true),
        ClaimDefinition("email", .email, managed: true),
        ClaimDefinition("email_verified", .boolean, managed: true),
        ClaimDefinition("phone_number", .phone),
        ClaimDefinition("phone_number_verified", .boolean),
        ClaimDefinition("address", .object(["formatted": .string, "street_address": .string, "locality": .string,
                                            "region": .string, "postal_code": .string, "country": .string])),
        ClaimDefinition("identification", document(["series": .string, "number": .string, "issued_by": .string,
                                                    "issued_date": .date, "code": .string])),
        ClaimDefinition("inn", number),
        ClaimDefinition("snils", number),
        ClaimDefinition("driving_license", number),
        ClaimDefinition("international_passport", document(["series": .string, "number": .string, "issued_by": .string,
                                                            "issued_date": .date, "planned_end_date": .date, "name": .string,
                                                            "surname": .string])),
        ClaimDefinition("priority_doc", document(["type": .integer, "series": .string, "number": .string, "issued_by": .string,
                                                  "issued_date": .date, "code": .string])),
        ClaimDefinition("citizenship", .object(["country_code": .string, "country_name": .string])),
        ClaimDefinition("place_of_birth", .string),
        ClaimDefinition("address_reg", address),
        ClaimDefinition("work_address", address),
        ClaimDefinition("address_of_actual_residence", address),
        ClaimDefinition("delivery_address", address),
        ClaimDefinition("is_company_employee", .boolean),
        ClaimDefinition("sts", number),
        ClaimDefinition("is_self_employed", .boolean),
        ClaimDefinition("previous_identification", document(["series": .string, "number": .string, "issued_by": .string,
                                                             "issued_date": .date])),
        ClaimDefinition("previous_family_name", .string),
        ClaimDefinition("previous_given_name", .string),
        ClaimDefinition("previous_middle_name", .string),
        ClaimDefinition("education", .object(["code": .string, "description": .string])),
        ClaimDefinition("place_of_work", .string),
        ClaimDefinition("job_title", .string),
        ClaimDefinition("marital_status", .object(["code": .string, "description": .string])),
        ClaimDefinition("proposition", .boolean),
        ClaimDefinition("salary_status", .boolean),
    ]

    /// Every scope: OpenID Connect's (§5.4) and then Sber ID's (seed 000), with the claims each releases.
    public static let all: [ScopeDefinition] = [
        ScopeDefinition("openid", ["sub"], en: "Your account identifier", ru: "Идентификатор вашей учётной записи"),
        ScopeDefinition("profile", ["name", "family_name", "given_name", "middle_name", "nickname", "preferred_username", "profile",
                                    "picture", "website", "gender", "birthdate", "zoneinfo", "locale", "updated_at"],
                        en: "Your name and profile: name, nickname, picture, gender, date of birth, language",
                        ru: "Имя и профиль: имя, псевдоним, фото, пол, дата рождения, язык"),
        ScopeDefinition("email", ["email", "email_verified"], en: "Your email address", ru: "Адрес электронной почты"),
        ScopeDefinition("address", ["address"], sensitive: true, en: "Your postal address", ru: "Почтовый адрес"),
        ScopeDefinition("phone", ["phone_number", "phone_number_verified"], en: "Your phone number", ru: "Номер телефона"),
        ScopeDefinition("offline_access", [], en: "Access to your data while you are not using the app",
                        ru: "Доступ к данным, когда вы не пользуетесь приложением"),
        ScopeDefinition("device_sso", [], en: "Signing you in to this provider's other apps on this device",
                        ru: "Вход в другие приложения этого поставщика на этом устройстве"),
        ScopeDefinition("name", ["family_name", "given_name", "middle_name"],
                        en: "Last name, first name, middle name", ru: "Фамилия, Имя, Отчество"),
        ScopeDefinition("birthdate", ["birthdate"], en: "Date of birth", ru: "Дата рождения"),
        ScopeDefinition("maindoc", ["identification"], sensitive: true,
                        en: "Passport details: series, number, issuing authority, date of issue, division code",
                        ru: "Паспортные данные: серия, номер, кем и когда выдан, код подразделения"),
        ScopeDefinition("inn", ["inn"], sensitive: true, en: "Taxpayer number (INN)", ru: "ИНН"),
        ScopeDefinition("snils", ["snils"], sensitive: true, en: "Insurance number (SNILS)", ru: "СНИЛС"),
        ScopeDefinition("mobile", ["phone_number"], en: "Mobile phone number", ru: "Номер мобильного телефона"),
        ScopeDefinition("gender", ["gender"], en: "Gender", ru: "Пол"),
        ScopeDefinition("driving_license", ["driving_license"], sensitive: true,
                        en: "Driving licence number", ru: "Номер водительского удостоверения"),
        ScopeDefinition("international_passport", ["international_passport"], sensitive: true,
                        en: "International passport details", ru: "Данные заграничного паспорта"),
        ScopeDefinition("priority_doc", ["priority_doc"], sensitive: true,
                        en: "Identity document: type, series, number, issuing authority, date of issue", ru: "Данные документа, удостоверяющего личность"),
        ScopeDefinition("citizenship", ["citizenship"], sensitive: true, en: "Citizenship", ru: "Гражданство"),
        ScopeDefinition("place_of_birth", ["place_of_birth"], sensitive: true, en: "Place of birth", ru: "Место рождения"),
        ScopeDefinition("address_reg", ["address_reg"], sensitive: true, en: "Registered address", ru: "Адрес регистрации"),
        ScopeDefinition("work_address", ["work_address"], sensitive: true, en: "Work address", ru: "Рабочий адрес"),
        ScopeDefinition("address_of_actual_residence", ["address_of_actual_residence"], sensitive: true,
                        en: "Address where you actually live", ru: "Адрес места жительства"),
        ScopeDefinition("delivery_address", ["delivery_address"], sensitive: true, en: "Delivery address", ru: "Адрес для доставки"),
        ScopeDefinition("is_company_employee", ["is_company_employee"],
                        en: "Whether you work for the company that runs this service", ru: "Признак сотрудника компании"),
        ScopeDefinition("sts", ["sts"], sensitive: true, en: "Vehicle registration certificate (STS) number", ru: "Номер СТС"),
        ScopeDefinition("is_self_employed", ["is_self_employed"], en: "Whether you are self-employed", ru: "Признак самозанятого"),
        ScopeDefinition("previous_maindoc", ["previous_identification"], sensitive: true,
                        en: "Details of your previous passport", ru: "Реквизиты ранее выданного паспорта"),
        ScopeDefinition("previous_name", ["previous_family_name", "previous_given_name", "previous_middle_name"], sensitive: true,
                        en: "Previous last name, first name, middle name", ru: "Предыдущие фамилия, имя, отчество"),
        ScopeDefinition("education", ["education"], en: "Education", ru: "Сведения об образовании"),
        ScopeDefinition("place_of_work", ["place_of_work"], en: "Employer (place of work)", ru: "Наименование организации (место работы)"),
        ScopeDefinition("job_title", ["job_title"], en: "Job title", ru: "Наименование должности"),
        ScopeDefinition("marital_status", ["marital_status"], en: "Marital status", ru: "Семейное положение"),
        ScopeDefinition("proposition", ["proposition"], en: "Information for personalised offers",
                        ru: "Сведения для формирования рекламных предложений"),
        ScopeDefinition("salary_status", ["salary_status"], en: "Whether you are paid your salary through this bank (payroll client)",
                        ru: "Признак зарплатного клиента"),
    ]

    static let scopesByName: [String: ScopeDefinition] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
    static let claimsByName: [String: ClaimDefinition] = Dictionary(uniqueKeysWithValues: claims.map { ($0.name, $0) })

    /// The definition of `scope`, or nil when the table has no such scope.
    public static func definition(_ scope: String) -> ScopeDefinition? { scopesByName[scope] }

    static let positions: [String: Int] = Dictionary(uniqueKeysWithValues: all.enumerated().map { ($1.name, $0) })

    /// A scope's place in the table, for listing scopes in a stable order; unknown scopes go last.
    public static func order(_ scope: String) -> Int { positions[scope] ?? all.count }
    /// The definition of the claim called `name`, or nil when the table has no such claim.
    public static func claim(_ name: String) -> ClaimDefinition? { claimsByName[name] }

    /// Every claim any scope can release, in table order.
    public static var claimsSupported: [String] { claims.map(\.name) }

    /// The claims released by a set of scopes.
    public static func claims(for scopes: some Sequence<String>) -> Set<String> {
        Set(scopes.compactMap { scopesByName[$0] }.flatMap(\.claims))
    }

    /// A profile with the empty optional members of its structured claims dropped: an address
    /// without a building or a settlement comes from most sources as `"building": ""`, which
    /// means "none", not a value to refuse. A structured claim left with no members goes too.
    public static func normalised(profile: [String: JSONValue]) -> [String: JSONValue] {
        profile.compactMapValues { value in
            guard case .object(let members) = value else { return value }
            let kept = members.filter { _, member in member != .null && member != .string("") }
            return kept.isEmpty ? nil : .object(kept)
        }
    }

    /// Claims that only sensitive scopes release (documents, tax numbers, addresses): their
    /// owner changes them only after a recent sign-in.
    static let sensitiveClaims: Set<String> = {
        let plain = Set(all.filter { !$0.sensitive }.flatMap(\.claims))
        return Set(all.filter(\.sensitive).flatMap(\.claims)).subtracting(plain)
    }()

    /// Whether only sensitive scopes release the claim, so its owner changes it only after a recent sign-in.
    public static func isSensitive(claim: String) -> Bool { sensitiveClaims.contains(claim) }

    /// Checks a profile (claims by name) before it is stored. Managed and unknown claims
    /// and values of the wrong shape are refused, with the claim named.
    public static func validate(profile: [String: JSONValue]) throws(ClaimValidationError) {
        for (name, value) in profile.sorted(by: { $0.key < $1.key }) {
            guard let claim = claimsByName[name] else { throw ClaimValidationError(claim: name, reason: "is not a known claim") }
            guard !claim.managed else { throw ClaimValidationError(claim: name, reason: "is maintained by the server and can't be set") }
            if let problem = claim.shape.problem(with: value) { throw ClaimValidationError(claim: name, reason: problem) }
        }
    }
}

/// A profile value that doesn't fit its claim.
public struct ClaimValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name of the claim refused.
    public let claim: String
    /// Why it was refused, worded to follow the claim's name, e.g. `must not be empty`.
    public let reason: String
    public var description: String { "claim '\(claim)' \(reason)" }
}
