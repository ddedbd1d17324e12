import Foundation
import Testing
import TroveTestSupport

@testable import TroveCLI

/// The MCP server's tool table in-process (no client): `trove mcp --help` names every tool it
/// offers, and every list argument takes one string as well as a list (issue 42).
@Suite("MCP tool table and argument shapes", .serialized)
struct MCPToolTableTests {
    /// A server on `fixture`'s database, as `trove mcp [--allow-index]` starts one.
    static func server(_ fixture: NotesFixture, allowIndex: Bool = false) throws -> MCPServer {
        let console = Console(
            out: BufferSink(), err: BufferSink(), environment: ["HOME": "/nonexistent-home"],
            currentDirectory: fixture.notes)
        let context = CommandContext(
            console: console, spec: MCPCommand.configuration,
            options: CommonOptions(database: fixture.database), services: hashingServices)
        return MCPServer(context: context, allowIndex: allowIndex)
    }

    /// The result of one tools/call; a tool error is returned as the result with `isError`.
    static func call(_ server: MCPServer, _ tool: String, _ arguments: JSONValue) async throws
        -> JSONValue
    {
        let request = JSONValue.object([
            ("jsonrpc", .string("2.0")), ("id", .int(1)), ("method", .string("tools/call")),
            ("params", .object([("name", .string(tool)), ("arguments", arguments)])),
        ])
        let answer = try #require(await server.answer(request.serialized()))
        return try #require(answer["result"], "\(answer.serialized())")
    }

    @Test("trove mcp --help lists every tool of the server's table, and tools/list offers them")
    func helpListsEveryTool() async throws {
        let help = await runTrove(["mcp", "--help"])
        #expect(help.status == 0)
        let names = MCPTools.table.map(\.name)
        #expect(names.contains("list_collections") && names.contains("index"))
        for name in names {
            #expect(help.out.contains(name), "trove mcp --help does not name \(name):\n\(help.out)")
        }
        #expect(help.out.contains("index only with --allow-index"), "\(help.out)")
        let fixture = try NotesFixture()
        for allowIndex in [false, true] {
            let server = try Self.server(fixture, allowIndex: allowIndex)
            let list = try #require(
                await server.answer(#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#))
            let listed = list["result"]?["tools"]?.array?.compactMap { $0["name"]?.string }
            #expect(listed == (allowIndex ? names : names.filter { $0 != "index" }))
        }
    }

    @Test("every list argument's schema takes a string or a list of strings")
    func listSchemas() throws {
        for tool in MCPTools.table {
            for (name, schema) in tool.declaration["inputSchema"]?["properties"]?.members ?? [] {
                #expect(schema["type"]?.string != "array", "\(tool.name).\(name) takes only a list")
                if let shapes = schema["anyOf"]?.array {
                    #expect(
                        shapes.compactMap { $0["type"]?.string } == ["string", "array"],
                        "\(tool.name).\(name)")
                }
            }
        }
    }

    @Test(
        "one collection name, note or path where a list is accepted gives what the list of one gives"
    )
    func singleStrings() async throws {
        let fixture = try NotesFixture()
        try fixture.write("personal/dentist.md", "Dentist: cleaning with Dr. Okafor on Tuesday.")
        try fixture.write(
            "work/standup.md", "Standup: freeze the release branch Thursday. Tomatoes for lunch.")
        try fixture.write("work/tomatoes.md", "Tomatoes ripen in August.")
        #expect(
            await fixture.trove(["collection", "add", "personal", "--name", "home"]).status == 0)
        #expect(await fixture.trove(["collection", "add", "work"]).status == 0)
        let server = try Self.server(fixture, allowIndex: true)

        func same(
            _ tool: String, _ key: String, _ value: String, others: [(String, JSONValue)] = []
        ) async throws {
            let one = try await Self.call(server, tool, .object(others + [(key, .string(value))]))
            let list = try await Self.call(
                server, tool, .object(others + [(key, .array([.string(value)]))]))
            #expect(one["isError"] == .bool(false), "\(tool) \(key): \(one.serialized())")
            // Timings aside (index reports its seconds).
            func content(_ result: JSONValue) -> JSONValue? {
                (result["structuredContent"]?.members).map {
                    .object($0.filter { $0.0 != "seconds" })
                }
            }
            #expect(content(one) != nil && content(one) == content(list), "\(tool) \(key)")
        }
        try await same(
            "search", "collection", "work",
            others: [("query", .string("tomatoes")), ("mode", .string("text"))])
        try await same("multi_get", "notes", fixture.path("work/standup.md"))
        try await same("index", "collection", "work")
        try await same("index", "paths", fixture.path("personal"))
        // A number is still refused, with a message that names both shapes.
        let wrong = try await Self.call(server, "multi_get", .object([("notes", .int(3))]))
        #expect(wrong["isError"] == .bool(true))
        #expect(
            wrong["content"]?.array?.first?["text"]?.string
                == "'notes' must be a string or an array of strings")
    }
}
