// Placeholder until docs/native-auth.openapi.json is generated in.
enum NativeAuthOpenAPI {
    static let document = "{}"
}
