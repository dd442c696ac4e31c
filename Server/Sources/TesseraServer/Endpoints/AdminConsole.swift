import Foundation
import HTTPTypes
import Hummingbird
import TesseraCore
import TesseraDomain

/// The admin console at `/admin`: server-rendered pages over the admin operations
/// (``AdminService``), for a signed-in user holding the admin role. No JavaScript;
/// every change is a form with a CSRF token bound to the session; who may use it is
/// ``Administrator/console(session:user:now:)`` (a session older than 12 hours signs in again).
struct AdminConsole {
    let services: Services

    var pages: PageRenderer { services.pages }

    func register(on router: Router<TesseraRequestContext>) {
        router.get("/admin") { _, _ in Responses.redirect("/admin/users") }
        router.post("/admin/login") { request, context in try await login(request, context) }
        router.get("/admin/users") { request, _ in try await page(request, .users) }
        router.post("/admin/users/new") { request, _ in try await createUser(request) }
        router.post("/admin/clients/new") { request, _ in try await createClient(request) }
        router.get("/admin/users/:id") { request, context in try await page(request, .user(try context.parameters.require("id"))) }
        router.post("/admin/users/:id/:action") { request, context in
            try await userAction(request, id: try context.parameters.require("id"), action: try context.parameters.require("action"))
        }
        router.get("/admin/clients") { request, _ in try await page(request, .clients) }
        router.get("/admin/clients/:id") { request, context in try await page(request, .client(try context.parameters.require("id"))) }
        router.post("/admin/clients/:id/:action") { request, context in
            try await clientAction(request, id: try context.parameters.require("id"), action: try context.parameters.require("action"))
        }
        router.get("/admin/keys") { request, _ in try await page(request, .keys) }
        router.post("/admin/keys/rotate") { request, _ in
            try await action(request) { admin, _, _ in
                try await outcome(.keys) {
                    _ = try await AdminService(services: services, admin: admin).rotateKeys()
                    return .redirect("/admin/keys?done=rotate")
                }
            }
        }
        router.get("/admin/audit") { request, _ in try await page(request, .audit) }
    }

    /// The console's pages.
    enum Page {
        case users, user(String), clients, client(String), keys, audit

        var template: String {
            switch self {
            case .users: "adminusers"
            case .user: "adminuser"
            case .clients: "adminclients"
            case .client: "adminclient"
            case .keys: "adminkeys"
            case .audit: "adminaudit"
            }
        }

        /// The navigation entry the page is under.
        var navigation: String {
            switch self {
            case .users, .user: "navUsers"
            case .clients, .client: "navClients"
            case .keys: "navKeys"
            case .audit: "navAudit"
            }
        }
    }

    /// What a form post leads to: another page (after a change), or a page shown at once (an
    /// error, or a secret that must not sit in a URL).
    enum Outcome {
        case redirect(String)
        case show(Page, String?, secret: String? = nil)
    }

    // MARK: Who is at the console

    func language(_ request: Request) -> PageLanguage {
        PageLanguage.negotiate(uiLocales: request.queryParameters["ui_locales"].map { [$0] } ?? [],
                               acceptLanguage: request.headers[.acceptLanguage])
    }

    /// The signed-in administrator, or the page to show instead (sign in, or not an administrator).
    func administrator(_ request: Request) async throws -> Result<(admin: Administrator, email: String), ResponseBox> {
        let language = language(request)
        let signedIn = try await BrowserSessions(services: services).signedIn(request)
        switch Administrator.console(session: signedIn?.0, user: signedIn?.1, now: services.clock.now()) {
        case .signIn:
            return .failure(ResponseBox(loginPage(request, message: nil, status: .ok)))
        case .notAdministrator(let email):
            let text = ConsoleText.text("notAdmin", language).replacingOccurrences(of: "{email}", with: email)
            return .failure(ResponseBox(Responses.html(pages.render("message", [
                "title": ConsoleText.text("notAdminTitle", language), "message": text,
                "link": "/logout", "linkText": ConsoleText.text("signOut", language),
            ], language: language), status: .forbidden)))
        case .granted(let admin):
            return .success((admin, admin.description))
        }
    }

