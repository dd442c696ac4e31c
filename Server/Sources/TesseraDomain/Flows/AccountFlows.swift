import Logging

/// The account flows (sign-up, sign-in, password reset) and the methods they share (the
/// email code, new passwords, mail and its hourly limits), put together from one set of
/// parts. Email links use the same mail and limits.
package struct AccountFlows: Sendable {
    package let signUp: SignUp
    package let signIn: SignIn
    package let passwordReset: PasswordReset
    package let mail: FlowMail
    package let mailLimits: MailLimits

    package init(settings: NativeAuthSettings, enumerationProtection: Bool,
                 store: any NativeFlowStore & UserStore & GrantStore & StoreTransactions, hasher: PasswordHasher, policy: PasswordPolicy,
                 passwordSignIn: PasswordSignIn, secondFactors: SecondFactors, limits: WorkLimits, mail: FlowMail, audit: AuditTrail,
                 clock: WallClock, logger: Logger) {
        let steps = FlowSteps(settings: settings, store: store, limits: limits, clock: clock)
        let mailLimits = MailLimits(settings: settings, store: store, clock: clock)
        let codes = EmailCodes(settings: settings, steps: steps, store: store, limits: mailLimits, mail: mail, clock: clock)
        let passwords = NewPasswords(policy: policy, hasher: hasher, steps: steps)
        signUp = SignUp(settings: settings, enumerationProtection: enumerationProtection, store: store, steps: steps, codes: codes,
                        passwords: passwords, clock: clock, logger: logger)
        signIn = SignIn(enumerationProtection: enumerationProtection, store: store, steps: steps, codes: codes,
                        passwordSignIn: passwordSignIn, secondFactors: secondFactors, audit: audit, clock: clock, logger: logger)
        passwordReset = PasswordReset(settings: settings, enumerationProtection: enumerationProtection, store: store, steps: steps,
                                      codes: codes, passwords: passwords, mail: mail, clock: clock, logger: logger)
        self.mail = mail
        self.mailLimits = mailLimits
    }
}
