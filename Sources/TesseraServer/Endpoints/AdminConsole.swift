import Foundation
import HTTPTypes
import Hummingbird
import TesseraCore
import TesseraDomain

/// The admin console at `/admin`: server-rendered pages over the admin API's operations
/// (``AdminAPI/perform(_:by:)``), for a signed-in user holding the admin role. No JavaScript;
/// every change is a form with a CSRF token bound to the session; who may use it is
/// ``Administrator/console(session:user:now:)`` (a session older than 12 hours signs in again).
struct AdminConsole {
    let services: Services

    var api: AdminAPI { AdminAPI(services: services) }
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
                let answer = await api.perform(AdminCall(.post, "/keys/rotate"), by: admin)
                return answer.status.code < 400 ? .redirect("/admin/keys?done=rotate") : .show(.keys, answer.problemDetail)
            }
        }
        router.get("/admin/audit") { request, _ in try await page(request, .audit) }
    }

    /// The console's pages.
    enum Page {
        case users, user(String), clients, client(String), keys, audit
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
        var values: [String: Any] = ["t": ConsoleText.table(language), "admin": who.email, "csrf": csrf, "message": message ?? ""]
        if let done = query["done"], let notice = ConsoleText.table(language)["done." + done] { values["notice"] = notice }
        let template: String
        switch page {
        case .users:
            template = "adminusers"
            values["navUsers"] = true
            var call = AdminCall(.get, "/users", query: ["limit": "50"])
            call.query["q"] = query["q"]
            call.query["page_token"] = query["page_token"]
            let answer = await api.perform(call, by: who.admin)
            let users = answer.list("users").map { user in
                ["id": user["id"]?.stringValue ?? "", "email": user["email"]?.stringValue ?? "",
                 "name": user["profile"]?.objectValue?["name"]?.stringValue ?? "",
                 "verified": yesNo(user["email_verified"], language), "disabled": user["disabled"] == .bool(true),
                 "roles": Self.words(user["roles"])] as [String: Any]
            }
            values["users"] = users
            values["hasUsers"] = !users.isEmpty
            values["query"] = query["q"] ?? ""
            values["title"] = ConsoleText.text("users", language)
            if let next = answer.object?["next_page_token"]?.stringValue {
                values["next"] = "/admin/users?" + RequestParameters.encode([("q", query["q"] ?? ""), ("page_token", next)])
            }
            values["message"] = message ?? answer.problemDetail ?? ""
        case .user(let id):
            template = "adminuser"
            values["navUsers"] = true
            let answer = await api.perform(AdminCall(.get, "/users/\(id)"), by: who.admin)
            guard let user = answer.object, answer.status == .ok else { return try await self.page(request, .users, message: answer.problemDetail) }
            values.merge(userValues(user, language: language, csrf: csrf)) { $1 }
        case .clients:
            template = "adminclients"
            values["navClients"] = true
            var call = AdminCall(.get, "/clients", query: ["limit": "50"])
            call.query["page_token"] = query["page_token"]
            let answer = await api.perform(call, by: who.admin)
            let clients = answer.list("clients").map { client in
                ["id": client["client_id"]?.stringValue ?? "", "name": client["client_name"]?.stringValue ?? "",
                 "auth": client["token_endpoint_auth_method"]?.stringValue ?? "", "grants": Self.words(client["grant_types"]),
                 "firstParty": yesNo(client["first_party"], language)] as [String: Any]
            }
            values["clients"] = clients
            values["hasClients"] = !clients.isEmpty
            values["title"] = ConsoleText.text("clients", language)
            if let next = answer.object?["next_page_token"]?.stringValue {
                values["next"] = "/admin/clients?" + RequestParameters.encode([("page_token", next)])
            }
        case .client(let id):
            template = "adminclient"
            values["navClients"] = true
            let answer = await api.perform(AdminCall(.get, "/clients/\(id)"), by: who.admin)
            guard let client = answer.object, answer.status == .ok else {
                return try await self.page(request, .clients, message: answer.problemDetail)
            }
            values.merge(clientValues(client, language: language)) { $1 }
            values["secret"] = secret ?? ""
        case .keys:
            template = "adminkeys"
            values["navKeys"] = true
            values["title"] = ConsoleText.text("keys", language)
            values["keys"] = await api.perform(AdminCall(.get, "/keys"), by: who.admin).list("keys").map { key in
                ["kid": key["kid"]?.stringValue ?? "", "alg": key["alg"]?.stringValue ?? "", "status": key["status"]?.stringValue ?? "",
                 "published": yesNo(key["published"], language), "created": Self.time(key["created_at"]),
                 "retired": Self.time(key["retired_at"])]
            }
        case .audit:
            template = "adminaudit"
            values["navAudit"] = true
            values["title"] = ConsoleText.text("audit", language)
            var call = AdminCall(.get, "/audit", query: ["limit": "200"])
            call.query["user"] = query["user"]
            call.query["kind"] = query["kind"].flatMap { $0.isEmpty ? nil : $0 }
            let answer = await api.perform(call, by: who.admin)
            let events = answer.list("events").map { event in
                var row: [String: Any] = ["at": Self.time(event["at"])]
                for name in ["kind", "actor", "email", "ip", "detail"] { row[name] = event[name]?.stringValue ?? "" }
                row["userID"] = event["user_id"]?.stringValue ?? ""
                row["clientID"] = event["client_id"]?.stringValue ?? ""
                return row
            }
            values["events"] = events
            values["hasEvents"] = !events.isEmpty
            values["user"] = query["user"] ?? ""
            values["kinds"] = AuditEvent.Kind.allCases.map { ["value": $0.rawValue, "selected": $0.rawValue == query["kind"]] as [String: Any] }
            values["message"] = message ?? answer.problemDetail ?? ""
        }
        var response = Responses.html(pages.render(template, values, language: language), status: status)
        if let cookie { response.setCookie(cookie) }
        return response
    }

    func userValues(_ user: [String: JSONValue], language: PageLanguage, csrf: String) -> [String: Any] {
        let t = ConsoleText.table(language)
        let id = user["id"]?.stringValue ?? ""
        var fields: [[String: String]] = []
        for name in ["id", "email_verified", "has_password", "roles", "created_at", "updated_at", "version"] {
            fields.append(["name": t["field." + name] ?? name, "value": display(user[name], name: name, language)])
        }
        if let last = user["last_sign_in"]?.objectValue {
            let parts = [Self.time(last["at"]), last["method"]?.stringValue, last["ip"]?.stringValue].compactMap { $0 }
            fields.append(["name": t["field.last_sign_in"] ?? "", "value": parts.joined(separator: " · ")])
        }
        let disabled = user["disabled"] == .bool(true), admin = user["roles"]?.arrayValue?.contains(.string(User.adminRole)) == true
        var actions = [disabled ? "enable" : "disable", "sign-out"]
        if user["email_verified"] != .bool(true) { actions.append("verify-email") }
        if user["has_password"] == .bool(true) { actions.append("remove-password") }
        actions.append(admin ? "remove-admin" : "make-admin")
        let labels = ["enable": "enable", "disable": "disable", "sign-out": "signOutEverywhere", "verify-email": "verifyEmail",
                      "remove-password": "removePassword", "make-admin": "makeAdmin", "remove-admin": "removeAdmin"]
        return [
            "id": id, "email": user["email"]?.stringValue ?? "", "disabled": disabled, "fields": fields,
            "title": user["email"]?.stringValue ?? "",
            "profile": (user["profile"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { name, value in
                ["name": name, "value": value.stringValue ?? (try? String(decoding: CanonicalJSON.encode(value), as: UTF8.self)) ?? ""]
            },
            "identities": (user["identities"]?.arrayValue ?? []).compactMap(\.objectValue).map { identity in
                ["provider": identity["provider"]?.stringValue ?? "", "subject": identity["subject"]?.stringValue ?? "",
                 "email": identity["email"]?.stringValue ?? ""]
            },
            "sessions": (user["sessions"]?.arrayValue ?? []).compactMap(\.objectValue).map { session in
                ["signedIn": Self.time(session["signed_in_at"]), "methods": Self.words(session["methods"]), "expires": Self.time(session["expires_at"])]
            },
            "consents": (user["consents"]?.arrayValue ?? []).compactMap(\.objectValue).map { consent in
                ["clientID": consent["client_id"]?.stringValue ?? "", "clientName": consent["client_name"]?.stringValue ?? "",
                 "scope": consent["scope"]?.stringValue ?? ""]
            },
            "actions": actions.map { ["id": id, "action": $0, "label": t[labels[$0] ?? $0] ?? $0, "csrf": csrf] },
        ]
    }

    func clientValues(_ client: [String: JSONValue], language: PageLanguage) -> [String: Any] {
        let t = ConsoleText.table(language)
        let fields = ["client_id", "token_endpoint_auth_method", "grant_types", "redirect_uris", "post_logout_redirect_uris", "scope",
                      "first_party", "subject_type", "resource_server", "require_pushed_authorization_requests", "authenticator",
                      "device_sso_group", "link_domains", "ios_apps", "previous_secret_expires_at", "created_at", "version"].compactMap { name -> [String: String]? in
            guard let value = client[name], value != .null, value != .array([]) else { return nil }
            return ["name": t["field." + name] ?? name, "value": display(value, name: name, language)]
        }
        return [
            "id": client["client_id"]?.stringValue ?? "", "name": client["client_name"]?.stringValue ?? "",
            "title": client["client_name"]?.stringValue ?? "", "fields": fields,
            "version": client["version"].map { display($0, name: "version", language) } ?? "",
            "redirectURIs": (client["redirect_uris"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: "\n"),
            "scope": client["scope"]?.stringValue ?? "", "firstPartyChecked": client["first_party"] == .bool(true),
            "hasSecret": client["token_endpoint_auth_method"]?.stringValue?.hasPrefix("client_secret") == true,
        ]
    }

    func display(_ value: JSONValue?, name: String, _ language: PageLanguage) -> String {
        switch value {
        case .bool?: yesNo(value, language)
        case .int(let number)? where name.hasSuffix("_at"): Self.time(.int(number))
        case .int(let number)?: String(number)
        case .string(let text)?: text
        case .array?: Self.words(value)
        default: ""
        }
    }

    func yesNo(_ value: JSONValue?, _ language: PageLanguage) -> String {
        ConsoleText.text(value == .bool(true) ? "yes" : "no", language)
    }

    static func words(_ value: JSONValue?) -> String {
        (value?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: " ")
    }

    static func time(_ value: JSONValue?) -> String {
        guard case .int(let seconds)? = value else { return "" }
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

    func userAction(_ request: Request, id: String, action: String) async throws -> Response {
        try await self.action(request) { admin, form, language in
            let path = "/users/\(id)"
            let call: AdminCall
            switch action {
            case "disable", "enable", "sign-out", "verify-email": call = AdminCall(.post, path + "/" + action)
            case "remove-password": call = AdminCall(.delete, path + "/password")
            case "make-admin", "remove-admin":
                call = AdminCall(.patch, path, body: ["roles": .array(action == "make-admin" ? [.string(User.adminRole)] : [])], ifMatch: "*")
            case "delete":
                let current = await api.perform(AdminCall(.get, path), by: admin)
                guard let email = current.object?["email"]?.stringValue, form["confirm"]?.trimmingCharacters(in: .whitespaces).lowercased() == email else {
                    return .show(.user(id), current.problemDetail ?? ConsoleText.text("typeToConfirm", language))
                }
                call = AdminCall(.delete, path)
            default:
                return .show(.user(id), "unknown action")
            }
            let answer = await api.perform(call, by: admin)
            guard answer.status.code < 400 else { return .show(.user(id), answer.problemDetail) }
            return .redirect(action == "delete" ? "/admin/users?done=delete-user" : "/admin/users/\(Self.pathSegment(id))?done=\(action)")
        }
    }

    func clientAction(_ request: Request, id: String, action: String) async throws -> Response {
        try await self.action(request) { admin, form, language in
            let path = "/clients/\(id)"
            switch action {
            case "update":
                let uris = (form["redirect_uris"] ?? "").split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.isEmpty }
                let body: [String: JSONValue] = [
                    "client_name": .string(form["client_name"] ?? ""), "redirect_uris": .array(uris.map(JSONValue.string)),
                    "scope": .string(form["scope"] ?? ""), "first_party": .bool(form["first_party"] == "true"),
                ]
                let answer = await api.perform(AdminCall(.patch, path, body: body, ifMatch: "\"\(form["version"] ?? "")\""), by: admin)
                guard answer.status.code < 400 else { return .show(.client(id), answer.problemDetail) }
                return .redirect("/admin/clients/\(Self.pathSegment(id))?done=update")
            case "secret":
                let grace = Int64(form["grace_period"] ?? "0") ?? 0
                let answer = await api.perform(AdminCall(.post, path + "/secret", body: ["grace_period": .int(grace)]), by: admin)
                guard answer.status.code < 400, let secret = answer.object?["client_secret"]?.stringValue else {
                    return .show(.client(id), answer.problemDetail)
                }
                return .show(.client(id), nil, secret: secret)
            case "delete":
                guard form["confirm"]?.trimmingCharacters(in: .whitespaces) == id else {
                    return .show(.client(id), ConsoleText.text("typeToConfirm", language))
                }
                let answer = await api.perform(AdminCall(.delete, path), by: admin)
                guard answer.status.code < 400 else { return .show(.client(id), answer.problemDetail) }
                return .redirect("/admin/clients?done=delete-client")
            default:
                return .show(.client(id), "unknown action")
            }
        }
    }

    func createUser(_ request: Request) async throws -> Response {
        try await action(request) { admin, form, _ in
            var body: [String: JSONValue] = ["email": .string(form["email"] ?? ""), "email_verified": .bool(form["email_verified"] == "true"),
                                             "roles": .array(form["admin"] == "true" ? [.string(User.adminRole)] : [])]
            if let password = form["password"], !password.isEmpty { body["password"] = .string(password) }
            if let name = form["name"]?.trimmingCharacters(in: .whitespaces), !name.isEmpty { body["profile"] = .object(["name": .string(name)]) }
            let answer = await api.perform(AdminCall(.post, "/users", body: body), by: admin)
            guard answer.status.code < 400, let id = answer.object?["id"]?.stringValue else { return .show(.users, answer.problemDetail) }
            return .redirect("/admin/users/\(Self.pathSegment(id))?done=created")
        }
    }

    /// Registers a client of one of the three usual kinds; its page then shows the secret, once.
    func createClient(_ request: Request) async throws -> Response {
        try await action(request) { admin, form, _ in
            let uris = (form["redirect_uris"] ?? "").split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
            var body: [String: JSONValue] = ["client_name": .string(form["client_name"] ?? ""), "first_party": .bool(form["first_party"] == "true"),
                                             "scope": .string(form["scope"] ?? "")]
            switch form["kind"] {
            case "native":
                body["token_endpoint_auth_method"] = .string("none")
                body["redirect_uris"] = .array(uris.map(JSONValue.string))
            case "service":
                body["grant_types"] = .array([.string(GrantType.clientCredentials)])
            default:
                body["redirect_uris"] = .array(uris.map(JSONValue.string))
            }
            let answer = await api.perform(AdminCall(.post, "/clients", body: body), by: admin)
            guard answer.status.code < 400, let id = answer.object?["client_id"]?.stringValue else { return .show(.clients, answer.problemDetail) }
            return .show(.client(id), nil, secret: answer.object?["client_secret"]?.stringValue)
        }
    }

    static func pathSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? text
    }
}

extension AdminAnswer {
    /// The problem's `detail` when the call failed.
    var problemDetail: String? {
        status.code >= 400 ? body?.objectValue?["detail"]?.stringValue : nil
    }

    var object: [String: JSONValue]? { body?.objectValue }

    /// The objects of a listing member.
    func list(_ member: String) -> [[String: JSONValue]] {
        guard case .array(let items)? = object?[member] else { return [] }
        return items.compactMap(\.objectValue)
    }
}
