import TesseraDomain

/// The admin console's words, in English and Russian, by key (templates read them as `{{t.key}}`).
enum ConsoleText {
    static func table(_ language: PageLanguage) -> [String: String] {
        language == .ru ? english.merging(russian) { _, russian in russian } : english
    }

    static func text(_ key: String, _ language: PageLanguage) -> String {
        table(language)[key] ?? key
    }

    static let english: [String: String] = [
        "title": "Tessera admin", "navigation": "Sections", "users": "Users", "clients": "Clients", "keys": "Signing keys",
        "audit": "Audit log", "signOut": "Sign out", "search": "Search", "searchUsers": "Address, name, phone or id",
        "noUsers": "No users match.", "email": "Email", "name": "Name", "verified": "Verified", "state": "State", "roles": "Roles",
        "disabled": "disabled", "nextPage": "Next page", "profile": "Profile", "none": "None.", "identities": "Linked identities",
        "sessions": "Sessions", "until": "until", "consents": "Apps allowed", "actions": "Actions",
        "deleteUserConfirm": "To delete this user, type their email address:", "deleteUser": "Delete user",
        "noClients": "No clients yet.", "clientID": "Client id", "authentication": "Authentication", "grants": "Grants",
        "firstParty": "First party", "newSecret": "New client secret", "secretShownOnce": "Copy it now: it is shown only once and stored hashed.",
        "edit": "Settings", "redirectURIs": "Redirect URIs (one per line)", "scopes": "Scopes (space-separated)",
        "firstPartyExplained": "First party: no consent page, may use the native sign-in API", "save": "Save",
        "rotateSecret": "Rotate the secret", "gracePeriod": "The old secret keeps working for", "graceNone": "no time: it stops now",
        "graceHour": "1 hour", "graceDay": "1 day", "graceWeek": "7 days",
        "deleteClientConfirm": "To delete this client and end every token issued to it, type its client id:", "deleteClient": "Delete client",
        "kid": "Key id", "algorithm": "Algorithm", "status": "Status", "published": "Published", "created": "Created", "retired": "Retired",
        "rotateExplained": "Rotating makes the next key (already published) current; every node signs with it within seconds, and the old key stays published for the grace period.",
        "rotateKeys": "Rotate the signing keys", "auditUser": "Address or user id", "kind": "Kind", "allKinds": "Every kind",
        "filter": "Filter", "noEvents": "No events.", "time": "Time", "actor": "By", "address": "Network address", "detail": "Detail",
        "yes": "yes", "no": "no",
        "disable": "Disable", "enable": "Enable", "signOutEverywhere": "Sign out everywhere", "verifyEmail": "Mark the address verified",
        "removePassword": "Remove the password", "makeAdmin": "Give the admin role", "removeAdmin": "Take the admin role away",
        "done.disable": "The user is disabled: their sessions ended and their tokens stopped working.",
        "done.enable": "The user can sign in again.", "done.sign-out": "The user is signed out everywhere.",
        "done.verify-email": "The address is marked verified.", "done.remove-password": "The password is removed.",
        "done.make-admin": "The user holds the admin role.", "done.remove-admin": "The user no longer holds the admin role.",
        "done.delete-user": "The user is deleted.", "done.update": "The client is saved.", "done.delete-client": "The client is deleted.",
        "done.rotate": "The next key is current now.",
        "typeToConfirm": "Type the exact value asked for to confirm; nothing was deleted.",
        "notAdmin": "Your account ({email}) does not hold the admin role. Ask an administrator for it (tessera users update EMAIL --role admin).",
        "notAdminTitle": "Not an administrator", "signInTitle": "Sign in to the admin console",
        "sessionExpired": "The form expired. Nothing was changed: try again.",
        "field.id": "Id", "field.email_verified": "Address verified", "field.has_password": "Password", "field.roles": "Roles",
        "field.created_at": "Created", "field.updated_at": "Updated", "field.last_sign_in": "Last sign-in", "field.version": "Version",
        "field.client_id": "Client id", "field.token_endpoint_auth_method": "Authentication", "field.grant_types": "Grants",
        "field.redirect_uris": "Redirect URIs", "field.post_logout_redirect_uris": "Post-logout redirect URIs", "field.scope": "Scopes",
        "field.first_party": "First party", "field.subject_type": "Subject identifiers", "field.resource_server": "Resource server",
        "field.link_domains": "Email-link domains", "field.ios_apps": "iOS apps", "field.previous_secret_expires_at": "Previous secret works until",
    ]

