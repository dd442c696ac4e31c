import Foundation
import TesseraCore
import TesseraDomain

extension PageLanguage {
    public func text(_ key: Key) -> String {
        (self == .ru ? Self.russian[key] : nil) ?? Self.english[key] ?? key.rawValue
    }

    public enum Key: String, Sendable {
        case signInTitle, signInTo, email, password, signIn, badCredentials, throttled, busy, tooManyStarted, accountDisabled
        case consentTitle, consentIntro, consentSignedInAs, allow, deny
        case errorTitle, errorIntro, errorCode, errorDetails
        case logoutTitle, logoutQuestion, logoutConfirm, loggedOutTitle, loggedOut
        case formPostTitle, formPostContinue, sessionExpired
        case scopeSensitive, scopeEssential
        case accountTitle, accountApps, accountNoApps, accountRevoke
        case or, emailMeALink, linkSentTitle, linkSentIntro, linkSentInstructions, linkSentNotReceived, linkSendThrottled
        case linkConfirmEmailTitle, linkOtherDevice, linkContinueAs, linkEmailMismatch
        case linkInvalidTitle, linkInvalid, signedInTitle, signedIn, enterEmail
        case continueWith, connect, linkTitle, linkIntro, linkNoPassword, linkSubmit, federationFailed, federationCancelled
        case accountIdentities, accountNoIdentities, accountRemoveIdentity, accountLastWay, accountDelete, accountDeleteConfirm
        case accountDeleteButton, accountDeleteMistyped, accountDeleted, identityInUse
        case reauthTitle, reauthSubmit, reauthDelete, reauthConnect, wrongPassword
        case emailMeACode, codeTitle, codeSentTo, codeValidFor, codeLabel, codeResend, codeWrong, codeWrongLeft, codeUsedUp
        case codeExpired, codeStartOver, codeResendWait, codeThrottled, noAccount
        case unavailableTitle, unavailable
        case forgotPassword, resetTitle, resetCodeSentTo, resetContinue, resetStartOver
        case newPasswordTitle, newPasswordIntro, newPasswordLabel, newPasswordSubmit
        case passwordTooShort, passwordTooLong, passwordBanned, passwordTooWeak
        case createAccount, signUpTitle, signUpIntro, haveAccount, signUpCodeTitle, signUpCodeSentTo, signUpPasswordTitle
        case signUpPasswordIntro, signUpDetailsTitle, signUpDetailsIntro, signUpSubmit, optional, accountExists, attributeRequired
        case attributeInvalid, formHasErrors, signUpStartOver
        case accountChangeEmail, accountNewEmail, accountEmailCodeSent, accountEmailConfirm, accountEmailChanged, accountEmailInvalid, accountEmailExpired, accountEmailThrottled, reauthEmail
        case accountProfile, accountProfileSave, accountProfileSaved, accountSensitiveLocked, accountConfirmToEdit, reauthProfile, reauthPassword, accountEmail, accountEmailVerified, accountEmailUnverified, accountPassword, accountHasPassword, accountNoPassword, accountCurrentPassword, accountCurrentPasswordHint, accountCurrentPasswordRequired, accountChangePassword, accountSetPassword, accountRemovePassword, accountPasswordChanged, accountPasswordRemoved, accountPasswordLastWay, accountSessions, accountThisBrowser, accountSignedInAt, accountLastSeen, accountSignOutSession, accountSignOutOthers, accountSessionEnded, accountOthersEnded, accountUnknownDevice, accountSignOut
        case passkeySignIn, passkeyCancelled, passkeyFailed, passkeyExpired, passkeyUnknown, passkeySuspended, passkeyExists, passkeyTooMany, passkeyNameInvalid, passkeyLastWay, passkeyOn, reauthPasskey, passkeysTitle, passkeysIntro, passkeysNone, passkeyAdd, passkeyAdded, passkeyRenamed, passkeyRemoved, passkeyGone, passkeyRename, passkeyRemove, passkeyName, passkeySynced, passkeyDeviceBound, passkeyCreatedAt, passkeyLastUsed, passkeyNeverUsed, passkeyBlocked, passkeyUnsupported, passkeyRequired
    }

