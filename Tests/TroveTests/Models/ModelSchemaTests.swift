import Foundation
import Testing
import TroveTestSupport

@testable import Trove

@Suite("Model schema")
struct ModelSchemaTests {
    @Test("every supported property kind maps onto a declared field")
    func everyKind() throws {
        let schema = try ModelSchema<Everything>.shared().documentSchema
        #expect(schema.id == .uuid)
        func field(_ name: String) -> FieldDefinition? { schema.field(name) }
        let expected: [(String, FieldType, Bool)] = [
            ("title", .text, false), ("count", .integer, false), ("small", .integer, false),
            ("ratio", .real, false),
            ("flag", .bool, false), ("when", .date, false), ("blob", .data, false),
            ("link", .text, false),
            ("price", .real, false), ("ref", .text, false), ("mood", .text, false),
            ("level", .integer, true),
            ("remark", .text, true), ("tags", .json, false), ("scores", .json, true),
            ("address", .json, false),
            ("extra", .json, false), ("moments", .json, false),
            ("embedding", .vector(dimension: 3, metric: .cosine), true),
        ]
        #expect(schema.fields.map(\.name) == expected.map(\.0))
        for (name, type, optional) in expected {
            #expect(field(name)?.type == type, "\(name)")
            #expect(field(name)?.isOptional == optional, "\(name)")
        }
        #expect(field("title")?.isUnique == true)
        #expect(
            schema.indexes == [
                IndexDefinition([Field("address", path: "$.city")]),
                IndexDefinition([Field("mood"), Field("count")]),
            ])
        #expect(field("note") == nil)
    }

    @Test("key paths resolve to columns, renamed columns and JSON paths")
    func keyPaths() throws {
        let schema = try ModelSchema<Everything>.shared()
        #expect(try schema.field(\Everything.title).field == Field("title"))
        #expect(try schema.field(\Everything.note).field == Field("remark"))
        #expect(
            try schema.field(\Everything.address.city).field == Field("address", path: "$.city"))
        #expect(
            try schema.field(\Everything.address.geo?.lat).field
                == Field("address", path: "$.geo.lat"))
        #expect(try schema.field(\Everything.id).field == Field.id)
        #expect(throws: TroveError.self) { try schema.field(\Everything.tags.count) }
        #expect(throws: TroveError.self) {
            try schema.field(\Everything.when.timeIntervalSince1970)
        }
    }

    struct NoID: Model {
        var id: Int64 { 1 }
        var name: String
    }

    struct BadVector: Model {
        var id: Int64
        var v: [Double]
        static var modelOptions: ModelOptions {
            ModelOptions().vector(\BadVector.title, dimension: 3)
        }
        var title: [Float]?
    }

    struct ComputedIndex: Model {
        var id: Int64
        var name: String
        var upper: String { name.uppercased() }
        static var modelOptions: ModelOptions { ModelOptions().indexed(\ComputedIndex.upper) }
    }

    struct WrongID: Model {
        var id: String
        static var collectionName: String { "wrong" }
    }

    @Test("types that cannot be stored are typed errors naming the reason")
    func invalidModels() throws {
        #expect { try ModelSchema<NoID>.shared() } throws: { error in
            guard case TroveError.invalidModel(_, let reason) = error else { return false }
            return reason.contains("id")
        }
        #expect { try ModelSchema<ComputedIndex>.shared() } throws: { error in
            guard case TroveError.invalidModel(_, let reason) = error else { return false }
            return reason.contains("computed")
        }
        _ = try ModelSchema<BadVector>.shared()  // [Float]? with vector(...) is fine
        #expect(try ModelSchema<WrongID>.shared().documentSchema.id == .string)
        #expect(WrongID.collectionName == "wrong")
        #expect(Everything.collectionName == "Everything")
    }

    @Test("the schema is derived once per type")
    func cached() throws {
        let a = try ModelSchema<Item>.shared()
        let b = try ModelSchema<Item>.shared()
        #expect(a.documentSchema == b.documentSchema)
        #expect(a.documentSchema.fields.first { $0.name == "year" }?.isIndexed == true)
    }
}

