import Foundation

/// Where a database reads the current time for expiry (time to live).
///
/// Inject a ``ManualClock`` in tests to put records past their expiry without waiting:
///
/// ```swift
/// let clock = ManualClock(Date(timeIntervalSince1970: 1_000))
/// let database = try Database(clock: clock)
/// clock.advance(by: .seconds(60))
/// ```
public protocol ExpiryClock: Sendable {
    /// The current time.
    var now: Date { get }
}

/// The system's wall clock, the default.
public struct SystemClock: ExpiryClock {
    public init() {}
    public var now: Date { Date() }
}

/// A clock that stands still until it is set or advanced: for tests and examples.
///
/// ```swift
/// let clock = ManualClock(Date(timeIntervalSince1970: 1_700_000_000))
/// clock.advance(by: .seconds(30))
/// clock.set(Date(timeIntervalSince1970: 1_700_000_100))
/// ```
public final class ManualClock: ExpiryClock, @unchecked Sendable {
    // @unchecked Sendable: `current` is read and written only under `lock`.
    private let lock = NSLock()
    private var current: Date

    /// A clock showing `start`.
    public init(_ start: Date) { current = start }

    public var now: Date { lock.withLock { current } }

    /// Sets the time.
    public func set(_ date: Date) { lock.withLock { current = date } }

    /// Moves the time forward (or back, for a negative duration).
    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        lock.withLock { current += Double(seconds) + Double(attoseconds) / 1e18 }
    }
}

/// When a document expires: never, at a time, or after a time to live from now.
///
/// Expiry is exact to the second: a document that expires at second `T` (times are rounded up to
/// a whole second, so nothing expires early) is visible while the clock is before `T` and
/// invisible to every read from `T` on, before any purge. The collection's schema must allow it
/// (``DocumentSchema/allowsExpiry``).
///
/// ```swift
/// try await sessions.insert([session], expiry: .after(.seconds(3600)))
/// try await sessions.setExpiry(id: 7, .at(Date(timeIntervalSince1970: 1_700_000_000)))
/// try await sessions.setExpiry(id: 7, .never)
/// ```
public enum Expiry: Hashable, Sendable {
    /// Never expires.
    case never
    /// Expires at this time (rounded up to the second).
    case at(Date)
    /// Expires this long after the clock's current time (rounded up to the second).
    case after(Duration)

    /// The stored expiry second, or nil for never.
    ///
    /// - Throws: ``TroveError/invalidValue(field:reason:)`` for a time that is not finite or does
    ///   not fit in a 64-bit second count.
    func second(now: Date) throws -> Int64? {
        let seconds: Double
        switch self {
        case .never: return nil
        case .at(let date): seconds = date.timeIntervalSince1970
        case .after(let duration):
            let (whole, fraction) = duration.components
            seconds = now.timeIntervalSince1970 + Double(whole) + Double(fraction) / 1e18
        }
        let rounded = seconds.rounded(.up)
        guard rounded.isFinite, abs(rounded) < 9e15 else {
            throw TroveError.invalidValue(
                field: "_expires", reason: "\(seconds) is not a representable expiry time")
        }
        return Int64(rounded)
    }
}
