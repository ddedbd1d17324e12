import Foundation
import Testing
import Trove
import TroveTestSupport

/// Sorting by key paths with Foundation's `SortDescriptor`, limit, offset and cursors, compared
/// with Swift's own sort of the same models.
@Suite("Model fetch: sorting and paging")
struct ModelFetchTests {
    static let seeded: [Item] = {
        var rng = SeededGenerator(seed: 314)
        return (1...Int64(90)).map { Item.random(id: $0, using: &rng) }
    }()

    static let orders: [[SortDescriptor<Item>]] = [
        [SortDescriptor(\Item.year)],
        [SortDescriptor(\Item.year, order: .reverse)],
        [SortDescriptor(\Item.title), SortDescriptor(\Item.score, order: .reverse)],
        [SortDescriptor(\Item.rating)],
        [SortDescriptor(\Item.rating, order: .reverse), SortDescriptor(\Item.year)],
        [SortDescriptor(\Item.when, order: .reverse)],
        [SortDescriptor(\Item.subtitle), SortDescriptor(\Item.title, order: .reverse)],
        [SortDescriptor(\Item.home.city), SortDescriptor(\Item.id, order: .reverse)],
    ]

    /// Swift's order of the models: the descriptors, then the id (as Trove breaks ties).
    static func expected(_ order: [SortDescriptor<Item>], _ items: [Item]) -> [Int64] {
        items.sorted { a, b in
            for descriptor in order {
                switch descriptor.compare(a, b) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return a.id < b.id
        }.map(\.id)
    }

    @Test(
        "SortDescriptor orders (optionals, dates, bools, nested values) match Swift's sort",
        arguments: orders.indices)
    func sorting(_ index: Int) async throws {
        let items = try await Database().models(Item.self)
        try await items.insert(Self.seeded)
        let order = Self.orders[index]
        #expect(
            try await items.fetch(FetchDescriptor(sortBy: order)).map(\.id)
                == Self.expected(order, Self.seeded))
        let filtered = #Predicate<Item> { $0.year >= 2000 }
        let expectedFiltered = Self.expected(order, Self.seeded.filter { $0.year >= 2000 })
        #expect(
            try await items.fetch(FetchDescriptor(predicate: filtered, sortBy: order)).map(\.id)
                == expectedFiltered)
    }

    @Test("limit and offset take a slice of the order")
    func limitOffset() async throws {
        let items = try await Database().models(Item.self)
        try await items.insert(Self.seeded)
        let order = [SortDescriptor(\Item.score, order: .reverse)]
        let all = Self.expected(order, Self.seeded)
        for (limit, offset) in [(10, 0), (10, 5), (1, 89), (5, 100), (0, 3)] {
            let got = try await items.fetch(
                FetchDescriptor(sortBy: order, fetchLimit: limit, fetchOffset: offset)
            ).map(
                \.id)
            #expect(
                got == Array(all.dropFirst(offset).prefix(limit)), "limit \(limit) offset \(offset)"
            )
        }
        #expect(
            try await items.fetch(FetchDescriptor(sortBy: order, fetchOffset: 80)).map(\.id)
                == Array(all.dropFirst(80))
        )
    }

    @Test(
        "cursor pages cover the order exactly once, also while rows are inserted",
        arguments: [0, 3, 4])
    func cursors(_ orderIndex: Int) async throws {
        let items = try await Database().models(Item.self)
        try await items.insert(Self.seeded)
        let order = Self.orders[orderIndex]
        var descriptor = FetchDescriptor<Item>(sortBy: order, fetchLimit: 7)
        var seen: [Int64] = []
        var page = try await items.page(descriptor)
        seen += page.models.map(\.id)
        while let next = page.next {
            descriptor.cursor = next
            page = try await items.page(descriptor)
            seen += page.models.map(\.id)
        }
        #expect(seen == Self.expected(order, Self.seeded))

        // A cursor from another order is refused.
        let first = try await items.page(FetchDescriptor(sortBy: order, fetchLimit: 7))
        let other = FetchDescriptor<Item>(
            sortBy: [SortDescriptor(\Item.score)], fetchLimit: 7, cursor: first.next)
        await #expect(throws: TroveError.self) { try await items.page(other) }
    }

    @Test("sorting by a computed key path is a typed error")
    func unsortable() async throws {
        let items = try await Database().models(Item.self)
        await #expect(throws: TroveError.self) {
            try await items.fetch(FetchDescriptor(sortBy: [SortDescriptor(\Item.tags.count)]))
        }
    }
}
