import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// LISTENs for a space's pushes on a connection and thread of its own, and yields on each
/// notification. When the connection is lost (a server restart) it reconnects with backoff and
/// yields once after listening again, since pushes made while it was away sent no notification
/// it could hear.
final class PostgresListener: @unchecked Sendable {
    // @unchecked Sendable: `stopped` is guarded by `lock`; the connection lives only on the
    // listener's thread; the wake pipe's descriptors are constants.
    private let options: PostgresConnectionOptions
    private let space: String
    private let continuation: AsyncStream<Void>.Continuation
    private let lock = NSLock()
    private var stopped = false
    // A pipe whose read end is polled beside the socket, so stop() wakes the thread at once.
    private let wakeRead: Int32
    private let wakeWrite: Int32

    /// Starts listening; the thread runs until ``stop()``.
    init(
        options: PostgresConnectionOptions, space: String,
        continuation: AsyncStream<Void>.Continuation
    ) {
        self.options = options
        self.space = space
        self.continuation = continuation
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) != 0 { fds = [-1, -1] }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        let thread = Thread { [self] in run() }
        thread.name = "trove.sync.listen"
        thread.start()
    }

    /// Stops the thread and finishes the stream.
    func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        guard !wasStopped else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    private func run() {
        var connection: PostgresConnection?
        var backoff = 0.05
        while !isStopped {
            guard let current = connection else {
                do {
                    connection = try listen()
                    backoff = 0.05
                    continuation.yield()
                } catch {
                    wait(seconds: backoff)
                    backoff = min(backoff * 2, 2)
                }
                continue
            }
            var fds = [
                pollfd(fd: current.socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, 1000)
            if ready < 0 && errno != EINTR {
                connection = nil
                continue
            }
            guard fds[0].revents != 0 else { continue }
            do {
                try current.consumeInput()
            } catch {
                connection = nil
                continue
            }
            var heard = false
            while current.nextNotification() != nil { heard = true }
            if heard { continuation.yield() }
            if !current.isHealthy { connection = nil }
        }
        continuation.finish()
        close(wakeRead)
        close(wakeWrite)
    }

    /// A new connection listening on the space's channel (named by the server, which checks
    /// that this role is a member).
    private func listen() throws -> PostgresConnection {
        let connection = try PostgresConnection(options: options)
        let result = try connection.execute("SELECT trove_sync.channel($1)", [.text(space)])
        try result.expectColumns([PostgresType.text])
        let channel = try result.string(0, 0)
        try connection.execute("LISTEN " + connection.quotedIdentifier(channel))
        return connection
    }

    /// Sleeps up to `seconds`, returning early when stopped.
    private func wait(seconds: Double) {
        var fd = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
        _ = poll(&fd, 1, Int32(seconds * 1000))
    }
}
