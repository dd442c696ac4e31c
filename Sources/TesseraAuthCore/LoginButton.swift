import Foundation

/// The branded "Sign in with …" button as a pure value (seed 002's `SBKLoginButton`): style,
/// text variant, language, personalisation, size and corner radius in; a ``LoginButtonLayout``
/// (text after truncation, frames, colours) or an SVG out. A UIKit or SwiftUI view draws the
/// layout; a web page embeds the SVG. Nothing here depends on a UI framework or a font: text
/// is measured with a ``TextMeasure`` the caller provides.
///
/// ```swift
/// var button = LoginButton(type: .white, textType: .pursue, desiredHeight: 48, desiredWidth: 280)
/// button.language = LoginButton.Language(preferredLanguages: Locale.preferredLanguages)
/// button.personalName = "Anna K."
/// let layout = button.layout()            // text "Continue as Anna K.", frames, colours
/// let svg = button.svg()                  // the same button for a web page
/// ```
///
/// The seed's rules, kept here:
/// - texts: short = the brand alone; general = "Войти по …"; filling = "Заполнить со …";
///   pursue = "Продолжить со …"; English when the language is English, Russian otherwise;
/// - personalisation replaces the text with one naming the user, never for the short variant;
/// - a text too long for the width is cut from the right (with "…"); the width never goes below
///   the width of the short variant, the minimum;
/// - corner radius: `max` = half the height, `normal` = 4, `none` = 0;
/// - a border colour applies to the white style only; the green style ignores it.
public struct LoginButton: Sendable, Equatable {
    /// The button's colours (seed: `LoginButtonStyle`).
    public enum Style: String, Sendable, CaseIterable {
        /// The brand colour with white text.
        case green
        /// White with dark text and a grey border (or ``LoginButton/borderColor``).
        case white
    }

    /// Which words the button says (seed: `LoginButtonTextType`).
    public enum TextType: String, Sendable, CaseIterable {
        /// The brand alone: "Tessera".
        case short
        /// "Войти по Tessera" / "Sign in with Tessera" (the default).
        case general
        /// "Заполнить с Tessera" / "Fill in with Tessera": for forms filled from the profile.
        case filling
        /// "Продолжить с Tessera" / "Continue with Tessera".
        case pursue
    }

    /// The language of the texts: Russian or English, Russian for any other language (seed 002).
    public enum Language: String, Sendable, CaseIterable {
        /// Russian, the seed's default.
        case ru
        /// English.
        case en

        /// The language for a locale or language tag (`en-GB`, `en_US`, `ru`); Russian unless it is English.
        public init(localeIdentifier: String) {
            let primary = localeIdentifier.lowercased().split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map(String.init)
            self = primary == "en" ? .en : .ru
        }

        /// The language for the device's preferred languages (e.g. `Locale.preferredLanguages`):
        /// the first one decides, as the device's localisation does in the seed.
        public init(preferredLanguages: [String]) {
            self = preferredLanguages.first.map(Language.init(localeIdentifier:)) ?? .ru
        }
    }

    /// The corner radius (seed: `setCornerRadius` with `max`, `normal`, `no`).
    public enum CornerRadius: Sendable, Equatable {
        /// Half the height: a pill.
        case max
        /// 4 points.
        case normal
        /// Square corners.
        case none
        /// A radius of its own, clamped to 0…half the height (seed: `layer.cornerRadius`).
        case custom(Double)

        /// The radius in points for a button `height` points high.
        public func value(height: Double) -> Double {
            switch self {
            case .max: height / 2
            case .normal: min(4, height / 2)
            case .none: 0
            case .custom(let radius): Swift.max(0, Swift.min(radius, height / 2))
            }
        }
    }

    /// An sRGB colour.
    public struct Color: Sendable, Hashable, CustomStringConvertible {
        /// The channels, 0–255.
        public var red: UInt8, green: UInt8, blue: UInt8

        /// A colour from its channels.
        public init(red: UInt8, green: UInt8, blue: UInt8) {
            self.red = red
            self.green = green
            self.blue = blue
        }

