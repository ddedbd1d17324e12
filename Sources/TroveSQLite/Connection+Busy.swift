import CSQLite
import Foundation

/// What a connection does while another connection holds the lock it needs: calls its
/// `onWait` and sleeps, as SQLite's own busy timeout does, until the timeout has passed.
final class BusyWaiter {
    let timeoutMilliseconds: Int
    let onWait: () -> Void

    init(timeoutMilliseconds: Int, onWait: @escaping () -> Void) {
        self.timeoutMilliseconds = timeoutMilliseconds
        self.onWait = onWait
    }

    /// SQLite's own schedule (`sqliteDefaultBusyCallback`): short sleeps first, then 100 ms.
    static let delays = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100]

    /// Whether to try again after the `count`-th failed attempt (0 first), having slept.
    func wait(count: Int) -> Bool {
        let index = min(count, Self.delays.count - 1)
        let slept =
            count < Self.delays.count
            ? Self.delays[..<index].reduce(0, +)
            : Self.delays.reduce(0, +) + (count - Self.delays.count) * Self.delays.last!
        let delay = min(Self.delays[index], timeoutMilliseconds - slept)
        guard delay > 0 else { return false }
        onWait()
        usleep(UInt32(delay) * 1_000)
        return true
    }
}

extension Connection {
    /// Calls `body` on this connection's thread each time it waits for a lock another
    /// connection holds (within its busy timeout, which still applies): how a background writer
    /// on another connection of the file (the text-index merger, whose short transactions follow
    /// each other closely) learns that it should give way. SQLite's busy handler only retries,
    /// and a retry rarely lands in the instant between two of the other's transactions.
    package func onBusyWait(_ body: @escaping () -> Void) {
        let ms = options.busyTimeout.components
        let waiter = BusyWaiter(
            timeoutMilliseconds: Int(ms.seconds * 1000 + ms.attoseconds / 1_000_000_000_000_000),
            onWait: body)
        busyWaiter = waiter
        sqlite3_busy_handler(
            db,
            { context, count in
                let waiter = Unmanaged<BusyWaiter>.fromOpaque(context!).takeUnretainedValue()
                return waiter.wait(count: Int(count)) ? 1 : 0
            }, Unmanaged.passUnretained(waiter).toOpaque())
    }
}
