import Foundation
import Testing
import TroveTestSupport

@testable import TroveSync

@Suite struct PullReadAheadTests {
    private typealias Request = PullReadAhead.Request

    private func sets(_ sequences: ClosedRange<Int64>, bytes: Int = 10) -> [SealedChangeSet] {
        sequences.map {
            SealedChangeSet(
                device: "d", deviceSequence: $0, payload: Data(repeating: 1, count: bytes),
                serverSequence: $0)
        }
    }

    @Test func onlyAFullPageAsksForTheNextOne() {
        let request = Request(space: "s", after: 0, limit: 3, maxBytes: nil)
        #expect(
            request.next(after: sets(1...3))
                == Request(space: "s", after: 3, limit: 3, maxBytes: nil))
        #expect(request.next(after: sets(1...2)) == nil)
        #expect(request.next(after: []) == nil)
        // With a byte budget, a page that stopped within half the budget of it is full too.
        let budget = Request(space: "s", after: 10, limit: 200, maxBytes: 100)
        #expect(
            budget.next(after: sets(11...12, bytes: 25))
                == Request(space: "s", after: 12, limit: 200, maxBytes: 100))
        #expect(budget.next(after: sets(11...12, bytes: 24)) == nil)
    }

    @Test func aKeptPageAnswersOnlyItsOwnRequestAndOnlyOnce() {
        let readAhead = PullReadAhead()
        let next = Request(space: "s", after: 3, limit: 3, maxBytes: nil)
        readAhead.keep(sets(4...6), for: next)
        // Another cursor, count, budget or space: not this page, and the page is dropped.
        #expect(readAhead.take(Request(space: "s", after: 3, limit: 3, maxBytes: 1 << 20)) == nil)
        #expect(readAhead.take(next) == nil)
        readAhead.keep(sets(4...6), for: next)
        #expect(readAhead.take(next) == sets(4...6))
        #expect(readAhead.take(next) == nil)
        // A failed read keeps nothing, and closing drops what was kept.
        readAhead.keep(sets(4...6), for: next)
        readAhead.keep(nil, for: next)
        #expect(readAhead.take(next) == nil)
        readAhead.keep(sets(4...6), for: next)
        readAhead.clear()
        #expect(readAhead.take(next) == nil)
    }

    /// Through a real server: after a full page the transport holds the next one, and a reader
    /// paging through a feed that grows between its pages gets every change set once, in order.
    @Test func pagesReadAheadThroughAGrowingFeedArriveOnceInOrder() async throws {
        let device = try SyncServerFixture.newDevice()
        let space = SyncServerFixture.newSpaceName()
        let transport = try PostgresTransport(url: device.url)
        defer { transport.close() }
        #expect(try await transport.createSpace(space))
        var rng = SeededGenerator(seed: 41)
        var pushedCount: Int64 = 0
        func push(_ count: Int) async throws {
            let batch = (1...count).map { i in
                SealedChangeSet(
                    device: "writer", deviceSequence: pushedCount + Int64(i),
                    payload: Data((0..<40).map { _ in UInt8.random(in: 0...255, using: &rng) }))
            }
            _ = try await transport.push(batch, space: space)
            pushedCount += Int64(count)
        }
        try await push(10)

        let first = try await transport.pull(space: space, after: 0, limit: 4)
        #expect(first.map(\.serverSequence) == [1, 2, 3, 4])
        // A request queued behind the read-ahead returns once it is done.
        _ = try await transport.lastSequence(space: space)
        let next = Request(space: space, after: 4, limit: 4, maxBytes: nil)
        let kept = try #require(transport.readAhead.take(next))
        #expect(kept.map(\.serverSequence) == [5, 6, 7, 8])
        transport.readAhead.keep(kept, for: next)

        // Page on with pushes between the pages, with and without a byte budget.
        var seen = first
        var cursor: Int64 = 4
        var round = 0
        while true {
            if round < 6 { try await push(Int.random(in: 1...5, using: &rng)) }
            round += 1
            let page =
                round % 2 == 0
                ? try await transport.pull(space: space, after: cursor, limit: 4)
                : try await transport.pull(space: space, after: cursor, limit: 4, maxBytes: 1 << 20)
            guard let last = page.last?.serverSequence else { break }
            seen += page
            cursor = last
        }
        #expect(seen.map(\.serverSequence) == Array(1...pushedCount))
        #expect(seen == (try await transport.pull(space: space, after: 0, limit: 1_000)))
    }
}
