import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TesseraAuth

@Suite("Login button model")
struct LoginButtonTests {
    /// Every character half an em wide: 9 points at the 18-point font of a 48-point button.
    let measure = TextMeasure.monospaced(0.5)
    let sber = LoginButton.Brand(russianName: "Сбер ID", englishName: "Sber ID")

    @Test("the seed's texts, word for word, with Sber ID's brand")
    func seedTexts() {
        let expected: [(LoginButton.TextType, String, String)] = [
            (.short, "Сбер ID", "Sber ID"),
            (.general, "Войти по Сбер ID", "Sign in with Sber ID"),
            (.filling, "Заполнить со Сбер ID", "Fill in with Sber ID"),
            (.pursue, "Продолжить со Сбер ID", "Continue with Sber ID"),
        ]
        for (type, russian, english) in expected {
            #expect(LoginButton.text(type, language: .ru, brand: sber) == russian)
            #expect(LoginButton.text(type, language: .en, brand: sber) == english)
        }
    }

    @Test("Tessera is the default brand; the default button says 'Войти по Tessera'")
    func defaultBrand() {
        let button = LoginButton(type: .green)
        #expect(button.textType == .general && button.language == .ru)
        #expect(button.standardText == "Войти по Tessera")
        #expect(LoginButton.text(.filling, language: .ru, brand: .tessera) == "Заполнить с Tessera")
        #expect(LoginButton.text(.pursue, language: .en, brand: .tessera) == "Continue with Tessera")
    }

    @Test("'со' before с, з, ж, ш and a consonant, and before щ; 'с' otherwise", arguments: [
        ("Сбер ID", "со"), ("Звук", "со"), ("Щит", "со"), ("Шторм", "со"), ("Зона", "с"), ("Сова", "с"), ("Tessera", "с"), ("Мир", "с"),
    ])
    func russianPreposition(name: String, preposition: String) {
        #expect(LoginButton.text(.pursue, language: .ru, brand: LoginButton.Brand(name)) == "Продолжить \(preposition) \(name)")
    }

    @Test("English for English, Russian for Russian and for every other language", arguments: [
        (["en-GB"], LoginButton.Language.en), (["en_US"], .en), (["EN"], .en), (["ru-RU"], .ru), (["de-DE"], .ru),
        (["fr", "en"], .ru), ([], .ru), (["uk"], .ru),
    ])
    func language(preferred: [String], expected: LoginButton.Language) {
        #expect(LoginButton.Language(preferredLanguages: preferred) == expected)
    }

    @Test("personalisation names the user and keeps the variant's verb; the short variant is never personalised")
    func personalisation() {
        var button = LoginButton(type: .green, textType: .general, desiredHeight: 48, desiredWidth: 400)
        button.personalName = "Анна К."
        #expect(button.fullText == "Войти как Анна К.")
        #expect(button.layout(measure: measure).isPersonalised)
        button.textType = .pursue
        button.language = .en
        #expect(button.fullText == "Continue as Анна К.")
        button.textType = .short
        #expect(button.fullText == "Tessera")
        #expect(!button.layout(measure: measure).isPersonalised)
        button.textType = .general
        button.personalName = "   "
        #expect(button.personalisedText == nil)
    }

    @Test("a long name is cut from the right to the width, the whole text kept for accessibility")
    func truncation() {
        var button = LoginButton(type: .green, textType: .general, desiredHeight: 48, desiredWidth: 240)
        button.personalName = "Анна Каренина"
        // 240 wide: 240 − 2×14 padding − 23 mark − 9 spacing = 180 points = 20 characters.
        let layout = button.layout(measure: measure)
        #expect(layout.text == "Войти как Анна Каре…")
        #expect(layout.isTruncated && layout.isPersonalised)
        #expect(layout.accessibilityLabel == "Войти как Анна Каренина")
        #expect(layout.textFrame.width <= 180)
        button.desiredWidth = 267
        #expect(button.layout(measure: measure).text == "Войти как Анна Каренина")
        #expect(!button.layout(measure: measure).isTruncated)
    }

    @Test("without room for a letter of the name the standard text is used, and without room for that the short one")
    func fallbacks() {
        var button = LoginButton(type: .white, textType: .general, desiredHeight: 48, desiredWidth: 160)
        button.personalName = "Анна Каренина"
        // 100 points = 11 characters: "Войти как А…" needs 12, "Войти по Tessera" 16.
        let layout = button.layout(measure: measure)
        #expect(layout.text == "Tessera")
        #expect(!layout.isPersonalised)
        button.desiredWidth = 210
        #expect(button.layout(measure: measure).text == "Войти как Анна…")
        button.personalName = nil
        #expect(button.layout(measure: measure).text == "Войти по Tessera")
        // A short brand: "Войти по ID" (11) fits where the name can't.
        var short = LoginButton(type: .green, textType: .general, desiredHeight: 48, desiredWidth: 159, brand: LoginButton.Brand("ID"))
        short.personalName = "Анна"
        #expect(short.layout(measure: measure).text == "Войти по ID")
    }

