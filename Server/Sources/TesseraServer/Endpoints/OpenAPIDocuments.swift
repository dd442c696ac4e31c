/// The OpenAPI 3.1 description of the native sign-in API, served at `GET /openapi/native-auth.json`:
/// docs/native-auth.openapi.json, copied into the resources by scripts/generate-openapi-source.
package enum NativeAuthOpenAPI {
    package static let document = String(decoding: PackageResources.native_auth_openapi_json, as: UTF8.self)
}

/// The OpenAPI 3.1 description of the admin API, served at `GET /openapi/admin.json`:
/// docs/admin.openapi.json, copied into the resources by scripts/generate-openapi-source.
enum AdminOpenAPI {
    static let document = String(decoding: PackageResources.admin_openapi_json, as: UTF8.self)
}