        /// A colour from `#RRGGBB` (the `#` is optional); `nil` for anything else.
        public init?(hex: String) {
            let digits = hex.hasPrefix("#") ? String(hex.dropFirst()) : hex
            guard digits.count == 6, let value = UInt32(digits, radix: 16) else { return nil }
            self.init(red: UInt8(value >> 16 & 0xFF), green: UInt8(value >> 8 & 0xFF), blue: UInt8(value & 0xFF))
        }

        /// `#RRGGBB`, upper-case.
        public var hex: String {
            "#" + [red, green, blue].map { byte in
                let text = String(byte, radix: 16, uppercase: true)
                return text.count == 1 ? "0" + text : text
            }.joined()
        }

        /// ``hex``.
        public var description: String { hex }

        /// White: the green style's text and the white style's background.
        public static let white = Color(red: 0xFF, green: 0xFF, blue: 0xFF)
        /// The text colour of the white style.
        public static let ink = Color(red: 0x1F, green: 0x1F, blue: 0x22)
        /// The default border of the white style: a light grey.
        public static let defaultBorder = Color(red: 0xD0, green: 0xD7, blue: 0xDD)
    }

    /// Whose button it is: the name in each language and the colour of the green style.
    public struct Brand: Sendable, Equatable {
        /// The name in Russian texts, e.g. "Tessera" or "Сбер ID".
        public var russianName: String
        /// The name in English texts, e.g. "Tessera" or "Sber ID".
        public var englishName: String
        /// The background of the green style and the mark's colour on the white style.
        public var color: Color

        /// A brand with a name per language.
        public init(russianName: String, englishName: String, color: Color = Color(red: 0x21, green: 0xA0, blue: 0x38)) {
            self.russianName = russianName
            self.englishName = englishName
            self.color = color
        }

        /// A brand with one name in both languages.
        public init(_ name: String, color: Color = Color(red: 0x21, green: 0xA0, blue: 0x38)) {
            self.init(russianName: name, englishName: name, color: color)
        }

        /// Tessera's own.
        public static let tessera = Brand("Tessera")

        /// The name in `language`.
        public func name(in language: Language) -> String { language == .en ? englishName : russianName }
    }

    /// The smallest height, in points.
    public static let minimumHeight: Double = 28

    /// Colours (seed: `type`).
    public var style: Style
    /// The words (seed: `textType`).
    public var textType: TextType
    /// The language of the words.
    public var language: Language
    /// The brand named on the button; Tessera by default.
    public var brand: Brand
    /// The corner radius; `normal` by default.
    public var cornerRadius: CornerRadius
    /// The border of the white style (seed: `setBorderColor`); `nil` for the default grey.
    /// Ignored by the green style.
    public var borderColor: Color?
    /// The user's name for a personalised button ("Войти как Анна К."); ignored by the short variant.
    public var personalName: String?
    /// The width asked for; the layout never goes below ``minimumWidth(measure:)``.
    public var desiredWidth: Double
    /// The height asked for; at least ``minimumHeight``.
    public var desiredHeight: Double

    /// A button of `type` and `textType` sized as close to the desired size as the rules allow
    /// (seed: `init(type:textType:desiredHeight:desiredWidth:)`).
    public init(type: Style, textType: TextType = .general, desiredHeight: Double = 48, desiredWidth: Double = 280,
                language: Language = .ru, brand: Brand = .tessera) {
        self.style = type
        self.textType = textType
        self.language = language
        self.brand = brand
        self.cornerRadius = .normal
        self.desiredWidth = desiredWidth
        self.desiredHeight = desiredHeight
    }

    // MARK: Texts

    /// The text of ``textType`` in ``language``, not personalised.
    public var standardText: String { Self.text(textType, language: language, brand: brand) }

    /// The text before any truncation: personalised when a name is set and the variant isn't short.
    public var fullText: String { personalisedText ?? standardText }

