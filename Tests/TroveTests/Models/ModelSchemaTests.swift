import Foundation
import Testing
@testable import Trove
import TroveTestSupport

@Suite("Model schema")
struct ModelSchemaTests {
    @Test("every supported property kind maps onto a declared field")
    func everyKind() throws {
        let schema = try ModelSchema<Everything>.shared().documentSchema
        #expect(schema.id == .uuid)
        func field(_ name: String) -> FieldDefinition? { schema.field(name) }
        let expected: [(String, FieldType, Bool)] = [
            ("title", .text, false), ("count", .integer, false), ("small", .integer, false), ("ratio", .real, false),
            ("flag", .bool, false), ("when", .date, false), ("blob", .data, false), ("link", .text, false),
            ("price", .real, false), ("ref", .text, false), ("mood", .text, false), ("level", .integer, true),
            ("remark", .text, true), ("tags", .json, false), ("scores", .json, true), ("address", .json, false),
            ("extra", .json, false), ("moments", .json, false), ("embedding", .vector(dimension: 3, metric: .cosine), true),
        ]
        #expect(schema.fields.map(\.name) == expected.map(\.0))
        for (name, type, optional) in expected {
            #expect(field(name)?.type == type, "\(name)")
            #expect(field(name)?.isOptional == optional, "\(name)")
        }
        #expect(field("title")?.isUnique == true)
        #expect(schema.indexes == [
            IndexDefinition([Field("address", path: "$.city")]), IndexDefinition([Field("mood"), Field("count")]),
        ])
        #expect(field("note") == nil)
    }

    @Test("key paths resolve to columns, renamed columns and JSON paths")
    func keyPaths() throws {
        let schema = try ModelSchema<Everything>.shared()
        #expect(try schema.field(\Everything.title).field == Field("title"))
        #expect(try schema.field(\Everything.note).field == Field("remark"))
        #expect(try schema.field(\Everything.address.city).field == Field("address", path: "$.city"))
        #expect(try schema.field(\Everything.address.geo?.lat).field == Field("address", path: "$.geo.lat"))
        #expect(try schema.field(\Everything.id).field == Field.id)
        #expect(throws: TroveError.self) { try schema.field(\Everything.tags.count) }
        #expect(throws: TroveError.self) { try schema.field(\Everything.when.timeIntervalSince1970) }
    }

    struct NoID: Model {
        var id: Int64 { 1 }
        var name: String
    }

    struct BadVector: Model {
        var id: Int64
        var v: [Double]
        static var modelOptions: ModelOptions { ModelOptions().vector(\BadVector.title, dimension: 3) }
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
            if let embedding = model.embedding { #expect(document["embedding"] == .vector(embedding)) }
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
}
