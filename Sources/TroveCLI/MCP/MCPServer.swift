import Foundation
import Trove
import TroveEmbeddings

/// `trove mcp`'s server: reads JSON-RPC messages, one per line, answers each request on one
/// line of output, and serves requests concurrently (each in its own task; answers may come
/// back in any order, matched by id). Ends when its input ends, after answering every request
/// already read.
///
/// ```swift
/// let server = MCPServer(context: context, allowIndex: false)
/// await server.serve(lines: StandardInput.lines(), output: context.console.out)
/// ```
final class MCPServer: Sendable {
    let context: CommandContext
    let allowIndex: Bool
    let notes: MCPNotes

    init(context: CommandContext, allowIndex: Bool) {
        self.context = context
        self.allowIndex = allowIndex
        self.notes = MCPNotes(context: context)
    }

    /// Serves until `lines` ends and every request read has been answered.
    func serve(lines: AsyncStream<String>, output: any TextSink) async {
        let writer = LineWriter(output)
        await withTaskGroup(of: Void.self) { group in
            for await line in lines {
                if line.allSatisfy(\.isWhitespace) { continue }
                group.addTask {
                    if let answer = await self.answer(line) { writer.write(answer.serialized()) }
                }
            }
        }
    }

    /// The answer to one message: a response for a request or an unreadable message, nil for a
    /// notification or a response.
    func answer(_ line: String) async -> JSONValue? {
        let message: JSONValue
        do {
            message = try JSONValue.parse(line)
        } catch {
            return Self.errorResponse(
                id: .null, RPCError(MCPProtocol.Code.parseError, "parse error: \(error)"))
        }
        guard case .object = message, message["jsonrpc"]?.string == "2.0" else {
            return Self.errorResponse(
                id: message["id"] ?? .null,
                RPCError(
                    MCPProtocol.Code.invalidRequest,
                    "not a JSON-RPC 2.0 message object (batches are not supported)"))
        }
        guard let method = message["method"]?.string else {
            // a response to us: we send no requests
            if message["result"] != nil || message["error"] != nil { return nil }
            return Self.errorResponse(
                id: message["id"] ?? .null,
                RPCError(MCPProtocol.Code.invalidRequest, "a request needs a method"))
        }
        // A notification (initialized, cancelled) needs nothing from us: requests are short, and
        // a client ignores the answer to one it cancelled.
        guard let id = message["id"] else { return nil }
        switch id {
        case .string, .int: break
        default:
            return Self.errorResponse(
                id: .null,
                RPCError(MCPProtocol.Code.invalidRequest, "id must be a string or an integer"))
        }
        let params = message["params"]
        if let params, params != .null, params.members == nil {
            return Self.errorResponse(id: id, .invalidParams("params must be an object"))
        }
        do {
            let perRequest = try perRequestVersion(params)
            var result = try await handle(method, params: params, perRequest: perRequest != nil)
            if perRequest != nil { result = Self.perRequestResult(result, method: method) }
            return .object([("jsonrpc", .string("2.0")), ("id", id), ("result", result)])
        } catch let error as RPCError {
            return Self.errorResponse(id: id, error)
        } catch {
            context.console.err.write(
                "trove mcp: \(method) failed: \(TroveCommandLine.describe(error))\n")
            return Self.errorResponse(
                id: id, RPCError(MCPProtocol.Code.internalError, TroveCommandLine.describe(error)))
        }
    }

    /// The revision a per-request-era request names in its `_meta`, nil for a handshake-era one.
    /// - Throws: the unsupported-version error (with the versions served) for a revision not served.
    private func perRequestVersion(_ params: JSONValue?) throws -> String? {
        guard let version = params?["_meta"]?[MCPProtocol.protocolVersionKey] else { return nil }
        guard let text = version.string, MCPProtocol.perRequestVersions.contains(text) else {
            throw RPCError(
                MCPProtocol.Code.unsupportedProtocolVersion, "unsupported protocol version",
                data: .object([
                    ("requested", version),
                    (
                        "supported",
                        .array(
                            (MCPProtocol.handshakeVersions + MCPProtocol.perRequestVersions).map {
                                .string($0)
                            })
                    ),
                ]))
        }
        return text
    }

    private func handle(_ method: String, params: JSONValue?, perRequest: Bool) async throws
        -> JSONValue
    {
        switch method {
        case "initialize": return try initialize(params)
        case "server/discover":
            return .object([
                ("supportedVersions", .array(MCPProtocol.perRequestVersions.map { .string($0) })),
                ("capabilities", capabilities), ("instructions", .string(instructions)),
            ])
        case "ping": return .object([])
        case "tools/list":
            return .object([("tools", .array(MCPTools.declarations(allowIndex: allowIndex)))])
        case "tools/call":
            guard let name = params?["name"]?.string else {
                throw RPCError.invalidParams("tools/call needs the tool's name")
            }
            guard MCPTools.names(allowIndex: allowIndex).contains(name) else {
                var message = "unknown tool '\(name)'"
                if name == "index" {
                    message += " (start the server with 'trove mcp --allow-index' to offer it)"
                }
                throw RPCError.invalidParams(message)
            }
            let arguments = params?["arguments"]
            if let arguments, arguments != .null, arguments.members == nil {
                throw RPCError.invalidParams("tools/call arguments must be an object")
            }
            return await MCPTools.call(name, arguments: arguments, server: self)
        case "resources/list": return try await notes.resourceList(cursor: params?["cursor"])
        case "resources/read":
            guard let uri = params?["uri"]?.string else {
                throw RPCError.invalidParams("resources/read needs a uri")
            }
            return try await notes.read(uri: uri)
        case "resources/templates/list":
            return .object([("resourceTemplates", .array([MCPNotes.template]))])
        default:
            throw RPCError(MCPProtocol.Code.methodNotFound, "method not found: \(method)")
        }
    }

