import Foundation
import Testing
import TesseraCore
import TesseraTestSupport
@testable import TesseraServer

/// The hosted pages' templates: every file is compiled in (a page the server renders but the
/// binary lacks would stop the request on a precondition), and the forms are labelled.
@Suite("Page templates")
struct PageTemplateTests {
    @Test("every template in Resources/pages is compiled in and parses")
    func everyTemplateIsCompiledIn() throws {
        let folder = Documents.root.appendingPathComponent("Sources/TesseraServer/Resources/pages")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".mustache") }
        #expect(!files.isEmpty)
        #expect(Set(files.map { String($0.dropLast(".mustache".count)) }) == Set(Templates.all.keys))
        _ = try PageRenderer()
    }

    @Test("the new-password page: labelled, new-password autocomplete, the error tied to the field, the password never typed back")
    func newPassword() throws {
        let html = try PageRenderer().newPassword(language: .en, clientName: "Shop", interaction: "i", csrf: "c", flow: "f",
                                                  email: "ada@example.com", minimumLength: 8, message: "Too common.")
        #expect(html.contains(#"<label for="password">New password</label>"#))
        #expect(html.contains(#"autocomplete="new-password""#) && html.contains(#"aria-invalid="true""#))
        #expect(html.contains(#"aria-describedby="form-error password-rules""#))
        #expect(html.contains(#"value="ada@example.com" autocomplete="username""#))
        #expect(!html.contains(#"name="password" value"#))
        let russian = try PageRenderer().newPassword(language: .ru, clientName: "Shop", interaction: "i", csrf: "c", flow: "f", email: "",
                                                     minimumLength: 8, message: nil)
        #expect(russian.contains("Придумайте новый пароль") && !russian.contains("aria-invalid"))
    }
}
