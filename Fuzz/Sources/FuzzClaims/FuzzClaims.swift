import Foundation
import FuzzSupport
import TesseraCore

/// libFuzzer entry point: the input is the `claims` parameter of an authorization request.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: fuzzInput(start, count), as: UTF8.self)
    guard let request = try? ClaimsRequest(parsing: text) else { return 0 }
    checkStorageRoundTrip(request)
    checkQueries(request)
    return 0
}

/// The provider stores a parsed request with the authorization code and the grant
/// (`CanonicalJSON.encode`) and reads it back later with `JSONDecoder`: it must encode, and
/// read back as the same request, or the code exchange fails for a request it accepted.
func checkStorageRoundTrip(_ request: ClaimsRequest) {
    let stored = try? CanonicalJSON.encode(request)
    require(stored != nil, "an accepted request encodes")
    let text = String(decoding: stored!, as: UTF8.self)
    let reread = try? ClaimsRequest(parsing: text)
    require(reread == request, "an accepted request re-parses to itself: \(text)")
    require((try? CanonicalJSON.encode(reread!)) == stored, "a re-parsed request encodes to the same bytes: \(text)")
}

/// The derived sets agree with each other and with `filtered`.
func checkQueries(_ request: ClaimsRequest) {
    let all = request.allClaims
    require(request.essentialClaims.isSubset(of: all), "essential claims are requested claims")
    require(request.isEmpty == all.isEmpty, "isEmpty means no claim is named")
    require(request.filtered { _ in true } == request, "keeping every claim changes nothing")
    require(request.filtered { _ in false }.isEmpty, "keeping none leaves none")
    let short = request.filtered { $0.utf8.count % 2 == 0 }
    require(short.allClaims == all.filter { $0.utf8.count % 2 == 0 }, "filtered keeps exactly the claims it accepts")
    require(short.essentialClaims == request.essentialClaims.filter { $0.utf8.count % 2 == 0 }, "filtering keeps essential marks")
}
