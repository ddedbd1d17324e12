import Foundation
import Observation
import Testing
import TroveTestSupport

@testable import Trove

@Model final class Binder {
    var id: Int64
    var name: String
    init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }
}

@Model final class Memo {
    var id: Int64
    var title: String
    var folderID: Int64?
    init(id: Int64, title: String, folderID: Int64? = nil) {
        self.id = id
        self.title = title
        self.folderID = folderID
    }
    static var modelOptions: ModelOptions {
        ModelOptions().reference(\Memo.folderID, to: Binder.self, onDelete: .nullify)
    }
}

@Model final class Label {
    var id: String
    var name: String
    init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// The link table of memos and labels (many-to-many).
@Model final class MemoLabel {
    var id: String
    var memoID: Int64
    var labelID: String
    init(memoID: Int64, labelID: String) {
        id = "\(memoID)/\(labelID)"
        self.memoID = memoID
        self.labelID = labelID
    }
    static var modelOptions: ModelOptions {
        ModelOptions().reference(\MemoLabel.memoID, to: Memo.self, onDelete: .cascade)
            .reference(\MemoLabel.labelID, to: Label.self, onDelete: .cascade)
    }
}

enum MemosV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [
        MemoLabel.self, Memo.self, Binder.self, Label.self,
    ]
}

@Suite("Context relationships")
@MainActor
struct ContextRelationshipTests {
    /// Folders 1...3, memos 1...9 (memo i in folder (i - 1) % 3 + 1).
    static func seeded(_ dir: TemporaryDirectory) async throws -> (
        path: String, container: ModelContainer
    ) {
        let path = dir.path("memos.trove")
        let container = try openContainer(MemosV1.self, at: path)
        try await Worker(modelContainer: container).run { context in
            for f in 1...3 { context.insert(Binder(id: Int64(f), name: "Folder \(f)")) }
            for m in 1...9 {
                context.insert(
                    Memo(id: Int64(m), title: "Memo \(m)", folderID: Int64((m - 1) % 3 + 1)))
            }
            try context.save()
        }
        return (path, container)
    }

    @Test("a to-one reference resolves to the tracked instance, read once")
    func toOne() async throws {
        let dir = try TemporaryDirectory()
        let context = try await Self.seeded(dir).container.mainContext
        let folder = try #require(try context.model(Binder.self, id: 2))
        let memo = try #require(try context.model(Memo.self, id: 5))
        let reads = context.store.reads
        #expect(try context.referenced(\.folderID, of: memo, as: Binder.self) === folder)
        #expect(try context.referenced(\.folderID, of: memo, as: Binder.self) === folder)
        #expect(context.store.reads == reads)
    }

