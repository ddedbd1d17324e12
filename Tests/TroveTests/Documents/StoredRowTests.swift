import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

@testable import Trove

/// A fetched document keeps its row and decodes fields when read; these check that a field
/// read that way is exactly the field an eager read of the statement gives (`FieldCodec.read`
/// on the live row, the oracle), whatever SQLite holds in the column.
@Suite("StoredRow")
struct StoredRowTests {
    static let types: [FieldType] = [
        .text, .integer, .real, .bool, .date, .data, .json, .vector(dimension: 3, metric: .cosine),
        .point,
    ]

    /// A value of any storage class, shaped now and then for the field's type.
    static func value(for type: FieldType, _ rng: inout SeededGenerator) -> (
        sql: String, binding: SQLValue
    ) {
        let words = [
            "", "a", "Crème brûlée", "日本語のテキスト", " spaced ", "x\u{0}y",
            String(repeating: "long ", count: 40),
        ]
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: return ("?", .null)
        case 1: return ("?", .integer(Int64.random(in: Int64.min...Int64.max, using: &rng)))
        case 2: return ("?", .real(Double.random(in: -1e12...1e12, using: &rng)))
        case 3: return ("?", .text(words.randomElement(using: &rng)!))
        case 4:
            return (
                "?",
                .blob(
                    (0..<Int.random(in: 0..<20, using: &rng)).map { _ in
                        UInt8.random(in: 0...255, using: &rng)
                    })
            )
        // text that is not UTF-8
        case 5: return ("CAST(? AS TEXT)", .blob([0x61, 0xC3, 0x28, 0xFF]))
        default: break
        }
        switch type {
        case .json:
            let texts = [
                "[\"a\",\"b c\"]", "[]", "[\"esc\\\"aped\",\"\\u00e9\"]",
                "{\"n\":1,\"t\":[true,null]}", "3.5", "\"s\"",
                "[1,2", "{}",
            ]
            return ("?", .text(texts.randomElement(using: &rng)!))
        case .vector:
            let floats = (0..<Int.random(in: 2...4, using: &rng)).map { _ in
                Float.random(in: -1...1, using: &rng)
            }
            return ("?", .blob(floats.withUnsafeBytes { Array($0) }))
        case .point:
            return (
                "?", .text(["[1.5,-2.25]", "[91,0]", "nope", "[0,0]"].randomElement(using: &rng)!)
            )
        case .date, .real: return ("?", .real(Double.random(in: 0...2e9, using: &rng)))
        case .bool: return ("?", .integer(Int64.random(in: 0...1, using: &rng)))
        default: return ("?", .integer(Int64.random(in: -1000...1000, using: &rng)))
        }
    }

    @Test(
        "every field reads as the eager read of the same row, for every storage class in every field type",
        arguments: 0..<6)
    func differential(seed: UInt64) throws {
        var rng = SeededGenerator(seed: 0x5107_ED00 + seed)
        let connection = try Connection(path: ":memory:")
        for _ in 0..<150 {
            let count = Int.random(in: 0...9, using: &rng)
            let fields = (0..<count).map {
                FieldDefinition("f\($0)", Self.types.randomElement(using: &rng)!)
            }
            let readsExtra = Bool.random(using: &rng)
            let extraNames: Set<String>? = Bool.random(using: &rng) ? nil : ["x", "f0"]
            var columns = ["?", "?"]
            var bindings: [SQLValue] = [.integer(7), .integer(3)]
            for field in fields {
                let (sql, binding) = Self.value(for: field.type, &rng)
                columns.append(sql)
                bindings.append(binding)
            }
            if readsExtra {
                columns.append("?")
                bindings.append(
                    Bool.random(using: &rng)
                        ? .null : .text(#"{"x":[1,"é"],"y":{"z":null},"f0":"shadow"}"#))
            }
            let statement = try connection.prepare("SELECT " + columns.joined(separator: ", "))
            try statement.bind(bindings)
            #expect(try statement.step())
            let layout = StoredRow.Layout(
                fields: fields, readsExtra: readsExtra, extraNames: extraNames)
            let row = StoredRow(statement, first: 2, layout: layout)
            // The oracle reads the live row after the copy, as an eager fetch did.
            var eager: [String: Value] = [:]
            for (j, field) in fields.enumerated() {
                let expected = FieldCodec.read(statement, column: 2 + j, as: field.type)
                #expect(row[field.name] == expected, "\(field.type) from \(bindings[2 + j])")
                eager[field.name] = expected
            }
            if readsExtra, let text = statement.string(at: 2 + fields.count),
                case .object(let members)? = try? JSONCoding.value(text)
            {
                for (key, value) in members
                where layout.columns[key] == nil && (extraNames?.contains(key) ?? true) {
                    eager[key] = value
                    #expect(row[key] == value)
                }
            }
            #expect(row.fields == eager)
            #expect(row["absent"] == nil)
            if !readsExtra { #expect(row["x"] == nil) }
        }
    }

    static let schema = DocumentSchema(
        fields: [
            .text("title"), .integer("stars", default: 0), .json("tags", optional: true),
            .data("blob", optional: true),
        ],
        allowsUndeclaredFields: true)

    @Test("a fetched document equals, hashes and changes like one built from its fields")
    func documentSemantics() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("rows.trove"))
        let notes = try await db.documents("notes", schema: Self.schema)
        try await notes.insert([
            Document(id: 1, ["title": "Dentist", "stars": 2, "tags": ["a", "b"], "mood": "calm"]),
            Document(id: 2, ["title": "", "blob": .data(Data())]),
        ])
        let fetched = try await notes.fetch()
        let built = fetched.map { Document(id: $0.id, fields: $0.fields, version: $0.version) }
        #expect(fetched == built)
        #expect(fetched.map(\.hashValue) == built.map(\.hashValue))
        #expect(Set(fetched + built).count == 2)
        #expect(fetched == (try await notes.fetch()))
        #expect(
            fetched[0].fields == [
                "title": "Dentist", "stars": 2, "tags": ["a", "b"], "blob": .null, "mood": "calm",
            ])
        #expect(
            fetched[1]["blob"] == .data(Data()) && fetched[1]["title"] == ""
                && fetched[1]["mood"] == nil)

        // A projection's rows hold what it asked for, undeclared fields included.
        let projected = try await notes.fetch(Query().select(["title", "mood"]))
        #expect(projected.map(\.fields) == [["title": "Dentist", "mood": "calm"], ["title": ""]])
        #expect(projected[0]["stars"] == nil)

        // Changing one field keeps the others; the change reaches the file.
        var changed = fetched[0]
        changed["stars"] = 5
        changed.fields["mood"] = nil
        #expect(changed != fetched[0])
        #expect(
            changed.fields == ["title": "Dentist", "stars": 5, "tags": ["a", "b"], "blob": .null])
        _ = try await notes.update(changed)
        let reread = try #require(try await notes.fetch(id: 1))
        #expect(reread.fields == changed.fields && reread.version == 2)
    }
}