    static let english: [Key: String] = [
        .accountChangeEmail: "Change the address",
        .accountNewEmail: "New email address",
        .accountEmailCodeSent: "We sent a code to {email}. Enter it here to move your account to that address.",
        .accountEmailConfirm: "Confirm the new address",
        .accountEmailChanged: "Your email address was changed. The old address was told.",
        .accountEmailInvalid: "Enter an email address other than your current one.",
        .accountEmailExpired: "The code expired or was tried too often: ask for a new one.",
        .accountEmailThrottled: "Too many codes were sent to this address. Try again later.",
        .reauthEmail: "To change your email address, sign in again first: your last sign-in was a while ago.",
        .accountProfile: "Profile",
        .accountProfileSave: "Save profile",
        .accountProfileSaved: "Your profile was saved.",
        .accountSensitiveLocked: "Documents, tax numbers and addresses can be changed only right after you sign in.",
        .accountConfirmToEdit: "Confirm it's you to change them",
        .reauthProfile: "To change documents, tax numbers and addresses, sign in again first: your last sign-in was a while ago.",
        .reauthPassword: "To set or remove a password without the current one, sign in again first: your last sign-in was a while ago.",
        .accountEmail: "Email address",
        .accountEmailVerified: "verified",
        .accountEmailUnverified: "not verified",
        .accountPassword: "Password",
        .accountHasPassword: "You can sign in with your password.",
        .accountNoPassword: "Your account has no password: you sign in with a code or a link sent to your email, or a connected provider.",
        .accountCurrentPassword: "Current password",
        .accountCurrentPasswordHint: "Not needed if you signed in a few minutes ago.",
        .accountCurrentPasswordRequired: "Enter your current password.",
        .accountChangePassword: "Change password",
        .accountSetPassword: "Set a password",
        .accountRemovePassword: "Remove the password",
        .accountPasswordChanged: "Your password was changed, and every other session was signed out.",
        .accountPasswordRemoved: "Your password was removed: sign in with a code or a link sent to your email.",
        .accountPasswordLastWay: "The password is your only way to sign in: confirm your email address or connect a provider first.",
        .accountSessions: "Where you're signed in",
        .accountThisBrowser: "This browser",
        .accountSignedInAt: "Signed in {time}",
        .accountLastSeen: "last active {time}",
        .accountSignOutSession: "Sign out",
        .accountSignOutOthers: "Sign out everywhere else",
        .accountSessionEnded: "The session was signed out.",
        .accountOthersEnded: "Every other session was signed out.",
        .accountUnknownDevice: "Unknown device",
        .accountSignOut: "Sign out",
        .passkeySignIn: "Sign in with a passkey",
        .passkeyCancelled: "The passkey wasn't used: try again, or sign in another way.",
        .passkeyFailed: "That passkey didn't work. Try again, or sign in another way.",
        .passkeyExpired: "That took too long: try the passkey again.",
        .passkeyUnknown: "This passkey isn't registered here (it may have been removed). Sign in another way.",
        .passkeySuspended: "This passkey has been blocked because it looks copied. Sign in another way, then remove it on your account page.",
        .passkeyExists: "This device already has a passkey for your account.",
        .passkeyTooMany: "You have the most passkeys an account may have: remove one first.",
        .passkeyNameInvalid: "Give the passkey a name of at most 64 characters.",
        .passkeyLastWay: "This passkey is your only way to sign in: add a password or confirm your email address before removing it.",
        .passkeyOn: "Passkey on",
        .reauthPasskey: "To add a passkey, sign in again first: your last sign-in was a while ago.",
        .passkeysTitle: "Passkeys",
        .passkeysIntro: "Sign in with your fingerprint, face or screen lock instead of a password. A passkey works only on this site, so it can't be phished.",
        .passkeysNone: "No passkeys yet.",
        .passkeyAdd: "Add a passkey",
        .passkeyAdded: "The passkey was added: next time, sign in with it.",
        .passkeyRenamed: "The passkey was renamed.",
        .passkeyRemoved: "The passkey was removed. Remove it from the device too (its passwords or security settings).",
        .passkeyGone: "That passkey is no longer on your account.",
        .passkeyRename: "Rename",
        .passkeyRemove: "Remove",
        .passkeyName: "Name",
        .passkeySynced: "Synced between your devices",
        .passkeyDeviceBound: "On one device only",
        .passkeyCreatedAt: "Added {time}",
        .passkeyLastUsed: "Last used {time}",
        .passkeyNeverUsed: "Not used yet",
        .passkeyBlocked: "Blocked: it looks copied",
        .passkeyUnsupported: "This browser can't make passkeys.",
        .passkeyRequired: "This app asks you to sign in with a passkey.",
        .signInTitle: "Sign in", .signInTo: "to continue to", .email: "Email", .password: "Password",
        .signIn: "Sign in", .badCredentials: "The email or password is incorrect.",
        .throttled: "Too many attempts. Wait a few minutes and try again.",
        .busy: "The server is busy. Try again in a few seconds.",
        .unavailableTitle: "Temporarily unavailable",
        .unavailable: "The sign-in service is unavailable for a moment. Try again in a few seconds.",
        .tooManyStarted: "Too many sign-ins were started from your network. Wait a minute and try again.",
        .accountDisabled: "This account is disabled. Contact the support of the app you are signing in to.",
        .consentTitle: "Allow access?", .consentIntro: "wants to access:", .consentSignedInAs: "Signed in as",
        .allow: "Allow", .deny: "Deny",
        .errorTitle: "This sign-in request can't be completed",
        .errorIntro: "The app that sent you here made a request this server can't accept. Go back to the app and try again.",
        .errorCode: "Error", .errorDetails: "Details for the app's developer",
        .logoutTitle: "Sign out", .logoutQuestion: "Do you want to sign out?", .logoutConfirm: "Sign out",
        .loggedOutTitle: "Signed out", .loggedOut: "You are signed out.",
        .formPostTitle: "Returning to the app", .formPostContinue: "Continue",
        .sessionExpired: "This page has expired. Go back to the app and start again.",
        .scopeSensitive: "sensitive", .scopeEssential: "required by the app",
        .accountTitle: "Your account", .accountApps: "Apps you allowed", .accountNoApps: "You haven't allowed any app to see your data.",
        .accountRevoke: "Remove access",
        .or: "or", .emailMeALink: "Email me a sign-in link",
        .linkSentTitle: "Check your email", .linkSentIntro: "If this address can receive mail, a sign-in link is on its way to",
        .linkSentInstructions: "Open the link on this device to continue. It works once, for {minutes} minutes.",
        .linkSentNotReceived: "Nothing arrived? Look in the spam folder, or go back and ask for a new link in a minute.",
        .linkSendThrottled: "Too many links were sent to this address. Wait a while, or sign in with your password.",
        .linkConfirmEmailTitle: "Confirm your email",
        .linkOtherDevice: "You opened the sign-in link on a different device or browser than the one that asked for it. Enter the email address the link was sent to.",
        .linkContinueAs: "Continue as",
        .linkEmailMismatch: "This is not the address the link was sent to.",
        .linkInvalidTitle: "This link can't be used",
        .linkInvalid: "The sign-in link has expired or was already used. Go back to the app and ask for a new one.",
        .signedInTitle: "You're signed in", .signedIn: "You can close this page and return to the app.",
        .enterEmail: "Enter your email address.",
        .continueWith: "Continue with", .connect: "Connect",
        .linkTitle: "Connect your account",
        .linkIntro: "You already have an account with this email address. Sign in to it to connect {provider}; next time {provider} signs you straight in.",
        .linkNoPassword: "Your account has no password. Sign in to it with an email link or code, then connect {provider} from your account page.",
        .linkSubmit: "Sign in and connect",
        .federationFailed: "Signing in with the other provider didn't work. Go back to the app and try again.",
        .federationCancelled: "Signing in with the other provider was cancelled.",
        .accountIdentities: "Sign-in providers", .accountNoIdentities: "No other provider is connected.",
        .accountRemoveIdentity: "Disconnect",
        .accountLastWay: "This is your only way to sign in: set a password or connect another provider first.",
        .reauthTitle: "Confirm it's you", .reauthSubmit: "Continue", .wrongPassword: "The password is incorrect.",
        .reauthDelete: "To delete your account, sign in again first: your last sign-in was a while ago.",
        .reauthConnect: "To connect another way to sign in, sign in again first: your last sign-in was a while ago.",
        .accountDelete: "Delete account", .accountDeleteConfirm: "Type DELETE to delete your account and everything in it.",
        .accountDeleteButton: "Delete my account", .accountDeleteMistyped: "Type DELETE exactly to confirm.",
        .accountDeleted: "Your account was deleted.",
        .identityInUse: "This provider account is already connected to another account.",
        .emailMeACode: "Email me a code", .codeTitle: "Enter the code", .codeSentTo: "We sent a sign-in code to",
        .codeValidFor: "It is valid for {minutes} minutes. Nothing arrived? Look in the spam folder, or ask for a new code.",
        .codeLabel: "Code", .codeResend: "Send a new code",
        .codeWrong: "The code is not right. Check it and try again.",
        .codeWrongLeft: "The code is not right. Attempts left: {left}.",
        .codeUsedUp: "Too many wrong codes. Ask for a new code.",
        .codeExpired: "The code has expired. Ask for a new code.",
        .codeStartOver: "This sign-in has expired. Enter your email address to start again.",
        .codeResendWait: "A code was sent a moment ago. You can ask for another in {seconds} s.",
        .codeThrottled: "Too many codes were sent to this address. Wait a while, or sign in with your password.",
        .noAccount: "No account has this email address.",
        .forgotPassword: "Forgot your password?", .resetTitle: "Reset your password",
        .resetCodeSentTo: "If this address has an account, we sent a code to reset its password to",
        .resetContinue: "Continue", .resetStartOver: "This reset has expired. Enter your email address and press “Forgot your password?” again.",
        .newPasswordTitle: "Choose a new password",
        .newPasswordIntro: "At least {min} characters. Once it is set, every other session of this account is signed out.",
        .newPasswordLabel: "New password", .newPasswordSubmit: "Set the password and continue",
        .passwordTooShort: "The password needs at least {min} characters.",
        .passwordTooLong: "The password can have at most {max} characters.",
        .passwordBanned: "This is one of the most common passwords, which attackers try first. Choose another.",
        .passwordTooWeak: "The password can't be your email address, its name part or a simple pattern. Choose another.",
        .createAccount: "Create an account", .signUpTitle: "Create your account",
        .signUpIntro: "We'll send a code to this address to confirm it is yours.", .haveAccount: "I have an account: sign in",
        .signUpCodeTitle: "Confirm your email", .signUpCodeSentTo: "We sent a code to",
        .signUpPasswordTitle: "Choose a password",
        .signUpPasswordIntro: "At least {min} characters. You'll sign in with your email address and this password.",
        .signUpDetailsTitle: "A few details", .signUpDetailsIntro: "The app you are signing up to asks for these.",
        .signUpSubmit: "Create the account", .optional: "optional",
        .accountExists: "An account with this address exists already. Sign in, or reset its password if you forgot it.",
        .attributeRequired: "Fill this in.", .attributeInvalid: "This value isn't accepted: it {reason}.",
        .formHasErrors: "Some fields need your attention: see below.",
        .signUpStartOver: "This sign-up has expired. Enter your email address to start again.",
    ]

