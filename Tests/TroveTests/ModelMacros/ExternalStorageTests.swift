import Foundation
import Testing
import TroveTestSupport

@testable import Trove

/// `@Attribute(.externalStorage)`: the column a fetch leaves out, read on the property's first
/// access, with no explicit load call.
@Suite("@Attribute(.externalStorage)")
@MainActor
struct ExternalStorageTests {
    @Test("a fetch leaves the column out; the first access reads it once; reading is not a change")
    func readOnFirstAccess() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("photos.trove")
        let pixels = Data((0..<100_000).map { UInt8($0 % 251) })
        do {
            let container = try openContainer(SnapshotsV1.self, at: path)
            container.mainContext.insert(Snapshot(caption: "dunes", pixels: pixels))
            container.mainContext.insert(Snapshot(caption: "empty"))
            try container.mainContext.save()
        }
        let container = try openContainer(SnapshotsV1.self, at: path)
        let context = ModelContext(container)
        let photos = try context.fetch(
            FetchDescriptor<Snapshot>(sortBy: [SortDescriptor(\.caption)]))
        #expect(photos.map(\.caption) == ["dunes", "empty"])
        #expect(photos.allSatisfy { $0._$backing.unloaded == ["pixels"] }, "left out of the fetch")
        #expect(photos[0].pixels == pixels)
        #expect(photos[0]._$backing.unloaded.isEmpty)
        #expect(photos[1].pixels == nil)
        #expect(!context.hasChanges, "reading a left-out value is not a change")
        photos[1].pixels = Data([1, 2, 3])
        try context.save()
        let reader = ModelContext(container)  // models hold their context weakly: keep it
        let again = try reader.fetch(
            FetchDescriptor<Snapshot>(predicate: #Predicate { $0.caption == "empty" }))
        #expect(again.first?.pixels == Data([1, 2, 3]))
    }

    @Test("an unread value is not written back by a save of other changes")
    func untouchedStays() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("photos.trove")
        do {
            let container = try openContainer(SnapshotsV1.self, at: path)
            container.mainContext.insert(Snapshot(caption: "a", pixels: Data([9, 9])))
            try container.mainContext.save()
        }
        let container = try openContainer(SnapshotsV1.self, at: path)
        let context = ModelContext(container)
        let photo = try #require(try context.fetch(FetchDescriptor<Snapshot>()).first)
        photo.caption = "b"
        try context.save()
        let reader = ModelContext(container)
        let stored = try #require(try reader.fetch(FetchDescriptor<Snapshot>()).first)
        #expect(stored.caption == "b" && stored.pixels == Data([9, 9]))
    }
}