@Suite("Model coding")
struct ModelCodingTests {
    @Test("a model round-trips through its document, every kind included")
    func roundTrip() throws {
        let schema = try ModelSchema<Everything>.shared()
        for n in 0..<12 {
            let model = Everything.sample(n)
            let document = try schema.encode(model)
            #expect(document.id == .uuid(model.id))
            #expect(document["when"] == .date(model.when))
            #expect(document["blob"] == .data(model.blob))
            #expect(document["ref"] == .string(model.ref.uuidString.lowercased()))
            #expect(document["mood"] == .string(model.mood.rawValue))
            #expect(document["note"] == nil)
            if let note = model.note { #expect(document["remark"] == .string(note)) }
            if let embedding = model.embedding {
                #expect(document["embedding"] == .vector(embedding))
            }
            #expect(try schema.decode(document) == model)
        }
    }

    @Test("dates inside nested values are seconds since 1970, so they compare as numbers")
    func datesInJSON() throws {
        let document = try ModelSchema<Everything>.shared().encode(Everything.sample(3))
        #expect(document["moments"] == .array([.double(30)]))
    }

    @Test("stored round trip through a database")
    func storedRoundTrip() async throws {
        let db = try Database()
        let everything = try await db.models(Everything.self)
        let models = (0..<20).map(Everything.sample)
        try await everything.insert(models)
        for model in models { #expect(try await everything.fetch(id: model.id) == model) }
    }

    final class Memo: Model {
        let id: String
        let text: String
        let pinned: Bool?
        init(id: String, text: String, pinned: Bool?) {
            (self.id, self.text, self.pinned) = (id, text, pinned)
        }
    }

    @Test("a final class with let properties is a model too")
    func finalClass() async throws {
        let memos = try await Database().models(Memo.self)
        try await memos.insert([
            Memo(id: "a", text: "first", pinned: nil), Memo(id: "b", text: "second", pinned: true),
        ])
        let pinned = try await memos.fetch(
            FetchDescriptor(predicate: #Predicate { $0.pinned == true }))
        #expect(pinned.map(\.id) == ["b"])
        #expect(try await memos.fetch(id: "a")?.text == "first")
    }

    @Test("values a column cannot hold are typed errors, and the batch writes nothing")
    func invalidValues() async throws {
        let everything = try await Database().models(Everything.self)
        var bad = Everything.sample(1)
        bad.ratio = .nan
        await #expect(throws: TroveError.self) {
            try await everything.insert([Everything.sample(2), bad])
        }
        var wrongVector = Everything.sample(4)
        wrongVector.embedding = [1, 2]
        await #expect(throws: TroveError.self) {
            try await everything.insert([Everything.sample(5), wrongVector])
        }
        #expect(try await everything.count() == 0)
    }

    @Test("predicates on UUID ids, Decimals, URLs and nested optional values")
    func otherKinds() async throws {
        let everything = try await Database().models(Everything.self)
        let models = (0..<30).map(Everything.sample)
        try await everything.insert(models)
        let id = models[7].id
        #expect(
            try await everything.fetch(FetchDescriptor(predicate: #Predicate { $0.id == id })).map(
                \.id) == [id])
        let price = Decimal(string: "12.5")!
        let cheap = try await everything.fetch(
            FetchDescriptor(predicate: #Predicate { $0.price < price })
        ).map(\.id)
        #expect(Set(cheap) == Set(models.filter { $0.price < price }.map(\.id)))
        let link = models[3].link
        #expect(try await everything.count(where: #Predicate { $0.link == link }) == 1)
        let north = try await everything.fetch(
            FetchDescriptor(predicate: #Predicate { ($0.address.geo?.lat ?? 0) > 1 })
        ).map(\.id)
        #expect(Set(north) == Set(models.filter { ($0.address.geo?.lat ?? 0) > 1 }.map(\.id)))
        let moods = [Everything.Mood.calm]
        #expect(
            try await everything.count(where: #Predicate { moods.contains($0.mood) })
                == models.filter { $0.mood == .calm }.count)
        let level = Everything.Level.high
        #expect(
            try await everything.count(where: #Predicate { $0.level == level })
                == models.filter { $0.level == .high }.count)
    }

    /// Hand-written coding with a nested container: stored as one JSON column.
    struct Pin: Model, Equatable {
        var id: Int64
        var lat: Double
        var lon: Double
        enum CodingKeys: String, CodingKey { case id, location }
        enum LocationKeys: String, CodingKey { case lat, lon }
        init(id: Int64, lat: Double, lon: Double) { (self.id, self.lat, self.lon) = (id, lat, lon) }
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.decode(Int64.self, forKey: .id)
            let location = try c.nestedContainer(keyedBy: LocationKeys.self, forKey: .location)
            lat = try location.decode(Double.self, forKey: .lat)
            lon = try location.decode(Double.self, forKey: .lon)
        }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            var location = c.nestedContainer(keyedBy: LocationKeys.self, forKey: .location)
            try location.encode(lat, forKey: .lat)
            try location.encode(lon, forKey: .lon)
        }
    }

    @Test(
        "hand-written coding with nested containers round-trips; key paths it hides are typed errors"
    )
    func handWrittenCoding() async throws {
        #expect(try ModelSchema<Pin>.shared().documentSchema.fields.map(\.name) == ["location"])
        let pins = try await Database().models(Pin.self)
        try await pins.insert([
            Pin(id: 1, lat: 48.85, lon: 2.35), Pin(id: 2, lat: 59.91, lon: 10.75),
        ])
        #expect(try await pins.fetch(id: 2) == Pin(id: 2, lat: 59.91, lon: 10.75))
        #expect(try await pins.fetch().count == 2)
        await #expect(throws: TroveError.self) {
            try await pins.count(where: #Predicate { $0.lat > 50 })
        }
    }
}
