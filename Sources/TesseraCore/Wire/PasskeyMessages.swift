/// Passkeys on the wire: the JSON forms WebAuthn Level 3 gives the browser's ceremonies
/// (§5.1.8 `PublicKeyCredential.toJSON()`, §5.1.9 `parseCreationOptionsFromJSON`,
/// §5.1.10 `parseRequestOptionsFromJSON`). Binary members are base64url without padding. The
/// hosted pages hand these to the browser as they are; an app gives the same values to its
/// platform's passkey API (on Apple platforms `ASAuthorizationPlatformPublicKeyCredentialProvider`)
/// and sends back what it answered in the same shapes.

/// `PublicKeyCredentialCreationOptionsJSON` (§5.4): what registering a passkey asks of the authenticator.
public struct PasskeyCreationOptions: Codable, Sendable, Equatable {
    /// `PublicKeyCredentialRpEntity`: the relying party the passkey belongs to.
    public struct RelyingParty: Codable, Sendable, Equatable {
        /// The relying party ID: `passkey-rp-id`, the issuer's host by default.
        public var id: String
        /// The name an authenticator may show: the server's `product-name` (`Tessera` by default).
        public var name: String
        /// A relying party from its ID and name.
        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// `PublicKeyCredentialUserEntityJSON`: the account, named for the person choosing among their passkeys.
    public struct User: Codable, Sendable, Equatable {
        /// The user handle (base64url): opaque, never the address.
        public var id: String
        /// The account's email address, shown to tell its passkeys from other accounts'.
        public var name: String
        /// The profile's `name` claim, or the email address when it has none.
        public var displayName: String
        /// A user entity from its handle, address and display name.
        public init(id: String, name: String, displayName: String) {
            self.id = id
            self.name = name
            self.displayName = displayName
        }
    }

    /// `PublicKeyCredentialParameters`: one signature algorithm the server accepts.
    public struct Parameter: Codable, Sendable, Equatable {
        /// Always `public-key`.
        public var type: String = "public-key"
        /// A COSE algorithm number (-7 ES256, -8 EdDSA, -257 RS256).
        public var alg: Int
        /// A parameter for the COSE algorithm `alg`.
        public init(alg: Int) { self.alg = alg }
    }

    /// `AuthenticatorSelectionCriteria`: the kind of credential the authenticator should make.
    public struct Selection: Codable, Sendable, Equatable {
        /// `discouraged`, `preferred` or `required`; the server asks `required` (a discoverable credential).
        public var residentKey: String
        /// WebAuthn Level 1's form of `residentKey`: true when it is `required`.
        public var requireResidentKey: Bool
        /// `required`, `preferred` or `discouraged`; the server asks `preferred`.
        public var userVerification: String
        /// Selection criteria from their parts.
        public init(residentKey: String, requireResidentKey: Bool, userVerification: String) {
            self.residentKey = residentKey
            self.requireResidentKey = requireResidentKey
            self.userVerification = userVerification
        }
    }

    /// The relying party the passkey is for.
    public var rp: RelyingParty
    /// The account the passkey is made for.
    public var user: User
    /// base64url.
    public var challenge: String
    /// The signature algorithms accepted, most preferred first (ES256, EdDSA, RS256).
    public var pubKeyCredParams: [Parameter]
    /// Milliseconds.
    public var timeout: Int
    /// The user's passkeys already registered, so an authenticator holding one says so.
    public var excludeCredentials: [PasskeyDescriptor]
    /// The kind of credential asked for: discoverable, user verification preferred.
    public var authenticatorSelection: Selection
    /// The attestation asked for: `none`, `indirect`, `direct` or `enterprise`; the server asks `none`.
    public var attestation: String
    /// WebAuthn Level 3's hints for the client's UI (`security-key`, `client-device`, `hybrid`); empty when none.
    public var hints: [String]

