import Foundation

/// How long a client may hold a connection without using it, and how big a request head may be.
///
/// Without limits a client that opens connections and sends nothing, or one header line every
/// few seconds (slowloris), holds them forever and with enough of them takes every socket.
public struct ConnectionLimits: Sendable, Equatable {
    /// A connection with no request in progress is closed after this long (seconds).
    public var idleTimeout: Int64 = 30
    /// Once a request's first byte arrives, its whole head (request line and headers) must
    /// arrive within this long (seconds); then the body within ``idleTimeout``.
    public var requestHeadTimeout: Int64 = 10
    /// The largest request head (all header fields together), and the largest single field.
    public var maxHeaderBytes = 16 * 1024
    /// The most header fields a request may have.
    public var maxHeaderCount = 100

    public init() {}

    package func validate() throws {
        guard idleTimeout > 0, requestHeadTimeout > 0 else { throw ConfigurationError("connection timeouts must be positive") }
        guard maxHeaderBytes >= 4096 else { throw ConfigurationError("max-header-bytes must be at least 4096") }
        guard maxHeaderCount >= 16 else { throw ConfigurationError("max-header-count must be at least 16") }
    }
}
