import Foundation
import Mustache
import TesseraCore
import TesseraDomain

/// Renders the hosted pages from the compiled-in templates.
public struct PageRenderer: Sendable {
    let library: MustacheLibrary
    package let brand: BrandAssets

    /// The built-in templates, each replaced by the one of its name in `branding`'s pages
    /// folder; a file there that is not a template's, or that doesn't compile, is refused with
    /// its name.
    public init(branding: Branding = Branding()) throws {
        library = try CompiledTemplates.shared.library(try Self.templates(branding: branding)) { name, error in
            ConfigurationError("pages-dir: \(name).mustache does not compile: \(error)")
        }
        brand = try BrandAssets(branding)
    }

    /// The templates of `branding`'s pages, by name.
    static func templates(branding: Branding) throws -> [String: String] {
        var templates = Templates.all
        if let folder = branding.pagesDirectory, !folder.isEmpty {
            for (name, text) in try Self.overrides(in: folder) { templates[name] = text }
        }
        return templates
    }

    /// The templates of `branding`'s pages, to compile ahead (``CompiledTemplates/compileAhead(_:)``);
    /// nil when they can't be read (the first ``init(branding:)`` says why).
    package static func compileAhead(branding: Branding) -> [String: String]? {
        try? templates(branding: branding)
    }

