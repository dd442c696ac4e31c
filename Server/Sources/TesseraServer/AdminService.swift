import Foundation
import TesseraCore
import TesseraDomain

/// The admin operations in process, over the services, as `admin`: what the admin API serves
/// over HTTP, the console shows, and the CLI runs on the database (as ``Administrator/operator``).
/// Every error comes out as ``AdminProblem``; an unforeseen one is logged here.
public struct AdminService: AdminOperations {
    let services: Services
    let admin: Administrator

    public init(services: Services, admin: Administrator) {
        self.services = services
        self.admin = admin
    }

    var clients: ClientAdministration { services.clientAdministration }
    var users: UserAdministration { services.userAdministration }

    /// Runs one operation, its errors as problem details.
    func answer<T: Sendable>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch {
            let problem = AdminProblem(error)
            if problem.status == 500 {
                services.logger.error("admin operation failed", metadata: ["operation": "\(operation)", "error": "\(error)"])
            }
            throw problem
        }
    }

    // MARK: Clients

    public func clients(pageToken: String?, limit: Int?) async throws -> AdminClientList {
        try await answer("clients") {
            let page = try await clients.list(after: try AdminPaging.cursor(pageToken, as: ClientCursor.self), limit: try AdminPaging.limit(limit))
            return AdminClientList(clients: page.items.map(AdminClientInfo.init), nextPageToken: AdminPaging.token(page.next))
        }
    }

    public func client(_ id: String) async throws -> AdminClientInfo {
        try await answer("client") { AdminClientInfo(try await clients.client(id: id)) }
    }

    public func registerClient(_ settings: AdminClientSettings) async throws -> AdminClientInfo {
        try await answer("registerClient") {
            let (client, secret) = try await clients.register(try settings.registration(), by: admin)
            var info = AdminClientInfo(client)
            info.clientSecret = secret
            return info
        }
    }

    public func updateClient(_ id: String, _ settings: AdminClientSettings, ifVersion version: Int64?) async throws -> AdminClientInfo {
        try await answer("updateClient") {
            AdminClientInfo(try await clients.update(id: id, try settings.changes(), ifVersion: version, by: admin))
        }
    }

    public func deleteClient(_ id: String) async throws {
        try await answer("deleteClient") { try await clients.delete(id: id, by: admin) }
    }

    public func rotateSecret(_ id: String, _ rotation: AdminSecretRotation) async throws -> AdminClientInfo {
        try await answer("rotateSecret") {
            let (client, secret) = try await clients.rotateSecret(id: id, gracePeriod: rotation.gracePeriod ?? 0, by: admin)
            var info = AdminClientInfo(client)
            info.clientSecret = secret
            return info
        }
    }

    // MARK: Users

    public func users(matching query: String?, pageToken: String?, limit: Int?) async throws -> AdminUserList {
        try await answer("users") {
            let page = try await users.list(matching: query, after: try AdminPaging.cursor(pageToken, as: String.self), limit: try AdminPaging.limit(limit))
            return AdminUserList(users: page.items.map(AdminUserInfo.init), nextPageToken: AdminPaging.token(page.next))
        }
    }

    public func user(_ reference: String) async throws -> AdminUserDetails {
        try await answer("user") { AdminUserDetails(try await users.details(of: reference)) }
    }

    public func createUser(_ user: AdminNewUser) async throws -> AdminUserInfo {
        try await answer("createUser") {
            AdminUserInfo(try await users.create(email: user.email, password: user.password, profile: user.profile ?? [:],
                                                 emailVerified: user.emailVerified ?? true, roles: Set(user.roles ?? []), by: admin))
        }
    }

    public func updateUser(_ reference: String, _ changes: AdminUserChanges, ifVersion version: Int64?) async throws -> AdminUserInfo {
        try await answer("updateUser") {
            AdminUserInfo(try await users.update(reference, profile: changes.profile ?? [:], roles: changes.roles.map(Set.init),
                                                 ifVersion: version, by: admin))
        }
    }

    public func deleteUser(_ reference: String) async throws {
        try await answer("deleteUser") { try await services.deleteUser(try await users.user(reference), by: admin) }
    }

    public func setPassword(_ reference: String, _ change: AdminPasswordChange?) async throws -> AdminUserInfo {
        try await answer("setPassword") {
            if let password = change?.password, password.isEmpty { throw AdminProblem.badRequest("'password' is required") }
            return AdminUserInfo(try await users.setPassword(reference, to: change?.password, by: admin))
        }
    }

    public func markEmailVerified(_ reference: String) async throws -> AdminUserInfo {
        try await answer("markEmailVerified") { AdminUserInfo(try await users.markEmailVerified(reference, by: admin)) }
    }

    public func disableUser(_ reference: String) async throws -> AdminUserInfo {
        try await answer("disableUser") { AdminUserInfo(try await users.disable(reference, by: admin)) }
    }

    public func enableUser(_ reference: String) async throws -> AdminUserInfo {
        try await answer("enableUser") { AdminUserInfo(try await users.enable(reference, by: admin)) }
    }

    public func signOutEverywhere(_ reference: String) async throws {
        try await answer("signOutEverywhere") { try await users.signOutEverywhere(reference, by: admin) }
    }

    public func importUsers(_ request: AdminImportRequest) async throws -> AdminImportReport {
        try await answer("importUsers") {
            let rows = try UserImportRequest(request).rows()
            let batch = request.batchSize ?? UserImport.defaultBatchSize
            guard (1...5000).contains(batch) else { throw AdminProblem.badRequest("'batch_size' must be 1 to 5000") }
            return AdminImportReport(try await services.userImport.run(rows, batchSize: batch, by: admin))
        }
    }

    // MARK: Keys and audit

    public func keys() async throws -> AdminKeyList {
        try await answer("keys") { AdminKeyList(keys: try await services.keys.list().map(AdminKeyInfo.init)) }
    }

    public func rotateKeys() async throws -> AdminKeyList {
        try await answer("rotateKeys") {
            let kid = try await services.rotateKeys(by: admin)
            return AdminKeyList(current: kid, keys: try await services.keys.list().map(AdminKeyInfo.init))
        }
    }

    public func audit(_ query: AdminAuditQuery) async throws -> AdminAuditEventList {
        try await answer("audit") {
            var filter = AuditFilter()
            if let kind = query.kind, !kind.isEmpty {
                guard let parsed = AuditEvent.Kind(rawValue: kind) else {
                    throw AdminProblem.badRequest("'\(kind)' is not an event kind (\(AuditEvent.Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                filter.kind = parsed
            }
            if let user = query.user, !user.isEmpty {
                filter.userID = (try? await users.user(user))?.id ?? user
            }
            filter.since = query.since
            let events = try await services.audit.events(filter, limit: try AdminPaging.limit(query.limit))
            return AdminAuditEventList(events: events.map(AdminAuditEventInfo.init))
        }
    }
}

/// An import request's file, read into rows (a format, a hash config or a provider map that
/// is not right is the request's problem).
struct UserImportRequest {
    let request: AdminImportRequest

    init(_ request: AdminImportRequest) {
        self.request = request
    }

    func rows() throws -> [Result<UserImportRow, UserImportFailure>] {
        guard let format = UserImportFile.Format(rawValue: request.format) else {
            throw AdminProblem.badRequest("'format' must be one of \(UserImportFile.Format.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        for (firebaseID, providerID) in request.providers ?? [:] where firebaseID.isEmpty || providerID.isEmpty {
            throw AdminProblem.badRequest("'providers' maps Firebase provider ids to this server's provider ids, e.g. {\"google.com\": \"google\"}")
        }
        let hashConfig: FirebaseHashConfig?
        do {
            switch request.hashConfig {
            case nil, .null?: hashConfig = nil
            case .string(let text)?: hashConfig = try FirebaseHashConfig(parsing: text)
            case let value?: hashConfig = try FirebaseHashConfig(parsing: String(decoding: try CanonicalJSON.encode(value), as: UTF8.self))
            }
        } catch let error as ImportedHashError {
            throw AdminProblem.badRequest("'hash_config': \(error.message)")
        }
        do {
            return try UserImportFile.rows(request.data, format: format, hashConfig: hashConfig, providers: request.providers ?? [:])
        } catch let error as UserImportFile.ImportFileError {
            throw AdminProblem.badRequest(error.description)
        }
    }
}

// MARK: The answers, from the models

extension AdminClientInfo {
    package init(_ client: Client) {
        self.init(
            clientID: client.id, clientName: client.name, redirectURIs: client.redirectURIs,
            postLogoutRedirectURIs: client.postLogoutRedirectURIs, grantTypes: client.grantTypes, scope: client.scopes.description,
            tokenEndpointAuthMethod: client.authMethod.rawValue, firstParty: client.firstParty, subjectType: client.subjectType.rawValue,
            resourceServer: client.resourceServer, linkDomains: client.appLinks.linkDomains, iosApps: client.appLinks.appleAppIDs,
            androidApps: client.appLinks.androidApps.map { AdminAndroidApp(packageName: $0.packageName, sha256CertFingerprints: $0.certificateFingerprints) },
            createdAt: client.createdAt, version: client.version, requirePushedAuthorizationRequests: client.requirePushedRequests,
            authenticator: client.authenticator)
        requireMFA = client.requireMFA
        deviceSSOGroup = client.deviceSSOGroup
        jwks = client.jwks
        assertionIssuer = client.assertionIssuer
        assertionLifetime = client.assertionLifetime
        if client.previousSecretHash != nil { previousSecretExpiresAt = client.previousSecretExpiresAt }
    }
}

extension AdminUserInfo {
    package init(_ user: User) {
        self.init(id: user.id, email: user.email, emailVerified: user.emailVerified, hasPassword: user.passwordHash != nil,
                  disabled: user.isDisabled, disabledAt: user.disabledAt, roles: user.roles.sorted(), profile: user.profile,
                  createdAt: user.createdAt, updatedAt: user.updatedAt, version: user.version)
    }
}

extension AdminUserDetails {
    init(_ details: UserDetails) {
        self.init(
            user: AdminUserInfo(details.user),
            identities: details.identities.map { Identity(provider: $0.providerID, subject: $0.subject, email: $0.email, proven: $0.proven) },
            sessions: details.sessions.map { Session(sid: $0.sid, signedInAt: $0.authTime, methods: $0.amr, expiresAt: $0.expiresAt) },
            consents: details.consents.map { consent, name in
                Consent(clientID: consent.clientID, clientName: name, scope: consent.scopes.description, grantedAt: consent.grantedAt)
            },
            lastSignIn: details.lastSignIn.map { SignIn(at: $0.at, ip: $0.ip, clientID: $0.clientID, method: $0.detail) })
    }
}

extension AdminKeyInfo {
    init(_ key: SigningKeyInfo) {
        self.init(kid: key.kid, alg: key.algorithm.rawValue, status: key.state.rawValue, published: key.published,
                  createdAt: key.createdAt, activatedAt: key.activatedAt, retiredAt: key.retiredAt)
    }
}

extension AdminAuditEventInfo {
    init(_ event: AuditEvent) {
        self.init(id: event.id, kind: event.kind.rawValue, at: event.at, actor: event.actor.rawValue, userID: event.userID,
                  clientID: event.clientID, email: event.email, ip: event.ip, detail: event.detail)
    }
}

extension AdminImportReport {
    public init(_ report: UserImportReport) {
        self.init(created: report.created, updated: report.updated, refused: report.failures.count,
                  failures: report.failures.map { Failure(line: $0.line, reference: $0.reference, reason: $0.reason) })
    }
}
