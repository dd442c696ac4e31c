import TesseraCore

/// `authorization_code` (RFC 6749 §4.1.3, PKCE RFC 7636 §4.6, OpenID Connect Core §3.1.3).
///
/// A code works once. Its second redemption by the same client fails and revokes every
/// token the first one produced (RFC 6749 §4.1.2, RFC 9700 §4.5).
public struct AuthorizationCodeGrant: TokenGrant {
    public let grantType = GrantType.authorizationCode
    let grants: any GrantStore
    let families: TokenFamilies
    let tokens: UserGrantTokens
    let deviceSessions: DeviceSessions
    let clock: WallClock

    package init(grants: any GrantStore, families: TokenFamilies, tokens: UserGrantTokens, deviceSessions: DeviceSessions, clock: WallClock) {
        self.grants = grants
        self.families = families
        self.tokens = tokens
        self.deviceSessions = deviceSessions
        self.clock = clock
    }

    public func exchange(_ request: TokenRequest) async throws -> TokenResponse {
        let parameters = request.parameters, client = request.client
        guard let code = parameters["code"] else { throw OAuthError.invalidRequest("The code parameter is required.") }
        let hash = tokenHash(code)
        let now = clock.now()
        guard let record = try await grants.code(codeHash: hash) else {
            throw OAuthError.invalidGrant("The authorization code is invalid.")
        }
        // The client first: a stranger holding a used code must not be able to revoke the
        // owner's tokens by replaying it.
        guard record.clientID == client.id else {
            throw OAuthError.invalidGrant("The authorization code was issued to another client.")
        }
        if record.redeemedAt != nil {
            try await families.replayed(record, now: now)
            throw OAuthError.invalidGrant("The authorization code was already used; the tokens issued with it are revoked.")
        }
        guard record.expiresAt > now else { throw OAuthError.invalidGrant("The authorization code has expired.") }
        guard parameters["redirect_uri"] == record.redirectURI else {
            throw OAuthError.invalidGrant("redirect_uri does not match the one of the authorization request.")
        }
        let verifier = parameters["code_verifier"]
        if let challenge = record.codeChallenge {
            guard let verifier else { throw OAuthError.invalidGrant("code_verifier is required: the request used PKCE.") }
            guard PKCE.isValidVerifier(verifier),
                  constantTimeEquals(Array(PKCE.createChallenge(verifier).utf8), Array(challenge.utf8)) else {
                throw OAuthError.invalidGrant("code_verifier does not match the code_challenge.")
            }
        } else if verifier != nil {
            throw OAuthError.invalidGrant("code_verifier was sent but the authorization request had no code_challenge.")
        }

        let user = try await UserGrantTokens.account(record.userID, in: tokens.users)
        var (grant, refresh) = tokens.mint(client: client, userID: record.userID, scope: record.scope, claims: record.claims,
                                           authTime: record.authTime, amr: record.amr, sid: record.sid, now: now)
        // Native SSO: device_sso starts a device session the vendor's other apps can join.
        let device = try await deviceSessions.start(for: &grant, client: client)
        switch try await families.redeem(codeHash: hash, grant: grant, refreshToken: refresh?.record, now: now) {
        case .redeemed:
            return try await tokens.response(grant: grant, user: user, client: client, scope: record.scope, nonce: record.nonce,
                                             refreshToken: refresh?.token, dsHash: device?.session.dsHash, deviceSecret: device?.secret)
        case .replayed:
            if let device { try await deviceSessions.end(device.session.id) }
            throw OAuthError.invalidGrant("The authorization code was already used; the tokens issued with it are revoked.")
        case .notFound:
            if let device { try await deviceSessions.end(device.session.id) }
            throw OAuthError.invalidGrant("The authorization code is invalid.")
        }
    }
}
