import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

@testable import Trove

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
        (self.id, self.name, self.size, self.note, self.when, self.tags) = (
            id, name, size, note, when, tags
        )
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
@MemberwiseCoding
struct TwoKeyTypes: Model, Equatable {
    var id: Int64
    var title: String
    var count: Int

    enum IDKey: String, CodingKey { case id }
    enum FieldKeys: String, CodingKey { case title, count }

    init(id: Int64, title: String, count: Int) {
        (self.id, self.title, self.count) = (id, title, count)
    }
}

// Coding in an extension: the macro does not see it, the probe check must.
extension TwoKeyTypes {
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

/// A struct whose synthesized `init(from:)` only stores what it reads, with a property of every
/// kind ``MemberwiseDecoding`` writes straight from a column, optional and not.
@MemberwiseCoding
struct Plain: Model, Equatable {
    var id: UUID
    var title: String
    var note: String?
    var count: Int
    var maybeCount: Int?
    var big: Int64
    var ratio: Double
    var maybeRatio: Double?
    var flag: Bool
    var maybeFlag: Bool?
    var when: Date
    var maybeWhen: Date?
    var ref: UUID?
    var tags: [String]
    var maybeTags: [String]?
    var embedding: [Float]
    var maybeEmbedding: [Float]?

    static var modelOptions: ModelOptions {
        ModelOptions().vector(\Plain.embedding, dimension: 2).vector(
            \Plain.maybeEmbedding, dimension: 3
        )
        .column(\Plain.note, named: "remark")
    }
}

/// Memberwise in shape, but its `init(from:)` changes what it reads: each must keep the
/// Codable path.
@MemberwiseCoding
struct Trimming: Model, Equatable {
    var id: Int64
    var name: String
    init(id: Int64, name: String) { (self.id, self.name) = (id, name) }
}

// Coding in an extension: the macro does not see it, the probe check must.
extension Trimming {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int64.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name).trimmingCharacters(in: .whitespaces)
    }
}

@MemberwiseCoding
struct Clamping: Model, Equatable {
    var id: String
    var size: Int
    init(id: String, size: Int) { (self.id, self.size) = (id, size) }
}

// Coding in an extension: the macro does not see it, the probe check must.
extension Clamping {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        size = max(0, try c.decode(Int.self, forKey: .size))
    }
}

@MemberwiseCoding
struct Defaulting: Model, Equatable {
    var id: Int64
    var note: String?
    init(id: Int64, note: String?) { (self.id, self.note) = (id, note) }
}

// Coding in an extension: the macro does not see it, the probe check must.
extension Defaulting {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int64.self, forKey: .id)
        note = try c.decodeIfPresent(String.self, forKey: .note) ?? "none"
    }
}

/// An `init(from:)` that refuses what no probe tries, declared so that every row goes through it.
struct Refusing: Model, Equatable {
    struct Refused: Error {}
    var id: String
    var name: String
    init(id: String, name: String) { (self.id, self.name) = (id, name) }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
        if name.contains("@") { throw Refused() }
    }
    static var modelOptions: ModelOptions { ModelOptions().customCoding() }
}

/// Decoded memberwise (synthesized `init(from:)`), but its `encode(to:)` changes a value: its
/// rows must keep going through `encode(to:)`.
@MemberwiseCoding
struct Shouting: Model, Equatable {
    var id: Int64
    var name: String
    var loud: Bool
    init(id: Int64, name: String, loud: Bool) { (self.id, self.name, self.loud) = (id, name, loud) }
}

// Coding in an extension: the macro does not see it, the probe check must.
extension Shouting {
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(loud ? name.uppercased() : name, forKey: .name)
        try c.encode(loud, forKey: .loud)
    }
}

/// A property that is not a column (left out of its coding keys): not memberwise.
@MemberwiseCoding
struct Uncoded: Model, Equatable {
    var id: Int64
    var name: String
    var cache = 0
    enum CodingKeys: String, CodingKey { case id, name }
}

