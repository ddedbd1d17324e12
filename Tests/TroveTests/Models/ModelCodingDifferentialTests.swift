import Foundation
import Testing
@testable import Trove
import TroveSQLite
import TroveTestSupport

/// A model whose own `init(from:)` and `encode(to:)` ask for keys in an order of their own
/// (and one through `decodeIfPresent` with a default), with a renamed column.
struct Custom: Model, Equatable {
    var id: Int64
    var name: String
    var size: Int
    var note: String?
    var when: Date
    var tags: [String]

    enum CodingKeys: String, CodingKey { case id, name, size, note, when, tags }

    init(id: Int64, name: String, size: Int, note: String?, when: Date, tags: [String]) {
        (self.id, self.name, self.size, self.note, self.when, self.tags) = (id, name, size, note, when, tags)
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        tags = try c.decode([String].self, forKey: .tags)
        when = try c.decode(Date.self, forKey: .when)
        note = try c.decodeIfPresent(String.self, forKey: .note)
        size = try c.decodeIfPresent(Int.self, forKey: .size) ?? 0
        name = try c.decode(String.self, forKey: .name)
        id = try c.decode(Int64.self, forKey: .id)
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(size, forKey: .size)
        try c.encodeIfPresent(note, forKey: .note)
        try c.encode(tags, forKey: .tags)
        try c.encode(name, forKey: .name)
        try c.encode(when, forKey: .when)
        try c.encode(id, forKey: .id)
    }

    static var modelOptions: ModelOptions { ModelOptions().column(\Custom.name, named: "label") }
}

/// A model whose `init(from:)` asks for two keyed containers of different key types in each
/// row, and its encoding the same: the row decoder keeps one container for the next row, which
/// must not be handed out for the other key type.
struct TwoKeyTypes: Model, Equatable {
    var id: Int64
    var title: String
    var count: Int

    enum IDKey: String, CodingKey { case id }
    enum FieldKeys: String, CodingKey { case title, count }

    init(id: Int64, title: String, count: Int) { (self.id, self.title, self.count) = (id, title, count) }

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: FieldKeys.self)
        title = try fields.decode(String.self, forKey: .title)
        id = try decoder.container(keyedBy: IDKey.self).decode(Int64.self, forKey: .id)
        count = try fields.decode(Int.self, forKey: .count)
    }

    func encode(to encoder: any Encoder) throws {
        var fields = encoder.container(keyedBy: FieldKeys.self)
        try fields.encode(title, forKey: .title)
        try fields.encode(count, forKey: .count)
        var id = encoder.container(keyedBy: IDKey.self)
        try id.encode(self.id, forKey: .id)
    }
}

/// A model with a narrow integer (read through the general path) and a required text.
struct Narrow: Model, Equatable {
    var id: Int64
    var small: Int8
    var name: String
}

@Suite("Model coding: fast paths against the Codable path")
struct ModelCodingDifferentialTests {
    /// Text that exercises the JSON fast paths' limits: quotes, backslashes, control characters,
    /// non-ASCII, empty.
    static let texts = ["plain", "", "with \"quotes\"", "back\\slash", "tab\tand\nnewline", "naïve 東京 🎉", "a,b]", " [x] "]

