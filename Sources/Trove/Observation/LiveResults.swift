import Foundation
import Observation

/// The latest result of a ``LiveQuery`` as an `@Observable` object, for UI code: views that read
/// ``value`` or ``error`` update when they change.
///
/// It starts consuming the query when created and stops when released (or on ``cancel()``).
/// Main-actor isolated: values are set on the main actor, where UI reads them.
///
/// ```swift
/// @MainActor final class InboxModel {
///     let unread: LiveResults<Int>
///     init(mail: DocumentCollection) { unread = LiveResults(mail.observeCount(where: Field("read") == false)) }
/// }
/// // SwiftUI: Text("\(model.unread.value ?? 0) unread")
/// ```
@MainActor
@Observable
public final class LiveResults<Value: Sendable> {
    /// The latest result; nil until the first arrives.
    public private(set) var value: Value?
    /// The error that ended the query, if one did (``value`` keeps the last good result).
    public private(set) var error: (any Error)?
    /// How many results have arrived (the first one included).
    public private(set) var updates = 0
    /// Whether the query has ended (an error, ``cancel()``).
    public private(set) var isFinished = false

    @ObservationIgnored private let consumer = ConsumerTask()

    /// Starts consuming `query`.
    public init(_ query: LiveQuery<Value>) {
        consumer.start { [weak self] in
            do {
                for try await value in query {
                    guard let self else { return }
                    self.value = value
                    self.updates += 1
                }
            } catch {
                self?.error = error
            }
            self?.isFinished = true
        }
    }

    /// Stops observing; ``value`` keeps the last result.
    public func cancel() {
        consumer.cancel()
    }

    /// Waits until at least `count` results have arrived or the query has ended (for tests and
    /// scripts; UI code reads ``value`` instead). Suspends; never blocks.
    public func waitForUpdates(_ count: Int) async {
        while updates < count, !isFinished {
            await withCheckedContinuation { continuation in
                withObservationTracking {
                    _ = self.updates
                    _ = self.isFinished
                } onChange: {
                    continuation.resume()
                }
            }
        }
    }
}

/// The task consuming a live query, cancelled when its owner is released.
private final class ConsumerTask: Sendable {
    // A Mutex-free lock: the task is set once in init and read by cancel/deinit.
    private let task = LockedTask()

    @MainActor
    func start(_ body: @escaping @MainActor @Sendable () async -> Void) {
        task.set(Task { @MainActor in await body() })
    }

    func cancel() { task.get()?.cancel() }

    deinit { task.get()?.cancel() }
}

private final class LockedTask: @unchecked Sendable {
    // @unchecked Sendable: `task` is only touched under `lock`.
    private let lock = NSLock()
    private var task: Task<Void, Never>?
    func set(_ task: Task<Void, Never>) { lock.withLock { self.task = task } }
    func get() -> Task<Void, Never>? { lock.withLock { task } }
}