@Suite("Model coding: fast paths against the Codable path")
struct ModelCodingDifferentialTests {
    /// Text that exercises the JSON fast paths' limits: quotes, backslashes, control characters,
    /// non-ASCII, empty.
    static let texts = [
        "plain", "", "with \"quotes\"", "back\\slash", "tab\tand\nnewline", "naïve 東京 🎉", "a,b]",
        " [x] ",
    ]

    static func text(_ rng: inout SeededGenerator) -> String {
        texts.randomElement(using: &rng)! + String(Int.random(in: 0...9, using: &rng))
    }

    static func uuid(_ rng: inout SeededGenerator) -> UUID {
        var bits = (rng.next(), rng.next())
        return withUnsafeBytes(of: &bits) { UUID(uuid: $0.load(as: uuid_t.self)) }
    }

    /// Runs `fetch`, which must fail with a `DecodingError` whose coding path names `property`.
    static func expectDecodingError(naming property: String, _ fetch: () async throws -> Void)
        async throws
    {
        do {
            try await fetch()
            Issue.record("no DecodingError naming \(property)")
        } catch let error as DecodingError {
            let context: DecodingError.Context? =
                switch error {
                case .dataCorrupted(let context), .typeMismatch(_, let context),
                    .valueNotFound(_, let context):
                    context
                default: nil
                }
            #expect(context?.codingPath.map(\.stringValue) == [property], "\(error)")
        }
    }

    static func randomEverything(_ rng: inout SeededGenerator) -> Everything {
        func text() -> String { Self.text(&rng) }
        func maybe<T>(_ value: @autoclosure () -> T) -> T? {
            Bool.random(using: &rng) ? value() : nil
        }
        func uuid() -> UUID { Self.uuid(&rng) }
        return Everything(
            id: uuid(), title: text() + String(rng.next()),
            count: Int.random(in: -1_000_000...1_000_000, using: &rng),
            small: Int16.random(in: -300...300, using: &rng),
            ratio: Double.random(in: -1e6...1e6, using: &rng),
            flag: Bool.random(using: &rng),
            when: Date(timeIntervalSince1970: Double.random(in: -1e9...2e9, using: &rng)),
            blob: Data(
                (0..<Int.random(in: 0...5, using: &rng)).map { _ in
                    UInt8.random(in: 0...255, using: &rng)
                }),
            link: URL(string: "https://example.com/\(Int.random(in: 0...99, using: &rng))")!,
            price: Decimal(Int.random(in: 0...10_000, using: &rng)) / 100, ref: uuid(),
            mood: Bool.random(using: &rng) ? .calm : .busy,
            level: maybe(Everything.Level.allCases.randomElement(using: &rng)!),
            note: maybe(text()), tags: (0..<Int.random(in: 0...4, using: &rng)).map { _ in text() },
            scores: maybe(
                (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                    Double(Int.random(in: -50...50, using: &rng)) / 4
                }),
            address: Everything.Address(
                city: text(), zip: maybe(Int.random(in: 0...99_999, using: &rng)),
                geo: maybe(
                    Everything.Geo(lat: 1.25, lon: Double(Int.random(in: -180...180, using: &rng))))
            ),
            extra: [text(): Int.random(in: 0...9, using: &rng)],
            moments: (0..<Int.random(in: 0...2, using: &rng)).map { _ in
                Date(timeIntervalSince1970: Double(Int.random(in: 0...1_000_000, using: &rng)))
            },
            embedding: maybe([
                Float.random(in: 0.1...1, using: &rng), Float.random(in: -1...1, using: &rng), 0.5,
            ]))
    }

