import Mustache
import TesseraCore
import TesseraDomain

/// Renders the hosted pages from the compiled-in templates.
public struct PageRenderer: Sendable {
    let library: MustacheLibrary

    public init() throws {
        var library = MustacheLibrary()
        for (name, text) in Templates.all {
            try library.register(text, named: name)
        }
        self.library = library
    }

    func render(_ template: String, _ values: [String: Any], language: PageLanguage) -> String {
        // Mustache treats "" as true in sections: drop empty strings so `{{#x}}` means "x is set".
        var context = values.filter { ($0.value as? String) != "" }
        context["lang"] = language.rawValue
        guard let html = library.render(context, withTemplate: template) else {
            preconditionFailure("template \(template) is not compiled in")
        }
        return html
    }

    /// `linkAction`: where "email me a link" posts, when the page offers it.
    func login(language: PageLanguage, title: String? = nil, action: String = "/login", clientName: String?, interaction: String?, csrf: String,
               email: String?, message: String?, linkAction: String? = nil, codeAction: String? = nil,
               providers: [LoginProvider] = []) -> String {
        render("login", [
            "providers": providers.map { ["id": $0.id, "type": $0.type, "label": language.text(.continueWith) + " " + $0.name,
                                          "interaction": interaction ?? "", "csrf": csrf] as [String: Any] },
            "title": title ?? language.text(.signInTitle), "signInTo": language.text(.signInTo), "clientName": clientName ?? "",
            "action": action, "interaction": interaction ?? "", "csrf": csrf, "email": email ?? "", "message": message ?? "",
            "emailLabel": language.text(.email), "passwordLabel": language.text(.password), "submit": language.text(.signIn),
            "linkAction": linkAction ?? "", "or": language.text(.or), "emailLink": language.text(.emailMeALink),
            "codeAction": codeAction ?? "", "emailCode": language.text(.emailMeACode),
        ], language: language)
    }

    /// The hosted login's code step: where the code went, the field for it, and a new code.
    /// `flow` is the sign-in flow's continuation token, which the form carries to the next step.
    func signInCode(language: PageLanguage, clientName: String, interaction: String, csrf: String, flow: String, target: String,
                    codeLength: Int, minutes: Int, message: String?) -> String {
        render("code", [
            "title": language.text(.codeTitle), "signInTo": language.text(.signInTo), "clientName": clientName,
            "sentTo": language.text(.codeSentTo), "target": target,
            "validFor": language.text(.codeValidFor).replacingOccurrences(of: "{minutes}", with: String(minutes)),
            "interaction": interaction, "csrf": csrf, "flow": flow, "message": message ?? "", "codeLength": codeLength,
            "codeLabel": language.text(.codeLabel), "submit": language.text(.signIn), "resend": language.text(.codeResend),
            "verifyAction": LoginCodeEndpoints.verifyPath, "resendAction": LoginCodeEndpoints.resendPath,
        ], language: language)
    }

    /// "Confirm it's you": the account page asks a signed-in user whose sign-in is not recent
    /// for the password again, or offers a link to their address (`reason` says what for).
    func reauthenticate(language: PageLanguage, reason: PageLanguage.Key?, csrf: String, email: String, message: String?) -> String {
        render("login", [
            "providers": [[String: Any]](), "title": language.text(.reauthTitle), "intro": reason.map(language.text) ?? "", "clientName": "",
            "action": "/account/reauth", "interaction": "", "csrf": csrf, "email": email, "fixedEmail": true, "message": message ?? "",
            "emailLabel": language.text(.email), "passwordLabel": language.text(.password), "submit": language.text(.reauthSubmit),
            "linkAction": "/account/reauth/link", "or": language.text(.or), "emailLink": language.text(.emailMeALink),
        ], language: language)
    }

    func emailLinkSent(language: PageLanguage, email: String, minutes: Int) -> String {
        render("emaillinksent", [
            "title": language.text(.linkSentTitle), "intro": language.text(.linkSentIntro), "email": email,
            "instructions": language.text(.linkSentInstructions).replacingOccurrences(of: "{minutes}", with: String(minutes)),
            "notReceived": language.text(.linkSentNotReceived),
        ], language: language)
    }

    /// `email` is shown only on the device that asked for the link; elsewhere `askEmail`.
    func emailLinkConfirm(language: PageLanguage, action: String, oobCode: String, csrf: String, email: String?, message: String?) -> String {
        render("emaillinkconfirm", [
            "title": language.text(email == nil ? .linkConfirmEmailTitle : .signInTitle),
            "intro": language.text(email == nil ? .linkOtherDevice : .linkContinueAs), "email": email ?? "",
            "askEmail": email == nil, "action": action, "oobCode": oobCode, "csrf": csrf, "message": message ?? "",
            "emailLabel": language.text(.email), "submit": language.text(.signIn),
        ], language: language)
    }

