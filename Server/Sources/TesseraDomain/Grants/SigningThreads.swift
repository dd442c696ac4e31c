import Dispatch

/// Dispatch's threads as a `TaskExecutor`: where the grants that waited on the database sign
/// their tokens (``UserGrantTokens/response(grant:user:client:scope:nonce:refreshToken:dsHash:deviceSecret:)``),
/// off the event loops.
///
/// A refresh whose rotation runs on the database's thread (on PostgreSQL, every one the single
/// statement doesn't take; on SQLite, one that found another process writing) prefers them from
/// before its transaction (``RefreshTokenGrant``): a task leaving the database's thread goes to
/// the executor it prefers, and with the request's event loop there a refresh woke four threads in
/// turn — the loop, the database's thread, the loop again only to hand the signatures over, and
/// the loop for the answer. Preferring these, the database's thread hands the task straight to a
/// thread that signs. (A refresh on SQLite otherwise rotates and signs on its event loop: nothing
/// else waits on SQLite's loops, as PostgreSQL's connections do.)
package final class SigningThreads: TaskExecutor {
    package static let executor = SigningThreads()

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