    /// A response carried through a `Result`.
    struct ResponseBox: Error {
        let response: Response
        init(_ response: Response) { self.response = response }
    }

    func loginPage(_ request: Request, message: String?, status: HTTPResponse.Status) -> Response {
        let language = language(request)
        let (csrf, cookie) = services.csrf.token(for: request)
        let html = pages.login(language: language, title: ConsoleText.text("signInTitle", language), action: "/admin/login", clientName: nil,
                               interaction: nil, csrf: csrf, email: nil, message: message)
        var response = Responses.html(html, status: status)
        if let cookie { response.setCookie(cookie) }
        return response
    }

    func login(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = language(request)
        guard services.csrf.isValid(form["csrf_token"], request: request) else {
            return loginPage(request, message: ConsoleText.text("sessionExpired", language), status: .badRequest)
        }
        switch try await BrowserSessions(services: services).signIn(form: form, request: request, context: context, then: "/admin/users") {
        case .success(let response):
            return response
        case .failure(let failure):
            return loginPage(request, message: language.text(failure.pageText), status: failure.status)
        }
    }

    // MARK: Pages

    func page(_ request: Request, _ page: Page, message: String? = nil, secret: String? = nil,
              status: HTTPResponse.Status = .ok) async throws -> Response {
        let who: (admin: Administrator, email: String)
        switch try await administrator(request) {
        case .failure(let box): return box.response
        case .success(let found): who = found
        }
        let language = language(request)
        let query = request.queryParameters
        let (csrf, cookie) = services.csrf.token(for: request)
        let admin = AdminService(services: services, admin: who.admin)
        var values: [String: Any] = ["t": ConsoleText.table(language), "admin": who.email, "csrf": csrf, "message": message ?? ""]
        if let done = query["done"], let notice = ConsoleText.table(language)["done." + done] { values["notice"] = notice }
        let template = page.template
        values[page.navigation] = true
        do {
            switch page {
            case .users:
                values["query"] = query["q"] ?? ""
                values["title"] = ConsoleText.text("users", language)
                let list = try await admin.users(matching: query["q"], pageToken: query["page_token"], limit: 50)
                let users = list.users.map { user in
                    ["id": user.id, "email": user.email, "name": user.profile["name"]?.stringValue ?? "",
                     "verified": yesNo(user.emailVerified, language), "disabled": user.disabled, "roles": user.roles.joined(separator: " ")] as [String: Any]
                }
                values["users"] = users
                values["hasUsers"] = !users.isEmpty
                if let next = list.nextPageToken {
                    values["next"] = "/admin/users?" + RequestParameters.encode([("q", query["q"] ?? ""), ("page_token", next)])
                }
            case .user(let id):
                values.merge(userValues(try await admin.user(id), language: language, csrf: csrf)) { $1 }
            case .clients:
                values["title"] = ConsoleText.text("clients", language)
                let list = try await admin.clients(pageToken: query["page_token"], limit: 50)
                let clients = list.clients.map { client in
                    ["id": client.clientID, "name": client.clientName, "auth": client.tokenEndpointAuthMethod,
                     "grants": client.grantTypes.joined(separator: " "), "firstParty": yesNo(client.firstParty, language)] as [String: Any]
                }
                values["clients"] = clients
                values["hasClients"] = !clients.isEmpty
                if let next = list.nextPageToken {
                    values["next"] = "/admin/clients?" + RequestParameters.encode([("page_token", next)])
                }
            case .client(let id):
                values.merge(clientValues(try await admin.client(id), language: language)) { $1 }
                values["secret"] = secret ?? ""
            case .keys:
                values["title"] = ConsoleText.text("keys", language)
                values["keys"] = try await admin.keys().keys.map { key in
                    ["kid": key.kid, "alg": key.alg, "status": key.status, "published": yesNo(key.published, language),
                     "created": Self.time(key.createdAt), "retired": Self.time(key.retiredAt)]
                }
            case .audit:
                values["title"] = ConsoleText.text("audit", language)
                values["user"] = query["user"] ?? ""
                values["kinds"] = AuditEvent.Kind.allCases.map { ["value": $0.rawValue, "selected": $0.rawValue == query["kind"]] as [String: Any] }
                let events = try await admin.audit(AdminAuditQuery(kind: query["kind"].flatMap { $0.isEmpty ? nil : $0 }, user: query["user"], limit: 200))
                    .events.map { event in
                        ["at": Self.time(event.at), "kind": event.kind, "actor": event.actor, "email": event.email ?? "", "ip": event.ip ?? "",
                         "detail": event.detail ?? "", "userID": event.userID ?? "", "clientID": event.clientID ?? ""]
                    }
                values["events"] = events
                values["hasEvents"] = !events.isEmpty
            }
        } catch let problem as AdminProblem {
            switch page {
            case .user: return try await self.page(request, .users, message: problem.detail)
            case .client: return try await self.page(request, .clients, message: problem.detail)
            case .users, .clients, .keys, .audit: values["message"] = message ?? problem.detail
            }
        }
        var response = Responses.html(pages.render(template, values, language: language), status: status)
        if let cookie { response.setCookie(cookie) }
        return response
    }

