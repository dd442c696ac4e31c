#if canImport(UIKit) && os(iOS)
import Foundation
import TesseraAuthCore
import UIKit

/// Opens a link only in the app that claims it: the operator's authenticator app for a pushed
/// request's link (`OIDCClient.signInThroughAuthenticatorApp(_:opener:appRedirect:browser:)`). False when no
/// installed app claims it; nothing opens then, and the sign-in goes to the web fallback.
public struct UniversalLinkOpener: AppLinkOpener {
    public init() {}

    @MainActor
    public func openInApp(_ url: URL) async -> Bool {
        await UIApplication.shared.open(url, options: [.universalLinksOnly: true])
    }
}
#endif
