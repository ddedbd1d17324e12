import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveCLI

/// Two notes databases, as on two machines, indexed by `trove index` and synced by `trove sync`
/// through a real PostgreSQL server (different notes, and the same notes under different
/// folders); and notes databases of older versions (Int64 ids), which
/// move to UUID ids when this version opens them.
@Suite("CLI: notes sync", .serialized)
struct NotesSyncCLITests {
    static let environment = ["TROVE_SYNC_PASSWORD": "correct horse battery staple"]

    /// The sources of `trove search --json` on `fixture`, best first.
    func search(_ fixture: NotesFixture, _ words: String, mode: String = "hybrid") async throws
        -> [JSONValue]
    {
        results(try await fixture.json(["search", "--mode", mode, "-k", "5", words]))
    }

    /// The shared test server with its schema installed, a device role of its own, and a new
    /// space name: the URL that role connects with, and the space.
    static func newSpace() async throws -> (url: String, space: String) {
        let server = try TestPostgresServer.shared()
        let setup = await runTrove(["sync", "setup-server", server.adminURL])
        #expect(setup.status == 0, "\(setup.err)")
        let role = "notes_\(UUID().uuidString.prefix(8).lowercased())"
        try server.createRole(role, password: "pw", inRoles: ["trove_sync_device"])
        return (server.url(user: role, password: "pw"), "notes-\(UUID().uuidString.prefix(8))")
    }

    /// Every entry of a database's notes, sorted by id.
    func entries(_ fixture: NotesFixture) async throws -> [VectorEntry] {
        try await SearchCollection(named: "notes", in: Database(path: fixture.database)).fetch(
            Query().sorted(by: .ascending("id")))
    }

    @Test(
        "two notes databases index different notes, sync, converge and search the same notes; edits and deletes follow"
    )
    func twoNotebooksConverge() async throws {
        let (url, space) = try await Self.newSpace()
        let laptop = try NotesFixture()
        let desktop = try NotesFixture()
        func sync(_ fixture: NotesFixture) async -> RunResult {
            await runTrove(
                ["sync", "--server", url, "--space", space, "--db", fixture.database],
                environment: Self.environment)
        }
        try laptop.write("ferry.md", "# Ferry\n\nThe harbour ferry leaves at seven from pier two.")
        try desktop.write("garden.md", "# Garden\n\nPlant the tulip bulbs before the first frost.")
        #expect(await laptop.trove(["index", "."]).status == 0)
        #expect(await desktop.trove(["index", "."]).status == 0)
        for fixture in [laptop, desktop, laptop] {
            let run = await sync(fixture)
            #expect(run.status == 0, "\(run.err)")
        }

        // Both find both notes, with the same ids, by words and by meaning: the vectors came
        // with the notes (hybrid search on arrival, nothing embedded again).
        for fixture in [laptop, desktop] {
            let ferry = try await search(fixture, "harbour ferry")
            #expect(ferry.first?["source"]?.string == laptop.path("ferry.md"))
            #expect(ferry.first?["vector_rank"] != .null && ferry.first?["text_rank"] != .null)
            let tulips = try await search(fixture, "tulip bulbs")
            #expect(tulips.first?["source"]?.string == desktop.path("garden.md"))
            #expect(
                try await search(fixture, "tulip frost", mode: "vector").first?["source"]?.string
                    == desktop.path("garden.md"))
        }
        #expect(try await entries(laptop) == (try await entries(desktop)))
        let laptopFerry = try await search(laptop, "harbour ferry").first
        let desktopFerry = try await search(desktop, "harbour ferry").first
        #expect(laptopFerry?["id"] == desktopFerry?["id"])
        let id = try #require(desktopFerry?["id"]?.string)
        #expect(UUID(uuidString: id) != nil, "notes have UUID ids: \(id)")
        // The short id another device's note is shown with opens it here too.
        let shortID = try #require(desktopFerry?["short_id"]?.string)
        let got = await desktop.trove(["get", shortID])
        #expect(got.status == 0 && got.out.contains("harbour ferry leaves at seven"), "\(got.err)")
        let shown = await desktop.trove(["show", id])
        #expect(shown.status == 0 && shown.out.contains("pier two"), "\(shown.err)")

