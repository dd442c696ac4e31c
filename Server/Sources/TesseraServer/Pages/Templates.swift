import Hummingbird
import NIOCore

/// The hosted pages' Mustache templates (`Resources/pages/*.mustache`) and stylesheet,
/// embedded in the binary by the build so that `tessera` runs from any directory. Every
/// value is HTML-escaped by Mustache.
///
/// The account page is a partial a section (`accountprofile`…, in the page's order): Mustache's
/// parser measures the rest of the text at every tag, so a template takes time quadratic in its
/// length to compile, and the page in one piece (10 kB, 261 tags) took 14 ms of the 27 every
/// page took together, on a node's way to ready; in sections, the pages take 16.
package enum Templates {
    package static let all: [String: String] = [
        "header": text(PackageResources.header_mustache), "footer": text(PackageResources.footer_mustache),
        "login": text(PackageResources.login_mustache), "consent": text(PackageResources.consent_mustache),
        "error": text(PackageResources.error_mustache), "logout": text(PackageResources.logout_mustache),
        "loggedout": text(PackageResources.loggedout_mustache), "formpost": text(PackageResources.formpost_mustache),
        "account": text(PackageResources.account_mustache),
        "accountprofile": text(PackageResources.accountprofile_mustache), "accountemail": text(PackageResources.accountemail_mustache),
        "accountpassword": text(PackageResources.accountpassword_mustache), "accountpasskeys": text(PackageResources.accountpasskeys_mustache),
        "accounttwostep": text(PackageResources.accounttwostep_mustache), "accountsessions": text(PackageResources.accountsessions_mustache),
        "accountapps": text(PackageResources.accountapps_mustache), "accountidentities": text(PackageResources.accountidentities_mustache),
        "accountdelete": text(PackageResources.accountdelete_mustache),
        "emaillinksent": text(PackageResources.emaillinksent_mustache),
        "emaillinkconfirm": text(PackageResources.emaillinkconfirm_mustache), "message": text(PackageResources.message_mustache),
        "federationlink": text(PackageResources.federationlink_mustache), "continue": text(PackageResources.continue_mustache),
        "code": text(PackageResources.code_mustache), "newpassword": text(PackageResources.newpassword_mustache),
        "signup": text(PackageResources.signup_mustache), "signupattributes": text(PackageResources.signupattributes_mustache),
        "adminheader": text(PackageResources.adminheader_mustache), "adminfooter": text(PackageResources.adminfooter_mustache),
        "adminusers": text(PackageResources.adminusers_mustache), "adminuser": text(PackageResources.adminuser_mustache),
        "adminclients": text(PackageResources.adminclients_mustache), "adminclient": text(PackageResources.adminclient_mustache),
        "adminkeys": text(PackageResources.adminkeys_mustache), "adminaudit": text(PackageResources.adminaudit_mustache),
        "secondfactor": text(PackageResources.secondfactor_mustache), "totpsetup": text(PackageResources.totpsetup_mustache),
        "recoverycodes": text(PackageResources.recoverycodes_mustache), "passkeyoffer": text(PackageResources.passkeyoffer_mustache),
    ]

    static let stylesheet = text(PackageResources.tessera_css)
    static let stylesheetPath = "/assets/tessera.css"

    /// The stylesheet, cacheable for an hour.
    static func stylesheetResponse() -> Response {
        Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "public, max-age=3600"],
                 body: .init(byteBuffer: ByteBuffer(string: stylesheet)))
    }

    /// The passkey ceremonies of the login and account pages (`Resources/pages/passkeys.js`).
    static let passkeysScript = text(PackageResources.passkeys_js)
    static let passkeysScriptPath = "/assets/passkeys.js"

    static func passkeysScriptResponse() -> Response {
        Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "public, max-age=3600",
                                        .xContentTypeOptions: "nosniff"],
                 body: .init(byteBuffer: ByteBuffer(string: passkeysScript)))
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
