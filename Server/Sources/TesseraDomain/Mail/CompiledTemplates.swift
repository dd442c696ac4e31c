import Foundation
import Mustache

/// Mustache libraries compiled once per process, by the texts of their templates.
///
/// Mustache's parser takes time quadratic in a template's length: the hosted pages and the
/// emails took ≈ 21 ms to compile in a release build (17 and 4; the account page alone 10,
/// before it was split into a template a section: `Templates`), on a node's way to ready, and
/// a node makes two renderers of the same pages. `tessera serve` asks for both sets
/// ``compileAhead(_:)`` as soon as it has read its settings, on a thread of their own, while it
/// opens the database and loads the keys; whoever asks for a set under way waits for it. A set
/// that doesn't compile isn't kept: the next to ask compiles it again and gets the error.
package final class CompiledTemplates: @unchecked Sendable {
    package static let shared = CompiledTemplates()

    private enum Entry {
        case compiling
        case compiled(MustacheLibrary)
    }

    /// Guards `entries` and `compilations`; waited on while a set compiles.
    private let condition = NSCondition()
    private var entries: [[String: String]: Entry] = [:]
    private var compilations = 0

    package init() {}

    /// How many sets this has compiled (or tried to).
    package var compiled: Int {
        condition.lock()
        defer { condition.unlock() }
        return compilations
    }

    /// The library of `templates` (by name), compiled now unless it was before or is under way.
    /// `failure` makes the error of a template that doesn't compile.
    package func library(_ templates: [String: String], failure: (String, any Error) -> any Error) throws -> MustacheLibrary {
        condition.lock()
        while case .compiling? = entries[templates] { condition.wait() }
        if case .compiled(let library)? = entries[templates] {
            condition.unlock()
            return library
        }
        entries[templates] = .compiling
        compilations += 1
        condition.unlock()
        var library = MustacheLibrary()
        var error: (any Error)?
        for (name, text) in templates {
            do { try library.register(text, named: name) } catch let cause {
                error = failure(name, cause)
                break
            }
        }
        condition.lock()
        entries[templates] = error == nil ? .compiled(library) : nil
        condition.broadcast()
        condition.unlock()
        if let error { throw error }
        return library
    }

    /// Compiles the sets `sets` makes on a thread of its own, one after the other, for whoever
    /// asks next. A set that can't be made or doesn't compile is left to its first user, which
    /// reports it.
    package func compileAhead(_ sets: @escaping @Sendable () -> [[String: String]]) {
        Thread.detachNewThread {
            for templates in sets() {
                _ = try? self.library(templates) { _, error in error }
            }
        }
    }
}
