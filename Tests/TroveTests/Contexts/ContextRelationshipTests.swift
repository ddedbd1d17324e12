import Foundation
import Observation
import Testing
@testable import Trove
import TroveTestSupport

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
    static var modelOptions: ModelOptions { ModelOptions().reference(\Memo.folderID, to: Binder.self, onDelete: .nullify) }
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
    static let versionIdentifier = "1"
    static let models: [any PersistentModel.Type] = [MemoLabel.self, Memo.self, Binder.self, Label.self]
}

@Suite("Context relationships")
@MainActor
struct ContextRelationshipTests {
    /// Folders 1...3, memos 1...9 (memo i in folder (i - 1) % 3 + 1).
    static func seeded(_ dir: TemporaryDirectory) async throws -> (path: String, container: ModelContainer) {
        let path = dir.path("memos.trove")
        let container = try await ModelContainer(MemosV1.self, at: path)
        try await container.backgroundContext().perform { context in
            for f in 1...3 { try context.insert(Binder(id: Int64(f), name: "Folder \(f)")) }
            for m in 1...9 { try context.insert(Memo(id: Int64(m), title: "Memo \(m)", folderID: Int64((m - 1) % 3 + 1))) }
            try await context.save()
        }
        return (path, container)
    }

    @Test("a to-one reference resolves to the tracked instance, read once")
    func toOne() async throws {
        let dir = try TemporaryDirectory()
        let context = try await Self.seeded(dir).container.mainContext
        let folder = try #require(try await context.model(Binder.self, id: 2))
        let memo = try #require(try await context.model(Memo.self, id: 5))
        let reads = context.store.reads
        #expect(try await context.referenced(\.folderID, of: memo, as: Binder.self) === folder)
        #expect(try await context.referenced(\.folderID, of: memo, as: Binder.self) === folder)
        #expect(context.store.reads == reads)
    }

    @Test("to-many edits: append, move and remove show at once, round-trip through save, and the inverse agrees")
    func toManyEdits() async throws {
        let dir = try TemporaryDirectory()
        let (path, container) = try await Self.seeded(dir)
        let context = container.mainContext
        let folders = try await context.fetch(FetchDescriptor<Binder>(sortBy: [SortDescriptor(\.id)]))
        #expect(try await context.children(\Memo.folderID, of: folders[0]).map(\.id).sorted() == [1, 4, 7])
        let fresh = Memo(id: 10, title: "New")
        try context.append(fresh, to: folders[0], via: \.folderID)
        let moved = try #require(try await context.model(Memo.self, id: 2))
        try context.append(moved, to: folders[0], via: \.folderID)
        let removed = try #require(try await context.model(Memo.self, id: 4))
        context.remove(removed, from: folders[0], via: \.folderID)
        #expect(try await context.children(\Memo.folderID, of: folders[0]).map(\.id).sorted() == [1, 2, 7, 10])
        #expect(try await context.children(\Memo.folderID, of: folders[1]).map(\.id).sorted() == [5, 8])
        #expect(try await context.referenced(\.folderID, of: moved, as: Binder.self) === folders[0])
        try await context.save()

        let reopened = try await ModelContainer(MemosV1.self, at: path).mainContext
        let first = try #require(try await reopened.model(Binder.self, id: 1))
        let children = try await reopened.children(\Memo.folderID, of: first)
        #expect(children.map(\.id).sorted() == [1, 2, 7, 10])
        for child in children { #expect(try await reopened.referenced(\.folderID, of: child, as: Binder.self) === first) }
        #expect(try await reopened.model(Memo.self, id: 4)?.folderID == nil)
    }

    @Test("delete rules hold and show in the context: nullify clears references, cascade removes links")
    func deleteRules() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.seeded(dir).container
        let context = container.mainContext
        try context.insert(Label(id: "red", name: "Red"))
        try context.insert(MemoLabel(memoID: 1, labelID: "red"))
        try context.insert(MemoLabel(memoID: 2, labelID: "red"))
        try await context.save()
        let memos = try await context.fetchAll(Memo.self)
        let links = try await context.fetchAll(MemoLabel.self)
        #expect(links.count == 2)

        try context.delete(try #require(try await context.model(Binder.self, id: 1)))
        try await context.save()
        #expect(memos.filter { $0.folderID == nil }.map(\.id) == [1, 4, 7])
        #expect(try await container.database.query("SELECT count(*) AS n FROM \"Memo\" WHERE folderID IS NULL").first?.int64("n") == 3)

        try context.delete(memos[0])
        try await context.save()
        #expect(try await context.fetchAll(MemoLabel.self).map(\.memoID) == [2])
        #expect(!context.hasChanges)
        memos[1].title = "still saves"  // no stale state left behind by the cascade
        try await context.save()
    }

    @Test("prefetching reads each relationship with one query, whatever the number of parents")
    func prefetch() async throws {
        let dir = try TemporaryDirectory()
        let context = try await Self.seeded(dir).container.mainContext
        let folders = try await context.fetchAll(Binder.self)
        var reads = context.store.reads
        try await context.prefetchChildren(\Memo.folderID, of: folders)
        #expect(context.store.reads == reads + 1)
        var total = 0
        for folder in folders { total += try await context.children(\Memo.folderID, of: folder).count }
        #expect(total == 9)
        #expect(context.store.reads == reads + 1)

        let otherDir = try TemporaryDirectory()
        let other = try await Self.seeded(otherDir).container.mainContext
        let memos = try await other.fetchAll(Memo.self)
        reads = other.store.reads
        try await other.prefetchReferenced(\.folderID, of: memos, as: Binder.self)
        #expect(other.store.reads == reads + 1)
        for memo in memos { _ = try await other.referenced(\.folderID, of: memo, as: Binder.self) }
        #expect(other.store.reads == reads + 1)
    }

    @Test("many-to-many through a link model: two queries, links added and removed as models")
    func manyToMany() async throws {
        let dir = try TemporaryDirectory()
        let context = try await Self.seeded(dir).container.mainContext
        for (id, name) in [("red", "Red"), ("blue", "Blue"), ("green", "Green")] { try context.insert(Label(id: id, name: name)) }
        for (memo, label) in [(1, "red"), (1, "green"), (2, "blue")] { try context.insert(MemoLabel(memoID: Int64(memo), labelID: label)) }
        try await context.save()

        let fresh = try await ModelContainer(MemosV1.self, database: context.database).mainContext
        let memo = try #require(try await fresh.model(Memo.self, id: 1))
        let reads = fresh.store.reads
        #expect(try await fresh.linked(\MemoLabel.memoID, \MemoLabel.labelID, of: memo, as: Label.self).map(\.name).sorted() == ["Green", "Red"])
        #expect(fresh.store.reads == reads + 2)
        let link = try #require(try await fresh.model(MemoLabel.self, id: "1/red"))
        try fresh.delete(link)
        try fresh.insert(MemoLabel(memoID: 1, labelID: "blue"))
        try await fresh.save()
        #expect(try await fresh.linked(\MemoLabel.memoID, \MemoLabel.labelID, of: memo, as: Label.self).map(\.name).sorted() == ["Blue", "Green"])
    }
}
