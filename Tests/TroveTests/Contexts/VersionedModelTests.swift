import Foundation
import Testing
import Trove
import TroveTestSupport

@Suite("Versioned model")
struct VersionedModelTests {
    @Test(
        "compare-and-set of a value model: succeeds at the read version, conflicts after another write"
    )
    func compareAndSet() async throws {
        let database = try Database()
        let tags = try await database.models(Tag.self)
        try await tags.insert(Tag(id: "a", label: "one"))
        var read = try #require(try await tags.fetchVersioned(id: "a"))
        #expect(read.version == 1)
        read.model.label = "two"
        #expect(try await tags.update(read.model, ifVersion: read.version) == 2)
        read.model.label = "three"
        await #expect(throws: TroveError.versionConflict(id: .string("a"), expected: 1, actual: 2))
        {
            try await tags.update(read.model, ifVersion: read.version)
        }
        #expect(try await tags.fetch(id: "a")?.label == "two")
        try await database.execute("UPDATE \"Tag\" SET label = 'raw' WHERE id = 'a'")
        await #expect(throws: TroveError.versionConflict(id: .string("a"), expected: 2, actual: 3))
        {
            try await tags.update(Tag(id: "a", label: "late"), ifVersion: 2)
        }
        await #expect(throws: TroveError.documentNotFound(.string("b"))) {
            try await tags.update(Tag(id: "b", label: "none"), ifVersion: 1)
        }
    }
}
