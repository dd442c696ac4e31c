#if canImport(SwiftUI) && (os(iOS) || os(macOS))
import SwiftUI
import TesseraAuthCore

/// The branded login button in SwiftUI (iOS 15, macOS 12): draws ``LoginButton/layout(measure:)``,
/// which decides everything (size, text and its truncation, colours, the mark's tiles).
///
/// ```swift
/// TesseraLoginButton(LoginButton(type: .green, textType: .general)) { signIn() }
/// ```
public struct TesseraLoginButton: View {
    let layout: LoginButtonLayout
    let action: () -> Void

    /// A button for `model`, calling `action` when tapped.
    public init(_ model: LoginButton, measure: TextMeasure = .approximate, action: @escaping () -> Void) {
        self.layout = model.layout(measure: measure)
        self.action = action
    }

    public var body: some View {
        Button(action: action) {
            ZStack(alignment: .topLeading) {
                RoundedRectangle(cornerRadius: layout.cornerRadius).fill(Self.color(layout.background))
                if let border = layout.border {
                    RoundedRectangle(cornerRadius: layout.cornerRadius).strokeBorder(Self.color(border), lineWidth: 1)
                }
                ForEach(Array(layout.markTiles.enumerated()), id: \.offset) { _, tile in
                    RoundedRectangle(cornerRadius: layout.markTileRadius).fill(Self.color(layout.markColor))
                        .frame(width: tile.width, height: tile.height)
                        .offset(x: tile.x, y: tile.y)
                }
                Text(layout.text)
                    .font(.system(size: layout.fontSize, weight: .medium))
                    .foregroundColor(Self.color(layout.foreground))
                    .lineLimit(1)
                    .frame(width: layout.textFrame.width, height: layout.textFrame.height, alignment: .leading)
                    .offset(x: layout.textFrame.x, y: layout.textFrame.y)
            }
            .frame(width: layout.width, height: layout.height)
        }
        .buttonStyle(.plain)
        .accessibilityLabel(Text(layout.accessibilityLabel))
    }

    static func color(_ color: LoginButton.Color) -> Color {
        let (red, green, blue) = LoginButtonLayout.components(color)
        return Color(red: red, green: green, blue: blue)
    }
}
#endif
