import TesseraCore

/// Which scopes a request gets, for each way of asking: the one home of the scope rules
/// (RFC 6749 §3.3). Each returns the scopes granted or throws a ``ScopeRefusal``, which the
/// caller answers in its own wire shape (OAuth's `invalid_scope`, the native API's).
package enum ScopePolicy {
    /// At the authorization endpoint (OpenID Connect Core §3.1.2.1): a known scope the
    /// client may not have is refused; an unknown one is ignored.
    package static func authorization(_ requested: ScopeSet, client: Client) throws(ScopeRefusal) -> ScopeSet {
        var granted: [String] = []
        for scope in requested.values {
            if client.scopes.contains(scope) {
                granted.append(scope)
            } else if ScopeCatalogue.definition(scope) != nil {
                throw .notAllowed(scope)
            }
        }
        return ScopeSet(granted)
    }

    /// Without a browser (the native API, an upstream token exchange): the client's own
    /// scopes, and never a sensitive one, whose consent only the hosted pages can ask for.
    package static func withoutConsent(_ requested: ScopeSet, client: Client) throws(ScopeRefusal) -> ScopeSet {
        for scope in requested.values {
            guard client.scopes.contains(scope) else { throw .notAllowed(scope) }
            if ScopeCatalogue.definition(scope)?.sensitive == true { throw .needsConsent(scope) }
        }
        return requested
    }

    /// The `scope` parameter of a sign-in flow that ends without a page (the native API's
    /// grants, email links), by ``withoutConsent(_:client:)``, refused as a ``FlowFailure``.
    package static func flowScope(_ parameter: String?, client: Client) throws -> ScopeSet {
        guard let parameter else { throw FlowFailure.missingParameter("scope") }
        do { return try withoutConsent(ScopeSet(parsing: parameter), client: client) } catch {
            throw FlowFailure.scopeRefused(error.oauthError.errorDescription ?? "The scope is not allowed.")
        }
    }

    /// `client_credentials`: the client's scopes that need no user, all of them unless some
    /// are asked for.
    package static func clientCredentials(_ requested: ScopeSet?, client: Client) throws(ScopeRefusal) -> ScopeSet {
        let userScopes = ScopeSet([ScopeCatalogue.openid, ScopeCatalogue.offlineAccess])
        guard let requested else { return client.scopes.subtracting(userScopes) }
        if requested.contains(ScopeCatalogue.openid) || requested.contains(ScopeCatalogue.offlineAccess) { throw .needsUser }
        guard requested.isSubset(of: client.scopes) else { throw .notAllowed(requested.subtracting(client.scopes).description) }
        return requested
    }

    /// A refresh: the scopes of the grant, or fewer (RFC 6749 §6).
    package static func refresh(_ requested: ScopeSet?, granted: ScopeSet) throws(ScopeRefusal) -> ScopeSet {
        guard let requested else { return granted }
        guard requested.isSubset(of: granted) else { throw .exceedsGrant }
        return requested
    }
}

/// Why a scope was refused.
package enum ScopeRefusal: Error, Equatable {
    /// The client is not registered for it.
    case notAllowed(String)
    /// Its consent can only be given on the hosted pages.
    case needsConsent(String)
    /// `openid` or `offline_access` without a user.
    case needsUser
    /// More than the grant being refreshed has.
    case exceedsGrant

    /// As OAuth's `invalid_scope`.
    package var oauthError: OAuthError {
        switch self {
        case .notAllowed(let scope): OAuthError(.invalidScope, "This client is not allowed the scope '\(scope)'.")
        case .needsConsent(let scope):
            OAuthError(.invalidScope, "The scope '\(scope)' needs the user's consent on the hosted pages: sign in through the browser for it.")
        case .needsUser: OAuthError(.invalidScope, "openid and offline_access need a user; client_credentials has none.")
        case .exceedsGrant: OAuthError(.invalidScope, "The requested scope exceeds the scope originally granted.")
        }
    }
}