    private func initialize(_ params: JSONValue?) throws -> JSONValue {
        guard let requested = params?["protocolVersion"]?.string else {
            throw RPCError.invalidParams("initialize needs protocolVersion")
        }
        // The client's revision when we speak it, else our newest: the client decides whether
        // it can go on.
        let version =
            MCPProtocol.handshakeVersions.contains(requested)
            ? requested : MCPProtocol.handshakeVersions.last!
        context.console.err.write(
            "trove mcp: \(params?["clientInfo"]?["name"]?.string ?? "a client") speaks \(version)\n"
        )
        return .object([
            ("protocolVersion", .string(version)), ("capabilities", capabilities),
            ("serverInfo", serverInfo), ("instructions", .string(instructions)),
        ])
    }

    private var capabilities: JSONValue {
        .object([
            ("tools", .object([("listChanged", .bool(false))])),
            ("resources", .object([("listChanged", .bool(false)), ("subscribe", .bool(false))])),
        ])
    }

    private var serverInfo: JSONValue {
        .object([
            ("name", .string("trove")), ("title", .string("Trove notes")),
            ("version", .string(Commands.version)),
        ])
    }

    private var instructions: String {
        "Search the user's notes indexed by Trove: 'search' ranks notes by meaning and words; 'get' "
            + "prints one note (or a line range) by the path or #short_id that search returns; "
            + "'multi_get' several within a byte budget."
            + (allowIndex ? " 'index' adds or refreshes files and folders." : "")
    }

    /// A per-request-era result: `resultType`, the server's identity, and for lists and reads how
    /// long they may be cached (not at all: notes change when they are re-indexed).
    private static func perRequestResult(_ result: JSONValue, method: String) -> JSONValue {
        guard case .object(var members) = result else { return result }
        members.append(("resultType", .string("complete")))
        if [
            "server/discover", "tools/list", "resources/list", "resources/read",
            "resources/templates/list",
        ].contains(
            method)
        {
            members += [("cacheScope", .string("private")), ("ttlMs", .int(0))]
        }
        members.append(
            (
                "_meta",
                .object([
                    (
                        MCPProtocol.serverInfoKey,
                        .object([
                            ("name", .string("trove")), ("version", .string(Commands.version)),
                        ])
                    )
                ])
            ))
        return .object(members)
    }

    private static func errorResponse(id: JSONValue, _ error: RPCError) -> JSONValue {
        var body: [(String, JSONValue)] = [
            ("code", .int(error.code)), ("message", .string(error.message)),
        ]
        if let data = error.data { body.append(("data", data)) }
        return .object([("jsonrpc", .string("2.0")), ("id", id), ("error", .object(body))])
    }
}

/// Writes whole lines to a sink from concurrent tasks, one at a time, so answers never
/// interleave.
// @unchecked Sendable: `sink` is only written while holding `lock`.
final class LineWriter: @unchecked Sendable {
    private let sink: any TextSink
    private let lock = NSLock()

    init(_ sink: any TextSink) { self.sink = sink }

    func write(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        sink.write(line + "\n")
    }
}

/// The process's stdin as a stream of lines, read on a thread of its own (reading blocks).
enum StandardInput {
    static func lines() -> AsyncStream<String> {
        AsyncStream { continuation in
            let thread = Thread {
                while let line = readLine(strippingNewline: true) { continuation.yield(line) }
                continuation.finish()
            }
            thread.start()
        }
    }
}

/// `trove mcp`: the database served to assistants.
struct MCPCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "mcp",
        summary: "serve the database to assistants over the Model Context Protocol (stdio)",
        usage: "mcp [options]",
        discussion: """
            Speaks MCP (JSON-RPC 2.0, one message per line) on stdin and stdout, for Claude
            Code, Claude Desktop, Cursor and other MCP clients; logs go to stderr. Revisions
            2025-06-18 and 2025-11-25 (initialize handshake) and 2026-07-28 (per request).
            \(MCPTools.helpLine)
            A tool argument that takes a list also takes a single string. Every note is also a
            resource, trove://note/<short id digits>. Read-only unless --allow-index. Stops
            when stdin closes.
            """,
        options: [
            OptionSpec("allow-index", help: "offer the index tool, which writes to the database")
        ] + Commands.model + Commands.database + Commands.common,
        examples: [
            ("trove mcp --db ~/work.sqlite", "serve another database (clients start this command)"),
            ("claude mcp add trove -- trove mcp", "register with Claude Code (default database)"),
            ("trove mcp --allow-index", "also let the assistant index files"),
        ])

    /// `--allow-index`: offer the index tool.
    var allowIndex: Bool

    init(parsing arguments: ParsedArguments) throws { allowIndex = arguments.flag("allow-index") }

    func run(_ context: CommandContext) async throws -> Int32 {
        let path = (try? context.databasePath()) ?? "?"
        context.console.err.write(
            "trove mcp: serving \(path) (\(allowIndex ? "index allowed" : "read-only")) on stdin/stdout\n"
        )
        let server = MCPServer(context: context, allowIndex: allowIndex)
        await server.serve(lines: StandardInput.lines(), output: context.console.out)
        return ExitCode.success
    }
}
