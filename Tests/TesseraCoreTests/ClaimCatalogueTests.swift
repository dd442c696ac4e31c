import Foundation
import Testing
@testable import TesseraCore

@Suite("Scope and claim catalogue")
struct ClaimCatalogueTests {
    static let seedScopes = [
        "name", "birthdate", "maindoc", "inn", "snils", "mobile", "email", "gender", "driving_license", "international_passport",
        "priority_doc", "citizenship", "place_of_birth", "address_reg", "work_address", "address_of_actual_residence",
        "delivery_address", "is_company_employee", "sts", "is_self_employed", "previous_maindoc", "previous_name", "education",
        "place_of_work", "job_title", "marital_status", "proposition", "salary_status",
    ]

    @Test("every Sber ID and OpenID scope is in the table, with claims that exist")
    func completeness() {
        for scope in Self.seedScopes + ["openid", "profile", "email", "phone", "address", "offline_access"] {
            #expect(ScopeCatalogue.definition(scope) != nil, "\(scope)")
        }
        for scope in ScopeCatalogue.all {
            for claim in scope.claims { #expect(ScopeCatalogue.claim(claim) != nil, "\(scope.name) → \(claim)") }
            #expect(!scope.description.en.isEmpty && !scope.description.ru.isEmpty)
        }
    }

    @Test("seed scopes release the claim names of the seed table")
    func seedClaimNames() {
        #expect(ScopeCatalogue.definition("name")?.claims == ["family_name", "given_name", "middle_name"])
        #expect(ScopeCatalogue.definition("maindoc")?.claims == ["identification"])
        #expect(ScopeCatalogue.definition("mobile")?.claims == ["phone_number"])
        #expect(ScopeCatalogue.definition("previous_maindoc")?.claims == ["previous_identification"])
        #expect(ScopeCatalogue.definition("previous_name")?.claims == ["previous_family_name", "previous_given_name", "previous_middle_name"])
    }

    @Test("documents, tax numbers and addresses are sensitive; the name is not")
    func sensitivity() {
        for scope in ["maindoc", "inn", "snils", "international_passport", "address_reg", "delivery_address", "address"] {
            #expect(ScopeCatalogue.definition(scope)?.sensitive == true, "\(scope)")
        }
        for scope in ["openid", "name", "email", "profile"] { #expect(ScopeCatalogue.definition(scope)?.sensitive == false, "\(scope)") }
    }

    @Test("the seed's example values are accepted")
    func seedExamples() throws {
        let profile: [String: JSONValue] = [
            "family_name": "Иванова", "given_name": "Анна", "middle_name": "Сергеевна", "birthdate": "1990-05-01",
            "identification": .object(["series": "45 08", "number": "123456", "issued_by": "ОВД", "issued_date": "2010-02-03", "code": "770-001"]),
            "inn": .object(["number": "7700000000"]), "snils": .object(["number": "112-233-445 95"]),
            "phone_number": "+7 (912) 345-67-89", "gender": 2, "driving_license": .object(["number": "111111"]),
            "priority_doc": .object(["type": 17, "series": "777", "number": "333", "issued_by": "x", "issued_date": "1981-01-01", "code": "a"]),
            "citizenship": .object(["country_code": "RU", "country_name": "Россия"]), "place_of_birth": "Новосибирск",
            "address_reg": .object(["full_address": "Москва, ул. Ленина, 1", "city": "Москва", "post_index": "101000"]),
            "is_company_employee": true, "is_self_employed": false, "proposition": true, "salary_status": false,
            "education": .object(["code": "1", "description": "начальное"]), "marital_status": .object(["code": "1", "description": "холост"]),
            "place_of_work": "ПАО", "job_title": "инженер", "sts": .object(["number": "00 00 00000"]),
        ]
        try ScopeCatalogue.validate(profile: profile)
    }

    @Test("bad values are refused with the claim named", arguments: [
        ("birthdate", JSONValue.string("01.05.1990")), ("birthdate", "1990-02-30"), ("gender", 3), ("gender", "male"),
        ("inn", .object(["number": "1", "extra": "x"])), ("inn", "7700"), ("identification", .object(["issued_date": "yesterday"])),
        ("email", "mallory@example.com"), ("email_verified", true), ("picture", "javascript:alert(1)"), ("favourite_colour", "red"),
        ("is_self_employed", "yes"), ("family_name", ""), ("address_reg", .object([:])),
    ])
    func refusals(claim: String, value: JSONValue) {
        #expect(throws: ClaimValidationError.self) { try ScopeCatalogue.validate(profile: [claim: value]) }
        do { try ScopeCatalogue.validate(profile: [claim: value]) } catch { #expect(error.claim == claim) }
    }

    @Test("the claims parameter parses per OpenID Connect Core §5.5 and refuses other JSON")
    func claimsParameter() throws {
        let request = try ClaimsRequest(parsing: #"{"id_token": {"email": {"essential": true}, "sub": {"value": "u1"}}, "userinfo": {"birthdate": null}}"#)
        #expect(request.allClaims == ["email", "sub", "birthdate"])
        #expect(request.essentialClaims == ["email"])
        #expect((request.idToken?["sub"] ?? nil)?.value == "u1")
        #expect(request.userinfo?.keys.contains("birthdate") == true)
        #expect(throws: OAuthError.self) { try ClaimsRequest(parsing: "[1]") }
        #expect(throws: OAuthError.self) { try ClaimsRequest(parsing: #"{"id_token": "email"}"#) }
    }

    @Test("a real address without a building or settlement is accepted: empty members of a structured claim are dropped")
    func emptyMembersAreDropped() throws {
        let address: JSONValue = .object(["full_address": .string("Москва, ул. Тверская, д. 1"), "city": .string("Москва"),
                                          "street": .string("Тверская"), "house": .string("1"), "building": .string(""),
                                          "bulk": .string(""), "settlement": .null])
        let profile = ScopeCatalogue.normalised(profile: ["address_reg": address, "name": .string("Анна"),
                                                          "work_address": .object(["building": .string("")])])
        #expect(profile["address_reg"] == .object(["full_address": .string("Москва, ул. Тверская, д. 1"), "city": .string("Москва"),
                                                   "street": .string("Тверская"), "house": .string("1")]))
        #expect(profile["work_address"] == nil)
        #expect(profile["name"] == .string("Анна"))
        try ScopeCatalogue.validate(profile: profile)
        // Without normalising, the empty building is refused, naming it.
        #expect(throws: ClaimValidationError.self) { try ScopeCatalogue.validate(profile: ["address_reg": address]) }
        // A top-level empty string is still refused: it is a value, not an absent member.
        #expect(throws: ClaimValidationError.self) { try ScopeCatalogue.validate(profile: ScopeCatalogue.normalised(profile: ["name": .string("")])) }
    }
}
