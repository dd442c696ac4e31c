import Crypto
import CryptoExtras
import Foundation
import NIOConcurrencyHelpers
import TesseraCore

/// scrypt parameters. The default is one of OWASP's recommended settings
/// (N=2^15, r=8, p=3: 32 MiB, about 0.17 s here); tests use cheaper ones.
public struct ScryptParameters: Sendable, Equatable {
    public var logN: Int
    public var r: Int
    public var p: Int
    public init(logN: Int, r: Int, p: Int) { self.logN = logN; self.r = r; self.p = p }
    public static let owasp = ScryptParameters(logN: 15, r: 8, p: 3)
    public static let testing = ScryptParameters(logN: 10, r: 8, p: 1)
}

/// Threads for CPU-heavy work (password hashing), so that it never blocks the event loops or
/// the database threads. TesseraInfrastructure has the one the server uses (`NIOHashingThreads`).
public protocol HashingThreads: Sendable {
    /// How many run at once.
    var count: Int { get }
    /// Runs `work` on one of the threads.
    func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value
}

/// Hashes and verifies passwords with scrypt, in PHC string format
/// (`$scrypt$ln=15,r=8,p=3$<salt>$<hash>`), on threads of its own (``HashingThreads``) so
/// that hashing never blocks the event loops or the database threads.
///
/// The threads run one derivation each; the rest wait in a bounded queue
/// (``HashingQueue``) where work for a sign-in under way goes before new work, so a flood
/// of sign-up starts can neither grow memory without bound nor starve people signing in.
/// Work that finds the queue full fails at once with ``Busy``.
public final class PasswordHasher: Sendable {
    public let parameters: ScryptParameters
    let threads: any HashingThreads
    let queue: HashingQueue
    /// What an unknown account's password is checked against, so that a wrong email costs
    /// the same scrypt work as a wrong password. A random salt and a random "hash" at the
    /// current parameters: verifying against it does a full derivation, making it costs nothing.
    package let decoy: String

    /// What the hashing is for, which decides its place in the queue.
    public enum Priority: Sendable {
        /// A sign-in, or a step of a flow already under way (a password chosen after the code).
        case underWay
        /// Work that starts something new (a sign-up start with its password); waits behind
        /// ``underWay`` and may fill only a quarter of the queue.
        case new
    }

    /// The queue is full: the server is busy hashing; try again in a few seconds.
    public struct Busy: Error, Sendable {}

    /// `threads`: where the derivations run, one per thread at a time; `queueLength`: how many
    /// hashings may wait for a thread (`password-hashing-queue`).
    public init(parameters: ScryptParameters = .owasp, threads: any HashingThreads, queueLength: Int = 64) {
        self.parameters = parameters
        self.threads = threads
        queue = HashingQueue(slots: max(1, threads.count), length: max(1, queueLength))
        decoy = "$scrypt$ln=\(parameters.logN),r=\(parameters.r),p=\(parameters.p)$"
            + "\(Self.phcBase64(SecureRandom.bytes(16)))$\(Self.phcBase64(SecureRandom.bytes(32)))"
    }

    public func hash(_ password: String, priority: Priority = .underWay) async throws -> String {
        let parameters = self.parameters
        return try await run(priority) { try Self.hash(password, parameters: parameters) }
    }

    public struct Verification: Sendable {
        public var matches: Bool
        /// The password matched but was hashed with other parameters: store a new hash.
        public var needsRehash: Bool
    }

    /// Verifies `password` against `stored`; a nil `stored` (no such user) is checked against the decoy.
    public func verify(_ password: String, against stored: String?, priority: Priority = .underWay) async throws -> Verification {
        let current = parameters
        return try await run(priority) { [self] in
            let target = stored ?? decoy
            if ImportedPasswordHash.recognises(target) {
                // A hash imported from another system (Firebase, bcrypt, Argon2, PBKDF2): checked
                // once, then replaced by one of ours. A malformed one (which an import refuses)
                // matches nothing.
                let matches = (try? ImportedPasswordHash.verify(password, against: target)) == true
                return Verification(matches: matches, needsRehash: matches)
            }
            guard let parsed = Self.parse(target) else { return Verification(matches: false, needsRehash: false) }
            let derived = try Self.derive(password, salt: parsed.salt, parameters: parsed.parameters, length: parsed.hash.count)
            let matches = stored != nil && constantTimeEquals(derived, parsed.hash)
            return Verification(matches: matches, needsRehash: matches && parsed.parameters != current)
        }
    }

    /// Runs `work` on the threads once the queue gives it one.
    func run<Value: Sendable>(_ priority: Priority, _ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await queue.enter(priority)
        defer { queue.leave() }
        return try await threads.run(work)
    }

