/// Passkeys on the wire: the JSON forms WebAuthn Level 3 gives the browser's ceremonies
/// (§5.1.8 `PublicKeyCredential.toJSON()`, §5.1.9 `parseCreationOptionsFromJSON`,
/// §5.1.10 `parseRequestOptionsFromJSON`). Binary members are base64url without padding. The
/// hosted pages hand these to the browser as they are; an app gives the same values to its
/// platform's passkey API (on Apple platforms `ASAuthorizationPlatformPublicKeyCredentialProvider`)
/// and sends back what it answered in the same shapes.

/// `PublicKeyCredentialCreationOptionsJSON` (§5.4): what registering a passkey asks of the authenticator.
public struct PasskeyCreationOptions: Codable, Sendable, Equatable {
    public struct RelyingParty: Codable, Sendable, Equatable {
        public var id: String
        public var name: String
        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// `PublicKeyCredentialUserEntityJSON`: the account, named for the person choosing among their passkeys.
    public struct User: Codable, Sendable, Equatable {
        /// The user handle (base64url): opaque, never the address.
        public var id: String
        public var name: String
        public var displayName: String
        public init(id: String, name: String, displayName: String) {
            self.id = id
            self.name = name
            self.displayName = displayName
        }
    }

    public struct Parameter: Codable, Sendable, Equatable {
        public var type: String = "public-key"
        /// A COSE algorithm number (-7 ES256, -8 EdDSA, -257 RS256).
        public var alg: Int
        public init(alg: Int) { self.alg = alg }
    }

    public struct Selection: Codable, Sendable, Equatable {
        public var residentKey: String
        public var requireResidentKey: Bool
        public var userVerification: String
        public init(residentKey: String, requireResidentKey: Bool, userVerification: String) {
            self.residentKey = residentKey
            self.requireResidentKey = requireResidentKey
            self.userVerification = userVerification
        }
    }

    public var rp: RelyingParty
    public var user: User
    /// base64url.
    public var challenge: String
    public var pubKeyCredParams: [Parameter]
    /// Milliseconds.
    public var timeout: Int
    /// The user's passkeys already registered, so an authenticator holding one says so.
    public var excludeCredentials: [PasskeyDescriptor]
    public var authenticatorSelection: Selection
    public var attestation: String
    public var hints: [String]

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
    public var type: String = "public-key"
    /// The credential id, base64url.
    public var id: String
    public var transports: [String]?
    public init(id: String, transports: [String]?) {
        self.id = id
        self.transports = transports
    }
}

/// `PublicKeyCredentialRequestOptionsJSON` (§5.5): what signing in with a passkey asks. With no
/// `allowCredentials` the authenticator offers every passkey it holds for the relying party
/// (discoverable credentials), so nobody types an address first.
public struct PasskeyRequestOptions: Codable, Sendable, Equatable {
    public var challenge: String
    public var timeout: Int
    public var rpId: String
    public var allowCredentials: [PasskeyDescriptor]
    public var userVerification: String

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
    public struct Response: Codable, Sendable, Equatable {
        public var clientDataJSON: String
        public var attestationObject: String
        public var transports: [String]?
        public init(clientDataJSON: String, attestationObject: String, transports: [String]?) {
            self.clientDataJSON = clientDataJSON
            self.attestationObject = attestationObject
            self.transports = transports
        }
    }

    public var id: String
    public var rawId: String
    public var type: String
    public var response: Response
    public var authenticatorAttachment: String?

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
    public struct Response: Codable, Sendable, Equatable {
        public var clientDataJSON: String
        public var authenticatorData: String
        public var signature: String
        /// The user handle the passkey was made for; a discoverable credential always has one.
        public var userHandle: String?
        public init(clientDataJSON: String, authenticatorData: String, signature: String, userHandle: String?) {
            self.clientDataJSON = clientDataJSON
            self.authenticatorData = authenticatorData
            self.signature = signature
            self.userHandle = userHandle
        }
    }

    public var id: String
    public var rawId: String
    public var type: String
    public var response: Response

    public init(id: String, rawId: String, type: String = "public-key", response: Response) {
        self.id = id
        self.rawId = rawId
        self.type = type
        self.response = response
    }
}
