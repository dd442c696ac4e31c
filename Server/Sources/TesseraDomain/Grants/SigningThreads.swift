import Dispatch

/// Dispatch's threads as a `TaskExecutor`: where a grant that waits on SQLite's thread runs from
/// the moment its transaction ends until its tokens are signed (``RefreshTokenGrant``).
///
/// A task leaving the database's thread goes back to the executor it prefers. With the request's
/// event loop there, a refresh woke four threads in turn — the loop, the database's thread, the
/// loop again only to hand the signatures to Dispatch (``UserGrantTokens/response(grant:user:client:scope:nonce:refreshToken:dsHash:deviceSecret:)``),
/// and the loop for the answer; preferring these threads for the rotation and its signatures, the
/// database's thread hands the task straight to the thread that signs.
package final class SigningThreads: TaskExecutor {
    package static let executor = SigningThreads()

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