    /// The personalised text, or `nil` when the button isn't personalised.
    public var personalisedText: String? {
        guard textType != .short, let name = personalName?.trimmingCharacters(in: .whitespacesAndNewlines), !name.isEmpty else {
            return nil
        }
        return Self.personalPrefix(textType, language: language) + name
    }

    /// The text of a variant.
    public static func text(_ type: TextType, language: Language, brand: Brand) -> String {
        let name = brand.name(in: language)
        switch (type, language) {
        case (.short, _): return name
        case (.general, .ru): return "Войти по \(name)"
        case (.filling, .ru): return "Заполнить \(russianWith(name)) \(name)"
        case (.pursue, .ru): return "Продолжить \(russianWith(name)) \(name)"
        case (.general, .en): return "Sign in with \(name)"
        case (.filling, .en): return "Fill in with \(name)"
        case (.pursue, .en): return "Continue with \(name)"
        }
    }

    /// The words before the user's name on a personalised button.
    static func personalPrefix(_ type: TextType, language: Language) -> String {
        switch (type, language) {
        case (.filling, .ru): "Заполнить как "
        case (.pursue, .ru): "Продолжить как "
        case (_, .ru): "Войти как "
        case (.filling, .en): "Fill in as "
        case (.pursue, .en): "Continue as "
        case (_, .en): "Sign in as "
        }
    }

    /// Russian "с" or "со" before `word`: "со" before с, з, ж, ш followed by a consonant, and
    /// before щ ("со Сбер ID", "с Tessera").
    static func russianWith(_ word: String) -> String {
        let letters = Array(word.lowercased().prefix(2))
        guard let first = letters.first else { return "с" }
        if first == "щ" { return "со" }
        let vowels: Set<Character> = ["а", "е", "ё", "и", "о", "у", "ы", "э", "ю", "я"]
        if "сзжш".contains(first), letters.count > 1, let second = letters.last,
           ("а"..."я").contains(second) || second == "ё", !vowels.contains(second), second != "ь", second != "ъ" {
            return "со"
        }
        return "с"
    }

    // MARK: Layout

    /// The height after the minimum is applied.
    public var height: Double { Swift.max(desiredHeight, Self.minimumHeight) }
    /// The font size for the height: 37.5 % of it, between 12 and 22 points.
    public var fontSize: Double { Swift.min(Swift.max(height * 0.375, 12), 22) }
    /// The square brand mark's side.
    public var logoSize: Double { (fontSize * 1.25).rounded() }
    /// Space left and right of the content.
    public var horizontalPadding: Double { Swift.max(12, (height * 0.3).rounded()) }
    /// Space between the mark and the text.
    public var spacing: Double { (fontSize * 0.5).rounded() }

    /// The narrowest the button may be: room for the mark and the short text (seed: the short
    /// variant is drawn at the minimum width).
    public func minimumWidth(measure: TextMeasure = .approximate) -> Double {
        let short = Self.text(.short, language: language, brand: brand)
        return (2 * horizontalPadding + logoSize + spacing + measure.width(of: short, fontSize: fontSize)).rounded(.up)
    }

