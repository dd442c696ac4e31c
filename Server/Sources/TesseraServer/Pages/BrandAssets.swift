import Foundation
import Hummingbird
import NIOCore
import TesseraDomain

/// The operator's face on the hosted pages (``Branding``), read once at start: the logo the
/// server serves at `/assets/logo`, and the stylesheet at `/assets/brand.css` (the accent colour
/// as the built-in stylesheet's variable, then the operator's own CSS). Served by the server
/// itself so the pages' Content-Security-Policy stays `'self'`.
package struct BrandAssets: Sendable {
    static let logoPath = "/assets/logo"
    static let stylesheetPath = "/assets/brand.css"
    static let maxLogoSize = 256 << 10

    let name: String
    package let logo: (bytes: [UInt8], contentType: String)?
    package let stylesheet: String?

    init(_ branding: Branding) throws {
        name = branding.name
        if let path = branding.logoFile, !path.isEmpty {
            let types = ["png": "image/png", "svg": "image/svg+xml", "jpg": "image/jpeg", "jpeg": "image/jpeg", "webp": "image/webp"]
            guard let type = types[(path as NSString).pathExtension.lowercased()] else {
                throw ConfigurationError("logo '\(path)' must be a .png, .svg, .jpg or .webp file")
            }
            guard let data = FileManager.default.contents(atPath: path) else { throw ConfigurationError("cannot read the logo '\(path)'") }
            guard data.count <= Self.maxLogoSize else { throw ConfigurationError("the logo '\(path)' is over 256 KiB") }
            logo = ([UInt8](data), type)
        } else {
            logo = nil
        }
        var css = ""
        if let color = branding.accentColor {
            guard Branding.isColor(color) else { throw ConfigurationError("brand-color must be a colour such as #1f6f43, not '\(color)'") }
            css += ":root { --accent: \(color); }\n@media (prefers-color-scheme: dark) { :root { --accent: \(color); } }\n"
        }
        if let path = branding.stylesheetFile, !path.isEmpty {
            guard let data = FileManager.default.contents(atPath: path) else { throw ConfigurationError("cannot read the stylesheet '\(path)'") }
            css += String(decoding: data, as: UTF8.self)
        }
        stylesheet = css.isEmpty ? nil : css
    }

    /// What a page template reads: `product`, and whether there is a logo and a brand stylesheet.
    var values: [String: Any] {
        ["product": name, "logo": logo != nil, "brandStylesheet": stylesheet != nil]
    }

    func register(on router: Router<TesseraRequestContext>) {
        if let logo {
            router.get(RouterPath(Self.logoPath)) { _, _ in
                Response(status: .ok, headers: [.contentType: logo.contentType, .cacheControl: "public, max-age=3600",
                                                .init("X-Content-Type-Options")!: "nosniff"],
                         body: .init(byteBuffer: ByteBuffer(bytes: logo.bytes)))
            }
        }
        if let stylesheet {
            router.get(RouterPath(Self.stylesheetPath)) { _, _ in
                Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "public, max-age=3600"],
                         body: .init(byteBuffer: ByteBuffer(string: stylesheet)))
            }
        }
    }
}