    func userValues(_ details: AdminUserDetails, language: PageLanguage, csrf: String) -> [String: Any] {
        let t = ConsoleText.table(language), user = details.user
        var fields: [[String: String]] = [
            ["name": t["field.id"] ?? "", "value": user.id],
            ["name": t["field.email_verified"] ?? "", "value": yesNo(user.emailVerified, language)],
            ["name": t["field.has_password"] ?? "", "value": yesNo(user.hasPassword, language)],
            ["name": t["field.roles"] ?? "", "value": user.roles.joined(separator: " ")],
            ["name": t["field.created_at"] ?? "", "value": Self.time(user.createdAt)],
            ["name": t["field.updated_at"] ?? "", "value": Self.time(user.updatedAt)],
            ["name": t["field.version"] ?? "", "value": String(user.version)],
        ]
        if let last = details.lastSignIn {
            let parts = [Self.time(last.at), last.method, last.ip].compactMap { $0 }
            fields.append(["name": t["field.last_sign_in"] ?? "", "value": parts.joined(separator: " · ")])
        }
        let admin = user.roles.contains(User.adminRole)
        var actions = [user.disabled ? "enable" : "disable", "sign-out"]
        if !user.emailVerified { actions.append("verify-email") }
        if user.hasPassword { actions.append("remove-password") }
        actions.append(admin ? "remove-admin" : "make-admin")
        let labels = ["enable": "enable", "disable": "disable", "sign-out": "signOutEverywhere", "verify-email": "verifyEmail",
                      "remove-password": "removePassword", "make-admin": "makeAdmin", "remove-admin": "removeAdmin"]
        return [
            "id": user.id, "email": user.email, "disabled": user.disabled, "fields": fields, "title": user.email,
            "profile": user.profile.sorted { $0.key < $1.key }.map { name, value in ["name": name, "value": Self.text(value)] },
            "identities": details.identities.map { ["provider": $0.provider, "subject": $0.subject, "email": $0.email ?? ""] },
            "sessions": details.sessions.map {
                ["signedIn": Self.time($0.signedInAt), "methods": $0.methods.joined(separator: " "), "expires": Self.time($0.expiresAt)]
            },
            "consents": details.consents.map { ["clientID": $0.clientID, "clientName": $0.clientName, "scope": $0.scope] },
            "actions": actions.map { ["id": user.id, "action": $0, "label": t[labels[$0] ?? $0] ?? $0, "csrf": csrf] },
        ]
    }