    /// Lays the button out: its size, the text that fits, where the mark and the text go, and
    /// the colours.
    ///
    /// The text is the personalised one when set, cut from the right to the room there is; if
    /// not even one letter of the name fits, the standard text is used. A standard text that
    /// doesn't fit gives way to the short one, which always fits at the minimum width.
    public func layout(measure: TextMeasure = .approximate) -> LoginButtonLayout {
        let width = Swift.max(desiredWidth.rounded(), minimumWidth(measure: measure))
        let room = width - 2 * horizontalPadding - logoSize - spacing
        func fits(_ text: String) -> Bool { measure.width(of: text, fontSize: fontSize) <= room + 0.0001 }

        var text = Self.text(.short, language: language, brand: brand)
        var truncated = false
        var personalised = false
        if let personal = personalisedText,
           let cut = Self.truncate(personal, toWidth: room, measure: { measure.width(of: $0, fontSize: fontSize) }),
           cut.count > Self.personalPrefix(textType, language: language).count + 1 {
            text = cut
            truncated = cut != personal
            personalised = true
        } else if fits(standardText) {
            text = standardText
        }
        let textWidth = measure.width(of: text, fontSize: fontSize)
        let contentWidth = logoSize + spacing + textWidth
        let x = ((width - contentWidth) / 2).rounded(.down)
        let logo = LoginButtonLayout.Rect(x: x, y: ((height - logoSize) / 2).rounded(.down), width: logoSize, height: logoSize)
        let textFrame = LoginButtonLayout.Rect(x: x + logoSize + spacing, y: ((height - fontSize * 1.2) / 2), width: textWidth,
                                               height: fontSize * 1.2)

        let background: Color, foreground: Color, mark: Color, border: Color?
        switch style {
        case .green:
            (background, foreground, mark, border) = (brand.color, .white, .white, nil)
        case .white:
            (background, foreground, mark, border) = (.white, .ink, brand.color, borderColor ?? .defaultBorder)
        }
        return LoginButtonLayout(width: width, height: height, cornerRadius: cornerRadius.value(height: height), fontSize: fontSize,
                                 text: text, accessibilityLabel: personalisedText ?? standardText, isTruncated: truncated,
                                 isPersonalised: personalised, logoFrame: logo, textFrame: textFrame,
                                 background: background, foreground: foreground, markColor: mark, border: border)
    }

    /// `text` cut from the right, with "…", to at most `width`; `nil` when not even "…" fits.
    public static func truncate(_ text: String, toWidth width: Double, measure: (String) -> Double) -> String? {
        if measure(text) <= width + 0.0001 { return text }
        var characters = Array(text)
        while !characters.isEmpty {
            characters.removeLast()
            while characters.last?.isWhitespace == true { characters.removeLast() }
            let candidate = String(characters) + "…"
            if measure(candidate) <= width + 0.0001 { return candidate }
        }
        return measure("…") <= width + 0.0001 ? "…" : nil
    }

    // MARK: SVG

