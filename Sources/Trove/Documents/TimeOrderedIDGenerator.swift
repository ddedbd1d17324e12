import Foundation

/// Time-ordered ids: UUID version 7 (RFC 9562, section 5.7), made by Trove for rows of `UUID`
/// and `String` id collections that leave their id to it.
///
/// Layout, most significant bit first (128 bits):
///
/// ```
/// unix_ts_ms (48) | ver = 0111 (4) | counter high (12) | var = 10 (2) | counter low (62)
/// ```
///
/// - `unix_ts_ms`: milliseconds since 1970 (UTC), big-endian, so ids sort by creation time, as
///   bytes, as `UUID`s and as their lowercase text (the form Trove stores: fixed width, hex
///   digits in ASCII order).
/// - The 74 counter bits are "monotonic random" (RFC 9562, section 6.2, method 2): at each new
///   millisecond they are drawn from the system CSPRNG (`SystemRandomNumberGenerator`:
///   `getrandom(2)` on Linux, `arc4random_buf` on Apple platforms), with the top bit clear so the
///   counter has room to grow; within the same millisecond the previous value is raised by a
///   random step of 1 to 2^32. Ids from one process are therefore strictly increasing, even
///   many in one millisecond or when the wall clock steps back (the last timestamp is kept
///   until the clock passes it); should the counter overflow, the timestamp moves on by 1 ms.
///   Ids from different devices differ by their 73 random bits per millisecond (a collision
///   needs two devices in the same millisecond drawing the same 73 bits).
///
/// Why UUIDv7 rather than ULID: it is the standard (RFC 9562, 2024), it fits Foundation's
/// `UUID` and PostgreSQL's `uuid` type (sync's server) unchanged, and both carry the same
/// 48-bit millisecond timestamp and about 74 bits of randomness. `String` id collections get
/// the same value as lowercase text, so one id layout serves both.
///
/// Thread-safe (`@unchecked Sendable`): `state` is only touched while holding `lock`.
package final class TimeOrderedIDGenerator: @unchecked Sendable {
    /// The generator of this process: ids from it increase across every collection and thread.
    package static let shared = TimeOrderedIDGenerator()

    private let lock = NSLock()
    private var lastMilliseconds: UInt64 = 0
    private var counterHigh: UInt64 = 0  // 12 bits
    private var counterLow: UInt64 = 0  // 62 bits
    private let now: @Sendable () -> UInt64
    private let random: @Sendable () -> UInt64

    private static let lowMask: UInt64 = (1 << 62) - 1
    private static let highMask: UInt64 = (1 << 12) - 1

    /// - Parameters:
    ///   - now: milliseconds since 1970 (tests pass a fixed or stepping clock).
    ///   - random: 64 random bits per call (the system CSPRNG unless a test seeds one).
    package init(
        now: @escaping @Sendable () -> UInt64 = {
            UInt64(max(0, Date().timeIntervalSince1970 * 1000))
        },
        random: @escaping @Sendable () -> UInt64 = {
            var generator = SystemRandomNumberGenerator()
            return generator.next()
        }
    ) {
        self.now = now
        self.random = random
    }

    /// The next id.
    package func next() -> UUID { next(1)[0] }

    /// `count` ids, strictly increasing.
    ///
    /// - Complexity: O(count), one lock for the batch.
    package func next(_ count: Int) -> [UUID] {
        lock.withLock {
            var ids: [UUID] = []
            ids.reserveCapacity(count)
            for _ in 0..<count { ids.append(step()) }
            return ids
        }
    }

    /// Advances the state (lock held) and returns its id.
    private func step() -> UUID {
        let milliseconds = now() & ((1 << 48) - 1)
        if milliseconds > lastMilliseconds {
            reseed(at: milliseconds)
        } else {
            // Same millisecond, or the clock went back: keep the last timestamp, raise the counter.
            let increment = (random() & 0xFFFF_FFFF) + 1
            counterLow += increment
            if counterLow > Self.lowMask {
                counterLow &= Self.lowMask
                counterHigh += 1
                if counterHigh > Self.highMask { reseed(at: lastMilliseconds + 1) }
            }
        }
        return uuid()
    }

    private func reseed(at milliseconds: UInt64) {
        lastMilliseconds = milliseconds
        counterHigh = random() & (Self.highMask >> 1)  // top bit clear: room to count up
        counterLow = random() & Self.lowMask
    }

    private func uuid() -> UUID {
        let t = lastMilliseconds
        let h = counterHigh
        let l = counterLow
        return UUID(
            uuid: (
                UInt8(truncatingIfNeeded: t >> 40), UInt8(truncatingIfNeeded: t >> 32),
                UInt8(truncatingIfNeeded: t >> 24), UInt8(truncatingIfNeeded: t >> 16),
                UInt8(truncatingIfNeeded: t >> 8), UInt8(truncatingIfNeeded: t),
                0x70 | UInt8(truncatingIfNeeded: h >> 8), UInt8(truncatingIfNeeded: h),
                0x80 | UInt8(truncatingIfNeeded: l >> 56), UInt8(truncatingIfNeeded: l >> 48),
                UInt8(truncatingIfNeeded: l >> 40), UInt8(truncatingIfNeeded: l >> 32),
                UInt8(truncatingIfNeeded: l >> 24), UInt8(truncatingIfNeeded: l >> 16),
                UInt8(truncatingIfNeeded: l >> 8), UInt8(truncatingIfNeeded: l)
            ))
    }

    /// The millisecond timestamp of a version-7 UUID (nil for other versions).
    package static func milliseconds(of id: UUID) -> UInt64? {
        let b = id.uuid
        guard b.6 >> 4 == 7, b.8 >> 6 == 0b10 else { return nil }
        return [b.0, b.1, b.2, b.3, b.4, b.5].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