    static func randomPlain(_ rng: inout SeededGenerator) -> Plain {
        func text() -> String { Self.text(&rng) }
        func maybe<T>(_ value: @autoclosure () -> T) -> T? {
            Bool.random(using: &rng) ? value() : nil
        }
        func uuid() -> UUID { Self.uuid(&rng) }
        func date() -> Date {
            Date(
                timeIntervalSince1970: Double(Int.random(in: -1_000_000...1_000_000, using: &rng))
                    / 8)
        }
        func floats(_ n: Int) -> [Float] {
            (0..<n).map { _ in Float(Int.random(in: -64...64, using: &rng)) / 16 }
        }
        return Plain(
            id: uuid(), title: text(), note: maybe(text()),
            count: Int.random(in: -1_000_000...1_000_000, using: &rng),
            maybeCount: maybe(Int.random(in: -9...9, using: &rng)),
            big: Int64.random(in: .min ... .max, using: &rng),
            ratio: Double.random(in: -1e6...1e6, using: &rng),
            maybeRatio: maybe(Double.random(in: -1...1, using: &rng)),
            flag: Bool.random(using: &rng), maybeFlag: maybe(Bool.random(using: &rng)),
            when: date(),
            maybeWhen: maybe(date()),
            ref: maybe(uuid()), tags: (0..<Int.random(in: 0...4, using: &rng)).map { _ in text() },
            maybeTags: maybe((0..<Int.random(in: 0...2, using: &rng)).map { _ in text() }),
            embedding: floats(2),
            maybeEmbedding: maybe(floats(3)))
    }

