import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveCLI

/// Named collections: `trove collection add | list | remove | rename`, `index` refreshing them,
/// `search -c` and contexts in results (hashing embedder).
@Suite("CollectionCommand", .serialized)
struct CollectionTests {
    /// `notes/personal` (Markdown and a text file) and `notes/work` (Markdown).
    func fixture() throws -> NotesFixture {
        let fixture = try NotesFixture()
        try fixture.write("personal/dentist.md", "Dentist: cleaning with Dr. Okafor on Tuesday.")
        try fixture.write("personal/garden/tomatoes.md", "Stake the tomatoes when planting.")
        try fixture.write("personal/todo.txt", "Buy oat milk and tomatoes.")
        try fixture.write(
            "work/standup.md", "Standup: freeze the release branch Thursday. Tomatoes for lunch.")
        return fixture
    }

    func sources(_ document: JSONValue) -> Set<String> {
        Set(results(document).compactMap { $0["source"]?.string })
    }

    @Test("add indexes the folder through its mask; list shows name, mask, context and counts")
    func addAndList() async throws {
        let f = try fixture()
        let add = await f.trove([
            "collection", "add", "personal", "--name", "home", "--mask", "**/*.md", "--context",
            "Personal notes",
        ])
        #expect(add.status == 0, "\(add.err)")
        #expect(add.err.contains("2 added"), "\(add.err)")  // todo.txt is outside the mask
        let listed = try await f.json(["collection", "list"])
        guard case .array(let items)? = listed["collections"], let home = items.first else {
            Issue.record("no collections: \(listed.serialized())")
            return
        }
        #expect(items.count == 1)
        #expect(home["name"] == .string("home"))
        #expect(home["mask"] == .string("**/*.md"))
        #expect(home["context"] == .string("Personal notes"))
        #expect(home["paths"] == .array([.string(f.path("personal"))]))
        #expect(home["files"] == .int(2) && home["records"] == .int(2))
        let text = await f.trove(["collection", "list"])
        #expect(
            text.out.contains("home") && text.out.contains("context  Personal notes"), "\(text.out)"
        )
        // The same name twice is refused, nothing written.
        let again = await f.trove(["collection", "add", "work", "--name", "home"])
        #expect(again.status == ExitCode.targetExists)
    }

    @Test("results carry their collection and its context; -c restricts the search")
    func contextsAndRestriction() async throws {
        let f = try fixture()
        _ = await f.trove([
            "collection", "add", "personal", "--name", "home", "--context", "Personal notes",
        ])
        _ = await f.trove(["collection", "add", "work", "--context", "Work: team notes"])
        let all = try await f.json(["search", "--mode", "text", "tomatoes"])
        #expect(
            sources(all) == [
                f.path("personal/garden/tomatoes.md"), f.path("personal/todo.txt"),
                f.path("work/standup.md"),
            ])
        for hit in results(all) {
            let work = hit["source"]?.string == f.path("work/standup.md")
            #expect(hit["collection"] == .string(work ? "work" : "home"))
            #expect(hit["context"] == .string(work ? "Work: team notes" : "Personal notes"))
        }
        let onlyWork = try await f.json(["search", "--mode", "text", "-c", "work", "tomatoes"])
        #expect(sources(onlyWork) == [f.path("work/standup.md")])
        let both = try await f.json([
            "search", "--mode", "text", "-c", "work", "-c", "home", "tomatoes",
        ])
        #expect(sources(both).count == 3)
        // Hybrid and vector modes honour -c too.
        for mode in ["hybrid", "vector"] {
            let found = try await f.json([
                "search", "--mode", mode, "-c", "home", "standup", "release",
            ])
            #expect(!sources(found).contains(f.path("work/standup.md")), "mode \(mode)")
        }
        // The text output prints the context under the snippet.
        let text = await f.trove(["search", "--mode", "text", "-c", "work", "tomatoes"])
        #expect(text.out.contains("work: Work: team notes"), "\(text.out)")
        let unknown = await f.trove(["search", "-c", "wrk", "tomatoes"])
        #expect(unknown.status == ExitCode.notFound)
        #expect(unknown.err.contains("did you mean 'work'"), "\(unknown.err)")
    }

    @Test(
        "add on a folder with an unreadable subfolder warns naming it and fails; the rest is indexed (issue 42)"
    )
    func addWithUnreadableSubfolder() async throws {
        let f = try fixture()
        let folder = f.path("personal/garden")
        let undo = try ErrorPathTests.makeUnreadable(folder: folder)
        defer { undo() }
        let add = await f.trove(["collection", "add", "personal", "--name", "home"])
        #expect(add.status == ExitCode.failure)
        #expect(add.err.contains("trove: warning: cannot read \(folder)"), "\(add.err)")
        #expect(
            add.err.contains("2 added, 0 updated, 0 removed, 0 unchanged, 1 failed"), "\(add.err)")
    }

    @Test(
        "add on a folder that cannot be listed is an error naming it; nothing is added (issue 42)")
    func addUnreadableFolder() async throws {
        let f = try fixture()
        // A link that loops leads to no folder: refused, saying why, before anything is written
        // (as root too; it was "no such file or folder").
        try FileManager.default.createSymbolicLink(
            atPath: f.path("loop"), withDestinationPath: f.path("loop"))
        let loop = await f.trove(["collection", "add", "loop", "--name", "loop"])
        #expect(loop.status == ExitCode.notFound)
        #expect(
            loop.err
                == "trove: error: cannot read loop: a link to \(f.path("loop")): Too many levels of symbolic links\n",
            "\(loop.err)")
        #expect(!FileManager.default.fileExists(atPath: f.database))
        let folder = f.path("personal")
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: folder)
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder)
        }
        // Root lists any folder whatever its permissions; the check is the same code either way.
        let listable = (try? FileDiscovery.listing(of: folder)) != nil
        let add = await f.trove(["collection", "add", "personal", "--name", "home"])
        if listable {
            #expect(getuid() == 0)
            #expect(add.status == 0, "\(add.err)")
        } else {
            #expect(add.status == ExitCode.failure)
            #expect(
                add.err == "trove: error: cannot read the folder personal: Permission denied\n",
                "\(add.err)")
            #expect(!FileManager.default.fileExists(atPath: f.database))
        }
    }

    @Test(
        "a collection's folder that became a link to nowhere (an unmounted drive) keeps its records and fails (issue 42)"
    )
    func collectionFolderBecomesBrokenLink() async throws {
        let f = try fixture()
        #expect(await f.trove(["collection", "add", "work"]).status == 0)
        let folder = f.path("work")
        let aside = (NSTemporaryDirectory() as NSString).appendingPathComponent(
            "trove-drive-\(UUID().uuidString)")
        try FileManager.default.moveItem(atPath: folder, toPath: aside)
        try FileManager.default.createSymbolicLink(
            atPath: folder, withDestinationPath: aside + "-unmounted")
        defer {
            try? FileManager.default.removeItem(atPath: folder)
            try? FileManager.default.moveItem(atPath: aside, toPath: folder)
        }
        let refresh = await f.trove(["index"])
        #expect(refresh.status == ExitCode.failure)
        #expect(
            refresh.err.contains(
                "trove: warning: cannot read \(folder): a link to \(aside)-unmounted"),
            "\(refresh.err)")
        #expect(refresh.err.contains("0 removed"), "\(refresh.err)")
        let kept = try await f.json(["search", "--mode", "text", "freeze"])
        #expect(results(kept).first?["source"]?.string == f.path("work/standup.md"))
    }

    @Test("index refreshes every collection: new, edited and deleted files; -c one of them")
    func indexRefreshesAll() async throws {
        let f = try fixture()
        _ = await f.trove(["collection", "add", "personal", "--name", "home"])
        _ = await f.trove(["collection", "add", "work"])
        try f.write("personal/new.md", "Parcel pickup code 4471.")
        try f.write("work/standup.md", "Standup moved to Friday.")
        try FileManager.default.removeItem(atPath: f.path("personal/todo.txt"))
        let onlyWork = await f.trove(["index", "-c", "work"])
        #expect(
            onlyWork.err.contains("0 added, 1 updated, 0 removed, 0 unchanged"), "\(onlyWork.err)")
        let refresh = await f.trove(["index"])
        #expect(
            refresh.err.contains("1 added, 0 updated, 1 removed, 3 unchanged"), "\(refresh.err)")
        let parcel = try await f.json(["search", "--mode", "text", "4471"])
        #expect(results(parcel).first?["collection"] == .string("home"))
    }

    @Test("index PATH adds the path to the implicit collection 'default'; -c NAME to NAME")
    func implicitCollection() async throws {
        let f = try fixture()
        let first = await f.trove(["index", "personal"])
        #expect(first.status == 0, "\(first.err)")
        let listed = try await f.json(["collection", "list"])
        guard case .array(let items)? = listed["collections"] else { return }
        #expect(items.map { $0["name"] } == [.string("default")])
        // A folder inside a collection is refreshed with it, not added again.
        _ = await f.trove(["index", "personal/garden"])
        let again = try await f.json(["collection", "list"])
        #expect(
            again["collections"]?.array?.first?["paths"] == .array([.string(f.path("personal"))]))
        _ = await f.trove(["index", "-c", "job", "work"])
        let hit = try await f.json(["search", "--mode", "text", "freeze"])
        #expect(results(hit).first?["collection"] == .string("job"))
        // With no collection and no PATH there is nothing to index.
        let empty = try NotesFixture()
        let nothing = await empty.trove(["index"])
        #expect(nothing.status == ExitCode.usage)
    }

    @Test(
        "remove deletes the collection's records (every model's vectors with them); the others stay"
    )
    func remove() async throws {
        let f = try fixture()
        let models = ["--model", "/m/modelA", "--model", "/m/modelB"]
        let services = MultiModelTests.twoModelServices
        _ = await f.trove(
            ["collection", "add", "personal", "--name", "home"] + models, services: services)
        _ = await f.trove(["collection", "add", "work"] + models, services: services)
        let removed = await f.trove(["collection", "remove", "home", "--json"], services: services)
        #expect(removed.status == 0, "\(removed.err)")
        #expect(try JSONValue.parse(removed.out)["records"] == .int(3))
        let database = try Database(path: f.database)
        let left = try await database.query(
            "SELECT json_extract(metadata, '$.collection') AS c, embedding_2 IS NOT NULL AS v FROM notes"
        )
        #expect(left.compactMap { $0.string("c") } == ["work"])
        #expect(left.map { $0.int("v") } == [1])
        let files = try await database.query("SELECT collection FROM trove_files").compactMap {
            $0.string("collection")
        }
        #expect(files == ["work"])
        let found = await f.trove(
            ["search", "--json", "--mode", "text", "tomatoes"] + models, services: services)
        #expect(sources(try JSONValue.parse(found.out)) == [f.path("work/standup.md")])
        let missing = await f.trove(["collection", "remove", "home"], services: services)
        #expect(missing.status == ExitCode.notFound)
    }

    @Test(
        "rename relabels the records; -c finds them under the new name; an existing name is refused"
    )
    func rename() async throws {
        let f = try fixture()
        _ = await f.trove([
            "collection", "add", "personal", "--name", "home", "--context", "Personal notes",
        ])
        _ = await f.trove(["collection", "add", "work"])
        let renamed = await f.trove(["collection", "rename", "home", "private"])
        #expect(renamed.status == 0, "\(renamed.err)")
        let found = try await f.json(["search", "--mode", "text", "-c", "private", "dentist"])
        #expect(results(found).first?["collection"] == .string("private"))
        #expect(results(found).first?["context"] == .string("Personal notes"))
        let old = await f.trove(["search", "-c", "home", "dentist"])
        #expect(old.status == ExitCode.notFound)
        let clash = await f.trove(["collection", "rename", "private", "work"])
        #expect(clash.status == ExitCode.targetExists)
        let bad = await f.trove(["collection", "rename", "private", "-x"])
        #expect(bad.status == ExitCode.usage)
        // Refreshing after the rename changes nothing.
        let refresh = await f.trove(["index"])
        #expect(
            refresh.err.contains("0 added, 0 updated, 0 removed, 4 unchanged"), "\(refresh.err)")
    }

    @Test("a database indexed before collections moves to the implicit collection when opened")
    func migration() async throws {
        let f = try fixture()
        _ = await f.trove(["index", "personal"])
        // Turn the database back into the earlier layout: files keyed by path, no labels.
        let database = try Database(path: f.database)
        try await database.execute("DROP TABLE trove_collections")
        try await database.execute(
            """
            CREATE TABLE old_files AS SELECT path, sha256, bytes, records, indexed_at FROM trove_files;
            """)
        try await database.execute("DROP TABLE trove_files")
        try await database.execute(
            """
            CREATE TABLE trove_files(path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, bytes INTEGER NOT NULL,
                records INTEGER NOT NULL, indexed_at REAL NOT NULL)
            """)
        try await database.execute("INSERT INTO trove_files SELECT * FROM old_files")
        try await database.execute("DROP TABLE old_files")
        try await database.execute(
            "UPDATE notes SET metadata = json_remove(metadata, '$.collection')")
        let refresh = await f.trove(["index"])
        #expect(
            refresh.err.contains("0 added, 0 updated, 0 removed, 3 unchanged"), "\(refresh.err)")
        let found = try await f.json(["search", "--mode", "text", "-c", "default", "dentist"])
        #expect(results(found).first?["collection"] == .string("default"))
    }

    @Test("unknown actions and misplaced options are usage errors; --help has examples")
    func usage() async throws {
        let f = try fixture()
        let typo = await f.trove(["collection", "lst"])
        #expect(
            typo.status == ExitCode.usage && typo.err.contains("did you mean 'list'"), "\(typo.err)"
        )
        let misplaced = await f.trove(["collection", "list", "--mask", "*.md"])
        #expect(misplaced.status == ExitCode.usage)
        let badMask = await f.trove(["collection", "add", "work", "--mask", "**/*.{md"])
        #expect(badMask.status == ExitCode.usage)
        let missing = await f.trove(["collection", "add", "nowhere"])
        #expect(missing.status == ExitCode.notFound)
        let help = await f.trove(["collection", "--help"])
        #expect(help.out.contains("Examples:") && help.out.contains("trove collection add ~/notes"))
        let empty = await f.trove(["collection", "list"])
        #expect(empty.status == 0 && empty.err.contains("no collections yet"))
        // The short names call the same subcommands, help included.
        let alias = await f.trove(["collection", "ls"])
        #expect(alias.status == 0 && alias.err.contains("no collections yet"))
        let aliasHelp = await runTrove(["help", "collection", "mv"])
        #expect(aliasHelp.out.hasPrefix("trove collection rename - "), "\(aliasHelp.out)")
        // Without a subcommand: the help on stderr and the usage status.
        let bare = await f.trove(["collection"])
        #expect(bare.status == ExitCode.usage && bare.err.contains("Subcommands:"))
    }
}