    static let russian: [String: String] = [
        "title": "Администрирование Tessera", "navigation": "Разделы", "users": "Пользователи", "clients": "Клиенты",
        "keys": "Ключи подписи", "audit": "Журнал аудита", "signOut": "Выйти", "search": "Найти",
        "searchUsers": "Адрес, имя, телефон или id", "noUsers": "Никто не найден.", "email": "Почта", "name": "Имя",
        "verified": "Подтверждён", "state": "Состояние", "roles": "Роли", "disabled": "отключён", "nextPage": "Следующая страница",
        "profile": "Профиль", "none": "Нет.", "identities": "Связанные учётные записи", "sessions": "Сеансы", "until": "до",
        "consents": "Разрешённые приложения", "actions": "Действия",
        "deleteUserConfirm": "Чтобы удалить пользователя, введите его адрес почты:", "deleteUser": "Удалить пользователя",
        "noClients": "Клиентов пока нет.", "clientID": "Id клиента", "authentication": "Аутентификация", "grants": "Гранты",
        "firstParty": "Собственный", "newSecret": "Новый секрет клиента",
        "secretShownOnce": "Скопируйте его сейчас: он показывается один раз и хранится только в виде хеша.",
        "edit": "Настройки", "redirectURIs": "Адреса возврата (по одному в строке)", "scopes": "Области доступа (через пробел)",
        "firstPartyExplained": "Собственный: без страницы согласия, может входить через нативный API", "save": "Сохранить",
        "rotateSecret": "Сменить секрет", "gracePeriod": "Старый секрет ещё работает", "graceNone": "нисколько: перестаёт сразу",
        "graceHour": "1 час", "graceDay": "1 день", "graceWeek": "7 дней",
        "deleteClientConfirm": "Чтобы удалить клиента и отозвать все выданные ему токены, введите его id:", "deleteClient": "Удалить клиента",
        "kid": "Id ключа", "algorithm": "Алгоритм", "status": "Состояние", "published": "Опубликован", "created": "Создан",
        "retired": "Выведен",
        "rotateExplained": "Смена делает следующий (уже опубликованный) ключ текущим: все узлы начнут подписывать им в течение секунд, а старый ключ останется опубликованным на время отсрочки.",
        "rotateKeys": "Сменить ключи подписи", "auditUser": "Адрес или id пользователя", "kind": "Событие", "allKinds": "Все события",
        "filter": "Показать", "noEvents": "Событий нет.", "time": "Время", "actor": "Кто", "address": "Сетевой адрес", "detail": "Подробности",
        "yes": "да", "no": "нет",
        "disable": "Отключить", "enable": "Включить", "signOutEverywhere": "Завершить все сеансы", "verifyEmail": "Отметить адрес подтверждённым",
        "removePassword": "Удалить пароль", "makeAdmin": "Дать роль администратора", "removeAdmin": "Снять роль администратора",
        "done.disable": "Пользователь отключён: его сеансы завершены, токены больше не действуют.",
        "done.enable": "Пользователь снова может входить.", "done.sign-out": "Все сеансы пользователя завершены.",
        "done.verify-email": "Адрес отмечен подтверждённым.", "done.remove-password": "Пароль удалён.",
        "done.make-admin": "Пользователь получил роль администратора.", "done.remove-admin": "Роль администратора снята.",
        "done.delete-user": "Пользователь удалён.", "done.update": "Клиент сохранён.", "done.delete-client": "Клиент удалён.",
        "done.rotate": "Следующий ключ стал текущим.",
        "typeToConfirm": "Для подтверждения введите ровно то, что просили; ничего не удалено.",
        "notAdmin": "У вашей учётной записи ({email}) нет роли администратора. Попросите её у администратора (tessera users update EMAIL --role admin).",
        "notAdminTitle": "Нет прав администратора", "signInTitle": "Вход в консоль администратора",
        "sessionExpired": "Срок действия формы истёк. Ничего не изменено: попробуйте ещё раз.",
        "field.id": "Id", "field.email_verified": "Адрес подтверждён", "field.has_password": "Пароль", "field.roles": "Роли",
        "field.created_at": "Создан", "field.updated_at": "Изменён", "field.last_sign_in": "Последний вход", "field.version": "Версия",
        "field.client_id": "Id клиента", "field.token_endpoint_auth_method": "Аутентификация", "field.grant_types": "Гранты",
        "field.redirect_uris": "Адреса возврата", "field.post_logout_redirect_uris": "Адреса после выхода", "field.scope": "Области доступа",
        "field.first_party": "Собственный", "field.subject_type": "Идентификаторы субъекта", "field.resource_server": "Сервер ресурсов",
        "field.link_domains": "Домены ссылок для входа", "field.ios_apps": "Приложения iOS",
        "field.previous_secret_expires_at": "Прежний секрет действует до",
    ]
}