    static func randomCustom(_ id: Int64, _ rng: inout SeededGenerator) -> Custom {
        Custom(
            id: id, name: texts.randomElement(using: &rng)!,
            size: Int.random(in: -5...5, using: &rng),
            note: Bool.random(using: &rng) ? nil : texts.randomElement(using: &rng)!,
            when: Date(
                timeIntervalSince1970: Double(Int.random(in: 0...1_000_000, using: &rng)) / 8),
            tags: (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                texts.randomElement(using: &rng)!
            })
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
            // A row read from the properties is also the one encode(to:) gives the keyed encoder.
            if schema.memberwiseEncoding != nil,
                let keyed = try ModelRowEncoder.row(model, slots: schema.rowSlots)
            {
                #expect(fast == keyed, "encoding \(model) through encode(to:)")
            }
        }
        try await collection.insert(models)
        let fetched = try await collection.fetch()
        let documents = try await collection.documents.fetch()
        #expect(fetched.count == models.count)
        let byID = Dictionary(
            models.map { ($0.id.documentID, $0) }, uniquingKeysWith: { a, _ in a })
        for model in fetched {
            #expect(byID[model.id.documentID] == model, "fast decoding of \(model.id)")
        }
        for document in documents {
            #expect(
                try byID[document.id] == schema.decode(document),
                "Codable decoding of \(document.id)")
        }
    }

    @Test(
        "every property kind, seeded random models: fast and Codable paths agree",
        arguments: [1, 2, 3] as [UInt64])
    func everything(seed: UInt64) async throws {
        var rng = SeededGenerator(seed: seed)
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("db.trove"))
        try await check((0..<60).map { _ in Self.randomEverything(&rng) }, in: database)
    }

    @Test(
        "memberwise decoding and encoding: seeded random structs of every kind agree with the Codable path",
        arguments: [1, 2, 3] as [UInt64])
    func memberwise(seed: UInt64) async throws {
        #expect(try ModelSchema<Plain>.shared().memberwiseDecoding?.fields.count == 17)
        // Every property but the id, the row's first value.
        #expect(try ModelSchema<Plain>.shared().memberwiseEncoding?.fields.count == 16)
        var rng = SeededGenerator(seed: seed)
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("db.trove"))
        // Enough rows for several of the fetch's 64 KB chunks.
        #expect(MemoryLayout<Plain>.stride * 450 > 65_536)
        let models = (0..<(300 + 150 * Int(seed))).map { _ in Self.randomPlain(&rng) }
        try await check(models, in: database)
        // The same rows through init(from:), row by row, as a fetch without the plan reads them.
        let collection = try await database.models(Plain.self)
        let schema = try ModelSchema<Plain>.shared()
        let codable = try await database.reading(transaction: false) { connection, lookup in
            var decoder: ModelRowDecoder?
            return try lookup(collection.documents.name).fetch(
                Query(), on: connection, wantsCursor: false
            ) { row, _ in
                if let decoder {
                    decoder.reset(to: row)
                    return try Plain(from: decoder)
                }
                let made = ModelRowDecoder(statement: row, plan: schema.rowColumns)
                decoder = made
                return try Plain(from: made)
            }.rows
        }
        #expect(try await collection.fetch() == codable)
    }

    @Test(
        "memberwise decoding hands a row it cannot read to init(from:), which reads it or names the error"
    )
    func memberwiseFallsBack() async throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("db.trove"))
        let plain = try await database.models(Plain.self)
        var rng = SeededGenerator(seed: 5)
        var model = Self.randomPlain(&rng)
        model.tags = ["with \"quotes\"", "back\\slash"]
        let others = (0..<600).map { _ in Self.randomPlain(&rng) }
        try await plain.insert([model] + others)
        #expect(
            try await plain.fetch()
                == ([model] + others).sorted {
                    $0.id.uuidString.lowercased() < $1.id.uuidString.lowercased()
                })
        // Text that is no UUID in a UUID property, in the last row (the rows before it, in
        // several chunks, are then written and must be let go): the Codable path's error,
        // naming it.
        try await database.execute(
            "UPDATE \"Plain\" SET \"ref\" = 'not a uuid' WHERE \"id\" = (SELECT max(\"id\") FROM \"Plain\")"
        )
        try await Self.expectDecodingError(naming: "ref") { _ = try await plain.fetch() }
    }

    @Test(
        "an init(from:) that trims, clamps, defaults, is declared custom or skips a property keeps the Codable path"
    )
    func memberwiseRefused() async throws {
        #expect(try ModelSchema<Trimming>.shared().memberwiseDecoding == nil)
        #expect(try ModelSchema<Clamping>.shared().memberwiseDecoding == nil)
        #expect(try ModelSchema<Defaulting>.shared().memberwiseDecoding == nil)
        #expect(try ModelSchema<Refusing>.shared().memberwiseDecoding == nil)
        #expect(try ModelSchema<Uncoded>.shared().memberwiseDecoding == nil)
        #expect(try ModelSchema<Custom>.shared().memberwiseDecoding == nil)
        #expect(try ModelSchema<Everything>.shared().memberwiseDecoding == nil)
        #expect(try ModelSchema<TwoKeyTypes>.shared().memberwiseDecoding != nil)
        for encoding in [
            try ModelSchema<Trimming>.shared().memberwiseEncoding as Any?,
            try ModelSchema<Refusing>.shared().memberwiseEncoding,
            try ModelSchema<Custom>.shared().memberwiseEncoding,
            try ModelSchema<Everything>.shared().memberwiseEncoding,
        ] {
            #expect(encoding == nil)
        }
        #expect(try ModelSchema<TwoKeyTypes>.shared().memberwiseEncoding != nil)
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("db.trove"))
        let trimming = try await database.models(Trimming.self)
        try await trimming.documents.insert(Document(id: 1, ["name": "  padded  "]))
        #expect(try await trimming.fetch() == [Trimming(id: 1, name: "padded")])
        let clamping = try await database.models(Clamping.self)
        try await clamping.documents.insert(Document(id: "a", ["size": -3]))
        #expect(try await clamping.fetch() == [Clamping(id: "a", size: 0)])
        let refusing = try await database.models(Refusing.self)
        try await refusing.documents.insert(Document(id: "a", ["name": "a@b"]))
        await #expect(throws: Refusing.Refused.self) { try await refusing.fetch() }
        let defaulting = try await database.models(Defaulting.self)
        try await defaulting.documents.insert(Document(id: 1, [:]))
        #expect(try await defaulting.fetch() == [Defaulting(id: 1, note: "none")])
    }

    @Test(
        "an encode(to:) that changes a value keeps writing every row, and refused values are refused either way"
    )
    func memberwiseEncodingRefused() async throws {
        let schema = try ModelSchema<Shouting>.shared()
        #expect(schema.memberwiseDecoding != nil)
        #expect(schema.memberwiseEncoding == nil)
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("db.trove"))
        let shouting = try await database.models(Shouting.self)
        try await shouting.insert([
            Shouting(id: 1, name: "quiet", loud: false), Shouting(id: 2, name: "hey", loud: true),
        ])
        try await shouting.update(Shouting(id: 1, name: "now", loud: true))
        #expect(
            try await shouting.fetch() == [
                Shouting(id: 1, name: "NOW", loud: true), Shouting(id: 2, name: "HEY", loud: true),
            ])

        // A real that is not finite: the same error from the row read from the properties as
        // from encode(to:), and nothing written.
        let plain = try await database.models(Plain.self)
        var rng = SeededGenerator(seed: 9)
        var model = Self.randomPlain(&rng)
        model.ratio = .infinity
        let plainSchema = try ModelSchema<Plain>.shared()
        let store = plain.documents.store
        let fast = #expect(throws: TroveError.self) { try plainSchema.row(model, in: store) }
        let keyed = #expect(throws: TroveError.self) {
            try ModelRowEncoder.row(model, slots: plainSchema.rowSlots)
        }
        #expect(fast.map { "\($0)" } == keyed.map { "\($0)" })
        await #expect(throws: TroveError.self) {
            try await plain.insert([Self.randomPlain(&rng), model])
        }
        #expect(try await plain.count() == 0)
    }

    @Test("a custom init(from:) and encode(to:) in their own key order, a renamed column")
    func customCoding() async throws {
        var rng = SeededGenerator(seed: 7)
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("db.trove"))
        try await check((1...40).map { Self.randomCustom(Int64($0), &rng) }, in: database)
        #expect(try ModelSchema<Custom>.shared().documentSchema.field("label") != nil)
    }

    @Test(
        "an init(from:) asking for two key types in each row decodes every row as the Codable path")
    func twoKeyTypes() async throws {
        var rng = SeededGenerator(seed: 11)
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("db.trove"))
        try await check(
            (1...30).map {
                TwoKeyTypes(
                    id: Int64($0), title: Self.texts.randomElement(using: &rng)!,
                    count: Int.random(in: -9...9, using: &rng))
            }, in: database)
    }

    @Test(
        "a stored value the type cannot hold fails the fetch with a DecodingError naming the property"
    )
    func errorsNameTheProperty() async throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("db.trove"))
        let narrow = try await database.models(Narrow.self)
        try await narrow.insert(Narrow(id: 1, small: 7, name: "fits"))
        #expect(try await narrow.fetch() == [Narrow(id: 1, small: 7, name: "fits")])
        // 300 is a valid integer for the column, not an Int8.
        try await narrow.documents.insert(Document(id: 2, ["small": 300, "name": "too big"]))
        try await Self.expectDecodingError(naming: "small") { _ = try await narrow.fetch() }
    }

    @Test(
        "the fast JSON string-array reader refuses what it does not read, the general parser agrees on the rest"
    )
    func stringArrays() throws {
        func fast(_ text: String) -> [String]? {
            Array(text.utf8).withUnsafeBytes { JSONStringArray.parse($0) { $0 } }
        }
        #expect(fast("[]") == [])
        #expect(fast(" [ \"a\" , \"b\" ] ") == ["a", "b"])
        #expect(fast("[\"naïve 東京\"]") == ["naïve 東京"])
        // The tightest arrays (three bytes a string), whole and cut short.
        for n in [1, 2, 50] {
            let empties = "[" + repeatElement("\"\"", count: n).joined(separator: ",") + "]"
            #expect(fast(empties) == Array(repeating: "", count: n))
            #expect(fast(String(empties.dropLast())) == nil)
            #expect(fast(String(empties.dropLast()) + ",\"\"") == nil)
        }
        for refused in [
            "[\"a\\\"b\"]", "[\"a\"", "[1]", "[\"a\",]", "{}", "[\"a\"] x", "", "[\"tab\there\"]",
        ] {
            #expect(fast(refused) == nil, "\(refused)")
        }
        var rng = SeededGenerator(seed: 11)
        for _ in 0..<200 {
            let strings = (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                Self.texts.randomElement(using: &rng)!
            }
            let text = try JSONCoding.text(.array(strings.map(Value.string)))
            if let read = fast(text) { #expect(read == strings) }
            #expect(try JSONCoding.value(text) == .array(strings.map(Value.string)))
        }
    }
}
