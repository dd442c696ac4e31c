import Hummingbird
import NIOCore
import TesseraCore
import TesseraDomain

/// Development conveniences, mounted only with `--dev`: a callback page for the demo
/// client that shows what an app would receive, and the email outbox.
struct DevEndpoints {
    let services: Services

    func register(on router: Router<TesseraRequestContext>) {
        router.get("/dev/callback") { request, _ in
            let parameters = request.queryParameters
            var lines = ["Tessera development callback", ""]
            for (name, value) in parameters.values.sorted(by: { $0.key < $1.key }) { lines.append("\(name): \(value)") }
            if let code = parameters["code"] {
                lines += ["", "Redeem the code (within \(services.configuration.authorizationCodeLifetime) seconds) with:", "",
                          "curl -s -u demo:demo-secret-for-local-development-only \\",
                          "  -d grant_type=authorization_code -d code=\(code) \\",
                          "  --data-urlencode redirect_uri=\(services.issuer)/dev/callback \\",
                          "  \(services.issuer)\(Endpoint.token.path)"]
            }
            return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(string: lines.joined(separator: "\n") + "\n")))
        }
        // The latest emails, newest first, so a developer can read codes and links
        // (`?to=ADDRESS` for one recipient's, `?limit=N`, at most 500).
        router.get("/dev/outbox") { request, _ in
            let parameters = request.queryParameters
            let limit = min(500, max(1, parameters["limit"].flatMap { Int(String($0)) } ?? 100))
            let messages = try await services.mailDelivery.latest(recipient: parameters["to"].map { String($0) }, limit: limit)
            return try Responses.json(messages.map { DevOutboxEntry($0) })
        }
    }
}

/// One message as `GET /dev/outbox` shows it.
struct DevOutboxEntry: Encodable {
    let id, to, subject, text: String
    let html: String?
    let language: String
    let metadata: [String: String]
    let status: String
    let attempts: Int
    let lastError: String?
    let createdAt: Int64
    let finishedAt: Int64?

    enum CodingKeys: String, CodingKey {
        case id, to, subject, text, html, language, metadata, status, attempts
        case lastError = "last_error", createdAt = "created_at", finishedAt = "finished_at"
    }

    init(_ message: OutboxMessage) {
        id = message.id
        to = message.recipient
        subject = message.subject
        text = message.text
        html = message.html
        language = message.language
        metadata = message.metadata
        status = message.status.rawValue
        attempts = message.attempts
        lastError = message.lastError
        createdAt = message.createdAt
        finishedAt = message.finishedAt
    }
}
