import Foundation
import Testing
import Trove
import TroveTestSupport

@Suite("TimeOrderedIDGenerator")
struct TimeOrderedIDGeneratorTests {
    @Test("a million ids: all distinct, strictly increasing as UUIDs and as stored text, version 7")
    func millionUnique() {
        let ids = TimeOrderedIDGenerator.shared.next(1_000_000)
        #expect(Set(ids).count == ids.count)
        let texts = ids.map { $0.uuidString.lowercased() }
        var increasing = true
        for i in 1..<texts.count where !(texts[i - 1] < texts[i]) { increasing = false }
        #expect(increasing)
        #expect(ids.allSatisfy { TimeOrderedIDGenerator.milliseconds(of: $0) != nil })
    }

    @Test("ids sort by creation time, and carry it")
    func creationTime() async throws {
        let before = UInt64(Date().timeIntervalSince1970 * 1000)
        let first = TimeOrderedIDGenerator.shared.next()
        try await Task.sleep(for: .milliseconds(5))
        let second = TimeOrderedIDGenerator.shared.next()
        let after = UInt64(Date().timeIntervalSince1970 * 1000)
        let (t1, t2) = (
            TimeOrderedIDGenerator.milliseconds(of: first)!,
            TimeOrderedIDGenerator.milliseconds(of: second)!
        )
        #expect(before <= t1 && t1 < t2 && t2 <= after + 1)
        #expect(first.uuidString.lowercased() < second.uuidString.lowercased())
    }

    @Test("within one millisecond, and when the clock steps back, ids still increase")
    func sameMillisecondAndClockBack() {
        let clock = Locked<UInt64>(1_800_000_000_000)
        let seeded = Locked(SeededGenerator(seed: 7))
        let generator = TimeOrderedIDGenerator(
            now: { clock.withLock { $0 } }, random: { seeded.withLock { $0.next() } })
        var ids = generator.next(10_000)  // one millisecond
        clock.withLock { $0 -= 60_000 }  // the wall clock goes back a minute
        ids += generator.next(100)
        clock.withLock { $0 += 120_000 }
        ids += generator.next(100)
        let texts = ids.map { $0.uuidString.lowercased() }
        #expect(zip(texts, texts.dropFirst()).allSatisfy { $0 < $1 })
        #expect(TimeOrderedIDGenerator.milliseconds(of: ids[10_050]) == 1_800_000_000_000)
        #expect(TimeOrderedIDGenerator.milliseconds(of: ids.last!) == 1_800_000_060_000)
    }

    @Test("the low counter bits carry into the high ones and ids keep increasing")
    func carry() {
        // All-ones randomness: the 62 low counter bits start full, so the first step carries.
        let generator = TimeOrderedIDGenerator(now: { 5_000 }, random: { .max })
        let ids = generator.next(3)
        #expect(
            ids.map { $0.uuidString.lowercased() } == [
                "00000000-1388-77ff-bfff-ffffffffffff",
                "00000000-1388-7800-8000-0000ffffffff",
                "00000000-1388-7800-8000-0001ffffffff",
            ])
    }

    @Test("the layout: version 7, RFC 9562 variant, big-endian millisecond timestamp")
    func layout() {
        let generator = TimeOrderedIDGenerator(now: { 0x0123_4567_89AB }, random: { 0 })
        let id = generator.next()
        #expect(id.uuidString.lowercased() == "01234567-89ab-7000-8000-000000000000")
    }
}

/// A value shared with the generator's `@Sendable` clock and randomness.
/// `@unchecked Sendable`: `value` is only touched while holding `lock`.
private final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}