        // An edit on the laptop (re-indexed) and a delete on the desktop reach the other.
        try laptop.write(
            "ferry.md", "# Ferry\n\nThe night ferry now leaves from the lighthouse quay.")
        #expect(await laptop.trove(["index", "."]).status == 0)
        let removed = await desktop.trove(["rm", "--source", desktop.path("garden.md")])
        #expect(removed.status == 0, "\(removed.err)")
        for fixture in [laptop, desktop, laptop] {
            let run = await sync(fixture)
            #expect(run.status == 0, "\(run.err)")
        }
        for fixture in [laptop, desktop] {
            #expect(
                try await search(fixture, "lighthouse quay").first?["source"]?.string
                    == laptop.path("ferry.md"))
            #expect(try await search(fixture, "pier", mode: "text").isEmpty)
            #expect(try await search(fixture, "tulip", mode: "text").isEmpty)
        }
        let converged = try await entries(laptop)
        #expect(converged.count == 1)
        #expect(converged == (try await entries(desktop)))
        let status = await runTrove([
            "sync", "status", "--space", space, "--db", desktop.database, "--json",
        ])
        #expect(try JSONValue.parse(status.out)["status"]?["pendingChanges"] == .int(0))
    }

    /// The collections of `trove collection list --json` on `fixture`, by name.
    func listedCollections(_ fixture: NotesFixture) async throws -> [String: JSONValue] {
        let listed = try await fixture.json(["collection", "list"])["collections"]?.array ?? []
        return Dictionary(
            listed.compactMap { item in item["name"]?.string.map { ($0, item) } },
            uniquingKeysWith: { first, _ in first })
    }

    @Test(
        "a collection's context and mask travel with the space and converge; its folders stay on their machine"
    )
    func collectionDefinitionsTravel() async throws {
        let (url, space) = try await Self.newSpace()
        let laptop = try NotesFixture()
        let desktop = try NotesFixture()
        func sync(_ fixture: NotesFixture) async throws {
            let run = await runTrove(
                ["sync", "--server", url, "--space", space, "--db", fixture.database],
                environment: Self.environment)
            #expect(run.status == 0, "\(run.err)")
        }
        try laptop.write("ferry.md", "# Ferry\n\nThe harbour ferry leaves at seven from pier two.")
        try desktop.write("garden.md", "# Garden\n\nPlant the tulip bulbs before the first frost.")
        let added = await laptop.trove([
            "collection", "add", laptop.notes, "--name", "harbour", "--mask", "**/*.md",
            "--context", "Harbour logs of the keeper",
        ])
        #expect(added.status == 0, "\(added.err)")
        #expect(await desktop.trove(["index", "."]).status == 0)
        for fixture in [laptop, desktop, laptop] { try await sync(fixture) }

        let arrived = try #require(try await listedCollections(desktop)["harbour"])
        #expect(arrived["context"]?.string == "Harbour logs of the keeper")
        #expect(arrived["mask"]?.string == "**/*.md")
        #expect(arrived["paths"]?.array == [], "folders name the laptop's disk: they stay there")
        let found = await desktop.trove(["search", "harbour ferry", "-k", "1"])
        #expect(found.out.contains("Harbour logs of the keeper"), "\(found.out)")

        // An edit on the desktop reaches the laptop; the laptop keeps its folder.
        do {
            try await Notebook.saveDefinition(
                NoteCollection(
                    name: "harbour", paths: [], mask: try Glob("**/*.md"),
                    context: "The keeper's harbour logs, 2026"),
                in: try Database(path: desktop.database))
        }
        for fixture in [desktop, laptop] { try await sync(fixture) }
        let edited = try #require(try await listedCollections(laptop)["harbour"])
        #expect(edited["context"]?.string == "The keeper's harbour logs, 2026")
        #expect(edited["paths"]?.array == [.string(laptop.notes)])
        #expect(
            try await listedCollections(desktop)["default"]?["paths"]?.array
                == [.string(desktop.notes)])
    }

    @Test("a database of an older version keeps its collections' contexts as synced definitions")
    func olderCollectionsBecomeDefinitions() async throws {
        let directory = try TemporaryDirectory(prefix: "trove-definitions")
        let database = try Database(path: directory.path("old.trove"))
        try await database.execute(
            """
            CREATE TABLE trove_collections(name TEXT PRIMARY KEY, paths TEXT NOT NULL,
                mask TEXT NOT NULL, context TEXT, created_at REAL NOT NULL)
            """)
        try await database.execute(
            "INSERT INTO trove_collections VALUES ('work', '[\"/home/ana/work\"]', '**/*.txt', 'Work notes', 0)"
        )
        let definitions = try await Notebook.prepareDefinitions(database)
        let stored = try #require(try await definitions.fetch(id: "work"))
        #expect(stored["context"] == .string("Work notes"))
        #expect(stored["mask"] == .string("**/*.txt"))
        #expect(try await definitions.fetch().count == 1)
    }

    @Test(
        "a device added by invitation and code syncs without the passphrase; once removed it reads nothing new and is refused"
    )
    func addAndRemoveADevice() async throws {
        let (url, space) = try await Self.newSpace()
        let laptop = try NotesFixture()
        let phone = try NotesFixture()
        try laptop.write("ferry.md", "# Ferry\n\nThe harbour ferry leaves at seven from pier two.")
        try phone.write("garden.md", "# Garden\n\nPlant the tulip bulbs before the first frost.")
        #expect(await laptop.trove(["index", "."]).status == 0)
        #expect(await phone.trove(["index", "."]).status == 0)
        func laptopSync(_ arguments: [String]) async -> RunResult {
            await runTrove(
                ["sync"] + arguments + ["--server", url, "--db", laptop.database],
                environment: Self.environment)
        }
        #expect(await laptopSync(["--space", space]).status == 0)

        let invitation = try #require(
            try await phone.json(["sync", "invite", "--space", space])["invitation"]?.string)
        let added = await laptopSync(["add-device", invitation, "--json"])
        #expect(added.status == 0, "\(added.err)")
        let code = try #require(try JSONValue.parse(added.out)["code"]?.string)
        // No passphrase on the phone: a wrong code keeps nothing, the right one joins.
        let wrong = await runTrove([
            "sync", "join", "--server", url, "--space", space, "--code", "AAAAA-AAAAA",
            "--db", phone.database,
        ])
        #expect(wrong.status != 0 && wrong.err.contains("confirmation code"), "\(wrong.err)")
        let joined = await runTrove([
            "sync", "join", "--server", url, "--space", space, "--code", code, "--db",
            phone.database,
        ])
        #expect(joined.status == 0, "\(joined.err)")
        #expect(await laptopSync([]).status == 0)
        #expect(
            try await search(laptop, "tulip bulbs").first?["source"]?.string
                == phone.path("garden.md"))
        #expect(
            try await search(phone, "harbour ferry").first?["source"]?.string
                == laptop.path("ferry.md"))

        let listed = await laptopSync(["devices", "--json"])
        let devices = try JSONValue.parse(listed.out)["devices"]?.array ?? []
        #expect(devices.count == 2, "\(listed.out) \(listed.err)")
        let phoneID = try #require(
            devices.first { $0["thisDevice"] == .bool(false) }?["device"]?.string)
        let removed = await laptopSync(["remove-device", phoneID])
        #expect(removed.status == 0, "\(removed.err)")
        try laptop.write("secret.md", "# Secret\n\nThe lighthouse key is under the third stone.")
        #expect(await laptop.trove(["index", "."]).status == 0)
        #expect(await laptopSync([]).status == 0)
        let status = await runTrove(["sync", "status", "--json", "--db", laptop.database])
        #expect(try JSONValue.parse(status.out)["status"]?["keyEpoch"] == .int(1), "\(status.out)")
        let refused = await runTrove(["sync", "--server", url, "--db", phone.database])
        #expect(refused.status != 0 && refused.err.contains("removed"), "\(refused.err)")
        #expect(try await search(phone, "lighthouse stone", mode: "text").isEmpty)

        let help = await runTrove(["sync", "add-device", "--help"])
        #expect(help.out.contains("Usage: trove sync add-device INVITATION"), "\(help.out)")
        #expect(await runTrove(["sync", "--help"]).out.contains("  remove-device "))
    }

    /// A note long enough for several chunks: `count` paragraphs, each about one harbour.
    static func longNote(_ title: String, paragraphs count: Int) -> String {
        let words = [
            "lighthouse", "tide", "ferry", "gull", "anchor", "rope", "quay", "lantern", "mast",
            "buoy",
        ]
        return "# \(title)\n\n"
            + (0..<count).map { index in
                "Harbour log \(index): the \(words[index % words.count]) by pier \(index) was checked at dawn, "
                    + "the keeper wrote down the weather, the wind from the west, the boats that came in, "
                    + "the nets that were mended and the fish that were sold on the quay before noon; "
                    + "then the \(words[(index + 3) % words.count]) was painted again and the logbook closed."
            }.joined(separator: "\n\n")
    }

    /// The record ids, sources and short ids of a search, best first.
    func hits(_ fixture: NotesFixture, _ words: String, mode: String = "hybrid") async throws
        -> [[JSONValue?]]
    {
        try await search(fixture, words, mode: mode).map {
            [$0["id"], $0["source"], $0["short_id"], $0["score"]]
        }
    }

    @Test(
        "two machines index the same notes under different folders, sync and keep one copy of each chunk; an edit converges"
    )
    func sameNotesOnTwoMachinesSyncOneCopy() async throws {
        let (url, space) = try await Self.newSpace()
        let laptop = try NotesFixture()
        let desktop = try NotesFixture()
        #expect(laptop.notes != desktop.notes)
        func sync(_ fixture: NotesFixture) async -> RunResult {
            await runTrove(
                ["sync", "--server", url, "--space", space, "--db", fixture.database],
                environment: Self.environment)
        }
        // The same notes folder on both (a synced folder, or a copy); the laptop has one more note.
        for fixture in [laptop, desktop] {
            try fixture.write("harbour/log.md", Self.longNote("Harbour log", paragraphs: 12))
            try fixture.write(
                "tea.md", "# Tea\n\nSteep the oolong for three minutes at ninety degrees.")
            #expect(await fixture.trove(["index", "."]).status == 0)
        }
        try laptop.write("ferry.md", "# Ferry\n\nThe harbour ferry leaves at seven from pier two.")
        #expect(await laptop.trove(["index", "."]).status == 0)
        let laptopBefore = try await entries(laptop)
        let desktopBefore = try await entries(desktop)
        let logChunks = laptopBefore.filter { $0.source == laptop.path("harbour/log.md") }.count
        #expect(logChunks > 2, "the long note should have several chunks")
        #expect(laptopBefore.count == logChunks + 2 && desktopBefore.count == logChunks + 1)
        // Same ids before any sync: they come from the collection, the path below its folder
        // and the chunk, not from the machine.
        #expect(Set(desktopBefore.map(\.id)).isSubset(of: Set(laptopBefore.map(\.id))))

        for fixture in [laptop, desktop, laptop] {
            let run = await sync(fixture)
            #expect(run.status == 0, "\(run.err)")
        }
        let laptopAfter = try await entries(laptop)
        #expect(laptopAfter.count == laptopBefore.count, "one copy of each chunk")
        #expect(laptopAfter == (try await entries(desktop)))
        // The later writer (the desktop) won each field, its paths included.
        #expect(
            laptopAfter.filter { $0.source == desktop.path("harbour/log.md") }.count == logChunks)
        for words in [
            "oolong minutes", "harbour ferry pier", "lighthouse keeper weather", "gull nets",
        ] {
            let onLaptop = try await hits(laptop, words)
            #expect(!onLaptop.isEmpty)
            #expect(onLaptop == (try await hits(desktop, words)), "\(words)")
        }
        // Indexing again changes nothing on either machine.
        for fixture in [laptop, desktop] {
            #expect(await fixture.trove(["index", "."]).status == 0)
        }
        #expect(try await entries(laptop).count == laptopBefore.count)
        #expect(try await entries(desktop).count == laptopBefore.count)

        // The laptop shortens the shared note (its chunks now carry the desktop's path): it is
        // written in place and the chunks past its new end go, on both machines.
        try laptop.write(
            "harbour/log.md", "# Harbour log\n\nThe breakwater was rebuilt with granite blocks.")
        #expect(await laptop.trove(["index", "."]).status == 0)
        #expect(try await entries(laptop).count == 3)
        for fixture in [laptop, desktop, laptop] {
            let run = await sync(fixture)
            #expect(run.status == 0, "\(run.err)")
        }
        let converged = try await entries(laptop)
        #expect(converged.count == 3)
        #expect(converged == (try await entries(desktop)))
        for fixture in [laptop, desktop] {
            #expect(
                try await search(fixture, "granite breakwater").first?["source"]?.string
                    == laptop.path("harbour/log.md"))
            #expect(try await search(fixture, "lighthouse", mode: "text").isEmpty)
        }
        #expect(
            try await hits(laptop, "granite breakwater")
                == (try await hits(desktop, "granite breakwater")))
        let status = await runTrove([
            "sync", "status", "--space", space, "--db", desktop.database, "--json",
        ])
        #expect(try JSONValue.parse(status.out)["status"]?["pendingChanges"] == .int(0))
    }

    /// Writes at `target` the database an older `trove` would have made of `source`'s notes:
    /// the same configuration and rows, with Int64 ids 1, 2, … in id order, each further
    /// model's vectors in a collection of its own (`notes_vectors_2`, …, the same ids, no text
    /// index), and the same `trove_files` and `trove_collections` tables.
    func olderCopy(of source: String, at target: String) async throws {
        let old = try Database(path: source)
        let copy = try Database(path: target)
        guard var configuration = try await old.configuration(of: "notes") else { return }
        let further = configuration.additionalEmbeddings
        configuration.additionalEmbeddings = []
        configuration.ids = .int64
        let entries = try await SearchCollection(named: "notes", in: old).fetch(
            Query().sorted(by: .ascending("id")))
        var numbers: [DocumentID: DocumentID] = [:]
        for entry in entries { numbers[entry.id] = .int(Int64(numbers.count + 1)) }
        func rows(_ vector: (VectorEntry) -> [Float]) -> [VectorEntry] {
            entries.map {
                VectorEntry(
                    id: numbers[$0.id]!, content: $0.content, source: $0.source,
                    metadata: $0.metadata, vector: vector($0))
            }
        }
        try await SearchCollection("notes", in: copy, configuration: configuration).insert(
            rows(\.vector))
        for (index, model) in further.enumerated() {
            try await SearchCollection(
                NotebookMigration.formerModelCollection(index + 1), in: copy,
                configuration: CollectionConfiguration(
                    dimension: model.dimension, lexicalSearch: false,
                    tokenizer: CollectionConfiguration.englishTokenizer, embedding: model)
            ).insert(rows { $0.additionalVectors[index] })
        }
        for table in [Notebook.filesTable, Notebook.collectionsTable] {
            guard
                let sql = try await old.query(
                    "SELECT sql FROM sqlite_master WHERE name = ?", bindings: [.text(table)]
                )
                .first?.string("sql")
            else { continue }
            try await copy.execute(sql)
            for row in try await old.query("SELECT * FROM \(table)") {
                let marks = Array(repeating: "?", count: row.count).joined(separator: ", ")
                try await copy.execute(
                    "INSERT INTO \(table) VALUES (\(marks))",
                    bindings: (0..<row.count).map { row[$0] })
            }
        }
    }

    @Test(
        "an older notes database (Int64 ids, a collection per model) moves to UUID ids and one collection on open: nothing lost, short ids kept, then it syncs"
    )
    func olderDatabasesMoveToUUIDs() async throws {
        let fixture = try NotesFixture()
        try fixture.write("dentist.md", "Cleaning with Dr. Okafor on Tuesday at 8:30.")
        try fixture.write(
            "garden/tomatoes.txt", "Stake the tomatoes when planting. Water at the base.")
        let models = ["--model", "/m/modelA", "--model", "/m/modelB"]
        let services = MultiModelTests.twoModelServices
        #expect(await fixture.trove(["index"] + models + ["."], services: services).status == 0)
        let first = await fixture.trove(
            ["search", "--json"] + models + ["dentist"], services: services)
        let shortID = try #require(
            results(try JSONValue.parse(first.out)).first?["short_id"]?.string)
        let older = fixture.directory.path("older.trove")
        try await olderCopy(of: fixture.database, at: older)
        let before = try await SearchCollection(named: "notes", in: Database(path: older)).fetch(
            Query().sorted(by: .ascending("id")))
        #expect(before.count == 2 && before.allSatisfy { $0.id.kind == .int64 })
        let beforeSecond = try await SearchCollection(
            named: NotebookMigration.formerModelCollection(1), in: Database(path: older)
        ).fetch(Query().sorted(by: .ascending("id")))
        #expect(beforeSecond.map(\.id) == before.map(\.id))

        let search = await runTrove(
            ["search", "--json"] + models + ["tomatoes", "planting", "--db", older],
            directory: fixture.notes,
            services: services)
        #expect(search.status == 0, "\(search.err)")
        #expect(search.err.contains("gave the 2 notes of this database UUID ids"), "\(search.err)")
        #expect(
            search.err.contains("moved the vectors of 1 further models into the notes"),
            "\(search.err)")
        #expect(
            results(try JSONValue.parse(search.out)).first?["source"]?.string
                == fixture.path("garden/tomatoes.txt"))

        let database = try Database(path: older)
        let notes = try await SearchCollection(named: "notes", in: database)
        #expect(notes.configuration.ids == .uuid)
        let after = try await notes.fetch(Query().sorted(by: .ascending("id")))
        // Every note kept its content, source, metadata and vector; the new ids keep the old order.
        #expect(after.map(\.content) == before.map(\.content))
        #expect(
            after.map(\.source) == before.map(\.source)
                && after.map(\.metadata) == before.map(\.metadata))
        #expect(after.map(\.vector) == before.map(\.vector))
        #expect(after.allSatisfy { $0.id.kind == .uuid })
        // The second model's vectors are the notes' own now; its collection is gone.
        #expect(notes.configuration.additionalEmbeddings.map(\.modelID) == ["test/model-b"])
        #expect(after.map(\.additionalVectors) == beforeSecond.map { [$0.vector] })
        #expect(
            !(try await database.collectionNames()).contains(
                NotebookMigration.formerModelCollection(1)))
        // The text index was rebuilt; the short id still names the same note.
        #expect(
            try await notes.search(Query().matching(.typed("Okafor"))).map(\.id) == [after[0].id])
        let got = await runTrove(
            ["get", shortID, "--db", older], directory: fixture.notes, services: services)
        #expect(got.status == 0 && got.out.contains("Dr. Okafor"), "\(got.err)")
        // Once moved, nothing more to do; and the notes now sync.
        let again = await runTrove(
            ["search"] + models + ["dentist", "--db", older], directory: fixture.notes,
            services: services)
        #expect(
            again.status == 0 && !again.err.contains("UUID ids")
                && !again.err.contains("further models"))
        let sync = await runTrove(
            ["sync", "status", "--space", "s", "--db", older], directory: fixture.notes,
            services: services)
        // Two notes (each with both models' vectors) and the definition of their collection.
        #expect(
            sync.status == 0 && sync.out.contains("pending changes:    3"),
            "\(sync.out) \(sync.err)")
    }
}
