import Foundation
import Hummingbird
import TesseraCore
import TesseraDomain

/// Two-step verification on the account page (``SecondFactors``): setting up an authenticator
/// app (its QR code, its secret as text, confirmed by a first code, then ten recovery codes
/// shown once), new recovery codes, and turning it off. Each needs a recent sign-in, as the
/// other sensitive changes do.
extension AccountEndpoint {
    static let twoStepStartPath = "/account/two-step/start"
    static let twoStepConfirmPath = "/account/two-step/confirm"
    static let recoveryCodesPath = "/account/two-step/recovery-codes"
    static let twoStepRemovePath = "/account/two-step/remove"

    func registerTwoStepForms(on router: Router<TesseraRequestContext>) {
        router.post(RouterPath(Self.twoStepStartPath)) { request, context in try await form(request, context, startTwoStep) }
        router.post(RouterPath(Self.twoStepConfirmPath)) { request, context in try await form(request, context, confirmTwoStep) }
        router.post(RouterPath(Self.recoveryCodesPath)) { request, context in try await form(request, context, newRecoveryCodes) }
        router.post(RouterPath(Self.twoStepRemovePath)) { request, context in try await form(request, context, removeTwoStep) }
    }

    func startTwoStep(_ request: Request, _ signedIn: SignedIn) async throws -> Response {
        guard signedIn.recentSignIn else {
            return reauthenticationPage(request, user: signedIn.user, reason: .reauthTwoStep, message: nil, status: .ok)
        }
        do {
            _ = try await services.secondFactors.startTOTP(for: signedIn.user)
        } catch .alreadySet {
            return done("two-step-on")
        } catch .unavailable(let error) {
            throw error
        } catch {}
        return try await page(request, signedIn.user, session: signedIn.session)
    }

    /// The app's first code: two-step verification is on, and the recovery codes are shown once.
    func confirmTwoStep(_ request: Request, _ signedIn: SignedIn) async throws -> Response {
        do {
            let codes = try await services.secondFactors.confirmTOTP(for: signedIn.user, code: signedIn.form["code"] ?? "")
            return recoveryCodesPage(codes, signedIn, notice: "two-step-on")
        } catch .unavailable(let error) {
            throw error
        } catch .notSetUp {
            return done("two-step-on")
        } catch {
            return try await page(request, signedIn.user, session: signedIn.session, setupError: signedIn.language.text(.twoStepWrongCode),
                                  status: .badRequest)
        }
    }

    func newRecoveryCodes(_ request: Request, _ signedIn: SignedIn) async throws -> Response {
        guard signedIn.recentSignIn else {
            return reauthenticationPage(request, user: signedIn.user, reason: .reauthTwoStep, message: nil, status: .ok)
        }
        guard try await services.secondFactors.hasTOTP(signedIn.user) else { return done("two-step-off") }
        let codes = try await services.secondFactors.newRecoveryCodes(for: signedIn.user)
        await services.audit.record(.secondFactorAdded, userID: signedIn.user.id, email: signedIn.user.email, detail: "new recovery codes")
        return recoveryCodesPage(codes, signedIn, notice: "recovery-codes")
    }

    func removeTwoStep(_ request: Request, _ signedIn: SignedIn) async throws -> Response {
        guard signedIn.recentSignIn else {
            return reauthenticationPage(request, user: signedIn.user, reason: .reauthTwoStep, message: nil, status: .ok)
        }
        try await services.secondFactors.removeTOTP(for: signedIn.user)
        return done("two-step-off")
    }

    /// The codes, once; "Continue" goes back to the account page with `notice`.
    func recoveryCodesPage(_ codes: [String], _ signedIn: SignedIn, notice: String) -> Response {
        // Responses.html says no-store: shown once, never from a cache.
        Responses.html(services.pages.recoveryCodes(language: signedIn.language, codes: codes, csrf: nil, continueAction: "/account",
                                                    notice: notice))
    }

    /// The account page's "Two-step verification" section.
    func twoStepSection(_ user: User, language: PageLanguage, setupError: String?) async throws -> [String: Any] {
        var values: [String: Any] = [
            "twoStepTitle": language.text(.twoStepAccountTitle), "twoStepIntro": language.text(.twoStepAccountIntro),
            "startAction": Self.twoStepStartPath, "recoveryAction": Self.recoveryCodesPath, "removeAction": Self.twoStepRemovePath,
        ]
        if try await services.secondFactors.hasTOTP(user) {
            let left = try await services.secondFactors.recoveryCodesLeft(for: user)
            values["twoStepOn"] = language.text(.twoStepOnTag)
            values["recoveryLeft"] = language.text(.recoveryCodesLeft).replacingOccurrences(of: "{count}", with: String(left))
            values["newCodes"] = language.text(.recoveryCodesNew)
            values["turnOff"] = language.text(.twoStepTurnOff)
        } else if let enrolment = try await services.secondFactors.pendingTOTP(for: user) {
            values.merge(TOTPSetup(enrolment, action: Self.twoStepConfirmPath).values(language, error: setupError)) { _, new in new }
        } else {
            values["start"] = language.text(.twoStepStart)
        }
        return values
    }
}
