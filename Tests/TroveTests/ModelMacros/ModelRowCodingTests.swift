import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

@testable import Trove

/// A tray a specimen may name (a to-one relationship's target).
@Model final class SpecimenTray {
    var label: String
    init(label: String) { self.label = label }
}

/// A `@Model` class with a property of every type the generated coding reads and writes by a
/// typed overload, optional and not, and of types it leaves to the general path.
@Model final class Specimen {
    enum Grade: String, Codable, CaseIterable { case low, mid, high }
    struct Size: Codable, Hashable {
        var width: Double
        var unit: String
    }

    var id: Int64
    var name: String
    var note: String?
    var count: Int
    var maybeCount: Int?
    var big: Int64
    var maybeBig: Int64?
    var ratio: Double
    var maybeRatio: Double?
    var flag: Bool
    var maybeFlag: Bool?
    var when: Date
    var maybeWhen: Date?
    var code: UUID
    var maybeCode: UUID?
    var tags: [String]
    var maybeTags: [String]?
    var embedding: [Float]
    var weight: Float
    var small: Int8
    var photo: Data
    var grade: Grade
    var size: Size?
    var numbers: [Int]
    var tray: SpecimenTray?

    init(id: Int64) {
        self.id = id
        name = ""
        count = 0
        big = 0
        ratio = 0
        flag = false
        when = Date(timeIntervalSince1970: 0)
        code = UUID()
        tags = []
        embedding = [0, 0]
        weight = 0
        small = 0
        photo = Data()
        grade = .low
        numbers = []
    }

    static var modelOptions: ModelOptions {
        ModelOptions().vector(\Specimen.embedding, dimension: 2)
    }
}

enum SpecimensV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [SpecimenTray.self, Specimen.self]
}

/// The code `@Model` writes for a context's hot paths (`init(_$row:)`, `_$write(to:)`,
/// `_$snapshot(into:)`, `_$differing(from:)`) against the general path it replaces there:
/// `init(from:)` and `encode(to:)` through the row coders, and the property accesses.
@Suite("Generated row coding")
@MainActor
struct ModelRowCodingTests {
    /// Random values for every property (nil for about half the optionals).
    private func randomize(
        _ specimen: Specimen, trays: [SpecimenTray], using random: inout SeededGenerator
    ) {
        func text() -> String {
            String(
                (0..<Int.random(in: 0...24, using: &random)).map { _ in
                    "aé z☃0\"'\\".randomElement(using: &random)!
                })
        }
        func maybe<T>(_ value: @autoclosure () -> T) -> T? {
            Bool.random(using: &random) ? value() : nil
        }
        specimen.name = text()
        specimen.note = maybe(text())
        specimen.count = Int.random(in: Int(Int32.min)...Int(Int32.max), using: &random)
        specimen.maybeCount = maybe(Int.random(in: -1000...1000, using: &random))
        specimen.big = Int64.random(in: .min ... .max, using: &random)
        specimen.maybeBig = maybe(Int64.random(in: .min ... .max, using: &random))
        specimen.ratio = Double.random(in: -1e12...1e12, using: &random)
        specimen.maybeRatio = maybe(Double.random(in: -1...1, using: &random))
        specimen.flag = Bool.random(using: &random)
        specimen.maybeFlag = maybe(Bool.random(using: &random))
        specimen.when = Date(timeIntervalSince1970: Double.random(in: 0...2e9, using: &random))
        specimen.maybeWhen = maybe(Date(timeIntervalSince1970: Double(random.next() % 1_000_000)))
        specimen.code = UUID(uuid: random.uuidBytes())
        specimen.maybeCode = maybe(UUID(uuid: random.uuidBytes()))
        specimen.tags = (0..<Int.random(in: 0...4, using: &random)).map { _ in text() }
        specimen.maybeTags = maybe((0..<Int.random(in: 0...2, using: &random)).map { _ in text() })
        specimen.embedding = random.vector(dimension: 2)
        specimen.weight = Float.random(in: -10...10, using: &random)
        specimen.small = Int8.random(in: .min ... .max, using: &random)
        specimen.photo = Data(
            (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8(random.next() & 0xFF) })
        specimen.grade = Specimen.Grade.allCases.randomElement(using: &random)!
        specimen.size = maybe(
            Specimen.Size(width: Double.random(in: 0...10, using: &random), unit: text()))
        specimen.numbers = (0..<Int.random(in: 0...5, using: &random)).map { _ in
            Int.random(in: -99...99, using: &random)
        }
        specimen.tray = maybe(trays.randomElement(using: &random)!)
    }