    /// The button as a standalone SVG image for web pages (`<img src=…>` or inline), with the
    /// full text as its accessible name.
    public func svg(measure: TextMeasure = .approximate) -> String {
        let layout = layout(measure: measure)
        func n(_ value: Double) -> String {
            let rounded = (value * 100).rounded() / 100
            return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
        }
        let label = Self.escapeXML(layout.accessibilityLabel)
        var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(n(layout.width))" height="\(n(layout.height))" \
        viewBox="0 0 \(n(layout.width)) \(n(layout.height))" role="img" aria-label="\(label)">\
        <title>\(label)</title>
        """
        if let border = layout.border {
            svg += "<rect x=\"0.5\" y=\"0.5\" width=\"\(n(layout.width - 1))\" height=\"\(n(layout.height - 1))\" "
                + "rx=\"\(n(Swift.max(0, layout.cornerRadius - 0.5)))\" fill=\"\(layout.background.hex)\" stroke=\"\(border.hex)\"/>"
        } else {
            svg += "<rect width=\"\(n(layout.width))\" height=\"\(n(layout.height))\" rx=\"\(n(layout.cornerRadius))\" "
                + "fill=\"\(layout.background.hex)\"/>"
        }
        // The mark: four tiles, a tessera's mosaic.
        svg += "<g fill=\"\(layout.markColor.hex)\">"
        for tile in layout.markTiles {
            svg += "<rect x=\"\(n(tile.x))\" y=\"\(n(tile.y))\" "
                + "width=\"\(n(tile.width))\" height=\"\(n(tile.height))\" rx=\"\(n(layout.markTileRadius))\"/>"
        }
        svg += "</g>"
        let baseline = layout.height / 2 + layout.fontSize * 0.35
        svg += "<text x=\"\(n(layout.textFrame.x))\" y=\"\(n(baseline))\" "
            + "font-family=\"-apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif\" "
            + "font-size=\"\(n(layout.fontSize))\" font-weight=\"500\" fill=\"\(layout.foreground.hex)\">"
            + Self.escapeXML(layout.text) + "</text></svg>"
        return svg
    }

    static func escapeXML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&apos;")
    }
}

/// Where everything of a ``LoginButton`` goes, in points from the top-left corner.
public struct LoginButtonLayout: Sendable, Equatable {
    /// A rectangle.
    public struct Rect: Sendable, Equatable {
        /// The origin (top-left) and the size, in points.
        public var x: Double, y: Double, width: Double, height: Double
        /// A rectangle at `x`, `y` of `width` × `height`.
        public init(x: Double, y: Double, width: Double, height: Double) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    /// The button's width: the desired width, or the minimum when that is less.
    public var width: Double
    /// The button's height: the desired height, at least ``LoginButton/minimumHeight``.
    public var height: Double
    /// The corner radius in points.
    public var cornerRadius: Double
    /// The font size of the text, in points.
    public var fontSize: Double
    /// The text to draw, possibly cut with "…".
    public var text: String
    /// The whole text, for VoiceOver and `aria-label`.
    public var accessibilityLabel: String
    /// Whether ``text`` was cut.
    public var isTruncated: Bool
    /// Whether ``text`` names the user.
    public var isPersonalised: Bool
    /// The brand mark's square.
    public var logoFrame: Rect
    /// The text's box (one line, 1.2 × the font size high).
    public var textFrame: Rect
    /// The fill.
    public var background: LoginButton.Color
    /// The text colour.
    public var foreground: LoginButton.Color
    /// The colour of the brand mark.
    public var markColor: LoginButton.Color
    /// The border (white style only).
    public var border: LoginButton.Color?

    /// The brand mark's four tiles (a tessera's mosaic) inside ``logoFrame``, as every renderer
    /// draws them: the SVG, the SwiftUI view and the UIKit control.
    public var markTiles: [Rect] {
        let gap = Swift.max(1, (logoFrame.width * 0.1).rounded())
        let tile = (logoFrame.width - gap) / 2
        return [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)].map { column, row in
            Rect(x: logoFrame.x + column * (tile + gap), y: logoFrame.y + row * (tile + gap), width: tile, height: tile)
        }
    }

    /// The corner radius of each of ``markTiles``.
    public var markTileRadius: Double { (markTiles.first?.width ?? 0) * 0.25 }

    /// A colour's components from 0 to 1, as SwiftUI's `Color` and UIKit's `UIColor` take them.
    public static func components(_ color: LoginButton.Color) -> (red: Double, green: Double, blue: Double) {
        (Double(color.red) / 255, Double(color.green) / 255, Double(color.blue) / 255)
    }
}

/// How wide text is, so layout stays pure: a width per character, in ems (multiples of the
/// font size). Pass one derived from the real font (UIKit: `NSString.size(withAttributes:)` of
/// each character divided by the point size), or use ``approximate``.
public struct TextMeasure: Sendable {
    private let widthInEm: @Sendable (Character) -> Double

    /// A measure from each character's width in ems.
    public init(widthInEm: @escaping @Sendable (Character) -> Double) { self.widthInEm = widthInEm }

    /// The width of `text` at `fontSize` points.
    public func width(of text: String, fontSize: Double) -> Double {
        text.reduce(0) { $0 + widthInEm($1) } * fontSize
    }

    /// Every character `em` wide.
    public static func monospaced(_ em: Double = 0.6) -> TextMeasure { TextMeasure { _ in em } }

    /// A rough sans-serif estimate (Latin and Cyrillic), within about 10 % of system fonts.
    public static let approximate = TextMeasure { character in
        if character == " " { return 0.28 }
        if character == "…" { return 0.9 }
        if "iljtfrI1.,:;'|!()[]".contains(character) { return 0.3 }
        if "mwMWшщжмюыШЩЖМЮЫ".contains(character) { return 0.85 }
        if character.isUppercase { return 0.68 }
        if character.isNumber { return 0.56 }
        return 0.55
    }
}
