import Hummingbird
import NIOCore
import TesseraDomain

/// What a load balancer, an orchestrator or a person asks a node: is the process up
/// (`/health/live`), should it be sent requests (`/health/ready`: 503 when not), and the plain
/// `/health` of earlier versions (the same as live). Why a node is not ready (the database's
/// error, its host) is told on the management listener only: on the public one anybody could
/// read it.
package struct HealthEndpoints {
    /// Why the node should not be sent requests; nil when it should.
    let readiness: @Sendable () async -> String?
    /// Whether `/health/ready` says why the node is not ready (the management listener).
    var tellsReason = false

    func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("/health") { _, _ in Self.answer(.ok, "ok") }
        router.get("/health/live") { _, _ in Self.answer(.ok, "ok") }
        router.get("/health/ready") { _, _ in
            if let reason = await readiness() {
                return Self.answer(.serviceUnavailable, tellsReason ? "unavailable: \(reason)" : "unavailable")
            }
            return Self.answer(.ok, "ready")
        }
    }

    static func answer(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }

    /// The answer of a node whose provider has not started yet (it waits for the database):
    /// live, not ready, and 503 for everything else (the stylesheet excepted, for that page).
    package static func beforeServing(_ request: Request, pages: PageRenderer) -> Response {
        switch request.uri.path {
        case "/health", "/health/live": answer(.ok, "ok")
        case "/health/ready": answer(.serviceUnavailable, "unavailable")
        case Templates.stylesheetPath: Templates.stylesheetResponse()
        default: Outage.response(for: request, pages: pages)
        }
    }
}
