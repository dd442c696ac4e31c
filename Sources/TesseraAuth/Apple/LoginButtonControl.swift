#if canImport(UIKit) && os(iOS)
import TesseraAuthCore
import UIKit

/// The branded login button as a UIKit control (iOS 15): draws ``LoginButton/layout(measure:)``
/// and sends `.touchUpInside` like any button. Set ``model`` to change it.
///
/// ```swift
/// let button = TesseraLoginButtonControl(model: LoginButton(type: .white))
/// button.addTarget(self, action: #selector(signIn), for: .touchUpInside)
/// ```
public final class TesseraLoginButtonControl: UIControl {
    /// What the button shows; the layout follows it.
    public var model: LoginButton {
        didSet { relayout() }
    }
    /// How text is measured; the default estimates the system font.
    public var measure: TextMeasure = .approximate {
        didSet { relayout() }
    }
    private var layout: LoginButtonLayout

    public init(model: LoginButton) {
        self.model = model
        self.layout = model.layout()
        super.init(frame: CGRect(x: 0, y: 0, width: layout.width, height: layout.height))
        isAccessibilityElement = true
        accessibilityTraits = .button
        accessibilityLabel = layout.accessibilityLabel
        backgroundColor = .clear
    }

    @available(*, unavailable)
    required init?(coder: NSCoder) { fatalError("TesseraLoginButtonControl is made in code") }

    public override var intrinsicContentSize: CGSize { CGSize(width: layout.width, height: layout.height) }

    public override var isHighlighted: Bool {
        didSet { alpha = isHighlighted ? 0.8 : 1 }
    }

    private func relayout() {
        layout = model.layout(measure: measure)
        accessibilityLabel = layout.accessibilityLabel
        invalidateIntrinsicContentSize()
        setNeedsDisplay()
    }

    public override func draw(_ rect: CGRect) {
        let shape = UIBezierPath(roundedRect: CGRect(x: 0.5, y: 0.5, width: layout.width - 1, height: layout.height - 1),
                                 cornerRadius: layout.cornerRadius)
        Self.color(layout.background).setFill()
        shape.fill()
        if let border = layout.border {
            Self.color(border).setStroke()
            shape.lineWidth = 1
            shape.stroke()
        }
        Self.color(layout.markColor).setFill()
        for tile in layout.markTiles {
            UIBezierPath(roundedRect: CGRect(x: tile.x, y: tile.y, width: tile.width, height: tile.height),
                         cornerRadius: layout.markTileRadius).fill()
        }
        let attributes: [NSAttributedString.Key: Any] = [
            .font: UIFont.systemFont(ofSize: layout.fontSize, weight: .medium),
            .foregroundColor: Self.color(layout.foreground),
        ]
        let text = layout.text as NSString
        let size = text.size(withAttributes: attributes)
        text.draw(at: CGPoint(x: layout.textFrame.x, y: (layout.height - size.height) / 2), withAttributes: attributes)
    }

    static func color(_ color: LoginButton.Color) -> UIColor {
        let (red, green, blue) = LoginButtonLayout.components(color)
        return UIColor(red: red, green: green, blue: blue, alpha: 1)
    }
}
#endif
