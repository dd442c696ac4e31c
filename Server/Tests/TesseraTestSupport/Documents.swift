import Foundation

/// The package's documents, for the tests that hold a generated table to its source.
package enum Documents {
    /// The repository's root folder (the server's package is its `Server/` folder).
    package static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The text of `path` (e.g. `docs/admin.md`) between `<!-- NAME:begin … -->` and
    /// `<!-- NAME:end -->`; nil when the markers are missing.
    package static func section(_ name: String, of path: String) throws -> String? {
        let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        guard let marker = text.range(of: "<!-- \(name):begin"), let begin = text.range(of: "-->\n", range: marker.upperBound..<text.endIndex),
              let end = text.range(of: "<!-- \(name):end -->", range: begin.upperBound..<text.endIndex) else { return nil }
        return String(text[begin.upperBound..<end.lowerBound])
    }
}
