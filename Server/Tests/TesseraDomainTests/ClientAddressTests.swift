import Testing
import TesseraDomain

@Suite("Client addresses and trusted proxies")
struct ClientAddressTests {
    @Test("IPv4 and IPv6 parse, with brackets, zones and IPv4-mapped forms; garbage doesn't")
    func parsing() throws {
        #expect(IPAddress("192.0.2.1")?.description == "192.0.2.1")
        #expect(IPAddress("[2001:db8::1]")?.bytes.count == 16)
        #expect(IPAddress("fe80::1%eth0") == IPAddress("fe80::1"))
        #expect(IPAddress("::ffff:192.0.2.1") == IPAddress("192.0.2.1"))
        for bad in ["", "unknown", "192.0.2", "192.0.2.1.5", "2001:db8::g", "_hidden", "192.0.2.1:80"] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
    }

    @Test("throttles count IPv4 addresses one by one and IPv6 by /64")
    func throttleKeys() {
        #expect(IPAddress("192.0.2.1")?.throttleKey == "192.0.2.1")
        #expect(IPAddress("2001:db8:1:2:aaaa::1")?.throttleKey == IPAddress("2001:db8:1:2:bbbb:cccc:dddd:eeee")?.throttleKey)
        #expect(IPAddress("2001:db8:1:2::1")?.throttleKey != IPAddress("2001:db8:1:3::1")?.throttleKey)
        #expect(IPAddress("2001:db8:1:2::1")?.throttleKey == "2001:db8:1:2::/64")
    }

    @Test("ranges contain exactly their addresses; bad ranges are refused with a reason")
    func ranges() throws {
        let ten = try AddressRange(parsing: "10.0.0.0/8")
        #expect(ten.contains(IPAddress("10.255.0.1")!) && !ten.contains(IPAddress("11.0.0.1")!))
        let odd = try AddressRange(parsing: "192.0.2.128/25")
        #expect(odd.contains(IPAddress("192.0.2.200")!) && !odd.contains(IPAddress("192.0.2.127")!))
        let v6 = try AddressRange(parsing: "2001:db8::/32")
        #expect(v6.contains(IPAddress("2001:db8:ffff::1")!) && !v6.contains(IPAddress("2001:db9::1")!) && !v6.contains(IPAddress("10.0.0.1")!))
        #expect(try AddressRange(parsing: "127.0.0.1").contains(IPAddress("127.0.0.1")!))
        for bad in ["10.0.0.0/33", "2001:db8::/129", "example.com", "10.0.0.0/x"] {
            #expect(throws: ConfigurationError.self) { try AddressRange(parsing: bad) }
        }
    }

    @Test("forwarding headers are believed only from trusted proxies, read from the right")
    func forwarding() throws {
        let proxies = try TrustedProxies(parsing: "10.0.0.0/8, 192.168.1.1")
        let proxy = IPAddress("10.1.2.3"), stranger = IPAddress("203.0.113.9")
        // From a stranger the headers are ignored: anyone can send them.
        #expect(proxies.clientAddress(peer: stranger, forwarded: nil, xForwardedFor: "198.51.100.1") == stranger)
        // The client is the first untrusted hop from the right; what it claimed before is not believed.
        #expect(proxies.clientAddress(peer: proxy, forwarded: nil, xForwardedFor: "1.1.1.1, 198.51.100.7, 192.168.1.1")
                == IPAddress("198.51.100.7"))
        #expect(proxies.clientAddress(peer: proxy, forwarded: #"for=1.1.1.1, for="[2001:db8::7]:4711";proto=https, for=10.9.9.9"#,
                                      xForwardedFor: "5.5.5.5") == IPAddress("2001:db8::7"), "Forwarded wins over X-Forwarded-For")
        #expect(proxies.clientAddress(peer: proxy, forwarded: nil, xForwardedFor: "198.51.100.7:5000") == IPAddress("198.51.100.7"))
        // An entry that is no address stops the walk at the last trusted hop.
        #expect(proxies.clientAddress(peer: proxy, forwarded: "for=unknown", xForwardedFor: nil) == proxy)
        #expect(proxies.clientAddress(peer: proxy, forwarded: nil, xForwardedFor: nil) == proxy)
    }

    @Test("--trusted-proxy is repeatable, and an array or a string in the config file")
    func configuration() throws {
        let flags = try ConfigurationLoader(flags: ["trusted-proxy": "10.0.0.0/8,192.168.0.1"], environment: [:]).configuration()
        #expect(flags.trustedProxies.ranges.map(\.description) == ["10.0.0.0/8", "192.168.0.1/32"])
        let environment = try ConfigurationLoader(flags: [:], environment: ["TESSERA_TRUSTED_PROXY": "2001:db8::/32 10.0.0.1"]).configuration()
        #expect(environment.trustedProxies.ranges.count == 2)
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader(flags: ["trusted-proxy": "not-an-address"], environment: [:]).configuration()
        }
    }
}
