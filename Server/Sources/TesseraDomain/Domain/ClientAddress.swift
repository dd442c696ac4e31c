import Foundation

/// An IPv4 or IPv6 address, as its bytes (4 or 16). An IPv4-mapped IPv6 address
/// (`::ffff:192.0.2.1`) is the IPv4 address it maps.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Parses `192.0.2.1`, `2001:db8::1`, `[2001:db8::1]`, and drops an IPv6 zone (`%eth0`).
    public init?(_ text: some StringProtocol) {
        var text = String(text).trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if let zone = text.firstIndex(of: "%") { text = String(text[..<zone]) }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let all = withUnsafeBytes(of: &v6) { Array($0) }
        bytes = all.prefix(10).allSatisfy { $0 == 0 } && all[10] == 0xFF && all[11] == 0xFF ? Array(all.suffix(4)) : all
    }

    public var isIPv4: Bool { bytes.count == 4 }

    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        var groups: [String] = []
        for index in stride(from: 0, to: 16, by: 2) { groups.append(String(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]), radix: 16)) }
        return groups.joined(separator: ":")
    }

    /// What throttles count under: an IPv4 address itself, an IPv6 address's /64 (one
    /// subscriber gets a whole /64, so counting single IPv6 addresses counts nothing).
    public var throttleKey: String {
        guard !isIPv4 else { return description }
        let prefix = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return prefix.joined(separator: ":") + "::/64"
    }
}

/// `10.0.0.0/8`, `2001:db8::/32`, or a single address.
public struct AddressRange: Sendable, Equatable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int

    public init(parsing text: String) throws {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let address = IPAddress(first) else {
            throw ConfigurationError("'\(text)' is not an IP address or a CIDR range (e.g. 10.0.0.0/8 or 2001:db8::/32)")
        }
        let bits = address.bytes.count * 8
        var length = bits
        if parts.count == 2 {
            guard let value = Int(parts[1]), (0...bits).contains(value) else {
                throw ConfigurationError("'\(text)': the prefix length must be 0 to \(bits)")
            }
            length = value
        }
        network = address
        prefixLength = length
    }

    public func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == network.bytes.count else { return false }
        var remaining = prefixLength
        for (a, b) in zip(address.bytes, network.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if a & mask != b & mask { return false }
            remaining -= 8
        }
        return true
    }

    public var description: String { "\(network)/\(prefixLength)" }
}

/// Which peers are reverse proxies whose `Forwarded` / `X-Forwarded-For` headers say who the
/// client is. From any other peer those headers are ignored: anyone can send them.
public struct TrustedProxies: Sendable, Equatable {
    public var ranges: [AddressRange] = []

    public init(_ ranges: [AddressRange] = []) { self.ranges = ranges }

    /// Comma- or space-separated ranges (`--trusted-proxy`, repeatable, is joined so).
    public init(parsing text: String) throws {
        ranges = try text.split(whereSeparator: { $0 == "," || $0 == " " }).map { try AddressRange(parsing: String($0)) }
    }

    func trusts(_ address: IPAddress) -> Bool { ranges.contains { $0.contains(address) } }

    /// The client's address for a request that arrived from `peer` carrying these headers.
    ///
    /// The hops are read from the right (the nearest proxy's entry last): every trusted
    /// proxy is skipped, and the first address that isn't one is the client. An entry that
    /// isn't an address (`unknown`, an obfuscated identifier) ends the walk at the last
    /// trusted hop, since nothing to its left can be believed.
    public func clientAddress(peer: IPAddress?, forwarded: String?, xForwardedFor: String?) -> IPAddress? {
        guard let peer, trusts(peer) else { return peer }
        let hops: [Substring]
        if let forwarded, !forwarded.isEmpty {
            hops = Self.forwardedFor(forwarded)
        } else if let xForwardedFor, !xForwardedFor.isEmpty {
            hops = xForwardedFor.split(separator: ",")
        } else {
            return peer
        }
        var client = peer
        for hop in hops.reversed() {
            guard let address = IPAddress(Self.stripPort(hop)) else { return client }
            client = address
            if !trusts(address) { return address }
        }
        return client
    }

    /// The `for=` values of RFC 7239 `Forwarded` elements, in order.
    static func forwardedFor(_ header: String) -> [Substring] {
        header.split(separator: ",").compactMap { element in
            element.split(separator: ";").lazy.compactMap { pair -> Substring? in
                let trimmed = pair.drop { $0 == " " }
                guard trimmed.lowercased().hasPrefix("for=") else { return nil }
                var value = trimmed.dropFirst(4)
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = value.dropFirst().dropLast() }
                return value
            }.first
        }
    }

    /// `192.0.2.1:4711` → `192.0.2.1`; `[2001:db8::1]:4711` → `[2001:db8::1]`; a bare IPv6 address stays.
    static func stripPort(_ hop: Substring) -> Substring {
        let hop = hop.trimmingCharacters(in: .whitespaces)[...]
        if hop.hasPrefix("["), let close = hop.firstIndex(of: "]") { return hop[...close] }
        if hop.filter({ $0 == ":" }).count == 1, let colon = hop.firstIndex(of: ":") { return hop[..<colon] }
        return hop
    }
}
