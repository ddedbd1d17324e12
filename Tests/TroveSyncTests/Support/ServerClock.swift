import Foundation

/// A server clock the tests move forward.
final class ServerClock: @unchecked Sendable {
    // Guarded by `lock`: the transport reads it from any thread.
    private let lock = NSLock()
    private var current = Date()
    var now: Date { lock.withLock { current } }
    func advance(by seconds: TimeInterval) { lock.withLock { current += seconds } }
}
