import Foundation
import Testing
import Trove

@testable import TroveCLI

/// The ids `trove index` gives chunks (``NoteRecordID``) and the machine-independent names of
/// files they come from (``NoteCollection/key(of:)``).
@Suite("NoteRecordID")
struct NoteRecordIDTests {
    @Test(
        "an id is the same in every run and on every machine: pinned, version 8, RFC 9562 variant")
    func stable() throws {
        let id = NoteRecordID.make(collection: "notes", key: "notes/2026/march.md", chunk: 3)
        #expect(id == NoteRecordID.make(collection: "notes", key: "notes/2026/march.md", chunk: 3))
        // Pinned (checked against Python's hashlib): a change here would give every synced note a
        // second copy at its next re-index.
        #expect(id.description == "d0050da5-d1b9-8e38-83e8-95c8fb436558")
        guard case .uuid(let uuid) = id else {
            Issue.record("not a UUID: \(id)")
            return
        }
        #expect(uuid.uuid.6 >> 4 == 8)
        #expect(uuid.uuid.8 >> 6 == 0b10)
    }

    @Test("ids differ across collections, files and chunks")
    func distinct() {
        let collections = ["notes", "work", "default", "notesx"]
        let keys = ["notes/a.md", "notes/b.md", "a.md", "notes/a.md/", "/home/ana/notes/a.md"]
        var ids = Set<DocumentID>()
        for collection in collections {
            for key in keys {
                for chunk in [0, 1, 2, 10, 11] {
                    ids.insert(NoteRecordID.make(collection: collection, key: key, chunk: chunk))
                }
            }
        }
        #expect(ids.count == collections.count * keys.count * 5)
    }

    @Test(
        "a file is named by its collection folder's name and its path below it, not by where the folder is"
    )
    func keyBelowTheFolder() throws {
        let laptop = NoteCollection(
            name: "notes", paths: ["/home/ana/notes"], mask: .standard, context: nil)
        let desktop = NoteCollection(
            name: "notes", paths: ["/Users/ana/Documents/notes"], mask: .standard, context: nil)
        #expect(laptop.key(of: "/home/ana/notes/2026/march.md") == "notes/2026/march.md")
        #expect(
            desktop.key(of: "/Users/ana/Documents/notes/2026/march.md") == "notes/2026/march.md")
    }

    @Test("the outermost folder names a file; a file given by itself is named by its file name")
    func keyOfNestedFoldersAndFiles() throws {
        let collection = NoteCollection(
            name: "default",
            paths: ["/home/ana/notes/journal", "/home/ana/notes", "/srv/todo.txt"],
            mask: .standard, context: nil)
        #expect(collection.key(of: "/home/ana/notes/journal/may.md") == "notes/journal/may.md")
        #expect(collection.key(of: "/srv/todo.txt") == "todo.txt")
        // Not held by the collection: the absolute path.
        #expect(collection.key(of: "/elsewhere/x.md") == "/elsewhere/x.md")
        let root = NoteCollection(name: "all", paths: ["/"], mask: .standard, context: nil)
        #expect(root.key(of: "/etc/motd") == "/etc/motd")
    }

    @Test(
        "two folders of one collection with the same name are named by their absolute paths, so their files never share ids"
    )
    func keyOfFoldersWithTheSameName() throws {
        let collection = NoteCollection(
            name: "default",
            paths: ["/home/ana/work/notes", "/home/ana/home/notes", "/home/ana/misc"],
            mask: .standard, context: nil)
        let work = collection.key(of: "/home/ana/work/notes/a.md")
        let home = collection.key(of: "/home/ana/home/notes/a.md")
        #expect(work == "/home/ana/work/notes/a.md" && home == "/home/ana/home/notes/a.md")
        #expect(collection.key(of: "/home/ana/misc/a.md") == "misc/a.md")
    }
}
