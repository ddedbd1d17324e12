import Foundation
import Trove
import TroveTestSupport

/// A model with one property of every supported kind.
struct Everything: Model, Equatable {
    enum Mood: String, Codable { case calm, busy }
    enum Level: Int, Codable, CaseIterable {
        case low = 1
        case high = 2
    }
    struct Geo: Codable, Hashable {
        var lat: Double
        var lon: Double
    }
    struct Address: Codable, Hashable {
        var city: String
        var zip: Int?
        var geo: Geo?
    }

    var id: UUID
    var title: String
    var count: Int
    var small: Int16
    var ratio: Double
    var flag: Bool
    var when: Date
    var blob: Data
    var link: URL
    var price: Decimal
    var ref: UUID
    var mood: Mood
    var level: Level?
    var note: String?
    var tags: [String]
    var scores: [Double]?
    var address: Address
    var extra: [String: Int]
    var moments: [Date]
    var embedding: [Float]?

    static var modelOptions: ModelOptions {
        ModelOptions()
            .vector(\Everything.embedding, dimension: 3)
            .unique(\Everything.title)
            .indexed(\Everything.address.city)
            .indexed(\Everything.mood, \Everything.count)
            .column(\Everything.note, named: "remark")
    }

    static func sample(_ n: Int) -> Everything {
        Everything(
            id: UUID(), title: "title \(n)", count: n, small: Int16(n % 100), ratio: Double(n) / 4,
            flag: n % 2 == 0,
            when: Date(timeIntervalSince1970: 1_700_000_000 + Double(n)),
            blob: Data([1, 2, UInt8(n % 256)]),
            link: URL(
                string: "https://example.com/\(n)?q=a b".addingPercentEncoding(
                    withAllowedCharacters: .urlQueryAllowed)!
            )!,
            price: Decimal(string: "12.\(n % 100)")!, ref: UUID(), mood: n % 3 == 0 ? .calm : .busy,
            level: n % 4 == 0 ? nil : .high, note: n % 5 == 0 ? nil : "note \(n)",
            tags: ["a\(n % 3)", "b"],
            scores: n % 2 == 0 ? [0.5, Double(n)] : nil,
            address: Address(
                city: "city\(n % 4)", zip: n % 3 == 0 ? nil : 75000 + n,
                geo: n % 2 == 0 ? Geo(lat: 1.5, lon: -2) : nil),
            extra: ["k\(n % 2)": n], moments: [Date(timeIntervalSince1970: Double(n) * 10)],
            embedding: n % 3 == 0 ? nil : [1, 0, Float(n % 5) / 5])
    }
}

/// The model of the predicate differential tests: scalars, optionals, an enum, an array and
/// nested values, filled from a seeded generator.
struct Item: Model, Equatable {
    enum Kind: String, Codable, CaseIterable { case book, film, song }
    struct Place: Codable, Hashable {
        var city: String
        var floor: Int?
    }

    var id: Int64
    var title: String
    var year: Int
    var score: Double
    var done: Bool
    var kind: Kind
    var rating: Int?
    var subtitle: String?
    var tags: [String]
    var place: Place?
    var home: Place
    var when: Date

    static var modelOptions: ModelOptions {
        ModelOptions().indexed(\Item.year).indexed(\Item.home.city)
    }

    static let words = ["alpha", "beta", "gamma", "delta", "river", "stone", ""]
    static let cities = ["Paris", "Oslo", "Lima", "Rome"]

    static func random(id: Int64, using rng: inout SeededGenerator) -> Item {
        func word() -> String { words.randomElement(using: &rng)! }
        func maybe<T>(_ value: @autoclosure () -> T) -> T? {
            Bool.random(using: &rng) ? value() : nil
        }
        let title = [word(), word()].filter { !$0.isEmpty }.joined(separator: " ")
        return Item(
            id: id, title: title, year: Int.random(in: 1990...2030, using: &rng),
            score: Double(Int.random(in: 0..<100, using: &rng)) / 100,
            done: Bool.random(using: &rng), kind: Kind.allCases.randomElement(using: &rng)!,
            rating: maybe(Int.random(in: 0...5, using: &rng)), subtitle: maybe(word()),
            tags: (0..<Int.random(in: 0...3, using: &rng)).map { _ in word() },
            place: maybe(
                Place(
                    city: cities.randomElement(using: &rng)!,
                    floor: maybe(Int.random(in: 0...3, using: &rng)))),
            home: Place(
                city: cities.randomElement(using: &rng)!,
                floor: maybe(Int.random(in: 0...3, using: &rng))),
            when: Date(
                timeIntervalSince1970: Double(Int.random(in: 0...1_000, using: &rng)) * 86_400))
    }
}

/// A note with a text property embedded into a vector property on save.
struct SearchNote: Model, Equatable {
    var id: String
    var title: String
    var body: String
    var year: Int
    var embedding: [Float]?

    static var modelOptions: ModelOptions {
        ModelOptions()
            .fullText(\SearchNote.title, weight: 2).fullText(\SearchNote.body)
            .vector(\SearchNote.embedding, dimension: 32)
            .embedding(of: \SearchNote.body, into: \SearchNote.embedding)
    }
}
