import Foundation

/// The Model Context Protocol as `trove mcp` speaks it: JSON-RPC 2.0 messages, one per line on
/// stdin and stdout (https://modelcontextprotocol.io/specification).
///
/// Two eras of the protocol are served side by side:
/// - the handshake era (revisions 2025-06-18 and 2025-11-25): the client sends `initialize`,
///   the server answers with the revision both speak (what it serves is the same in both);
/// - the per-request era (2026-07-28): no handshake; every request names its revision in
///   `_meta["io.modelcontextprotocol/protocolVersion"]`, a client may ask `server/discover`
///   first, and every result says `resultType` (lists and reads also how long they may be
///   cached).
enum MCPProtocol {
    /// Revisions reached with `initialize`, oldest first.
    static let handshakeVersions = ["2025-06-18", "2025-11-25"]
    /// Revisions whose requests carry their own version, oldest first.
    static let perRequestVersions = ["2026-07-28"]
    static let protocolVersionKey = "io.modelcontextprotocol/protocolVersion"
    static let serverInfoKey = "io.modelcontextprotocol/serverInfo"

    /// JSON-RPC and MCP error codes.
    enum Code {
        static let parseError: Int64 = -32700
        static let invalidRequest: Int64 = -32600
        static let methodNotFound: Int64 = -32601
        static let invalidParams: Int64 = -32602
        static let internalError: Int64 = -32603
        static let resourceNotFound: Int64 = -32002
        static let unsupportedProtocolVersion: Int64 = -32022
    }
}

/// A JSON-RPC error answer: code, message and optional data.
struct RPCError: Error, Sendable {
    var code: Int64
    var message: String
    var data: JSONValue?

    init(_ code: Int64, _ message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    static func invalidParams(_ message: String) -> RPCError {
        RPCError(MCPProtocol.Code.invalidParams, message)
    }
}

/// A tool failure the model should see (`isError: true` with the message), as opposed to a
/// protocol error: bad argument values, a note that is not there, a model that is missing.
struct ToolError: Error, Sendable {
    var message: String
    init(_ message: String) { self.message = message }
}

/// JSON Schema fragments for tool declarations.
enum JSONSchema {
    static func object(_ properties: [(String, JSONValue)], required: [String] = []) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("type", .string("object")), ("properties", .object(properties)),
        ]
        if !required.isEmpty { members.append(("required", .array(required.map { .string($0) }))) }
        return .object(members)
    }

    static func closedObject(_ properties: [(String, JSONValue)], required: [String] = [])
        -> JSONValue
    {
        guard case .object(var members) = object(properties, required: required) else {
            return .null
        }
        members.append(("additionalProperties", .bool(false)))
        return .object(members)
    }

    static func string(
        _ description: String? = nil, choices: [String]? = nil, nullable: Bool = false
    ) -> JSONValue {
        typed(
            "string", description, nullable: nullable,
            extra: choices.map { [("enum", .array($0.map { .string($0) }))] } ?? [])
    }

    static func integer(
        _ description: String? = nil, minimum: Int? = nil, maximum: Int? = nil,
        nullable: Bool = false
    )
        -> JSONValue
    {
        var extra: [(String, JSONValue)] = []
        if let minimum { extra.append(("minimum", .int(Int64(minimum)))) }
        if let maximum { extra.append(("maximum", .int(Int64(maximum)))) }
        return typed("integer", description, nullable: nullable, extra: extra)
    }

    static func number(_ description: String? = nil, nullable: Bool = false) -> JSONValue {
        typed("number", description, nullable: nullable)
    }

    static func boolean(_ description: String? = nil) -> JSONValue { typed("boolean", description) }

    /// A string or an array of strings: the shape of every list argument.
    static func strings(_ description: String) -> JSONValue {
        .object([
            ("description", .string(description)),
            ("anyOf", .array([string(), array(string())])),
        ])
    }

    static func array(_ items: JSONValue, _ description: String? = nil) -> JSONValue {
        var members: [(String, JSONValue)] = [("type", .string("array")), ("items", items)]
        if let description { members.append(("description", .string(description))) }
        return .object(members)
    }

    /// Any JSON value.
    static let any = JSONValue.object([])

    private static func typed(
        _ type: String, _ description: String?, nullable: Bool = false,
        extra: [(String, JSONValue)] = []
    ) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("type", nullable ? .array([.string(type), .string("null")]) : .string(type))
        ]
        if let description { members.append(("description", .string(description))) }
        return .object(members + extra)
    }
}