    @Test("typed rows, reads and snapshots agree with Codable over seeded random models")
    func differential() throws {
        var random = SeededGenerator(seed: 4040)
        let container = try inMemoryContainer(SpecimensV1.self)
        let context = container.mainContext
        let trays = (0..<5).map { SpecimenTray(label: "tray \($0)") }
        for tray in trays { context.insert(tray) }
        var specimens: [Specimen] = []
        for i in 0..<300 {
            let specimen = Specimen(id: Int64(i + 1))
            randomize(specimen, trays: trays, using: &random)
            context.insert(specimen)
            specimens.append(specimen)
        }
        let table = try context.store.table(Specimen.self)
        #expect(table.isTyped)
        let slots = table.schema.rowSlots
        // Writing: the same row as encode(to:) through the row encoder.
        for specimen in specimens {
            #expect(try table.row(specimen) == ModelRowEncoder.row(specimen, slots: slots))
        }
        try context.save()

        // Reading: the same values as init(from:) through the row decoder, the references
        // kept the same way.
        var decoder: ModelRowDecoder?
        var reader: ModelRowDecoder.Reader?
        var read = 0
        _ = try table.store.forEachRow(
            try table.query(FetchDescriptor()), on: try context.store.connection(),
            wantsCursor: false
        ) { statement, _ in
            let codable = try table.schema.decode(row: statement, reusing: &decoder)
            if reader == nil {
                reader = ModelRowDecoder.Reader(statement: statement, plan: table.schema.rowColumns)
            }
            let typed = try Specimen(_$row: _ModelRowReader(reader!))
            #expect(try table.row(typed) == ModelRowEncoder.row(codable, slots: slots))
            #expect(typed._$backing.pending.ids == codable._$backing.pending.ids)
            #expect(typed._$backing.isFromRow && codable._$backing.isFromRow)
            read += 1
        }
        #expect(read == specimens.count)

        // Snapshots and comparisons: the same slots as the property accesses find.
        for specimen in specimens.prefix(100) {
            let typed = table.snapshot(specimen)
            let accessed = PropertyAccess.snapshots(
                table.snapshotted, of: CollectionOfOne(specimen as AnyObject))
            #expect(typed.withUnsafeBufferPointer(\.count) == accessed.count)
            func differing(_ saved: [Any]) -> (typed: [Int], accessed: [Int]) {
                saved.withUnsafeBufferPointer {
                    (
                        specimen._$differing(from: $0.baseAddress!),
                        PropertyAccess.differing(table.accesses, of: specimen, from: $0)
                    )
                }
            }
            let unchanged = typed.withUnsafeBufferPointer { Array($0) }
            #expect(differing(unchanged).typed.isEmpty && differing(unchanged).accessed.isEmpty)
            #expect(differing(accessed).typed.isEmpty && differing(accessed).accessed.isEmpty)
            randomize(specimen, trays: trays, using: &random)
            let before = differing(unchanged)
            #expect(before.typed == before.accessed)
        }
    }

    @Test("a fetch through the generated reads gives the models that were saved")
    func fetchedModelsMatch() throws {
        var random = SeededGenerator(seed: 4041)
        let container = try inMemoryContainer(SpecimensV1.self)
        let context = container.mainContext
        let trays = (0..<3).map { SpecimenTray(label: "tray \($0)") }
        for tray in trays { context.insert(tray) }
        var rows: [Int64: [SQLValue]] = [:]
        var labels: [Int64: String] = [:]
        let table = try context.store.table(Specimen.self)
        for i in 0..<100 {
            let specimen = Specimen(id: Int64(i + 1))
            randomize(specimen, trays: trays, using: &random)
            context.insert(specimen)
            rows[specimen.id] = try table.row(specimen)
            labels[specimen.id] = specimen.tray?.label
        }
        try context.save()
        let reader = ModelContext(container)
        let fetched = try reader.fetch(FetchDescriptor<Specimen>())
        #expect(fetched.count == 100)
        let other = try reader.store.table(Specimen.self)
        for specimen in fetched {
            #expect(try other.row(specimen) == rows[specimen.id])
            #expect(specimen.tray?.label == labels[specimen.id])
        }
        #expect(!reader.hasChanges)
    }
}

extension SeededGenerator {
    fileprivate mutating func uuidBytes() -> uuid_t {
        let (a, b) = (next(), next())
        return withUnsafeBytes(of: (a, b)) { $0.load(as: uuid_t.self) }
    }
}
