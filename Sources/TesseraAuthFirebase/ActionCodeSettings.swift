import Foundation
import TesseraAuthCore

/// How the sign-in link is built: where it leads back and which app opens it (Firebase's
/// `ActionCodeSettings`, seed 004) — `EmailLinkOptions` in Firebase's shape. Sent with ``EmailLinkAuth/sendSignInLink(toEmail:actionCodeSettings:languageCode:)``.
///
/// ```swift
/// var settings = ActionCodeSettings()
/// settings.url = URL(string: "https://shop.example.com/finish-sign-in")
/// settings.handleCodeInApp = true              // the app completes the sign-in
/// settings.setIOSBundleID(Bundle.main.bundleIdentifier!)
/// settings.setAndroidPackageName("com.example.shop", installIfNotAvailable: false, minimumVersion: "12")
/// ```
///
/// The server checks every value against the client's registration (docs/email-link.md):
/// ``url`` must be https (http on loopback) on the host of a redirect URI or a `--link-domain`,
/// the bundle one of its `--ios-app`s, the package one of its `--android-app`s.
public struct ActionCodeSettings: Sendable, Equatable {
    /// `continue_url`: where the link leads back, with any state the app wants carried along.
    /// Opened in a browser (the app not installed), a link with ``handleCodeInApp`` goes on to
    /// this URL with `mode=signIn&oob_code=…` for the web fallback to complete. Required with
    /// ``handleCodeInApp``.
    public var url: URL?
    /// `handle_code_in_app`: the app (or the web page at ``url``) completes the sign-in,
    /// rather than the provider's own page. Always true for a sign-in from an app, as Firebase says.
    public var handleCodeInApp: Bool
    /// `ios_bundle_id`: the iOS app that should open the link.
    public private(set) var iOSBundleID: String?
    /// `android_package_name`: the Android app that should open the link.
    public private(set) var androidPackageName: String?
    /// `android_install_app`: whether to offer installing the Android app when it is missing.
    public private(set) var androidInstallIfNotAvailable: Bool
    /// `android_minimum_version`: the lowest version of the Android app that handles the link.
    public private(set) var androidMinimumVersion: String?

    /// Settings with a continue URL and whether the app handles the code; add the apps with
    /// ``setIOSBundleID(_:)`` and ``setAndroidPackageName(_:installIfNotAvailable:minimumVersion:)``.
    public init(url: URL? = nil, handleCodeInApp: Bool = false) {
        self.url = url
        self.handleCodeInApp = handleCodeInApp
        self.androidInstallIfNotAvailable = false
    }

    /// Names the iOS app that should open the link (its bundle identifier).
    public mutating func setIOSBundleID(_ bundleID: String) {
        iOSBundleID = bundleID
    }

    /// Names the Android app that should open the link.
    ///
    /// - Parameters:
    ///   - packageName: the Android app's package name (`com.example.app`).
    ///   - installIfNotAvailable: offer installing the app when the device lacks it.
    ///   - minimumVersion: the lowest app version that handles the link.
    public mutating func setAndroidPackageName(_ packageName: String, installIfNotAvailable: Bool, minimumVersion: String?) {
        androidPackageName = packageName
        androidInstallIfNotAvailable = installIfNotAvailable
        androidMinimumVersion = minimumVersion
    }

    /// The Tessera options these settings stand for.
    public var options: EmailLinkOptions {
        EmailLinkOptions(continueURL: url, handledInApp: handleCodeInApp, iOSBundleID: iOSBundleID,
                         androidPackageName: androidPackageName, androidInstallsApp: androidInstallIfNotAvailable,
                         androidMinimumVersion: androidMinimumVersion)
    }
}