    static func randomEverything(_ rng: inout SeededGenerator) -> Everything {
        func text() -> String { texts.randomElement(using: &rng)! + String(Int.random(in: 0...9, using: &rng)) }
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { Bool.random(using: &rng) ? value() : nil }
        func uuid() -> UUID {
            UUID(uuid: (UInt8.random(in: 0...255, using: &rng), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                        UInt8.random(in: 0...255, using: &rng)))
        }
        return Everything(
            id: uuid(), title: text() + String(rng.next()), count: Int.random(in: -1_000_000...1_000_000, using: &rng),
            small: Int16.random(in: -300...300, using: &rng), ratio: Double.random(in: -1e6...1e6, using: &rng),
            flag: Bool.random(using: &rng), when: Date(timeIntervalSince1970: Double.random(in: -1e9...2e9, using: &rng)),
            blob: Data((0..<Int.random(in: 0...5, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }),
            link: URL(string: "https://example.com/\(Int.random(in: 0...99, using: &rng))")!,
            price: Decimal(Int.random(in: 0...10_000, using: &rng)) / 100, ref: uuid(),
            mood: Bool.random(using: &rng) ? .calm : .busy, level: maybe(Everything.Level.allCases.randomElement(using: &rng)!),
            note: maybe(text()), tags: (0..<Int.random(in: 0...4, using: &rng)).map { _ in text() },
            scores: maybe((0..<Int.random(in: 0...3, using: &rng)).map { _ in Double(Int.random(in: -50...50, using: &rng)) / 4 }),
            address: Everything.Address(city: text(), zip: maybe(Int.random(in: 0...99_999, using: &rng)),
                                        geo: maybe(Everything.Geo(lat: 1.25, lon: Double(Int.random(in: -180...180, using: &rng))))),
            extra: [text(): Int.random(in: 0...9, using: &rng)],
            moments: (0..<Int.random(in: 0...2, using: &rng)).map { _ in Date(timeIntervalSince1970: Double(Int.random(in: 0...1_000_000, using: &rng))) },
            embedding: maybe([Float.random(in: 0.1...1, using: &rng), Float.random(in: -1...1, using: &rng), 0.5]))
    }

    static func randomCustom(_ id: Int64, _ rng: inout SeededGenerator) -> Custom {
        Custom(id: id, name: texts.randomElement(using: &rng)!, size: Int.random(in: -5...5, using: &rng),
               note: Bool.random(using: &rng) ? nil : texts.randomElement(using: &rng)!,
               when: Date(timeIntervalSince1970: Double(Int.random(in: 0...1_000_000, using: &rng)) / 8),
               tags: (0..<Int.random(in: 0...3, using: &rng)).map { _ in texts.randomElement(using: &rng)! })
    }

    /// Encodes each model both ways (the row encoder, and a document bound as a document's
    /// fields are), inserts them, and decodes each stored row both ways (the row decoder, and
    /// the document through `ValueDecoder`): all four must agree with the original.
    func check<M: Model & Equatable>(_ models: [M], in database: Database) async throws {
        let collection = try await database.models(M.self)
        let schema = try ModelSchema<M>.shared()
        let store = collection.documents.store
        for model in models {
            let fast = try schema.row(model, in: store)
            let general = try store.storedValues(schema.encode(model))
            #expect(fast == general, "encoding \(model)")
        }
        try await collection.insert(models)
        let fetched = try await collection.fetch()
        let documents = try await collection.documents.fetch()
        #expect(fetched.count == models.count)
        let byID = Dictionary(models.map { ($0.id.documentID, $0) }, uniquingKeysWith: { a, _ in a })
        for model in fetched { #expect(byID[model.id.documentID] == model, "fast decoding of \(model.id)") }
        for document in documents { #expect(try byID[document.id] == schema.decode(document), "Codable decoding of \(document.id)") }
    }

    @Test("every property kind, seeded random models: fast and Codable paths agree", arguments: [1, 2, 3] as [UInt64])
    func everything(seed: UInt64) async throws {
        var rng = SeededGenerator(seed: seed)
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("db.trove"))
        try await check((0..<60).map { _ in Self.randomEverything(&rng) }, in: database)
    }

    @Test("a custom init(from:) and encode(to:) in their own key order, a renamed column")
    func customCoding() async throws {
        var rng = SeededGenerator(seed: 7)
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("db.trove"))
        try await check((1...40).map { Self.randomCustom(Int64($0), &rng) }, in: database)
        #expect(try ModelSchema<Custom>.shared().documentSchema.field("label") != nil)
    }

    @Test("an init(from:) asking for two key types in each row decodes every row as the Codable path")
    func twoKeyTypes() async throws {
        var rng = SeededGenerator(seed: 11)
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("db.trove"))
        try await check((1...30).map { TwoKeyTypes(id: Int64($0), title: Self.texts.randomElement(using: &rng)!,
                                                  count: Int.random(in: -9...9, using: &rng)) }, in: database)
    }

    @Test("a stored value the type cannot hold fails the fetch with a DecodingError naming the property")
    func errorsNameTheProperty() async throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("db.trove"))
        let narrow = try await database.models(Narrow.self)
        try await narrow.insert(Narrow(id: 1, small: 7, name: "fits"))
        #expect(try await narrow.fetch() == [Narrow(id: 1, small: 7, name: "fits")])
        // 300 is a valid integer for the column, not an Int8.
        try await narrow.documents.insert(Document(id: 2, ["small": 300, "name": "too big"]))
        do {
            _ = try await narrow.fetch()
            Issue.record("an Int8 property read 300")
        } catch let error as DecodingError {
            let context: DecodingError.Context? = switch error {
            case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context): context
            default: nil
            }
            #expect(context?.codingPath.map(\.stringValue) == ["small"], "\(error)")
        }
    }

    @Test("the fast JSON string-array reader refuses what it does not read, the general parser agrees on the rest")
    func stringArrays() throws {
        func fast(_ text: String) -> [String]? { Array(text.utf8).withUnsafeBytes { JSONStringArray.parse($0) { $0 } } }
        #expect(fast("[]") == [])
        #expect(fast(" [ \"a\" , \"b\" ] ") == ["a", "b"])
        #expect(fast("[\"naïve 東京\"]") == ["naïve 東京"])
        for refused in ["[\"a\\\"b\"]", "[\"a\"", "[1]", "[\"a\",]", "{}", "[\"a\"] x", "", "[\"tab\there\"]"] {
            #expect(fast(refused) == nil, "\(refused)")
        }
        var rng = SeededGenerator(seed: 11)
        for _ in 0..<200 {
            let strings = (0..<Int.random(in: 0...4, using: &rng)).map { _ in Self.texts.randomElement(using: &rng)! }
            let text = try JSONCoding.text(.array(strings.map(Value.string)))
            if let read = fast(text) { #expect(read == strings) }
            #expect(try JSONCoding.value(text) == .array(strings.map(Value.string)))
        }
    }
}
