import Hummingbird
import NIOCore
import TesseraCore

/// Development conveniences, mounted only with `--dev`: a callback page for the demo
/// client that shows what an app would receive.
struct DevEndpoints {
    let provider: Provider

    func register(on router: Router<TesseraRequestContext>) {
        router.get("/dev/callback") { request, _ in
            let parameters = request.queryParameters
            var lines = ["Tessera development callback", ""]
            for (name, value) in parameters.values.sorted(by: { $0.key < $1.key }) { lines.append("\(name): \(value)") }
            if let code = parameters["code"] {
                lines += ["", "Redeem the code (within \(provider.configuration.authorizationCodeLifetime) seconds) with:", "",
                          "curl -s -u demo:demo-secret-for-local-development-only \\",
                          "  -d grant_type=authorization_code -d code=\(code) \\",
                          "  --data-urlencode redirect_uri=\(provider.issuer)/dev/callback \\",
                          "  \(provider.issuer)\(Endpoint.token.path)"]
            }
            return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(string: lines.joined(separator: "\n") + "\n")))
        }
    }
}
