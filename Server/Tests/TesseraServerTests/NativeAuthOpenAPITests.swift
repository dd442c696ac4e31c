import Foundation
import Testing
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraSQL
import TesseraTestSupport

/// docs/native-auth.openapi.json, read from the package.
func openAPIDocumentFile() throws -> [String: JSONValue] {
    let data = try Data(contentsOf: Documents.root.appendingPathComponent("docs/native-auth.openapi.json"))
    return try JSONDecoder().decode([String: JSONValue].self, from: data)
}

@Suite("Native sign-in API's OpenAPI document")
struct NativeAuthOpenAPITests {
    @Test("the served document is docs/native-auth.openapi.json (run scripts/generate-openapi-source after editing it)")
    func embeddedDocumentMatchesTheFile() throws {
        let embedded = try JSONDecoder().decode([String: JSONValue].self, from: Data(NativeAuthOpenAPI.document.utf8))
        #expect(embedded == (try openAPIDocumentFile()))
        #expect(embedded["openapi"]?.stringValue?.hasPrefix("3.1") == true)
    }

    @Test("GET /openapi/native-auth.json serves the document as JSON")
    func served() async throws {
        try await withNativeApp { app in
            let response = try await app.browser.request(TesseraPath.nativeAuthOpenAPI)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect(response.json == (try openAPIDocumentFile()))
        }
    }

    @Test("every native endpoint is described as a form POST taking client_id, with the reference's error answers")
    func everyPathIsDescribed() throws {
        let paths = try #require(try openAPIDocumentFile()["paths"]?.objectValue)
        for endpoint in NativeAuthEndpoint.allCases {
            let post = try #require(paths[endpoint.path]?.objectValue?["post"]?.objectValue, "\(endpoint.path) is not in the document")
            let schema = post["requestBody"]?.objectValue?["content"]?.objectValue?["application/x-www-form-urlencoded"]?
                .objectValue?["schema"]?.objectValue
            #expect(schema?["required"]?.arrayValue?.contains("client_id") == true, "\(endpoint.path)")
            let responses = try #require(post["responses"]?.objectValue)
            for status in ["200", "400", "401", "500"] {
                #expect(responses[status] != nil, "\(endpoint.path) lacks \(status)")
            }
        }
        #expect(paths[TesseraPath.nativeAuthOpenAPI]?.objectValue?["get"] != nil)
        #expect(Set(paths.keys) == Set(NativeAuthEndpoint.allCases.map(\.path) + [TesseraPath.nativeAuthOpenAPI]),
                "the document describes exactly the served paths")
    }
}
