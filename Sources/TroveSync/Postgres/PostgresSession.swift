import Dispatch

/// A connection used from async code: each request runs on a serial dispatch queue of its own
/// (libpq blocks until the server answers, which must not hold a thread of Swift's cooperative
/// pool), connecting on first use and again after the connection is lost.
final class PostgresSession: @unchecked Sendable {
    // @unchecked Sendable: `connection` is read and written only on `queue`.
    private let options: PostgresConnectionOptions
    private let queue: DispatchQueue
    private var connection: PostgresConnection?

    init(options: PostgresConnectionOptions, label: String = "trove.sync.postgres") {
        self.options = options
        queue = DispatchQueue(label: label)
    }

    /// Runs `body` with a healthy connection on the session's queue.
    ///
    /// A lost connection (the server restarted, the network dropped) is reopened and `body` run
    /// once more, so `body` must be safe to repeat: every Trove request is (a push is idempotent).
    /// When the second attempt fails too, its error is thrown.
    func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws
        -> T
    {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.runOnQueue(body) })
            }
        }
    }

    /// Queues `body` without waiting for it, for a request whose outcome nobody needs (a failure
    /// is dropped); requests queued after it run after it.
    func send(_ body: @escaping @Sendable (PostgresConnection) throws -> Void) {
        queue.async { _ = try? self.runOnQueue(body) }
    }

    /// Closes the connection (the next request opens a new one).
    func close() {
        queue.async { self.connection = nil }
    }

    private func runOnQueue<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        if let connection, connection.isHealthy {
            do {
                return try body(connection)
            } catch PostgresError.connectionFailed {
                // Lost since its last use (a server restart cuts every connection): reconnect once.
                self.connection = nil
            }
        }
        connection = nil
        let fresh = try PostgresConnection(options: options)
        connection = fresh
        do {
            return try body(fresh)
        } catch let error as PostgresError {
            if case .connectionFailed = error { connection = nil }
            throw error
        }
    }
}
