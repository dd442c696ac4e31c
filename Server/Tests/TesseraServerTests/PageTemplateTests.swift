import Foundation
import Testing
import TesseraCore
import TesseraTestSupport
import TesseraDomain
import TesseraServer

/// The hosted pages' templates: every file is compiled in (a page the server renders but the
/// binary lacks would stop the request on a precondition), and the forms are labelled.
@Suite("Page templates")
struct PageTemplateTests {
    @Test("every template in Resources/pages is compiled in and parses")
    func everyTemplateIsCompiledIn() throws {
        let folder = Documents.root.appendingPathComponent("Server/Sources/TesseraServer/Resources/pages")
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

    /// A folder of its own for a test's files.
    func folder(_ files: [String: String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-pages-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for (name, text) in files { try text.write(toFile: path + "/" + name, atomically: true, encoding: .utf8) }
        return path
    }

    @Test("branding: the product name and logo in every page, a template of the pages folder in place of the built-in one")
    func branding() throws {
        var branding = Branding()
        branding.productName = "Acme ID"
        branding.accentColor = "#aa3300"
        branding.logoFile = try folder(["logo.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>"]) + "/logo.svg"
        branding.pagesDirectory = try folder(["footer.mustache": "<footer>Acme · {{lang}}</footer></main></body></html>"])
        let pages = try PageRenderer(branding: branding)
        let html = pages.newPassword(language: .en, clientName: "Shop", interaction: "i", csrf: "c", flow: "f", email: "", minimumLength: 8,
                                     message: nil)
        #expect(html.contains("<title>Choose a new password · Acme ID</title>"))
        #expect(html.contains(#"<img src="/assets/logo" alt="" class="logo">Acme ID"#))
        #expect(html.contains(#"<link rel="stylesheet" href="/assets/brand.css">"#))
        #expect(html.contains("<footer>Acme · en</footer>"))
        #expect(pages.brand.stylesheet?.contains("--accent: #aa3300") == true && pages.brand.logo?.contentType == "image/svg+xml")
        let plain = try PageRenderer().newPassword(language: .en, clientName: "Shop", interaction: "i", csrf: "c", flow: "f", email: "",
                                                   minimumLength: 8, message: nil)
        #expect(plain.contains("· Tessera</title>") && !plain.contains("brand.css") && !plain.contains("/assets/logo"))
    }

    @Test("branding refused at start, with the reason: an unknown template, one that doesn't compile, a logo of another kind")
    func brandingRefused() throws {
        func refusal(_ change: (inout Branding) throws -> Void) -> String? {
            var branding = Branding()
            do { try change(&branding); _ = try PageRenderer(branding: branding); return nil } catch let error as ConfigurationError {
                return error.description
            } catch { return "\(error)" }
        }
        #expect(refusal { $0.pagesDirectory = try folder(["logn.mustache": "x"]) }?.contains("logn.mustache is not a page template") == true)
        #expect(refusal { $0.pagesDirectory = try folder(["login.mustache": "{{#open}} never closed"]) }?.contains("login.mustache does not compile") == true)
        #expect(refusal { $0.pagesDirectory = "/no/such/folder" }?.contains("not a folder") == true)
        #expect(refusal { $0.logoFile = try folder(["logo.gif": "GIF89a"]) + "/logo.gif" }?.contains(".png, .svg") == true)
        #expect(refusal { $0.accentColor = "red" }?.contains("brand-color") == true)
    }
}