    /// The client's settings as the table of client settings lists them (then when it was
    /// registered and its version); a setting not set is left out.
    func clientValues(_ client: AdminClientInfo, language: PageLanguage) -> [String: Any] {
        let t = ConsoleText.table(language)
        let members = (try? JSONDecoder().decode([String: JSONValue].self, from: CanonicalJSON.encode(client))) ?? [:]
        var fields: [[String: String]] = ClientSetting.all.compactMap { setting in
            guard setting.member != "client_name", let value = members[setting.member], value != .null, value != .array([]) else { return nil }
            return ["name": language == .ru ? setting.label.russian : setting.label.english, "value": display(value, language)]
        }
        if let until = client.previousSecretExpiresAt {
            fields.append(["name": t["field.previous_secret_expires_at"] ?? "", "value": Self.time(until)])
        }
        fields.append(["name": t["field.created_at"] ?? "", "value": Self.time(client.createdAt)])
        fields.append(["name": t["field.version"] ?? "", "value": String(client.version)])
        return [
            "id": client.clientID, "name": client.clientName, "title": client.clientName, "fields": fields, "version": String(client.version),
            "redirectURIs": client.redirectURIs.joined(separator: "\n"), "scope": client.scope, "firstPartyChecked": client.firstParty,
            "hasSecret": client.tokenEndpointAuthMethod.hasPrefix("client_secret"),
        ]
    }

    /// A setting's value for people: yes/no, words, or compact JSON.
    func display(_ value: JSONValue, _ language: PageLanguage) -> String {
        switch value {
        case .bool(let flag): yesNo(flag, language)
        case .array(let items) where items.allSatisfy({ $0.stringValue != nil }): items.compactMap(\.stringValue).joined(separator: " ")
        default: Self.text(value)
        }
    }

    func yesNo(_ value: Bool, _ language: PageLanguage) -> String {
        ConsoleText.text(value ? "yes" : "no", language)
    }

    static func text(_ value: JSONValue) -> String {
        value.stringValue ?? (try? String(decoding: CanonicalJSON.encode(value), as: UTF8.self)) ?? ""
    }

