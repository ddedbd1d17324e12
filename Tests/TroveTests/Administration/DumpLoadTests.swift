import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// Dump and load: exact round trips (byte-compared canonical dumps), renames, typed errors for
/// truncated and corrupt dumps with nothing loaded.
@Suite("Dump and load", .serialized)
struct DumpLoadTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static let itemSchema = DocumentSchema(
        fields: [
            .text("title"), .integer("year", indexed: true), .real("score"),
            .bool("done", default: false),
            .date("at", optional: true), .data("raw", optional: true),
            .json("meta", optional: true),
            .vector("v", dimension: 8, optional: true),
        ],
        indexes: [IndexDefinition([Field("meta", path: "$.author")])],
        fullText: FullTextDefinition(["title": 2]), allowsUndeclaredFields: true, allowsExpiry: true
    )

    /// Floats that a decimal round trip through Float or Double text could get wrong.
    static let awkward: [Float] = [
        -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1 / 3, 0.1, -1e-30, 7, .ulpOfOne,
    ]

    /// A database with documents (int and string ids, every field type, undeclared fields,
    /// expiry) and a search collection with an embedding manifest.
    static func populate(_ db: Database) async throws {
        var rng = SeededGenerator(seed: 16)
        let items = try await db.documents("items", schema: itemSchema)
        var documents: [Document] = []
        for i in 1...120 {
            var vector = (0..<8).map { _ in Float.random(in: -1...1, using: &rng) }
            if i == 1 { vector = awkward }
            var fields: [String: Value] = [
                "title": .string(
                    "item \(i) \(["alpha", "beta", "gamma"][i % 3]) \"quoted\" \\ é ✓ \n tab\t \u{01}\r\u{7F} 😀"
                ),
                "year": .int(Int64(1990 + i % 30)),
                "score": .double(Double.random(in: -1e6...1e6, using: &rng)),
                "done": .bool(i % 2 == 0),
            ]
            if i % 3 == 0 {
                fields["at"] = .date(Date(timeIntervalSince1970: 1_600_000_000.123 + Double(i)))
            }
            if i % 4 == 0 { fields["raw"] = .data(Data((0..<UInt8(i % 50)).map { $0 &* 7 })) }
            if i % 5 == 0 {
                fields["meta"] = .object([
                    "author": .string("a\(i % 7)"), "n": .double(0.1 * Double(i)),
                ])
            }
            if i % 6 != 0 { fields["v"] = .vector(vector) }
            if i % 7 == 0 { fields["extra"] = .array([.int(Int64(i)), .string("x"), .null]) }
            documents.append(Document(id: .int(Int64(i)), fields))
        }
        try await items.insert(Array(documents[0..<60]))
        try await items.insert(Array(documents[60...]), expiry: .at(now.addingTimeInterval(3600)))
        try await items.patch(2, [Field("year"): 2001])  // version 2
        // Values only raw SQL can store: an infinite real, a huge integer.
        try await db.execute("UPDATE items SET score = 1e999 WHERE id = 3")
        try await db.execute("UPDATE items SET year = 9223372036854775807 WHERE id = 4")

        let tags = try await db.documents(
            "tags", schema: DocumentSchema(id: .string, fields: [.text("label")]))
        try await tags.insert(
            ["zeta", "alpha", "mu"].map {
                Document(id: .string($0), ["label": .string($0.uppercased())])
            })

        // Links between collections, one weighted, one to an id that is no record, one from tags back.
        try await db.links.link([
            Link(from: GraphNode("items", 1), label: "tagged", to: GraphNode("tags", "alpha")),
            Link(
                from: GraphNode("items", 2), label: "tagged", to: GraphNode("tags", "mu"),
                weight: 0.1),
            Link(
                from: GraphNode("items", 2), label: "cites", to: GraphNode("items", 1), weight: 2.5),
            Link(
                from: GraphNode("tags", "zeta"), label: "about",
                to: GraphNode("elsewhere", "free text")),
        ])

        let notes = try await SearchCollection(
            "notes", in: db, embedder: HashingEmbedder(dimension: 16))
        for (i, text) in ["buy oat milk", "dentist on tuesday", "invoice 2041 paid", "call mum"]
            .enumerated()
        {
            var vector = (0..<16).map { _ in Float.random(in: -1...1, using: &rng) }
            if i == 0 { vector = awkward + awkward }
            try await notes.insert(
                VectorEntry(
                    id: .int(Int64(i + 1)), content: text, source: "inbox",
                    metadata: #"{"k":\#(i)}"#, vector: vector))
        }
        // A search collection's row at version 2 (format 3 dumps carry `_version`).
        try await db.execute("UPDATE notes SET source = 'calendar' WHERE id = 2")
    }

    static func dumpBytes(_ db: Database, _ path: String) async throws -> Data {
        try await db.dump(to: path, overwrite: true)
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    static func isEmpty(_ db: Database) async throws -> Bool {
        let objects = try await db.query(
            "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name != 'trove_meta'"
        )
        let collections = try await db.collectionNames()
        let documents = try await db.collectionNames()
        return objects.isEmpty && collections.isEmpty && documents.isEmpty
    }

    @Test("dump, load, dump again: byte-identical, every record, vector and expiry exact")
    func roundTrip() async throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock(Self.now)
        let source = try Database(path: dir.path("a.trove"), clock: clock)
        try await Self.populate(source)
        let first = try await Self.dumpBytes(source, dir.path("a.dump"))
        let target = try Database(path: dir.path("b.trove"), clock: clock)
        let report = try await target.load(from: dir.path("a.dump"))
        #expect(report.problems.isEmpty)
        #expect(report.records == ["items": 120, "tags": 3, "notes": 4, "_trove_edges": 4])
        let second = try await Self.dumpBytes(target, dir.path("b.dump"))
        #expect(first == second)

        // The stored bytes themselves, column by column (vectors bit for bit); the internal row
        // ids of text-id collections are the file's own and not compared.
        for (table, columns) in [
            ("items", "*"), ("tags", "id, _version, label"), ("notes", "*"), ("_trove_edges", "*"),
        ] {
            let a = try await source.query("SELECT \(columns) FROM \(table) ORDER BY id").map(
                \.values)
            let b = try await target.query("SELECT \(columns) FROM \(table) ORDER BY id").map(
                \.values)
            #expect(a == b, "table \(table)")
        }
        let items = try await target.documents(named: "items")
        #expect(try await items.expiry(of: 100) == Self.now.addingTimeInterval(3600))
        #expect(try await items.expiry(of: 1) == nil)
        #expect(try await items.fetch(id: 2)?.version == 2)
        #expect(try await items.fetch(id: 1)?.fields["v"] == .vector(Self.awkward))
        // Derived indexes work on the loaded data.
        let hits = try await items.search(Query().matching(.typed("gamma")).limit(200))
        #expect(hits.count == 40)
        let nearest = try await items.search(Query().nearest(to: Self.awkward, in: "v").limit(1))
        #expect(nearest.first?.record.id == 1)
        let notes = try await SearchCollection(named: "notes", in: target)
        #expect(try await notes.search(Query().matching("dentist")).first?.id == 2)
        #expect(
            try await notes.page(Query().sorted(by: .ascending("id")).select([])).documents.map(
                \.version) == [
                    1, 2, 1, 1,
                ])
        #expect(
            Set(try await target.links.neighbours(of: GraphNode("items", 2)).map(\.to)) == [
                GraphNode("items", 1), GraphNode("tags", "mu"),
            ])
        #expect(
            try await target.links.neighbours(of: GraphNode("tags", "zeta")).map(\.to) == [
                GraphNode("elsewhere", "free text")
            ])
        #expect(
            try await target.configuration(of: "notes")?.embedding
                == HashingEmbedder(dimension: 16).manifest)

        // Expired documents are invisible, so the dump leaves them out.
        clock.advance(by: .seconds(3600))
        let later = try await target.dump(to: dir.path("c.dump"))
        #expect(later.records["items"] == 60)
    }

    @Test("load renames collections and fields (schema, indexes, full text, records)")
    func renames() async throws {
        let dir = try TemporaryDirectory()
        let source = try Database(path: dir.path("a.trove"), clock: ManualClock(Self.now))
        try await Self.populate(source)
        try await source.dump(to: dir.path("a.dump"))
        let target = try Database(path: dir.path("b.trove"), clock: ManualClock(Self.now))
        let renames = DumpRenames(
            collections: ["items": "products", "notes": "memos"],
            fields: ["items": ["title": "name", "meta": "info"]])
        let report = try await target.load(from: dir.path("a.dump"), renaming: renames)
        #expect(report.problems.isEmpty)
        #expect(try await target.collectionNames() == ["memos", "products", "tags"])
        #expect(try await target.configuration(of: "memos") != nil)
        let products = try await target.documents(named: "products")
        #expect(products.schema.field("name") != nil && products.schema.field("title") == nil)
        #expect(products.schema.fullText?.fields == ["name"])
        #expect(products.schema.indexes == [IndexDefinition([Field("info", path: "$.author")])])
        let original = try #require(try await source.documents(named: "items").fetch(id: 5))
        let renamed = try #require(try await products.fetch(id: 5))
        #expect(renamed.fields["name"] == original.fields["title"])
        #expect(renamed.fields["info"] == original.fields["meta"])
        #expect(try await products.count(where: Field("info", path: "$.author") == "a5") > 0)
        #expect(
            try await products.search(Query().matching(.typed("beta"), in: ["name"]).limit(100))
                .count == 40)
        // Links follow the renamed collection at both ends; other collections' names stay.
        #expect(
            Set(try await target.links.neighbours(of: GraphNode("products", 2))) == [
                Link(
                    from: GraphNode("products", 2), label: "tagged", to: GraphNode("tags", "mu"),
                    weight: 0.1),
                Link(
                    from: GraphNode("products", 2), label: "cites", to: GraphNode("products", 1),
                    weight: 2.5),
            ])
        #expect(
            try await target.links.neighbours(of: GraphNode("tags", "alpha"), direction: .incoming)
                .map(\.from)
                == [GraphNode("products", 1)])
        #expect(try await target.links.neighbours(of: GraphNode("items", 2)).isEmpty)
        // Deleting a renamed record removes its links (the cascade trigger of the new name).
        try await products.delete(id: 1)
        #expect(
            try await target.links.neighbours(of: GraphNode("tags", "alpha"), direction: .incoming)
                .isEmpty)
    }

    @Test("a rename of a field that does not exist is a typed error and loads nothing")
    func badRename() async throws {
        let dir = try TemporaryDirectory()
        let source = try Database(path: dir.path("a.trove"), clock: ManualClock(Self.now))
        try await Self.populate(source)
        try await source.dump(to: dir.path("a.dump"))
        let target = try Database(path: dir.path("b.trove"))
        await #expect(throws: TroveError.self) {
            try await target.load(
                from: dir.path("a.dump"), renaming: DumpRenames(fields: ["items": ["nope": "x"]]))
        }
        #expect(try await Self.isEmpty(target))
    }

    /// Ways a dump file goes bad, each applied to a good dump's bytes.
    static let damages: [(String, @Sendable (Data) -> Data)] = [
        ("empty", { _ in Data() }),
        ("header only", { data in data.prefix(through: data.firstIndex(of: 0x0A)!) }),
        ("cut in half", { data in data.prefix(data.count / 2) }),
        ("last byte missing", { data in data.dropLast() }),
        (
            "trailer missing",
            { data in
                let body = data.dropLast()
                return data.prefix(through: body.lastIndex(of: 0x0A)!)
            }
        ),
        (
            "one record missing",
            { data in
                var lines = data.split(separator: 0x0A, omittingEmptySubsequences: false)
                lines.remove(at: 5)
                return Data(lines.joined(separator: [0x0A]))
            }
        ),
        (
            "a digit changed",
            { data in
                var bytes = [UInt8](data)
                let lines = data.split(separator: 0x0A)
                let start = lines[3].startIndex
                let digit = bytes[start...].firstIndex { (0x31...0x38).contains($0) }!
                bytes[digit] += 1
                return Data(bytes)
            }
        ),
        (
            "a record is not JSON",
            { data in
                var lines = data.split(separator: 0x0A, omittingEmptySubsequences: false)
                lines[2] = Data("{\"c\":\"items\",\"v\":[1,".utf8)[...]
                return Data(lines.joined(separator: [0x0A]))
            }
        ),
        (
            "unknown version",
            { data in
                Data(
                    String(decoding: data, as: UTF8.self).replacingOccurrences(
                        of: "\"version\":1", with: "\"version\":99"
                    ).utf8)
            }
        ),
        ("not a dump", { _ in Data("hello\nworld\n".utf8) }),
    ]

    @Test("a truncated or corrupt dump is a typed error and loads nothing", arguments: 0..<10)
    func damaged(_ index: Int) async throws {
        let (label, damage) = Self.damages[index]
        let dir = try TemporaryDirectory()
        let source = try Database(path: dir.path("a.trove"), clock: ManualClock(Self.now))
        try await Self.populate(source)
        let good = try await Self.dumpBytes(source, dir.path("a.dump"))
        try damage(good).write(to: URL(fileURLWithPath: dir.path("bad.dump")))
        let target = try Database(path: dir.path("b.trove"))
        do {
            try await target.load(from: dir.path("bad.dump"))
            Issue.record("\(label): loaded without an error")
        } catch TroveError.invalidDump {
        } catch {
            Issue.record("\(label): \(error)")
        }
        #expect(try await Self.isEmpty(target), "\(label)")
        // The same database still takes the good dump afterwards.
        #expect(try await target.load(from: dir.path("a.dump")).problems.isEmpty)
    }

    @Test("load refuses a database that is not empty; dump refuses to overwrite unless asked")
    func refusals() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.trove"))
        try await Self.populate(db)
        try await db.dump(to: dir.path("a.dump"))
        await #expect(throws: TroveError.fileExists(path: dir.path("a.dump"))) {
            try await db.dump(to: dir.path("a.dump"))
        }
        try await db.dump(to: dir.path("a.dump"), overwrite: true)
        await #expect(throws: TroveError.self) { try await db.load(from: dir.path("a.dump")) }
        let other = try Database(path: dir.path("b.trove"))
        try await other.execute("CREATE TABLE mine(x)")
        await #expect(throws: TroveError.databaseNotEmpty(objects: ["mine"])) {
            try await other.load(from: dir.path("a.dump"))
        }
    }

    @Test("the dump streams in chunks of about 1 MB")
    func streams() async throws {
        let db = try Database()
        let docs = try await db.documents("big", schema: DocumentSchema(fields: [.text("body")]))
        let body = String(repeating: "lorem ipsum ", count: 200)
        try await docs.insert(
            (1...1500).map { Document(id: .int(Int64($0)), ["body": .string(body)]) })
        let chunks = ChunkSizes()
        let report = try await db.dump { chunks.append($0.count) }
        #expect(chunks.sizes.count >= 3)
        #expect(chunks.sizes.max()! < (1 << 20) + 4096)
        #expect(chunks.sizes.reduce(0, +) == report.bytes)
    }
}

final class ChunkSizes: @unchecked Sendable {
    // @unchecked Sendable: `sizes` is only touched under `lock`.
    private let lock = NSLock()
    private var values: [Int] = []
    func append(_ size: Int) { lock.withLock { values.append(size) } }
    var sizes: [Int] { lock.withLock { values } }
}
