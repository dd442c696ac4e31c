import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import TesseraCore
#if canImport(Glibc)
import Glibc
#endif

/// RS256 signing through the system's OpenSSL 3 `libcrypto`, loaded at run time.
///
/// swift-crypto signs RSA with BoringSSL, which has no AVX-512 IFMA code; OpenSSL 3 does,
/// and on CPUs that have it signs RSA-2048 about 2.3 times faster (docs/performance.md). RSA
/// PKCS #1 v1.5 signatures are deterministic, so both libraries must produce the same bytes
/// for the same key and input: ``make(for:logger:)`` checks exactly that before the engine
/// is used, and any failure later falls back to BoringSSL for that signature.
/// Nothing is linked at build time: without `libcrypto.so.3` the server signs with
/// BoringSSL as before.
package final class OpenSSLRSASigner: JWSSignatureEngine, @unchecked Sendable {
    // @unchecked: `pkey` is immutable after init and only read by OpenSSL (which locks
    // internally where it caches); each context is used by one thread at a time, guarded
    // by the pool's mutex.
    private let library: LibCrypto
    private let pkey: OpaquePointer
    private let fallback: JWSSigningKey
    private let idle = NIOLockedValueBox<[SigningContext]>([])
    private static let maximumIdleContexts = 16

    private init(library: LibCrypto, pkey: OpaquePointer, fallback: JWSSigningKey) {
        self.library = library
        self.pkey = pkey
        self.fallback = fallback
    }

    deinit {
        for context in idle.withLockedValue({ $0 }) { library.EVP_PKEY_CTX_free(context.pointer) }
        library.EVP_PKEY_free(pkey)
    }

    /// An OpenSSL signer for `key` (an RS256 key), or nil when OpenSSL is not there or does
    /// not produce exactly the signature BoringSSL produces.
    package static func make(for key: JWSSigningKey, logger: Logger? = nil) -> OpenSSLRSASigner? {
        guard key.algorithm == .rs256, let library = LibCrypto.shared else { return nil }
        let der = key.privateKeyData
        let parsed: OpaquePointer? = der.withUnsafeBytes { raw -> OpaquePointer? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            return library.d2i_AutoPrivateKey(nil, &cursor, raw.count)
        }
        guard let pkey = parsed else {
            library.ERR_clear_error()
            logger?.warning("OpenSSL could not read RSA key; signing with BoringSSL", metadata: ["kid": "\(key.kid)"])
            return nil
        }
        let signer = OpenSSLRSASigner(library: library, pkey: pkey, fallback: key)
        let probe = Data("tessera signing self-test \(key.kid)".utf8)
        guard let ours = signer.openSSLSignature(for: probe), let reference = try? key.signature(for: probe), ours == reference else {
            logger?.warning("OpenSSL's RSA signature differs from BoringSSL's; signing with BoringSSL", metadata: ["kid": "\(key.kid)"])
            return nil
        }
        return signer
    }

    package func signature(for signingInput: Data) throws -> Data {
        if let signature = openSSLSignature(for: signingInput) { return signature }
        return try fallback.signature(for: signingInput)
    }

    /// PKCS #1 v1.5 over SHA-256 of `input`; nil on any OpenSSL failure.
    package func openSSLSignature(for input: Data) -> Data? {
        guard let context = takeContext() else { return nil }
        let digest = SHA256.hash(data: input)
        var signature = Data(count: 512)
        let length = signature.withUnsafeMutableBytes { out in
            digest.withUnsafeBytes { digest -> Int? in
                var length = out.count
                let status = library.EVP_PKEY_sign(context, out.bindMemory(to: UInt8.self).baseAddress, &length,
                                                   digest.bindMemory(to: UInt8.self).baseAddress, digest.count)
                return status == 1 ? length : nil
            }
        }
        guard let length else {
            library.ERR_clear_error()
            library.EVP_PKEY_CTX_free(context)
            return nil
        }
        giveBack(context)
        signature.count = length
        return signature
    }

    private func takeContext() -> OpaquePointer? {
        if let context = idle.withLockedValue({ $0.popLast() }) { return context.pointer }
        guard let context = library.EVP_PKEY_CTX_new(pkey, nil) else { return nil }
        guard library.EVP_PKEY_sign_init(context) == 1,
              library.EVP_PKEY_CTX_set_rsa_padding(context, 1 /* RSA_PKCS1_PADDING */) == 1,
              library.EVP_PKEY_CTX_set_signature_md(context, library.EVP_sha256()) == 1 else {
            library.ERR_clear_error()
            library.EVP_PKEY_CTX_free(context)
            return nil
        }
        return context
    }

    private func giveBack(_ context: OpaquePointer) {
        let kept = idle.withLockedValue { contexts -> Bool in
            guard contexts.count < Self.maximumIdleContexts else { return false }
            contexts.append(SigningContext(pointer: context))
            return true
        }
        if !kept { library.EVP_PKEY_CTX_free(context) }
    }
}