    static func time(_ seconds: Int64?) -> String {
        guard let seconds else { return "" }
        return Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(
            Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false)
                .timeSeparator(.colon)) + " UTC"
    }

    // MARK: Actions

    /// A form post by the signed-in administrator, with a valid CSRF token.
    func action(_ request: Request, _ body: (Administrator, RequestParameters, PageLanguage) async throws -> Outcome) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = language(request)
        let who: (admin: Administrator, email: String)
        switch try await administrator(request) {
        case .failure(let box): return box.response
        case .success(let found): who = found
        }
        guard services.csrf.isValid(form["csrf_token"], request: request) else {
            return try await page(request, .users, message: ConsoleText.text("sessionExpired", language), status: .badRequest)
        }
        switch try await body(who.admin, form, language) {
        case .redirect(let location):
            return Responses.redirect(location, status: .seeOther)
        case .show(let target, let message, let secret):
            return try await page(request, target, message: message, secret: secret, status: message == nil ? .ok : .badRequest)
        }
    }

    /// Runs an admin operation as `admin`: the page to go to when it worked, or the page to
    /// show with the problem's detail when it didn't.
    func outcome(_ page: Page, _ body: () async throws -> Outcome) async throws -> Outcome {
        do { return try await body() } catch let problem as AdminProblem {
            return .show(page, problem.detail)
        }
    }

    func userAction(_ request: Request, id: String, action: String) async throws -> Response {
        try await self.action(request) { who, form, language in
            let admin = AdminService(services: services, admin: who)
            return try await outcome(.user(id)) {
                switch action {
                case "disable": _ = try await admin.disableUser(id)
                case "enable": _ = try await admin.enableUser(id)
                case "sign-out": try await admin.signOutEverywhere(id)
                case "verify-email": _ = try await admin.markEmailVerified(id)
                case "remove-password": _ = try await admin.setPassword(id, nil)
                case "make-admin", "remove-admin":
                    _ = try await admin.updateUser(id, AdminUserChanges(roles: action == "make-admin" ? [User.adminRole] : []), ifVersion: nil)
                case "delete":
                    let email = try await admin.user(id).user.email
                    guard form["confirm"]?.trimmingCharacters(in: .whitespaces).lowercased() == email else {
                        return .show(.user(id), ConsoleText.text("typeToConfirm", language))
                    }
                    try await admin.deleteUser(id)
                    return .redirect("/admin/users?done=delete-user")
                default:
                    return .show(.user(id), "unknown action")
                }
                return .redirect("/admin/users/\(Self.pathSegment(id))?done=\(action)")
            }
        }
    }

    func clientAction(_ request: Request, id: String, action: String) async throws -> Response {
        try await self.action(request) { who, form, language in
            let admin = AdminService(services: services, admin: who)
            return try await outcome(.client(id)) {
                switch action {
                case "update":
                    var settings = AdminClientSettings()
                    try settings.set("client_name", .string(form["client_name"] ?? ""))
                    try settings.set("redirect_uris", .array(Self.lines(form["redirect_uris"]).map(JSONValue.string)))
                    try settings.set("scope", .string(form["scope"] ?? ""))
                    try settings.set("first_party", .bool(form["first_party"] == "true"))
                    guard let version = Int64(form["version"] ?? "") else { return .show(.client(id), ConsoleText.text("sessionExpired", language)) }
                    _ = try await admin.updateClient(id, settings, ifVersion: version)
                    return .redirect("/admin/clients/\(Self.pathSegment(id))?done=update")
                case "secret":
                    let rotated = try await admin.rotateSecret(id, AdminSecretRotation(gracePeriod: Int64(form["grace_period"] ?? "0") ?? 0))
                    return .show(.client(id), nil, secret: rotated.clientSecret)
                case "delete":
                    guard form["confirm"]?.trimmingCharacters(in: .whitespaces) == id else {
                        return .show(.client(id), ConsoleText.text("typeToConfirm", language))
                    }
                    try await admin.deleteClient(id)
                    return .redirect("/admin/clients?done=delete-client")
                default:
                    return .show(.client(id), "unknown action")
                }
            }
        }
    }

    func createUser(_ request: Request) async throws -> Response {
        try await action(request) { who, form, _ in
            var user = AdminNewUser(email: form["email"] ?? "", emailVerified: form["email_verified"] == "true",
                                    roles: form["admin"] == "true" ? [User.adminRole] : [])
            if let password = form["password"], !password.isEmpty { user.password = password }
            if let name = form["name"]?.trimmingCharacters(in: .whitespaces), !name.isEmpty { user.profile = ["name": .string(name)] }
            return try await outcome(.users) {
                let created = try await AdminService(services: services, admin: who).createUser(user)
                return .redirect("/admin/users/\(Self.pathSegment(created.id))?done=created")
            }
        }
    }

    /// Registers a client of one of the three usual kinds; its page then shows the secret, once.
    func createClient(_ request: Request) async throws -> Response {
        try await action(request) { who, form, _ in
            try await outcome(.clients) {
                var settings = AdminClientSettings()
                try settings.set("client_name", .string(form["client_name"] ?? ""))
                try settings.set("first_party", .bool(form["first_party"] == "true"))
                try settings.set("scope", .string(form["scope"] ?? ""))
                let uris = JSONValue.array(Self.lines(form["redirect_uris"]).map(JSONValue.string))
                switch form["kind"] {
                case "native":
                    try settings.set("token_endpoint_auth_method", .string("none"))
                    try settings.set("redirect_uris", uris)
                case "service":
                    try settings.set("grant_types", .array([.string(GrantType.clientCredentials)]))
                default:
                    try settings.set("redirect_uris", uris)
                }
                let client = try await AdminService(services: services, admin: who).registerClient(settings)
                return .show(.client(client.clientID), nil, secret: client.clientSecret)
            }
        }
    }

    /// A text area's lines, trimmed, the empty ones left out.
    static func lines(_ text: String?) -> [String] {
        (text ?? "").split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func pathSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? text
    }
}
