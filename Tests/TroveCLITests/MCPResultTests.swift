import Foundation
import Testing
import TroveTestSupport

@testable import TroveCLI

/// `--json` and the MCP tools share their result types: the same request gives the same value
/// both ways, and every tool checks its arguments' types against its input schema with a
/// message that names the argument (issue 42).
@Suite("MCP tools and --json share results and argument checks", .serialized)
struct MCPResultTests {
    /// A notes folder in two collections, indexed.
    static func indexed() async throws -> NotesFixture {
        let fixture = try NotesFixture()
        try fixture.write("personal/dentist.md", "# Dentist\nCleaning with Dr. Okafor on Tuesday.")
        try fixture.write("work/standup.md", "Standup: freeze the release branch Thursday.")
        try fixture.write("work/tomatoes.md", "Tomatoes ripen in August.\nPick them red.\n")
        #expect(
            await fixture.trove([
                "collection", "add", "personal", "--name", "home", "--context", "Household",
            ]).status == 0)
        #expect(await fixture.trove(["collection", "add", "work"]).status == 0)
        #expect(await fixture.trove(["index", "--quiet"]).status == 0)
        return fixture
    }

    /// A tool's structured content read as `T`, after checking that its text content is the
    /// same JSON.
    static func tool<T: Decodable>(
        _ type: T.Type, _ server: MCPServer, _ name: String, _ arguments: JSONValue
    ) async throws -> T {
        let result = try await MCPToolTableTests.call(server, name, arguments)
        #expect(result["isError"] == .bool(false), "\(name): \(result.serialized())")
        let structured = try #require(result["structuredContent"])
        let text = try #require(result["content"]?.array?.first?["text"]?.string)
        #expect(text == structured.serialized(), "\(name): text and structured content differ")
        return try JSONOutput.decode(type, from: structured)
    }

    /// `trove ARGUMENTS --json` read as `T`.
    static func cli<T: Decodable>(_ type: T.Type, _ fixture: NotesFixture, _ arguments: [String])
        async throws -> T
    {
        let run = await fixture.trove(arguments + ["--json"])
        #expect(run.status == 0, "trove \(arguments): \(run.err)")
        return try JSONOutput.decode(type, from: run.out)
    }

    @Test("each tool returns what its command prints with --json for the same request")
    func toolsAgreeWithJSON() async throws {
        let fixture = try await Self.indexed()
        let server = try MCPToolTableTests.server(fixture, allowIndex: true)

        for (arguments, argv) in [
            (
                JSONValue.object([("query", .string("tomatoes")), ("mode", .string("text"))]),
                ["search", "--mode", "text", "tomatoes"]
            ),
            (
                .object([
                    ("query", .string("release branch")), ("k", .int(2)),
                    ("collection", .string("work")),
                ]),
                ["search", "-k", "2", "-c", "work", "release", "branch"]
            ),
            (
                .object([("query", .string("dentist")), ("min_score", .double(0.1))]),
                ["search", "--min-score", "0.1", "dentist"]
            ),
        ] {
            let fromTool = try await Self.tool(
                SearchResults<SearchHit>.self, server, "search", arguments)
            let fromCLI = try await Self.cli(SearchResults<SearchHit>.self, fixture, argv)
            #expect(!fromCLI.results.isEmpty, "\(argv)")
            #expect(fromTool == fromCLI, "\(argv)")
        }

        let page = try await Self.tool(
            GetResult.self, server, "get",
            .object([("note", .string("work/tomatoes.md")), ("from_line", .int(2))]))
        let printedPage = try await Self.cli(
            GetResult.self, fixture, ["get", "work/tomatoes.md", ":2"])
        #expect(page == printedPage)
        #expect(page.text.hasPrefix("Pick them red."))

        let batch = try await Self.tool(
            MultiGetResult.self, server, "multi_get",
            .object([("pattern", .string("work/*.md")), ("max_bytes", .int(50))]))
        let printedBatch = try await Self.cli(
            MultiGetResult.self, fixture, ["multi-get", "--max-bytes", "50", "work/*.md"])
        #expect(batch == printedBatch)

        let collections = try await Self.tool(
            CollectionListResult.self, server, "list_collections", .object([]))
        let printedCollections = try await Self.cli(
            CollectionListResult.self, fixture, ["collection", "list"])
        #expect(collections == printedCollections)
        #expect(collections.collections.map(\.name) == ["home", "work"])

        let status = try await Self.tool(StatsResult.self, server, "status", .object([]))
        let printedStatus = try await Self.cli(StatsResult.self, fixture, ["stats"])
        #expect(status == printedStatus)

        // Nothing changed since indexing: both refresh every file as unchanged.
        var refreshed = try await Self.tool(IndexResult.self, server, "index", .object([]))
        var printed = try await Self.cli(IndexResult.self, fixture, ["index"])
        (refreshed.summary.seconds, printed.summary.seconds) = (0, 0)
        #expect(refreshed == printed)
        #expect(refreshed.summary.unchanged == 3)
    }

    @Test(
        "a value of the wrong type is a tool error naming the argument and what it must be",
        arguments: [
            ("search", JSONValue.object([("query", .int(3))]), "'query' must be a string"),
            (
                "search", .object([("query", .string("x")), ("k", .string("three"))]),
                "'k' must be a whole number from 1 to 1000"
            ),
            (
                "search", .object([("query", .string("x")), ("k", .double(2.5))]),
                "'k' must be a whole number from 1 to 1000"
            ),
            (
                "search", .object([("query", .string("x")), ("min_score", .string("high"))]),
                "'min_score' must be a number"
            ),
            (
                "search", .object([("query", .string("x")), ("all_chunks", .string("yes"))]),
                "'all_chunks' must be true or false"
            ),
            (
                "search", .object([("query", .string("x")), ("collection", .array([.int(1)]))]),
                "'collection' must be a string or an array of strings"
            ),
            (
                "search", .object([("query", .string("x")), ("mode", .bool(true))]),
                "'mode' must be a string"
            ),
            ("get", .object([("note", .int(7))]), "'note' must be a string"),
            (
                "get", .object([("note", .string("a.md")), ("from_line", .int(0))]),
                "'from_line' must be a whole number from 1 to 2147483647"
            ),
            (
                "get", .object([("note", .string("a.md")), ("to_line", .string("end"))]),
                "'to_line' must be a whole number from 1 to 2147483647"
            ),
            ("multi_get", .object([("pattern", .bool(true))]), "'pattern' must be a string"),
            (
                "multi_get", .object([("notes", .object([]))]),
                "'notes' must be a string or an array of strings"
            ),
            (
                "multi_get", .object([("pattern", .string("*")), ("max_bytes", .string("lots"))]),
                "'max_bytes' must be a whole number from 1 to 16777216"
            ),
            (
                "list_collections", .object([("name", .string("work"))]),
                "unknown argument 'name'; this tool takes no arguments"
            ),
            (
                "list_sources", .object([("limit", .int(3))]),
                "unknown argument 'limit'; this tool takes no arguments"
            ),
            (
                "status", .object([("verbose", .bool(true))]),
                "unknown argument 'verbose'; this tool takes no arguments"
            ),
            (
                "index", .object([("paths", .int(3))]),
                "'paths' must be a string or an array of strings"
            ),
            (
                "index", .object([("collection", .bool(false))]),
                "'collection' must be a string or an array of strings"
            ),
        ])
    func wrongTypes(tool: String, arguments: JSONValue, message: String) async throws {
        let fixture = try NotesFixture()
        let server = try MCPToolTableTests.server(fixture, allowIndex: true)
        let result = try await MCPToolTableTests.call(server, tool, arguments)
        #expect(result["isError"] == .bool(true), "\(tool): \(result.serialized())")
        #expect(result["content"]?.array?.first?["text"]?.string == message)
    }

    /// The keys of `value` that `schema` does not declare, and the required ones `value` lacks,
    /// as paths; nested objects and array items are checked against their own schemas.
    static func undeclared(_ value: JSONValue, _ schema: JSONValue, at path: String) -> [String] {
        if let items = value.array, let itemSchema = schema["items"] {
            return items.enumerated().flatMap { undeclared($1, itemSchema, at: "\(path)[\($0)]") }
        }
        guard let members = value.members, let properties = schema["properties"]?.members else {
            return []
        }
        var problems: [String] = []
        for (key, member) in members {
            guard let property = properties.first(where: { $0.0 == key })?.1 else {
                problems.append("\(path).\(key) is not in the output schema")
                continue
            }
            problems += undeclared(member, property, at: "\(path).\(key)")
        }
        for required in schema["required"]?.array?.compactMap(\.string) ?? []
        where !members.contains(where: { $0.0 == required }) {
            problems.append("\(path).\(required) is required but missing")
        }
        return problems
    }

    @Test("every key a tool returns is declared in its output schema")
    func outputSchemasDeclareResults() async throws {
        let fixture = try await Self.indexed()
        let server = try MCPToolTableTests.server(fixture, allowIndex: true)
        let calls: [(String, JSONValue)] = [
            ("search", .object([("query", .string("tomatoes")), ("min_score", .double(0.01))])),
            ("get", .object([("note", .string("work/tomatoes.md"))])),
            ("multi_get", .object([("pattern", .string("**/*.md")), ("max_bytes", .int(60))])),
            ("list_collections", .object([])), ("list_sources", .object([])),
            ("status", .object([])), ("index", .object([])),
        ]
        #expect(calls.map(\.0) == MCPTools.table.map(\.name))
        for (name, arguments) in calls {
            let result = try await MCPToolTableTests.call(server, name, arguments)
            let content = try #require(result["structuredContent"], "\(name)")
            let tool = try #require(MCPTools.table.first { $0.name == name })
            let schema = try #require(tool.declaration["outputSchema"])
            #expect(Self.undeclared(content, schema, at: name) == [])
        }
    }

    @Test("every tool's input schema lists the arguments its arguments type decodes")
    func schemasFromDeclarations() throws {
        let names: [String: [String]] = [
            "search": SearchToolArguments.Argument.allCases.map(\.stringValue),
            "get": GetToolArguments.Argument.allCases.map(\.stringValue),
            "multi_get": MultiGetToolArguments.Argument.allCases.map(\.stringValue),
            "index": IndexToolArguments.Argument.allCases.map(\.stringValue),
        ]
        for tool in MCPTools.table {
            let schema = try #require(tool.declaration["inputSchema"])
            let listed = schema["properties"]?.members?.map(\.0) ?? []
            #expect(listed == names[tool.name] ?? [], "\(tool.name)")
            #expect(schema["additionalProperties"] == .bool(false), "\(tool.name)")
        }
        #expect(
            MCPTools.table.first { $0.name == "search" }?.declaration["inputSchema"]?["required"]
                == .array([.string("query")]))
    }
}

@Suite("JSON output of result types")
struct JSONOutputTests {
    struct Sample: Codable, Equatable {
        var zeta: Int
        var alpha: String?
        @OmittedWhenNil var omitted: Double?
        var counts: NamedValues<Int>
        var path: String
    }

    @Test(
        "keys in declaration order, nil as null, omitted members left out, numbers as the tool writes them"
    )
    func shape() throws {
        let sample = Sample(
            zeta: 1, alpha: nil, omitted: nil, counts: NamedValues([("b", 2), ("a", 1)]),
            path: "/home/ana/é.md")
        #expect(
            try JSONOutput.text(sample)
                == #"{"zeta":1,"alpha":null,"counts":{"b":2,"a":1},"path":"/home/ana/é.md"}"#)
        var full = sample
        full.omitted = 1e20
        #expect(try JSONOutput.text(full).contains(#""omitted":1e20,"#))
        #expect(try JSONOutput.decode(Sample.self, from: JSONOutput.text(full)).omitted == 1e20)
        #expect(try JSONOutput.decode(Sample.self, from: JSONOutput.text(sample)).alpha == nil)
    }
}