    func continuePage(language: PageLanguage, url: String) -> String {
        render("continue", ["title": language.text(.formPostTitle), "continue": language.text(.formPostContinue), "url": url],
               language: language)
    }

    func message(language: PageLanguage, title: PageLanguage.Key, message: PageLanguage.Key, detail: String? = nil) -> String {
        render("message", ["title": language.text(title), "message": language.text(message), "detail": detail ?? ""], language: language)
    }

    func consent(language: PageLanguage, clientName: String, interaction: String, csrf: String, email: String, scopes: ScopeSet,
                 essential: Set<String>) -> String {
        let items: [[String: Any]] = scopes.values.map { scope in
            var item: [String: Any] = ["text": language.describe(scope: scope)]
            if ScopeCatalogue.definition(scope)?.sensitive == true { item["sensitive"] = language.text(.scopeSensitive) }
            if essential.contains(scope) { item["essential"] = language.text(.scopeEssential) }
            return item
        }
        return render("consent", [
            "title": language.text(.consentTitle), "clientName": clientName, "intro": language.text(.consentIntro),
            "scopes": items, "signedInAs": language.text(.consentSignedInAs),
            "email": email, "interaction": interaction, "csrf": csrf,
            "allow": language.text(.allow), "deny": language.text(.deny),
        ], language: language)
    }

    /// An error page: `intro` for the person (a general explanation unless given), the
    /// error's description as technical detail for the app's developer.
    func federationLink(language: PageLanguage, providerName: String, email: String, hasPassword: Bool, linkToken: String, csrf: String,
                        message: String?) -> String {
        render("federationlink", [
            "title": language.text(.linkTitle),
            "intro": language.text(.linkIntro).replacingOccurrences(of: "{provider}", with: providerName),
            "noPassword": language.text(.linkNoPassword).replacingOccurrences(of: "{provider}", with: providerName),
            "hasPassword": hasPassword, "linkToken": linkToken, "csrf": csrf, "email": email, "message": message ?? "",
            "emailLabel": language.text(.email), "passwordLabel": language.text(.password), "submit": language.text(.linkSubmit),
        ], language: language)
    }

    func account(language: PageLanguage, email: String, apps: [AccountPageApp], csrf: String,
                 identities: [[String: Any]] = [], connect: [LoginProvider] = []) -> String {
        render("account", [
            "identitiesTitle": language.text(.accountIdentities), "noIdentities": language.text(.accountNoIdentities),
            "identities": identities.map { $0.merging(["csrf": csrf, "remove": language.text(.accountRemoveIdentity)]) { a, _ in a } },
            "connect": connect.map { ["id": $0.id, "label": language.text(.connect) + " " + $0.name, "csrf": csrf] as [String: Any] },
            "deleteTitle": language.text(.accountDelete), "deleteConfirm": language.text(.accountDeleteConfirm),
            "deleteButton": language.text(.accountDeleteButton), "csrf": csrf,
            "title": language.text(.accountTitle), "signedInAs": language.text(.consentSignedInAs), "email": email,
            "appsTitle": language.text(.accountApps), "noApps": language.text(.accountNoApps),
            "apps": apps.map { ["name": $0.name, "clientID": $0.clientID, "scopes": $0.scopes, "csrf": csrf,
                                "revoke": language.text(.accountRevoke)] as [String: Any] },
            "signOut": language.text(.logoutConfirm),
        ], language: language)
    }

    func error(language: PageLanguage, error: OAuthError, intro: String? = nil) -> String {
        render("error", [
            "title": language.text(.errorTitle), "intro": intro ?? language.text(.errorIntro),
            "message": error.errorDescription ?? "", "detailsLabel": language.text(.errorDetails),
            "codeLabel": language.text(.errorCode), "code": error.code.rawValue,
        ], language: language)
    }

    /// `idTokenHint` goes back with the confirmation: a Native SSO device session it names ends too.
    func logout(language: PageLanguage, csrf: String, clientID: String?, postLogoutRedirectURI: String?, state: String?,
                idTokenHint: String? = nil) -> String {
        render("logout", [
            "title": language.text(.logoutTitle), "question": language.text(.logoutQuestion), "confirm": language.text(.logoutConfirm),
            "csrf": csrf, "clientID": clientID ?? "", "postLogoutRedirectURI": postLogoutRedirectURI ?? "", "state": state ?? "",
            "idTokenHint": idTokenHint ?? "",
        ], language: language)
    }

    func loggedOut(language: PageLanguage) -> String {
        render("loggedout", ["title": language.text(.loggedOutTitle), "message": language.text(.loggedOut)], language: language)
    }

    func formPost(language: PageLanguage, action: String, fields: [(String, String)], nonce: String) -> String {
        render("formpost", [
            "title": language.text(.formPostTitle), "continue": language.text(.formPostContinue), "action": action,
            "fields": fields.map { ["name": $0.0, "value": $0.1] }, "nonce": nonce,
        ], language: language)
    }
}