/// An `EVP_PKEY_CTX` ready to sign, owned by whoever holds it (the pool or one signer).
private struct SigningContext: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// Which library signs RS256: `TESSERA_RSA_ENGINE` is `openssl` or `boringssl`; unset (or `auto`),
/// OpenSSL where the CPU has AVX-512 IFMA and swift-crypto's BoringSSL elsewhere.
///
/// OpenSSL 3's RSA code for IFMA signs RSA-2048 about 2.3 times as fast as BoringSSL. Without
/// IFMA both libraries run the same Montgomery arithmetic at the same speed (docs/performance.md,
/// "RSA"), and loading OpenSSL would only cost the memory it touches: ≈ 4 MiB of an idle node.
package enum RSAEngine: String, Sendable {
    case openSSL = "openssl"
    case boringSSL = "boringssl"

    /// This process's choice, from its environment and its CPU.
    package static let chosen = choose(setting: ProcessInfo.processInfo.environment["TESSERA_RSA_ENGINE"],
                                       cpuFlags: (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)).map(firstFlags) ?? [])

    /// The engine for a `TESSERA_RSA_ENGINE` value and the CPU's flags (`/proc/cpuinfo`'s names);
    /// a value that is neither engine's name is `auto`.
    package static func choose(setting: String?, cpuFlags: Set<Substring>) -> RSAEngine {
        if let named = setting.flatMap({ RSAEngine(rawValue: $0.lowercased()) }) { return named }
        return cpuFlags.contains("avx512ifma") ? .openSSL : .boringSSL
    }

    /// The flags of the first processor in `/proc/cpuinfo`'s text (the kernel lists only what it
    /// lets programs use: no AVX-512 flags where it does not save their registers).
    package static func firstFlags(_ cpuinfo: String) -> Set<Substring> {
        guard let line = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("flags") }),
              let colon = line.firstIndex(of: ":") else { return [] }
        return Set(line[line.index(after: colon)...].split(separator: " "))
    }
}

/// The few `libcrypto` functions the signer calls, resolved with `dlsym`.
package struct LibCrypto: @unchecked Sendable {
    typealias PKeyCtx = OpaquePointer
    let d2i_AutoPrivateKey: @convention(c) (UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?
    let EVP_PKEY_free: @convention(c) (OpaquePointer?) -> Void
    let EVP_PKEY_CTX_new: @convention(c) (OpaquePointer?, OpaquePointer?) -> PKeyCtx?
    let EVP_PKEY_CTX_free: @convention(c) (PKeyCtx?) -> Void
    let EVP_PKEY_sign_init: @convention(c) (PKeyCtx?) -> Int32
    let EVP_PKEY_CTX_set_rsa_padding: @convention(c) (PKeyCtx?, Int32) -> Int32
    let EVP_PKEY_CTX_set_signature_md: @convention(c) (PKeyCtx?, OpaquePointer?) -> Int32
    let EVP_PKEY_sign: @convention(c) (PKeyCtx?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>, UnsafePointer<UInt8>?, Int) -> Int32
    let EVP_sha256: @convention(c) () -> OpaquePointer?
    let ERR_clear_error: @convention(c) () -> Void
    /// "OpenSSL 3.0.19 27 Jan 2026".
    package let version: String

    /// The process-wide library, or nil when `libcrypto.so.3` cannot be loaded, is not
    /// OpenSSL 3, or lacks a function; `TESSERA_RSA_ENGINE=boringssl` turns it off.
    package static let shared: LibCrypto? = load()

    private static func load() -> LibCrypto? {
        #if canImport(Glibc)
        if ProcessInfo.processInfo.environment["TESSERA_RSA_ENGINE"]?.lowercased() == "boringssl" { return nil }
        guard let handle = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL) else { return nil }
        func symbol<F>(_ name: String, as type: F.Type) -> F? {
            guard let pointer = dlsym(handle, name) else { return nil }
            return unsafeBitCast(pointer, to: type)
        }
        guard let number = symbol("OpenSSL_version_num", as: (@convention(c) () -> UInt).self), number() >= 0x3000_0000,
              let versionText = symbol("OpenSSL_version", as: (@convention(c) (Int32) -> UnsafePointer<CChar>?).self),
              let d2i = symbol("d2i_AutoPrivateKey", as: (@convention(c) (UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?).self),
              let pkeyFree = symbol("EVP_PKEY_free", as: (@convention(c) (OpaquePointer?) -> Void).self),
              let ctxNew = symbol("EVP_PKEY_CTX_new", as: (@convention(c) (OpaquePointer?, OpaquePointer?) -> OpaquePointer?).self),
              let ctxFree = symbol("EVP_PKEY_CTX_free", as: (@convention(c) (OpaquePointer?) -> Void).self),
              let signInit = symbol("EVP_PKEY_sign_init", as: (@convention(c) (OpaquePointer?) -> Int32).self),
              let padding = symbol("EVP_PKEY_CTX_set_rsa_padding", as: (@convention(c) (OpaquePointer?, Int32) -> Int32).self),
              let signatureMD = symbol("EVP_PKEY_CTX_set_signature_md", as: (@convention(c) (OpaquePointer?, OpaquePointer?) -> Int32).self),
              let sign = symbol("EVP_PKEY_sign", as: (@convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>, UnsafePointer<UInt8>?, Int) -> Int32).self),
              let sha256 = symbol("EVP_sha256", as: (@convention(c) () -> OpaquePointer?).self),
              let clear = symbol("ERR_clear_error", as: (@convention(c) () -> Void).self) else {
            dlclose(handle)
            return nil
        }
        return LibCrypto(d2i_AutoPrivateKey: d2i, EVP_PKEY_free: pkeyFree, EVP_PKEY_CTX_new: ctxNew, EVP_PKEY_CTX_free: ctxFree,
                         EVP_PKEY_sign_init: signInit, EVP_PKEY_CTX_set_rsa_padding: padding,
                         EVP_PKEY_CTX_set_signature_md: signatureMD, EVP_PKEY_sign: sign, EVP_sha256: sha256,
                         ERR_clear_error: clear, version: versionText(0).map { String(cString: $0) } ?? "OpenSSL 3")
        #else
        return nil
        #endif
    }
}
