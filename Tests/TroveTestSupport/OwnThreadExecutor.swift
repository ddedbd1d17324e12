import Foundation

/// A task executor with one serial thread of its own: tasks that prefer it
/// (`withTaskExecutorPreference`) run there, never on Swift's cooperative pool, so a test can
/// run work beside a cooperative thread it blocks on purpose, or two such executors can run two
/// tasks truly at once, whatever other suites hold the pool's threads.
public final class OwnThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: a serial DispatchQueue is the only state.
    private let queue: DispatchQueue

    public init(label: String = "OwnThreadExecutor") { queue = DispatchQueue(label: label) }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
