import Foundation
import FuzzSupport
import TesseraCore

/// libFuzzer entry point. Every input is tried three ways: as base64url text, as a compact
/// JWS (a token from a client or an upstream provider) and as a JWK Set (a client's
/// registered `jwks` or an upstream provider's `jwks_uri` document).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    let text = String(decoding: bytes, as: UTF8.self)
    checkBase64URL(bytes: bytes, text: text)
    checkJWT(text)
    checkJWKSet(Data(bytes))
    return 0
}

/// Public halves of throwaway keys; the seed tokens in `corpus/FuzzJOSE` are signed with
/// them, so the fuzzer starts from tokens that verify. Parsed once, through the code under test.
let verificationKeys: [JWSVerificationKey] = {
    let set = #"{"keys":[{"alg":"RS256","e":"AQAB","kid":"rsa","kty":"RSA","n":"ltdGWjZ3i2I3yn5R_hfKEZpF6mh3fPTeGOhs7CAMXBK4EF8qXLRnOSLJURMe8ZHOMkfs8uNZYR6wR5UXnOVtY5Dwr_F9apMUFKhp8tls7-DpkaPRBtbUkf26wTLqRpleYKRR91QLl2wleXF8ziN1OZ-T9T91lUTm0nde8TGj2Tp-s6Jj8xcHEC9WVTED7wS0nUjjhuGXVb1ULSxrHyZ9ImnL5BvJoJn4FG_9XjZ5TSwP-6PUKnXBikdZUeX_oicEaepZM9lCWLUZCEQiD1Sg-9BWpp6eYnSYw5cXHOsgg7JUxgDdkNDwz__WS0Oe3mZApEebWPkJiEjL3D4kfFpHww","use":"sig"},{"alg":"ES256","crv":"P-256","kid":"ec","kty":"EC","use":"sig","x":"tXS98eZciPfDAPZVFiC0Y2PAPFIxaoYOwOEz92T3jIQ","y":"gycYM821bcNnR5KSL3alX8iYlOG8aPKM3yCf3w6fQNo"},{"alg":"EdDSA","crv":"Ed25519","kid":"ed","kty":"OKP","use":"sig","x":"6A3be5YRsBrR8AGteyVfaJALY7vA08omGSu0to5InmQ"}]}"#
    let keys = try! JWKSet.parse(Data(set.utf8)).keys.map { try JWSVerificationKey(jwk: $0) }
    require(keys.count == 3, "the fuzzer's own key set parses")
    return keys
}()

/// Base64url is canonical both ways: any bytes survive encode then decode, and text that
/// decodes is exactly the encoding of what it decoded to (no padding, no stray trailing bits).
func checkBase64URL(bytes: [UInt8], text: String) {
    require(Base64URL.decode(Base64URL.encode(bytes)) == Data(bytes), "decode(encode(bytes)) == bytes")
    if let decoded = Base64URL.decode(text) {
        require(sameBytes(Base64URL.encode(decoded), text), "encode(decode(text)) == text")
    }
}

/// A token that parses keeps its parts exactly: the signing input is the text before the
/// last dot, the signature its last segment; its JSON survives the signer's serializer; and
/// reading or verifying it never traps.
func checkJWT(_ text: String) {
    guard let jwt = try? JWT(parsing: text) else { return }
    let utf8 = Array(text.utf8)
    let lastDot = utf8.lastIndex(of: UInt8(ascii: "."))!
    require(jwt.signingInput == Data(utf8[..<lastDot]), "signingInput is the first two segments")
    require(Base64URL.encode(jwt.signature).utf8.elementsEqual(utf8[(lastDot + 1)...]), "signature is the third segment")
    require(jwt.header["crit"] == nil, "crit is refused")
    requireSerializerRoundTrip(jwt.header, "header")
    requireSerializerRoundTrip(jwt.claims, "claims")
    readRegisteredClaims(jwt)
    checkVerification(jwt, text: text)
}

/// `JSONValue.serialized` writes what the parser reads back as the same value: the provider
/// signs claim sets it has decoded (ID token hints, upstream claims) through it.
func requireSerializerRoundTrip(_ object: [String: JSONValue], _ part: String) {
    let written = JSONValue.object(object).serialized
    let reread = try? JSONDecoder().decode([String: JSONValue].self, from: written)
    require(reread == object, "the \(part) re-serialized parses to the same value: \(String(decoding: written, as: UTF8.self))")
}

/// Every accessor the provider and the SDK read on untrusted tokens.
func readRegisteredClaims(_ jwt: JWT) {
    _ = (jwt.algorithm, jwt.kid, jwt.type, jwt.issuer, jwt.subject, jwt.jwtID)
    _ = (jwt.expiresAt, jwt.issuedAt, jwt.notBefore, jwt.audience)
}

/// Verification never traps, whatever the signature's length; a token that verifies stops
/// verifying when one bit of its signature changes.
func checkVerification(_ jwt: JWT, text: String) {
    guard (try? jwt.verify(with: verificationKeys)) != nil else { return }
    require(!jwt.signature.isEmpty, "an empty signature never verifies")
    var flipped = jwt.signature
    flipped[flipped.startIndex] ^= 0x01
    let signingInput = String(decoding: jwt.signingInput, as: UTF8.self)
    let tampered = try? JWT(parsing: signingInput + "." + Base64URL.encode(flipped))
    require(tampered != nil, "a token with another signature still parses")
    require((try? tampered!.verify(with: verificationKeys)) == nil, "a flipped signature bit does not verify")
}

/// A JWK Set that parses re-encodes to itself; each key that is usable exports a JWK that
/// imports to the same key, keeps its `kid`, and refuses an empty signature.
func checkJWKSet(_ data: Data) {
    guard let set = try? JWKSet.parse(data) else { return }
    let encoded = try? JSONEncoder().encode(set)
    require(encoded.flatMap { try? JWKSet.parse($0) } == set, "a JWK Set re-encodes to itself")
    for jwk in set.keys {
        guard let key = try? JWSVerificationKey(jwk: jwk) else { continue }
        let exported = key.jwk
        require(exported.kid == jwk.kid, "the kid is kept")
        require((try? JWSVerificationKey(jwk: exported))?.jwk == exported, "an exported JWK imports to the same key")
        require(!key.isValid(signature: Data(), for: Data()), "an empty signature never verifies")
        requireSameKeyMaterial(jwk, exported)
    }
}

/// The exported public key is the imported one: the same members of its key type (members
/// of other types are ignored on import), RSA integers up to the leading zero bytes the export drops.
func requireSameKeyMaterial(_ imported: JWK, _ exported: JWK) {
    func integer(_ member: String?) -> [UInt8] {
        Base64URL.decode(member ?? "").map { Array($0.drop { $0 == 0 }) } ?? []
    }
    require(exported.kty == imported.kty, "the key type is kept")
    switch imported.kty {
    case "RSA":
        require(integer(imported.n) == integer(exported.n) && integer(imported.e) == integer(exported.e), "RSA n and e are kept")
    case "EC":
        require(imported.x == exported.x && imported.y == exported.y, "P-256 coordinates are kept")
    default:
        require(imported.x == exported.x, "the Ed25519 key is kept")
    }
}