    static func hash(_ password: String, parameters: ScryptParameters) throws -> String {
        let salt = SecureRandom.bytes(16)
        let derived = try derive(password, salt: salt, parameters: parameters, length: 32)
        return "$scrypt$ln=\(parameters.logN),r=\(parameters.r),p=\(parameters.p)$\(phcBase64(salt))$\(phcBase64(derived))"
    }

    static func derive(_ password: String, salt: [UInt8], parameters: ScryptParameters, length: Int) throws -> [UInt8] {
        let key = try KDF.Scrypt.deriveKey(from: Array(password.utf8), salt: salt, outputByteCount: length,
                                           rounds: 1 << parameters.logN, blockSize: parameters.r, parallelism: parameters.p)
        return key.withUnsafeBytes { Array($0) }
    }

    /// A `$scrypt$` PHC string within ``PasswordCostCaps``; nil for anything else.
    package static func parse(_ phc: String) -> (parameters: ScryptParameters, salt: [UInt8], hash: [UInt8])? {
        let parts = phc.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "scrypt", let parameters = scryptParameters(parts[2]),
              PasswordCostCaps.scryptProblem(logN: parameters.logN, r: parameters.r, p: parameters.p) == nil,
              let salt = phcDecode(parts[3]), let hash = phcDecode(parts[4]), hash.count >= 16 else { return nil }
        return (parameters, salt, hash)
    }

    /// What is wrong with a `$scrypt$` string (for an import's report), or nil when it is usable.
    public static func problem(with phc: String) -> String? {
        guard parse(phc) == nil else { return nil }
        let parts = phc.split(separator: "$", omittingEmptySubsequences: false)
        if parts.count == 5, let parameters = scryptParameters(parts[2]),
           let problem = PasswordCostCaps.scryptProblem(logN: parameters.logN, r: parameters.r, p: parameters.p) {
            return problem
        }
        return "scrypt hash must be $scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash of 16 bytes or more>"
    }

    /// `ln=15,r=8,p=3`.
    static func scryptParameters(_ text: Substring) -> ScryptParameters? {
        var values: [String: Int] = [:]
        for pair in text.split(separator: ",") {
            let kv = pair.split(separator: "=")
            guard kv.count == 2, let value = ImportedFields.decimal(kv[1]) else { return nil }
            values[String(kv[0])] = value
        }
        guard let logN = values["ln"], let r = values["r"], let p = values["p"] else { return nil }
        return ScryptParameters(logN: logN, r: r, p: p)
    }

    // PHC strings use standard base64 without padding.
    static func phcBase64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    static func phcDecode(_ text: Substring) -> [UInt8]? {
        var padded = String(text)
        while padded.count % 4 != 0 { padded += "=" }
        return Data(base64Encoded: padded).map(Array.init)
    }
}

/// The waiting room in front of the hashing threads: `slots` may run at once, at most
/// `length` wait, and a freed slot goes to the oldest ``PasswordHasher/Priority/underWay``
/// waiter before any ``PasswordHasher/Priority/new`` one. New work may fill a quarter of
/// the room, so a flood of it leaves space for sign-ins.
package final class HashingQueue: Sendable {
    typealias Waiter = CheckedContinuation<Void, any Error>

    package struct State {
        var free: Int
        var underWay: [Waiter] = []
        var new: [Waiter] = []
        var waiting: Int { underWay.count + new.count }
    }

    let length: Int
    let newLength: Int
    private let state: NIOLockedValueBox<State>

    package init(slots: Int, length: Int) {
        self.length = length
        newLength = max(1, length / 4)
        state = NIOLockedValueBox(State(free: slots))
    }

    /// Returns when the caller holds a slot (give it back with ``leave()``); throws
    /// ``PasswordHasher/Busy`` when the waiting room has no place for this priority.
    package func enter(_ priority: PasswordHasher.Priority) async throws {
        try await withCheckedThrowingContinuation { (waiter: Waiter) in
            let answer: Result<Void, any Error>? = state.withLockedValue { state in
                if state.free > 0 {
                    state.free -= 1
                    return .success(())
                }
                switch priority {
                case .underWay where state.waiting < length:
                    state.underWay.append(waiter)
                case .new where state.waiting < length && state.new.count < newLength:
                    state.new.append(waiter)
                default:
                    return .failure(PasswordHasher.Busy())
                }
                return nil
            }
            if let answer { waiter.resume(with: answer) }
        }
    }

    /// Gives a slot back: to the next waiter, work under way first.
    package func leave() {
        let next: Waiter? = state.withLockedValue { state in
            if !state.underWay.isEmpty { return state.underWay.removeFirst() }
            if !state.new.isEmpty { return state.new.removeFirst() }
            state.free += 1
            return nil
        }
        next?.resume()
    }

    /// How many wait, for tests and metrics.
    package var waiting: (underWay: Int, new: Int) {
        state.withLockedValue { ($0.underWay.count, $0.new.count) }
    }
}