    static let russian: [Key: String] = [
        .accountChangeEmail: "Сменить адрес",
        .accountNewEmail: "Новый адрес электронной почты",
        .accountEmailCodeSent: "Мы отправили код на {email}. Введите его, чтобы перенести учётную запись на этот адрес.",
        .accountEmailConfirm: "Подтвердить новый адрес",
        .accountEmailChanged: "Адрес электронной почты изменён. На старый адрес отправлено уведомление.",
        .accountEmailInvalid: "Введите адрес электронной почты, отличный от текущего.",
        .accountEmailExpired: "Код истёк или было слишком много попыток: запросите новый.",
        .accountEmailThrottled: "На этот адрес отправлено слишком много кодов. Попробуйте позже.",
        .reauthEmail: "Чтобы сменить адрес электронной почты, сначала войдите ещё раз: последний вход был давно.",
        .accountProfile: "Профиль",
        .accountProfileSave: "Сохранить профиль",
        .accountProfileSaved: "Профиль сохранён.",
        .accountSensitiveLocked: "Документы, налоговые номера и адреса можно изменить только сразу после входа.",
        .accountConfirmToEdit: "Подтвердить, что это вы, чтобы изменить их",
        .reauthProfile: "Чтобы изменить документы, налоговые номера и адреса, сначала войдите ещё раз: последний вход был давно.",
        .reauthPassword: "Чтобы задать или удалить пароль без текущего, сначала войдите ещё раз: последний вход был давно.",
        .accountEmail: "Адрес электронной почты",
        .accountEmailVerified: "подтверждён",
        .accountEmailUnverified: "не подтверждён",
        .accountPassword: "Пароль",
        .accountHasPassword: "Вы можете входить с паролем.",
        .accountNoPassword: "У учётной записи нет пароля: вы входите по коду или ссылке из письма либо через подключённый сервис.",
        .accountCurrentPassword: "Текущий пароль",
        .accountCurrentPasswordHint: "Не нужен, если вы вошли несколько минут назад.",
        .accountCurrentPasswordRequired: "Введите текущий пароль.",
        .accountChangePassword: "Сменить пароль",
        .accountSetPassword: "Задать пароль",
        .accountRemovePassword: "Удалить пароль",
        .accountPasswordChanged: "Пароль изменён, все остальные сеансы завершены.",
        .accountPasswordRemoved: "Пароль удалён: входите по коду или ссылке из письма.",
        .accountPasswordLastWay: "Пароль — ваш единственный способ входа: сначала подтвердите адрес почты или подключите сервис.",
        .accountSessions: "Где выполнен вход",
        .accountThisBrowser: "Этот браузер",
        .accountSignedInAt: "Вход: {time}",
        .accountLastSeen: "последняя активность: {time}",
        .accountSignOutSession: "Выйти",
        .accountSignOutOthers: "Выйти на всех остальных устройствах",
        .accountSessionEnded: "Сеанс завершён.",
        .accountOthersEnded: "Все остальные сеансы завершены.",
        .accountUnknownDevice: "Неизвестное устройство",
        .accountSignOut: "Выйти",
        .passkeySignIn: "Войти с ключом доступа",
        .passkeyCancelled: "Ключ доступа не использован: попробуйте ещё раз или войдите иначе.",
        .passkeyFailed: "Не получилось войти с этим ключом доступа. Попробуйте ещё раз или войдите иначе.",
        .passkeyExpired: "Прошло слишком много времени: попробуйте ключ доступа ещё раз.",
        .passkeyUnknown: "Этот ключ доступа здесь не зарегистрирован (возможно, его удалили). Войдите иначе.",
        .passkeySuspended: "Этот ключ доступа заблокирован: похоже, его скопировали. Войдите иначе и удалите его на странице аккаунта.",
        .passkeyExists: "На этом устройстве уже есть ключ доступа к вашему аккаунту.",
        .passkeyTooMany: "У аккаунта уже максимум ключей доступа: сначала удалите один.",
        .passkeyNameInvalid: "Дайте ключу доступа название не длиннее 64 символов.",
        .passkeyLastWay: "Это ваш единственный способ войти: задайте пароль или подтвердите адрес почты, прежде чем удалять ключ.",
        .passkeyOn: "Ключ доступа:",
        .reauthPasskey: "Чтобы добавить ключ доступа, сначала войдите ещё раз: последний вход был давно.",
        .passkeysTitle: "Ключи доступа",
        .passkeysIntro: "Входите по отпечатку пальца, лицу или блокировке экрана вместо пароля. Ключ доступа работает только на этом сайте, поэтому его нельзя выманить.",
        .passkeysNone: "Ключей доступа пока нет.",
        .passkeyAdd: "Добавить ключ доступа",
        .passkeyAdded: "Ключ доступа добавлен: в следующий раз входите с ним.",
        .passkeyRenamed: "Ключ доступа переименован.",
        .passkeyRemoved: "Ключ доступа удалён. Удалите его и с устройства (в настройках паролей или безопасности).",
        .passkeyGone: "Этого ключа доступа больше нет в аккаунте.",
        .passkeyRename: "Переименовать",
        .passkeyRemove: "Удалить",
        .passkeyName: "Название",
        .passkeySynced: "Синхронизируется между устройствами",
        .passkeyDeviceBound: "Только на одном устройстве",
        .passkeyCreatedAt: "Добавлен {time}",
        .passkeyLastUsed: "Последний вход {time}",
        .passkeyNeverUsed: "Ещё не использовался",
        .passkeyBlocked: "Заблокирован: похоже, скопирован",
        .passkeyUnsupported: "Этот браузер не умеет создавать ключи доступа.",
        .passkeyRequired: "Это приложение просит войти с ключом доступа.",
        .signInTitle: "Вход", .signInTo: "чтобы продолжить в", .email: "Электронная почта", .password: "Пароль",
        .signIn: "Войти", .badCredentials: "Неверная электронная почта или пароль.",
        .throttled: "Слишком много попыток. Подождите несколько минут и попробуйте снова.",
        .busy: "Сервер занят. Попробуйте снова через несколько секунд.",
        .unavailableTitle: "Временно недоступно",
        .unavailable: "Сервис входа ненадолго недоступен. Попробуйте снова через несколько секунд.",
        .tooManyStarted: "Из вашей сети начато слишком много входов. Подождите минуту и попробуйте снова.",
        .accountDisabled: "Эта учётная запись отключена. Обратитесь в поддержку приложения, в которое вы входите.",
        .consentTitle: "Разрешить доступ?", .consentIntro: "запрашивает доступ к данным:", .consentSignedInAs: "Вы вошли как",
        .allow: "Разрешить", .deny: "Отклонить",
        .errorTitle: "Не удалось выполнить запрос на вход",
        .errorIntro: "Приложение, которое направило вас сюда, отправило запрос, который сервер не может принять. Вернитесь в приложение и попробуйте снова.",
        .errorCode: "Ошибка", .errorDetails: "Подробности для разработчика приложения",
        .logoutTitle: "Выход", .logoutQuestion: "Выйти из учётной записи?", .logoutConfirm: "Выйти",
        .loggedOutTitle: "Вы вышли", .loggedOut: "Вы вышли из учётной записи.",
        .formPostTitle: "Возвращаемся в приложение", .formPostContinue: "Продолжить",
        .sessionExpired: "Срок действия страницы истёк. Вернитесь в приложение и начните заново.",
        .scopeSensitive: "чувствительные данные", .scopeEssential: "обязательно для приложения",
        .accountTitle: "Ваша учётная запись", .accountApps: "Приложения с доступом к данным",
        .accountNoApps: "Вы не разрешали приложениям доступ к своим данным.", .accountRevoke: "Отозвать доступ",
        .or: "или", .emailMeALink: "Прислать ссылку для входа",
        .linkSentTitle: "Проверьте почту", .linkSentIntro: "Если этот адрес принимает почту, ссылка для входа уже отправлена на",
        .linkSentInstructions: "Откройте ссылку на этом устройстве, чтобы продолжить. Она сработает один раз и действует {minutes} мин.",
        .linkSentNotReceived: "Письма нет? Проверьте папку «Спам» или вернитесь и запросите новую ссылку через минуту.",
        .linkSendThrottled: "На этот адрес отправлено слишком много ссылок. Подождите или войдите с паролем.",
        .linkConfirmEmailTitle: "Подтвердите адрес",
        .linkOtherDevice: "Вы открыли ссылку для входа не на том устройстве или не в том браузере, где её запросили. Введите адрес электронной почты, на который пришла ссылка.",
        .linkContinueAs: "Продолжить как",
        .linkEmailMismatch: "Ссылка была отправлена на другой адрес.",
        .linkInvalidTitle: "Ссылка недействительна",
        .linkInvalid: "Срок действия ссылки для входа истёк или она уже использована. Вернитесь в приложение и запросите новую.",
        .signedInTitle: "Вы вошли", .signedIn: "Можно закрыть эту страницу и вернуться в приложение.",
        .enterEmail: "Введите адрес электронной почты.",
        .continueWith: "Продолжить с", .connect: "Подключить",
        .linkTitle: "Подключите учётную запись",
        .linkIntro: "У вас уже есть учётная запись с этим адресом. Войдите в неё, чтобы подключить {provider}; в следующий раз {provider} сразу выполнит вход.",
        .linkNoPassword: "У вашей учётной записи нет пароля. Войдите в неё по ссылке или коду из письма, а затем подключите {provider} на странице учётной записи.",
        .linkSubmit: "Войти и подключить",
        .federationFailed: "Не удалось войти через другой сервис. Вернитесь в приложение и попробуйте снова.",
        .federationCancelled: "Вход через другой сервис отменён.",
        .accountIdentities: "Сервисы для входа", .accountNoIdentities: "Другие сервисы не подключены.",
        .accountRemoveIdentity: "Отключить",
        .accountLastWay: "Это ваш единственный способ входа: сначала задайте пароль или подключите другой сервис.",
        .reauthTitle: "Подтвердите, что это вы", .reauthSubmit: "Продолжить", .wrongPassword: "Неверный пароль.",
        .reauthDelete: "Чтобы удалить учётную запись, сначала войдите ещё раз: последний вход был давно.",
        .reauthConnect: "Чтобы подключить другой способ входа, сначала войдите ещё раз: последний вход был давно.",
        .accountDelete: "Удаление учётной записи", .accountDeleteConfirm: "Введите DELETE, чтобы удалить учётную запись и все её данные.",
        .accountDeleteButton: "Удалить учётную запись", .accountDeleteMistyped: "Для подтверждения введите DELETE точно так.",
        .accountDeleted: "Ваша учётная запись удалена.",
        .identityInUse: "Эта учётная запись сервиса уже подключена к другой учётной записи.",
        .emailMeACode: "Прислать код на почту", .codeTitle: "Введите код", .codeSentTo: "Мы отправили код для входа на адрес",
        .codeValidFor: "Код действует {minutes} мин. Письма нет? Проверьте папку «Спам» или запросите новый код.",
        .codeLabel: "Код", .codeResend: "Отправить новый код",
        .codeWrong: "Неверный код. Проверьте его и попробуйте снова.",
        .codeWrongLeft: "Неверный код. Осталось попыток: {left}.",
        .codeUsedUp: "Слишком много неверных кодов. Запросите новый код.",
        .codeExpired: "Срок действия кода истёк. Запросите новый код.",
        .codeStartOver: "Время для входа истекло. Введите адрес электронной почты, чтобы начать заново.",
        .codeResendWait: "Код только что отправлен. Новый можно запросить через {seconds} с.",
        .codeThrottled: "На этот адрес отправлено слишком много кодов. Подождите или войдите с паролем.",
        .noAccount: "Нет учётной записи с таким адресом.",
        .forgotPassword: "Забыли пароль?", .resetTitle: "Сброс пароля",
        .resetCodeSentTo: "Если у этого адреса есть учётная запись, мы отправили код для сброса пароля на",
        .resetContinue: "Продолжить", .resetStartOver: "Время для сброса истекло. Введите адрес и снова нажмите «Забыли пароль?».",
        .newPasswordTitle: "Придумайте новый пароль",
        .newPasswordIntro: "Не короче {min} символов. Когда он будет сохранён, все остальные сеансы этой учётной записи завершатся.",
        .newPasswordLabel: "Новый пароль", .newPasswordSubmit: "Сохранить пароль и продолжить",
        .passwordTooShort: "Пароль должен быть не короче {min} символов.",
        .passwordTooLong: "Пароль должен быть не длиннее {max} символов.",
        .passwordBanned: "Это один из самых распространённых паролей, их подбирают первыми. Выберите другой.",
        .passwordTooWeak: "Пароль не может совпадать с адресом почты, его частью до @ или быть простой последовательностью. Выберите другой.",
        .createAccount: "Создать учётную запись", .signUpTitle: "Создание учётной записи",
        .signUpIntro: "Мы отправим на этот адрес код, чтобы убедиться, что он ваш.", .haveAccount: "У меня есть учётная запись: войти",
        .signUpCodeTitle: "Подтвердите адрес", .signUpCodeSentTo: "Мы отправили код на адрес",
        .signUpPasswordTitle: "Придумайте пароль",
        .signUpPasswordIntro: "Не короче {min} символов. Вы будете входить по адресу почты и этому паролю.",
        .signUpDetailsTitle: "Ещё немного о вас", .signUpDetailsIntro: "Приложение, в котором вы регистрируетесь, просит эти данные.",
        .signUpSubmit: "Создать учётную запись", .optional: "необязательно",
        .accountExists: "Учётная запись с этим адресом уже есть. Войдите или сбросьте пароль, если забыли его.",
        .attributeRequired: "Заполните это поле.", .attributeInvalid: "Значение не подходит. Проверьте его.",
        .formHasErrors: "Проверьте поля ниже.",
        .signUpStartOver: "Время регистрации истекло. Введите адрес электронной почты, чтобы начать заново.",
    ]

