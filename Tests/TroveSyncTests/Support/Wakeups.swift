import Foundation

/// Counts what a notification stream yields, consumed by a task of its own, so a test can wait
/// with a deadline for the n-th wake-up.
final class Wakeups: @unchecked Sendable {
    // @unchecked Sendable: `count` and `finished` are guarded by `lock`.
    private let lock = NSLock()
    private var count = 0
    private var finished = false
    private var task: Task<Void, Never>?

    init(_ stream: AsyncStream<Void>) {
        task = Task { [self] in
            for await _ in stream { update { $0.count += 1 } }
            update { $0.finished = true }
        }
    }

    deinit { task?.cancel() }

    /// The wake-ups so far.
    var value: Int { lock.withLock { count } }

    /// Whether the stream finished.
    var isFinished: Bool { lock.withLock { finished } }

    /// Waits until at least `n` wake-ups arrived; false after `seconds` without them.
    func wait(forAtLeast n: Int, seconds: Double = 120) async -> Bool {
        await waitUntil(seconds: seconds) { self.value >= n }
    }

    private func update(_ body: (Wakeups) -> Void) { lock.withLock { body(self) } }
}

/// Polls `condition` every 5 ms until it holds (true) or `seconds` pass (false).
func waitUntil(seconds: Double, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 5_000_000)
    }
    return condition()
}
