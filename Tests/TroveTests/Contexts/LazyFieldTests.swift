import Foundation
import Observation
import Testing
import TroveTestSupport

@testable import Trove

@Model final class Photo {
    var id: Int64
    var caption: String
    var pixels: LazyField<Data>

    init(id: Int64, caption: String, pixels: Data) {
        self.id = id
        self.caption = caption
        self.pixels = LazyField(pixels)
    }

}

enum PhotosV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [Photo.self]
}

@Suite("Lazy field")
@MainActor
struct LazyFieldTests {
    nonisolated static func pixels(_ seed: Int) -> Data {
        Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) })
    }

    static func container(_ dir: TemporaryDirectory) async throws -> ModelContainer {
        let path = dir.path("photos.trove")
        let seed = try openContainer(PhotosV1.self, at: path)
        try await Worker(modelContainer: seed).run { context in
            for i in 1...3 {
                context.insert(Photo(id: Int64(i), caption: "Photo \(i)", pixels: Self.pixels(i)))
            }
            try context.save()
        }
        return seed
    }

    @Test("a context's fetch leaves the lazy column out of its SQL; value reads keep it")
    func absentFromFetchSQL() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir)
        let store = try #require(container.database.documentStores["Photo"])
        let query = try TrackedModels<Photo>(store: store).query(FetchDescriptor())
        let sql = try await container.database.reading(transaction: false) { connection, lookup in
            try lookup("Photo").compileFetch(query, on: connection).sql.sql
        }
        #expect(sql.contains("\"caption\""))
        #expect(!sql.contains("pixels"))
        let photos = try container.mainContext.fetch(FetchDescriptor<Photo>())
        #expect(photos.count == 3 && photos.allSatisfy { !$0.pixels.isLoaded })
    }

    @Test("loaded once on first access, then kept; not a change")
    func loadedOnce() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir)
        let context = container.mainContext
        let photo = try #require(try context.model(Photo.self, id: 2))
        #expect(!photo.pixels.isLoaded)
        #expect(try context.load(\.pixels, of: photo) == Self.pixels(2))
        #expect(photo.pixels.value == Self.pixels(2))
        #expect(!context.hasChanges)
        // A second load does not read the row again: a change made behind its back is not seen.
        try await container.database.execute("UPDATE \"Photo\" SET pixels = x'00' WHERE id = 2")
        #expect(try context.load(\.pixels, of: photo) == Self.pixels(2))
    }

    @Test(
        "an unloaded lazy field is left alone by saves; a set one is written; rollback unloads it again"
    )
    func saves() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir)
        try await container.database.execute(
            script: """
                CREATE TABLE audit(id INTEGER);
                CREATE TRIGGER audit_pixels AFTER UPDATE OF pixels ON "Photo" BEGIN INSERT INTO audit VALUES (new.id); END;
                """)
        let context = container.mainContext
        let photos = try context.fetch(FetchDescriptor<Photo>())
        photos[0].caption = "Renamed"
        photos[1].pixels = LazyField(Data([1, 2, 3]))
        try context.save()
        #expect(
            try await container.database.query("SELECT id FROM audit").map { $0.int64("id") } == [2]
        )
        let stored = try await container.database.query(
            "SELECT id, length(pixels) AS n FROM \"Photo\" ORDER BY id"
        ).map { $0.int64("n") }
        #expect(stored == [4096, 3, 4096])
        photos[2].pixels = LazyField(Data([9]))
        context.rollback()
        #expect(!photos[2].pixels.isLoaded)
        #expect(try context.load(\.pixels, of: photos[2]) == Self.pixels(3))
    }

    @Test("value models read through a collection load lazy fields with the row")
    func valueModels() async throws {
        struct Attachment: Model {
            var id: Int64
            var name: String
            var bytes: LazyField<Data>
        }
        let database = try Database()
        let attachments = try await database.models(Attachment.self)
        try await attachments.insert(Attachment(id: 1, name: "a", bytes: LazyField(Data([7, 7]))))
        #expect(try await attachments.fetch(id: 1)?.bytes.value == Data([7, 7]))
    }
}