    /// A sign-up attribute's label: the claim's name in this language, or the attribute's name.
    public func label(_ attribute: SignUpAttribute) -> String {
        Self.claimLabels[attribute.claim].map { self == .ru ? $0.1 : $0.0 } ?? attribute.name
    }

    static let claimLabels: [String: (String, String)] = [
        "name": ("Full name", "Полное имя"), "given_name": ("First name", "Имя"), "family_name": ("Last name", "Фамилия"),
        "middle_name": ("Middle name", "Отчество"), "nickname": ("Nickname", "Псевдоним"), "birthdate": ("Date of birth", "Дата рождения"),
        "gender": ("Gender", "Пол"), "phone_number": ("Phone number", "Номер телефона"), "job_title": ("Job title", "Должность"),
        "website": ("Website", "Сайт"), "zoneinfo": ("Time zone", "Часовой пояс"), "locale": ("Language", "Язык"),
        "address.locality": ("City", "Город"), "address.country": ("Country", "Страна"), "address.postal_code": ("Postal code", "Почтовый индекс"),
        "address.region": ("Region", "Регион"), "address.street_address": ("Street address", "Улица, дом"),
        "address": ("Address", "Адрес"), "place_of_birth": ("Place of birth", "Место рождения"),
        "place_of_work": ("Place of work", "Место работы"),
    ]