    /// Creation options from their parts.
    public init(rp: RelyingParty, user: User, challenge: String, pubKeyCredParams: [Parameter], timeout: Int,
                excludeCredentials: [PasskeyDescriptor], authenticatorSelection: Selection, attestation: String, hints: [String] = []) {
        self.rp = rp
        self.user = user
        self.challenge = challenge
        self.pubKeyCredParams = pubKeyCredParams
        self.timeout = timeout
        self.excludeCredentials = excludeCredentials
        self.authenticatorSelection = authenticatorSelection
        self.attestation = attestation
        self.hints = hints
    }
}

/// `PublicKeyCredentialDescriptorJSON`.
public struct PasskeyDescriptor: Codable, Sendable, Equatable {
    /// Always `public-key`.
    public var type: String = "public-key"
    /// The credential id, base64url.
    public var id: String
    /// How the client can reach the authenticator (`usb`, `nfc`, `ble`, `smart-card`, `hybrid`, `internal`); nil when unknown.
    public var transports: [String]?
    /// A descriptor of the credential `id`, with the transports it reported.
    public init(id: String, transports: [String]?) {
        self.id = id
        self.transports = transports
    }
}

/// `PublicKeyCredentialRequestOptionsJSON` (§5.5): what signing in with a passkey asks. With no
/// `allowCredentials` the authenticator offers every passkey it holds for the relying party
/// (discoverable credentials), so nobody types an address first.
public struct PasskeyRequestOptions: Codable, Sendable, Equatable {
    /// 32 random bytes, base64url: single use, bound to the client or login page it was given to.
    public var challenge: String
    /// Milliseconds the ceremony may take: the challenge's lifetime (5 minutes).
    public var timeout: Int
    /// The relying party ID: `passkey-rp-id`, the issuer's host by default.
    public var rpId: String
    /// The passkeys that may answer; empty (as the server sends it): any the authenticator holds for the relying party.
    public var allowCredentials: [PasskeyDescriptor]
    /// `required`, `preferred` or `discouraged`; the server asks `preferred`.
    public var userVerification: String

    /// Request options from their parts.
    public init(challenge: String, timeout: Int, rpId: String, allowCredentials: [PasskeyDescriptor], userVerification: String) {
        self.challenge = challenge
        self.timeout = timeout
        self.rpId = rpId
        self.allowCredentials = allowCredentials
        self.userVerification = userVerification
    }
}

/// `RegistrationResponseJSON` (§5.1.8): what the browser answered `navigator.credentials.create`.
public struct PasskeyRegistration: Codable, Sendable, Equatable {
    /// `AuthenticatorAttestationResponseJSON`: the authenticator's answer, its binary members base64url.
    public struct Response: Codable, Sendable, Equatable {
        /// The client data (type, challenge, origin) as the client serialized it, base64url.
        public var clientDataJSON: String
        /// The CBOR attestation object (authenticator data with the new public key, attestation statement), base64url.
        public var attestationObject: String
        /// How the authenticator can be reached, as `getTransports()` reported; nil when not reported.
        public var transports: [String]?
        /// An attestation response from its parts.
        public init(clientDataJSON: String, attestationObject: String, transports: [String]?) {
            self.clientDataJSON = clientDataJSON
            self.attestationObject = attestationObject
            self.transports = transports
        }
    }

    /// The new credential's id, base64url.
    public var id: String
    /// The same id as `id` (WebAuthn sends both), base64url.
    public var rawId: String
    /// Always `public-key`.
    public var type: String
    /// The authenticator's attestation response.
    public var response: Response
    /// `platform` or `cross-platform` when the client says; nil otherwise.
    public var authenticatorAttachment: String?

    /// A registration response from its parts.
    public init(id: String, rawId: String, type: String = "public-key", response: Response, authenticatorAttachment: String? = nil) {
        self.id = id
        self.rawId = rawId
        self.type = type
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
    }
}

/// `AuthenticationResponseJSON` (§5.1.8): what the browser answered `navigator.credentials.get`.
public struct PasskeyAssertion: Codable, Sendable, Equatable {
    /// `AuthenticatorAssertionResponseJSON`: the authenticator's signed answer, its binary members base64url.
    public struct Response: Codable, Sendable, Equatable {
        /// The client data (type, challenge, origin) as the client serialized it, base64url.
        public var clientDataJSON: String
        /// The authenticator data (relying party ID hash, flags, signature counter), base64url.
        public var authenticatorData: String
        /// The signature over the authenticator data and the client data's SHA-256 hash, base64url.
        public var signature: String
        /// The user handle the passkey was made for; a discoverable credential always has one.
        public var userHandle: String?
        /// An assertion response from its parts.
        public init(clientDataJSON: String, authenticatorData: String, signature: String, userHandle: String?) {
            self.clientDataJSON = clientDataJSON
            self.authenticatorData = authenticatorData
            self.signature = signature
            self.userHandle = userHandle
        }
    }

    /// The passkey's credential id, base64url.
    public var id: String
    /// The same id as `id` (WebAuthn sends both); the server refuses an answer where they differ.
    public var rawId: String
    /// Always `public-key`.
    public var type: String
    /// The authenticator's assertion response.
    public var response: Response

    /// An authentication response from its parts.
    public init(id: String, rawId: String, type: String = "public-key", response: Response) {
        self.id = id
        self.rawId = rawId
        self.type = type
        self.response = response
    }
}
