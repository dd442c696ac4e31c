import Foundation
import TesseraCore

/// An attribute the sign-up still needs (`required_attributes`; MSAL's
/// `MSALNativeAuthRequiredAttribute`).
public struct AttributeRequirement: Sendable, Equatable, Hashable {
    /// The attribute's name, as ``SignUpAttributesRequiredState/submitAttributes(_:)`` takes it.
    public var name: String
    /// `string`, `boolean`, `integer` or `date`.
    public var type: String
    /// Whether the sign-up can't finish without it.
    public var required: Bool
    /// A regular expression the whole value must match (`options.regex`).
    public var regex: String?

    /// An attribute requirement from its parts.
    public init(name: String, type: String = "string", required: Bool = true, regex: String? = nil) {
        self.name = name
        self.type = type
        self.required = required
        self.regex = regex
    }

    init(wire attribute: NativeAuthAttribute) {
        self.init(name: attribute.name, type: attribute.type, required: attribute.required, regex: attribute.options?.regex)
    }
}