    /// A claim's name for a form: its own label, else the words of the scope that releases only
    /// it (`inn`: "Taxpayer number (INN)"), else the claim.
    public func claimLabel(_ claim: String) -> String {
        if let label = Self.claimLabels[claim] { return self == .ru ? label.1 : label.0 }
        return ScopeCatalogue.all.first { $0.claims == [claim] }?.description.text(rawValue) ?? claim
    }

    /// A structured claim's member's name (`issued_by`: "Issued by").
    public func memberLabel(_ member: String) -> String {
        if let label = Self.memberLabels[member] { return self == .ru ? label.1 : label.0 }
        return member.replacingOccurrences(of: "_", with: " ").capitalized
    }

    /// The words of one option of a choice (`gender` 1: "Male"; a yes/no claim: "Yes").
    public func optionLabel(name: String, value: String) -> String {
        switch (name.hasSuffix("gender"), value) {
        case (_, ""): self == .ru ? "Не указано" : "Not set"
        case (true, "1"): self == .ru ? "Мужской" : "Male"
        case (true, "2"): self == .ru ? "Женский" : "Female"
        case (_, "true"): self == .ru ? "Да" : "Yes"
        case (_, "false"): self == .ru ? "Нет" : "No"
        default: value
        }
    }

    static let memberLabels: [String: (String, String)] = [
        "formatted": ("Full address", "Адрес целиком"), "full_address": ("Full address", "Адрес целиком"),
        "street_address": ("Street address", "Улица, дом"), "street": ("Street", "Улица"), "house": ("House", "Дом"),
        "building": ("Building", "Строение"), "bulk": ("Block", "Корпус"), "apartment": ("Apartment", "Квартира"),
        "settlement": ("Settlement", "Населённый пункт"), "city": ("City", "Город"), "district": ("District", "Район"),
        "locality": ("City", "Город"), "region": ("Region", "Регион"), "post_index": ("Postal code", "Почтовый индекс"),
        "postal_code": ("Postal code", "Почтовый индекс"), "country": ("Country", "Страна"), "fias_code": ("FIAS code", "Код ФИАС"),
        "series": ("Series", "Серия"), "number": ("Number", "Номер"), "issued_by": ("Issued by", "Кем выдан"),
        "issued_date": ("Date of issue", "Дата выдачи"), "planned_end_date": ("Valid until", "Действует до"),
        "code": ("Code", "Код"), "name": ("Name", "Имя"), "surname": ("Surname", "Фамилия"), "type": ("Type", "Тип"),
        "country_code": ("Country code", "Код страны"), "country_name": ("Country", "Страна"), "description": ("Description", "Описание"),
    ]

    /// How a scope is described on the consent page: the catalogue's words, or the scope
    /// itself for a client-specific API scope.
    public func describe(scope: String) -> String {
        ScopeCatalogue.definition(scope)?.description.text(rawValue) ?? scope
    }
}