    @Test("cutting text: from the right, trailing spaces dropped, an ellipsis added")
    func truncate() {
        let width: (String) -> Double = { Double($0.count) }
        #expect(LoginButton.truncate("Hello world", toWidth: 6, measure: width) == "Hello…")
        #expect(LoginButton.truncate("Hello", toWidth: 5, measure: width) == "Hello")
        #expect(LoginButton.truncate("Hello", toWidth: 1, measure: width) == "…")
        #expect(LoginButton.truncate("Hello", toWidth: 0.5, measure: width) == nil)
    }

    @Test("the width never goes below the short variant's, which is the minimum")
    func minimumWidth() {
        let button = LoginButton(type: .green, textType: .general, desiredHeight: 48, desiredWidth: 50)
        #expect(button.minimumWidth(measure: measure) == 123)
        let layout = button.layout(measure: measure)
        #expect(layout.width == 123)
        #expect(layout.text == "Tessera")
        #expect(LoginButton(type: .green, desiredHeight: 10).layout(measure: measure).height == LoginButton.minimumHeight)
    }

    @Test("corner radius: max is half the height, normal 4, none 0, custom clamped")
    func cornerRadius() {
        #expect(LoginButton.CornerRadius.max.value(height: 48) == 24)
        #expect(LoginButton.CornerRadius.normal.value(height: 48) == 4)
        #expect(LoginButton.CornerRadius.none.value(height: 48) == 0)
        #expect(LoginButton.CornerRadius.custom(100).value(height: 48) == 24)
        #expect(LoginButton.CornerRadius.custom(-3).value(height: 48) == 0)
        var button = LoginButton(type: .green, desiredHeight: 40)
        button.cornerRadius = .max
        #expect(button.layout(measure: measure).cornerRadius == 20)
    }

    @Test("the border colour applies to the white style only")
    func border() throws {
        var white = LoginButton(type: .white)
        #expect(white.layout().border == .defaultBorder)
        #expect(white.layout().background == .white)
        let blue = try #require(LoginButton.Color(hex: "#1A73E8"))
        white.borderColor = blue
        #expect(white.layout().border == blue)
        var green = LoginButton(type: .green)
        green.borderColor = blue
        #expect(green.layout().border == nil)
        #expect(green.layout().background == LoginButton.Brand.tessera.color)
        #expect(green.layout().foreground == .white)
    }

    @Test("colours read and write #RRGGBB")
    func colours() {
        #expect(LoginButton.Color(hex: "21a038")?.hex == "#21A038")
        #expect(LoginButton.Color(hex: "#0000FF") == LoginButton.Color(red: 0, green: 0, blue: 255))
        #expect(LoginButton.Color(hex: "#12345") == nil)
        #expect(LoginButton.Color(hex: "zzzzzz") == nil)
    }

    @Test("the mark and the text are centred together")
    func centring() {
        let layout = LoginButton(type: .green, textType: .short, desiredHeight: 48, desiredWidth: 223).layout(measure: measure)
        // content = 23 + 9 + 63 = 95; (223 − 95) / 2 = 64
        #expect(layout.logoFrame.x == 64)
        #expect(layout.textFrame.x == 64 + 23 + 9)
        #expect(layout.logoFrame.y == 12)
    }

    @Test("the SVG is well-formed, sized, labelled with the whole text and escapes the brand")
    func svg() throws {
        var button = LoginButton(type: .white, textType: .general, desiredHeight: 48, desiredWidth: 240,
                                 brand: LoginButton.Brand("A&B <ID>"))
        button.cornerRadius = .max
        let svg = button.svg(measure: measure)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"240\" height=\"48\""))
        #expect(svg.contains("aria-label=\"Войти по A&amp;B &lt;ID&gt;\""))
        #expect(svg.contains("stroke=\"#D0D7DD\""))
        #expect(svg.contains("rx=\"23.5\""))
        #expect(!svg.contains("<ID>"))
        let parser = XMLParser(data: Data(svg.utf8))
        #expect(parser.parse())

        let green = LoginButton(type: .green).svg()
        #expect(!green.contains("stroke="))
        #expect(green.contains("fill=\"#21A038\""))
        #expect(green.contains(">Войти по Tessera</text>"))
    }
}