    /// The `NAME.mustache` files of `folder`, by name.
    static func overrides(in folder: String) throws -> [String: String] {
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            throw ConfigurationError("pages-dir '\(folder)' is not a folder this server can read")
        }
        var templates: [String: String] = [:]
        for file in files.sorted() where file.hasSuffix(".mustache") {
            let name = String(file.dropLast(".mustache".count))
            guard Templates.all[name] != nil else {
                throw ConfigurationError("pages-dir: \(file) is not a page template (known: \(Templates.all.keys.sorted().joined(separator: ", ")))")
            }
            guard let data = FileManager.default.contents(atPath: (folder as NSString).appendingPathComponent(file)) else {
                throw ConfigurationError("pages-dir: cannot read \(file)")
            }
            templates[name] = String(decoding: data, as: UTF8.self)
        }
        return templates
    }

    func render(_ template: String, _ values: [String: Any], language: PageLanguage) -> String {
        // Mustache treats "" as true in sections: drop empty strings so `{{#x}}` means "x is set".
        var context = brand.values.merging(values.filter { ($0.value as? String) != "" }) { _, page in page }
        context["lang"] = language.rawValue
        guard let html = library.render(context, withTemplate: template) else {
            preconditionFailure("template \(template) is not compiled in")
        }
        return html
    }

    /// `linkAction`: where "email me a link" posts, when the page offers it.
    func login(language: PageLanguage, title: String? = nil, action: String = "/login", clientName: String?, intro: String? = nil,
               interaction: String?, csrf: String,
               email: String?, message: String?, linkAction: String? = nil, codeAction: String? = nil, resetAction: String? = nil,
               signUpAction: String? = nil, providers: [LoginProvider] = [], passkeys: PasskeyForm? = nil) -> String {
        render("login", (passkeys?.values(language) ?? [:]).merging([
            "providers": providers.map { ["id": $0.id, "type": $0.type, "label": language.text(.continueWith) + " " + $0.name,
                                          "interaction": interaction ?? "", "csrf": csrf] as [String: Any] },
            "title": title ?? language.text(.signInTitle), "signInTo": language.text(.signInTo), "clientName": clientName ?? "",
            "intro": intro ?? "",
            "action": action, "interaction": interaction ?? "", "csrf": csrf, "email": email ?? "", "message": message ?? "",
            "emailLabel": language.text(.email), "passwordLabel": language.text(.password), "submit": language.text(.signIn),
            "linkAction": linkAction ?? "", "or": language.text(.or), "emailLink": language.text(.emailMeALink),
            "codeAction": codeAction ?? "", "emailCode": language.text(.emailMeACode),
            "resetAction": resetAction ?? "", "forgotPassword": language.text(.forgotPassword),
            "signUpAction": signUpAction ?? "", "createAccount": language.text(.createAccount),
        ]) { _, page in page }, language: language)
    }

    /// Where a page's passkey ceremony posts: its options, then the answer.
    struct PasskeyForm {
        var options: String
        var action: String
        static let login = PasskeyForm(options: PasskeyEndpoints.loginOptionsPath, action: PasskeyEndpoints.loginPath)
        static let account = PasskeyForm(options: PasskeyEndpoints.accountLoginOptionsPath, action: PasskeyEndpoints.accountLoginPath)

        /// What the login template's passkey button reads.
        func values(_ language: PageLanguage) -> [String: Any] {
            ["passkeyAction": action, "passkeyOptions": options, "passkeySignIn": language.text(.passkeySignIn),
             "passkeyFailed": language.text(.passkeyFailed), "passkeyCancelled": language.text(.passkeyCancelled)]
        }
    }

    /// The hosted login's code step: where the code went, the field for it, and a new code.
    /// `flow` is the sign-in flow's continuation token, which the form carries to the next step.
    func signInCode(language: PageLanguage, clientName: String, interaction: String, csrf: String, flow: String, target: String,
                    codeLength: Int, minutes: Int, message: String?) -> String {
        code(.init(title: .codeTitle, sentTo: .codeSentTo, submit: .signIn, verifyAction: LoginCodeEndpoints.verifyPath,
                   resendAction: LoginCodeEndpoints.resendPath),
             language: language, clientName: clientName, interaction: interaction, csrf: csrf, flow: flow, target: target,
             codeLength: codeLength, minutes: minutes, message: message)
    }

    /// What a code page is for: its words and where it posts.
    struct CodePurpose {
        var title: PageLanguage.Key
        var sentTo: PageLanguage.Key
        var submit: PageLanguage.Key
        var verifyAction: String
        var resendAction: String
    }

    /// A code step (a sign-in's, a password reset's): where the code went, the field for it,
    /// and a new code.
    func code(_ purpose: CodePurpose, language: PageLanguage, clientName: String, interaction: String, csrf: String, flow: String,
              target: String, codeLength: Int, minutes: Int, message: String?, username: String? = nil) -> String {
        render("code", [
            "username": username ?? "",
            "title": language.text(purpose.title), "signInTo": language.text(.signInTo), "clientName": clientName,
            "sentTo": language.text(purpose.sentTo), "target": target,
            "validFor": language.text(.codeValidFor).replacingOccurrences(of: "{minutes}", with: String(minutes)),
            "interaction": interaction, "csrf": csrf, "flow": flow, "message": message ?? "", "codeLength": codeLength,
            "codeLabel": language.text(.codeLabel), "submit": language.text(purpose.submit), "resend": language.text(.codeResend),
            "verifyAction": purpose.verifyAction, "resendAction": purpose.resendAction,
        ], language: language)
    }

    /// A password reset's last step: the new password, with the policy's length and what
    /// was wrong with the last one typed (never the password itself).
    package func newPassword(language: PageLanguage, clientName: String, interaction: String, csrf: String, flow: String, email: String,
                     minimumLength: Int, message: String?, signUp: Bool = false) -> String {
        render("newpassword", [
            "title": language.text(signUp ? .signUpPasswordTitle : .newPasswordTitle), "signInTo": language.text(.signInTo),
            "clientName": clientName,
            "intro": language.text(signUp ? .signUpPasswordIntro : .newPasswordIntro).replacingOccurrences(of: "{min}", with: String(minimumLength)),
            "interaction": interaction, "csrf": csrf, "flow": flow, "email": email, "message": message ?? "",
            "passwordLabel": language.text(signUp ? .password : .newPasswordLabel),
            "submit": language.text(signUp ? .resetContinue : .newPasswordSubmit),
            "minimumLength": minimumLength, "action": signUp ? SignUpPages.passwordPath : PasswordResetPages.passwordPath,
        ], language: language)
    }

    /// Sign-up's first step: the address (and where to sign in instead).
    func signUp(language: PageLanguage, clientName: String, interaction: String, csrf: String, email: String?, message: String?) -> String {
        render("signup", [
            "title": language.text(.signUpTitle), "signInTo": language.text(.signInTo), "clientName": clientName,
            "intro": language.text(.signUpIntro), "interaction": interaction, "csrf": csrf, "email": email ?? "", "message": message ?? "",
            "emailLabel": language.text(.email), "submit": language.text(.resetContinue), "action": SignUpPages.startPath,
            "signInAction": SignUpPages.signInPath, "haveAccount": language.text(.haveAccount),
        ], language: language)
    }

    /// One field of a sign-up attribute page.
    struct AttributeField {
        var name: String
        var label: String
        /// `text`, `date`, `number` or `checkbox`.
        var type: String
        var required: Bool
        var value: String
        var error: String?
    }

    /// Sign-up's attribute page: the fields of one page of the configured attributes, each
    /// error next to its field (the first error focused), what was typed kept.
    func signUpAttributes(language: PageLanguage, clientName: String, interaction: String, csrf: String, flow: String, page: Int,
                          fields: [AttributeField], message: String?) -> String {
        let firstError = fields.firstIndex { $0.error != nil }
        return render("signupattributes", [
            "title": language.text(.signUpDetailsTitle), "signInTo": language.text(.signInTo), "clientName": clientName,
            "intro": language.text(.signUpDetailsIntro), "interaction": interaction, "csrf": csrf, "flow": flow, "message": message ?? "",
            "page": String(page),
            "submit": language.text(.signUpSubmit), "action": SignUpPages.attributesPath, "optional": language.text(.optional),
            "fields": fields.enumerated().map { index, field in
                ["id": "attribute-" + field.name, "name": SignUpPages.fieldPrefix + field.name, "label": field.label, "type": field.type,
                 "checkbox": field.type == "checkbox", "checked": field.value == "true", "required": field.required, "value": field.value,
                 "error": field.error ?? "", "autofocus": index == (firstError ?? 0)] as [String: Any]
            },
        ], language: language)
    }

    /// "Confirm it's you": the account page asks a signed-in user whose sign-in is not recent
    /// for the password again, or offers a link to their address (`reason` says what for).
    func reauthenticate(language: PageLanguage, reason: PageLanguage.Key?, csrf: String, email: String, message: String?) -> String {
        render("login", PasskeyForm.account.values(language).merging([
            "providers": [[String: Any]](), "title": language.text(.reauthTitle), "intro": reason.map(language.text) ?? "", "clientName": "",
            "action": "/account/reauth", "interaction": "", "csrf": csrf, "email": email, "fixedEmail": true, "message": message ?? "",
            "emailLabel": language.text(.email), "passwordLabel": language.text(.password), "submit": language.text(.reauthSubmit),
            "linkAction": "/account/reauth/link", "or": language.text(.or), "emailLink": language.text(.emailMeALink),
        ]) { _, page in page }, language: language)
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

    func account(_ page: AccountPage, language: PageLanguage) -> String {
        let csrf = page.csrf
        let user = page.user
        var values: [String: Any] = [
            "wideCard": true, "csrf": csrf, "notice": page.notice ?? "", "formError": page.formError ?? "",
            "title": language.text(.accountTitle), "signedInAs": language.text(.consentSignedInAs), "email": user.email,
            "emailTitle": language.text(.accountEmail),
            "emailState": language.text(user.emailVerified ? .accountEmailVerified : .accountEmailUnverified),
            "profileTitle": language.text(.accountProfile), "profileFields": page.profileFields,
            "profileClaims": ProfileForm.listed(page.profileFields),
            "profileSave": language.text(.accountProfileSave), "optional": language.text(.optional),
            "sensitiveLocked": page.profileFields.contains { $0["locked"] as? Bool == true } ? language.text(.accountSensitiveLocked) : "",
            "confirmToEdit": language.text(.accountConfirmToEdit),
            "changeEmail": language.text(.accountChangeEmail), "newEmailLabel": language.text(.accountNewEmail),
            "emailError": page.emailError ?? "", "emailChangeID": page.emailChange?.id ?? "",
            "emailCodeSent": page.emailChange.map { language.text(.accountEmailCodeSent).replacingOccurrences(of: "{email}", with: $0.target) } ?? "",
            "codeLabel": language.text(.codeLabel), "codeLength": page.emailChange?.codeLength ?? 0,
            "emailConfirm": language.text(.accountEmailConfirm),
            "passwordTitle": language.text(.accountPassword),
            "passwordState": language.text(user.passwordHash != nil ? .accountHasPassword : .accountNoPassword),
            "hasPassword": user.passwordHash != nil, "currentLabel": language.text(.accountCurrentPassword),
            "currentHint": page.recentSignIn ? language.text(.accountCurrentPasswordHint) : "",
            "currentError": page.passwordErrors["current"] ?? "", "newLabel": language.text(.newPasswordLabel),
            "newError": page.passwordErrors["new"] ?? "", "newHint": page.passwordHint,
            "passwordSubmit": language.text(user.passwordHash != nil ? .accountChangePassword : .accountSetPassword),
            "removePassword": page.canRemovePassword ? language.text(.accountRemovePassword) : "",
            "passkeysTitle": language.text(.passkeysTitle), "passkeysIntro": language.text(.passkeysIntro),
            "passkeysNone": language.text(.passkeysNone), "passkeys": page.passkeys, "passkeyError": page.passkeyError ?? "",
            "passkeyAdd": language.text(.passkeyAdd), "passkeyOptions": PasskeyEndpoints.registrationOptionsPath,
            "passkeyAction": PasskeyEndpoints.registrationPath, "passkeyFailed": language.text(.passkeyFailed),
            "passkeyCancelled": language.text(.passkeyCancelled), "passkeyExists": language.text(.passkeyExists),
            "sessionsTitle": language.text(.accountSessions), "sessions": page.sessions,
            "signOutOthers": page.sessions.count > 1 ? language.text(.accountSignOutOthers) : "",
            "appsTitle": language.text(.accountApps), "noApps": language.text(.accountNoApps),
            "apps": page.apps.map { ["name": $0.name, "clientID": $0.clientID, "scopes": $0.scopes, "csrf": csrf,
                                     "revoke": language.text(.accountRevoke)] as [String: Any] },
            "identitiesTitle": language.text(.accountIdentities), "noIdentities": language.text(.accountNoIdentities),
            "identities": page.identities.map { $0.merging(["csrf": csrf, "remove": language.text(.accountRemoveIdentity)]) { a, _ in a } },
            "connect": page.connect.map { ["id": $0.id, "label": language.text(.connect) + " " + $0.name, "csrf": csrf] as [String: Any] },
            "deleteTitle": language.text(.accountDelete), "deleteConfirm": language.text(.accountDeleteConfirm),
            "deleteButton": language.text(.accountDeleteButton),
            "signOut": language.text(.accountSignOut),
        ]
        values.merge(page.twoStep) { _, new in new }
        if page.passwordErrors["current"] != nil { values["currentFocus"] = true } else if page.passwordErrors["new"] != nil { values["newFocus"] = true }
        return render("account", values, language: language)
    }

    /// The second factor after the first: the app's or a recovery code, a passkey, or setting
    /// up an app (`enrolment`).
    func secondFactor(language: PageLanguage, clientName: String?, intro: String, csrf: String, codeForm: Bool, passkey: Bool,
                      enrolment: TOTPSetup?, message: String?) -> String {
        var values: [String: Any] = [
            "title": language.text(.twoStepTitle), "signInTo": language.text(.signInTo), "clientName": clientName ?? "",
            "intro": intro, "csrf": csrf, "message": message ?? "", "verifyAction": SecondFactorPages.verifyPath,
            "codeLabel": language.text(.twoStepCodeLabel), "codeHint": language.text(.twoStepCodeHint),
            "verify": language.text(.twoStepVerify), "or": language.text(.or),
        ]
        if codeForm { values["codeForm"] = true }
        if passkey {
            values.merge(["passkeyAction": SecondFactorPages.passkeyPath, "passkeyOptions": SecondFactorPages.passkeyOptionsPath,
                          "passkeyUse": language.text(.twoStepUsePasskey), "passkeyClass": codeForm ? "secondary" : "",
                          "passkeyFailed": language.text(.passkeyFailed), "passkeyCancelled": language.text(.passkeyCancelled)]) { _, new in new }
        }
        if let enrolment { values.merge(enrolment.values(language, error: nil)) { _, new in new } }
        return render("secondfactor", values, language: language)
    }

    /// Right after a sign-up: a passkey, offered once, before going back to the app.
    func passkeyOffer(language: PageLanguage, clientName: String, interaction: String, csrf: String, message: String?) -> String {
        render("passkeyoffer", [
            "title": language.text(.passkeyOfferTitle), "signInTo": language.text(.signInTo), "clientName": clientName,
            "intro": language.text(.passkeyOfferIntro), "message": message ?? "", "interaction": interaction, "csrf": csrf,
            "addAction": SignUpPages.passkeyPath, "optionsAction": PasskeyEndpoints.registrationOptionsPath,
            "skipAction": SecondFactorPages.continuePath, "add": language.text(.passkeyAdd), "skip": language.text(.passkeyOfferSkip),
            "passkeyFailed": language.text(.passkeyFailed), "passkeyCancelled": language.text(.passkeyCancelled),
            "passkeyExists": language.text(.passkeyExists),
        ], language: language)
    }

    /// Recovery codes, shown once; `continueAction` goes on (a POST with the CSRF token, or a GET).
    func recoveryCodes(language: PageLanguage, codes: [String], csrf: String?, continueAction: String, notice: String? = nil) -> String {
        render("recoverycodes", [
            "title": language.text(.recoveryCodesTitle), "intro": language.text(.recoveryCodesIntro), "codes": codes,
            "hint": language.text(.recoveryCodesHint), "continue": language.text(.continueButton),
            "continueMethod": csrf == nil ? "get" : "post", "continueAction": continueAction, "csrf": csrf ?? "", "notice": notice ?? "",
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
