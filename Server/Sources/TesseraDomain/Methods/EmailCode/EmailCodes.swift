import Foundation
import TesseraCore

/// The email one-time code, as a way of proving an address in any flow (sign-up, sign-in,
/// reset): sending a code within the resend interval and the hourly limits, and checking
/// what the user typed with a limited number of entries.
///
/// A code is stored only as its hash, salted with the flow's id; nothing typed can match a
/// code that was not sent (enumeration protection answers as if one was).
package struct EmailCodes: Sendable {
    let settings: NativeAuthSettings
    let steps: FlowSteps
    let store: any NativeFlowStore
    let limits: MailLimits
    let mail: FlowMail
    let clock: WallClock

    package init(settings: NativeAuthSettings, steps: FlowSteps, store: any NativeFlowStore, limits: MailLimits, mail: FlowMail,
                 clock: WallClock) {
        self.settings = settings
        self.steps = steps
        self.store = store
        self.limits = limits
        self.mail = mail
        self.clock = clock
    }

    /// Sends a new code (or, with `deliver` false, pretends to: the same answer, no email)
    /// and moves the flow to ``NativeFlow/Step/codeSent``.
    func send(_ flow: NativeFlow, from token: String, caller: FlowCaller, email: (_ code: String, _ minutes: Int) -> Email,
              deliver: Bool) async throws -> FlowStep {
        let now = clock.now()
        if let sentAt = flow.codeSentAt, now - sentAt < settings.resendInterval {
            throw FlowFailure.resendTooSoon(ago: now - sentAt, wait: settings.resendInterval - (now - sentAt))
        }
        try await limits.check(email: flow.email, clientAddress: caller.address)
        var flow = flow
        let code = Self.randomDigits(settings.codeLength)
        let matchable = deliver && !flow.accountExists
        flow.code = NativeFlow.Code(hash: matchable ? Self.codeHash(code, flow: flow.id) : "unmatchable:" + SecureRandom.token(),
                                    expiresAt: now + settings.codeLifetime)
        flow.codeSentAt = now
        flow.step = .codeSent
        let next = try await steps.advance(flow, from: token)
        try await store.resetCodeAttempts(flowID: flow.id)
        try await limits.record(email: flow.email, clientAddress: caller.address)
        if deliver {
            let message = email(code, Int((settings.codeLifetime + 59) / 60))
            try await mail.send(message, to: flow.email, language: caller.language, flow: flow.kind.rawValue,
                                expiresAt: flow.code?.expiresAt)
        }
        return .codeSent(token: next, CodeSent(target: Self.mask(flow.email), codeLength: settings.codeLength,
                                               resendInterval: settings.resendInterval))
    }

    /// Checks `entered` against the flow's code. A wrong one is counted (in the row, before
    /// the comparison, so parallel guesses each use one up); past the limit the code stops
    /// working. A right one marks the address proven and the flow ``NativeFlow/Step/verified``.
    func check(_ entered: String, flow: inout NativeFlow, token: String) async throws {
        guard let code = flow.code else { throw FlowFailure.codeNotSent }
        guard code.expiresAt > clock.now() else {
            Signals.signIn("email_code", "expired")
            throw FlowFailure.codeExpired
        }
        guard let used = try await store.reserveCodeAttempt(flowID: flow.id, tokenHash: tokenHash(token), limit: settings.maxCodeAttempts)
        else {
            Signals.signIn("email_code", "throttled")
            throw FlowFailure.tooManyWrongCodes
        }
        let matches = entered.count == settings.codeLength && entered.allSatisfy(\.isASCII) && entered.allSatisfy(\.isNumber)
            && constantTimeEquals(Array(Self.codeHash(entered, flow: flow.id).utf8), Array(code.hash.utf8))
        guard matches else {
            Signals.signIn("email_code", "failure")
            throw FlowFailure.wrongCode(attemptsLeft: settings.maxCodeAttempts - used)
        }
        Signals.signIn("email_code", "success")
        flow.code = nil
        flow.emailVerified = true
        flow.step = .verified
    }

    /// `a***e@e*****e.com`: enough for the user to recognise their address.
    static func mask(_ email: String) -> String {
        guard let at = email.lastIndex(of: "@") else { return "***" }
        func hide(_ part: Substring) -> String {
            part.count <= 2 ? String(repeating: "*", count: max(part.count, 1))
                : "\(part.first!)" + String(repeating: "*", count: min(part.count - 2, 8)) + "\(part.last!)"
        }
        let domain = email[email.index(after: at)...]
        let dot = domain.lastIndex(of: ".") ?? domain.endIndex
        return hide(email[..<at]) + "@" + hide(domain[..<dot]) + domain[dot...]
    }

    static func randomDigits(_ count: Int) -> String {
        var digits = ""
        while digits.count < count {
            // Rejection sampling keeps every digit uniform.
            for byte in SecureRandom.bytes(count) where byte < 250 && digits.count < count {
                digits.append(Character(String(byte % 10)))
            }
        }
        return digits
    }

    static func codeHash(_ code: String, flow: String) -> String {
        tokenHash("otp:" + flow + ":" + code)
    }
}