    @Test(
        "to-many edits: append, move and remove show at once, round-trip through save, and the inverse agrees"
    )
    func toManyEdits() async throws {
        let dir = try TemporaryDirectory()
        let (path, container) = try await Self.seeded(dir)
        let context = container.mainContext
        let folders = try context.fetch(FetchDescriptor<Binder>(sortBy: [SortDescriptor(\.id)]))
        #expect(
            try context.children(\Memo.folderID, of: folders[0]).map(\.id).sorted() == [1, 4, 7])
        let fresh = Memo(id: 10, title: "New")
        try context.append(fresh, to: folders[0], via: \.folderID)
        let moved = try #require(try context.model(Memo.self, id: 2))
        try context.append(moved, to: folders[0], via: \.folderID)
        let removed = try #require(try context.model(Memo.self, id: 4))
        context.remove(removed, from: folders[0], via: \.folderID)
        #expect(
            try context.children(\Memo.folderID, of: folders[0]).map(\.id).sorted() == [
                1, 2, 7, 10,
            ])
        #expect(try context.children(\Memo.folderID, of: folders[1]).map(\.id).sorted() == [5, 8])
        #expect(try context.referenced(\.folderID, of: moved, as: Binder.self) === folders[0])
        try context.save()

        let reopened = try openContainer(MemosV1.self, at: path).mainContext
        let first = try #require(try reopened.model(Binder.self, id: 1))
        let children = try reopened.children(\Memo.folderID, of: first)
        #expect(children.map(\.id).sorted() == [1, 2, 7, 10])
        for child in children {
            #expect(try reopened.referenced(\.folderID, of: child, as: Binder.self) === first)
        }
        #expect(try reopened.model(Memo.self, id: 4)?.folderID == nil)
    }

    @Test(
        "delete rules hold and show in the context: nullify clears references, cascade removes links"
    )
    func deleteRules() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.seeded(dir).container
        let context = container.mainContext
        context.insert(Label(id: "red", name: "Red"))
        context.insert(MemoLabel(memoID: 1, labelID: "red"))
        context.insert(MemoLabel(memoID: 2, labelID: "red"))
        try context.save()
        let memos = try context.fetch(FetchDescriptor<Memo>())
        let links = try context.fetch(FetchDescriptor<MemoLabel>())
        #expect(links.count == 2)

        context.delete(try #require(try context.model(Binder.self, id: 1)))
        try context.save()
        #expect(memos.filter { $0.folderID == nil }.map(\.id) == [1, 4, 7])
        #expect(
            try await container.database.query(
                "SELECT count(*) AS n FROM \"Memo\" WHERE folderID IS NULL"
            ).first?
            .int64("n") == 3)

        context.delete(memos[0])
        try context.save()
        #expect(try context.fetch(FetchDescriptor<MemoLabel>()).map(\.memoID) == [2])
        #expect(!context.hasChanges)
        memos[1].title = "still saves"  // no stale state left behind by the cascade
        try context.save()
    }

    @Test(
        "models read through relationship calls are saved when changed, remove(_:from:via:) alone included"
    )
    func relationshipReadsSave() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.seeded(dir).container
        let context = ModelContext(container)
        context.autosaveEnabled = false
        let folders = try context.fetch(FetchDescriptor<Binder>(sortBy: [SortDescriptor(\.id)]))
        // Read by the to-many call (its own query), not by a fetch.
        let children = try context.children(\Memo.folderID, of: folders[1]).sorted { $0.id < $1.id }
        #expect(children.map(\.id) == [2, 5, 8])
        context.remove(children[0], from: folders[1], via: \.folderID)
        children[1].title = "Retitled"
        // Read by the to-one call's prefetch.
        let memos = try context.fetch(FetchDescriptor<Memo>(sortBy: [SortDescriptor(\.id)]))
        let fresh = ModelContext(container)
        fresh.autosaveEnabled = false
        try fresh.prefetchReferenced(\.folderID, of: memos, as: Binder.self)
        let third = try #require(try fresh.referenced(\.folderID, of: memos[2], as: Binder.self))
        #expect(third.id == 3)
        third.name = "Third"
        try context.save()
        try fresh.save()
        let rows = try await container.database.query(
            "SELECT id, title, folderID FROM \"Memo\" WHERE _version > 1 ORDER BY id")
        #expect(rows.map { $0.int64("id")! } == [2, 5])
        #expect(rows[0].int64("folderID") == nil)
        #expect(rows[1].string("title") == "Retitled")
        #expect(
            try await container.database.query("SELECT name FROM \"Binder\" WHERE id = 3").first?
                .string("name") == "Third")
    }

    @Test("prefetching reads each relationship with one query, whatever the number of parents")
    func prefetch() async throws {
        let dir = try TemporaryDirectory()
        let context = try await Self.seeded(dir).container.mainContext
        let folders = try context.fetch(FetchDescriptor<Binder>())
        var reads = context.store.reads
        try context.prefetchChildren(\Memo.folderID, of: folders)
        #expect(context.store.reads == reads + 1)
        var total = 0
        for folder in folders { total += try context.children(\Memo.folderID, of: folder).count }
        #expect(total == 9)
        #expect(context.store.reads == reads + 1)

        let otherDir = try TemporaryDirectory()
        let other = try await Self.seeded(otherDir).container.mainContext
        let memos = try other.fetch(FetchDescriptor<Memo>())
        reads = other.store.reads
        try other.prefetchReferenced(\.folderID, of: memos, as: Binder.self)
        #expect(other.store.reads == reads + 1)
        for memo in memos { _ = try other.referenced(\.folderID, of: memo, as: Binder.self) }
        #expect(other.store.reads == reads + 1)
    }

    @Test("many-to-many through a link model: two queries, links added and removed as models")
    func manyToMany() async throws {
        let dir = try TemporaryDirectory()
        let context = try await Self.seeded(dir).container.mainContext
        for (id, name) in [("red", "Red"), ("blue", "Blue"), ("green", "Green")] {
            context.insert(Label(id: id, name: name))
        }
        for (memo, label) in [(1, "red"), (1, "green"), (2, "blue")] {
            context.insert(MemoLabel(memoID: Int64(memo), labelID: label))
        }
        try context.save()

        let fresh = ModelContext(try openContainer(MemosV1.self, at: context.database.path!))
        let memo = try #require(try fresh.model(Memo.self, id: 1))
        let reads = fresh.store.reads
        #expect(
            try fresh.linked(\MemoLabel.memoID, \MemoLabel.labelID, of: memo, as: Label.self).map(
                \.name
            ).sorted() == [
                "Green", "Red",
            ])
        #expect(fresh.store.reads == reads + 2)
        let link = try #require(try fresh.model(MemoLabel.self, id: "1/red"))
        try fresh.delete(link)
        try fresh.insert(MemoLabel(memoID: 1, labelID: "blue"))
        try fresh.save()
        #expect(
            try fresh.linked(\MemoLabel.memoID, \MemoLabel.labelID, of: memo, as: Label.self).map(
                \.name
            ).sorted() == [
                "Blue", "Green",
            ])
    }
}
