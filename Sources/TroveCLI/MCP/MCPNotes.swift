import Foundation
import Trove
import TroveEmbeddings

/// The database as the MCP server holds it: opened once with its models and kept open, so a
/// tool call costs a search, not an open and a model load; and the notes as MCP resources, one
/// URI per note (`trove://note/<short id digits>`).
actor MCPNotes {
    let context: CommandContext
    /// The database and models, opened by the first call that needs them; concurrent first
    /// calls wait for the same opening rather than loading the models twice.
    private var opening: Task<Opened, Error>?

    typealias Opened = (notebook: Notebook, embedders: [any Embedder]?, modelError: Error?)

    init(context: CommandContext) { self.context = context }

    /// The open notebook and its models (nil when a model is not installed: text search still
    /// works, and other modes answer `modelError`, which names the command that installs it).
    /// Kept until ``reopen()``: restart the server after installing a model.
    /// - Throws: ``CLIError/notFound(_:)`` when there is no database or no notes yet (the next
    ///   call tries again).
    func open() async throws -> Opened {
        if opening == nil {
            let context = self.context
            opening = Task { try await Self.open(context) }
        }
        do {
            return try await opening!.value
        } catch {
            opening = nil
            throw error
        }
    }

    private static func open(_ context: CommandContext) async throws -> Opened {
        let path = try context.databasePath()
        var embedders: [any Embedder]?
        var modelError: Error?
        if FileManager.default.fileExists(atPath: path) {
            let database = try EncryptionPassphrase.openDatabase(path: path, context: context)
            do {
                embedders = try context.loadEmbedders(
                    matching: try await Notebook.manifests(of: database))
            } catch {
                modelError = error
            }
        }
        let notebook = try await Notebook.openExisting(
            path: path, embedders: embedders, context: context)
        return (notebook, embedders, modelError)
    }

    /// Forgets the open database (after the index tool wrote to it, or it was created).
    func reopen() { opening = nil }

    // MARK: Resources

    static let pageSize = 100

    static let template: JSONValue = .object([
        ("uriTemplate", .string("trove://note/{short_id}")), ("name", .string("note")),
        ("title", .string("A note by short id")),
        (
            "description",
            .string(
                "One indexed note (file or .jsonl document); short_id is the hex of the #short_id search returns"
            )
        ),
        ("mimeType", .string("text/plain")),
    ])

    /// One page of notes; the cursor is the offset of the next page.
    func resourceList(cursor: JSONValue?) async throws -> JSONValue {
        var offset = 0
        if let cursor, cursor != .null {
            guard let text = cursor.string, let number = Int(text), number >= 0 else {
                throw RPCError.invalidParams("invalid cursor")
            }
            offset = number
        }
        let notebook = try await openForResources()
        let notes = try await notebook.notes()
        let page = notes.dropFirst(offset).prefix(Self.pageSize)
        let resources: [JSONValue] = page.map { note in
            .object([
                ("uri", .string(note.uri)), ("name", .string(note.label)),
                (
                    "title",
                    .string(
                        (note.file as NSString).lastPathComponent
                            + (note.documentID.map { "#\($0)" } ?? ""))
                ),
                ("description", .string("\(note.shortID) \(note.source)")),
                ("mimeType", .string(note.mimeType)),
            ])
        }
        var result: [(String, JSONValue)] = [("resources", .array(resources))]
        if offset + Self.pageSize < notes.count {
            result.append(("nextCursor", .string(String(offset + Self.pageSize))))
        }
        return .object(result)
    }

    /// The text of the note a `trove://note/…` URI names.
    func read(uri: String) async throws -> JSONValue {
        let prefix = "trove://note/"
        guard uri.hasPrefix(prefix) else {
            throw RPCError(
                MCPProtocol.Code.resourceNotFound,
                "resource not found: \(uri) (trove serves trove://note/…)",
                data: .object([("uri", .string(uri))]))
        }
        let notebook = try await openForResources()
        let note: Note
        do {
            note = try await notebook.note(
                "#" + uri.dropFirst(prefix.count), environment: context.console.environment,
                currentDirectory: context.console.currentDirectory, command: "mcp")
        } catch let error as CLIError {
            throw RPCError(
                MCPProtocol.Code.resourceNotFound, "resource not found: \(uri): \(error.message)",
                data: .object([("uri", .string(uri))]))
        }
        let text = try await notebook.text(of: note).text
        return .object([
            (
                "contents",
                .array([
                    .object([
                        ("uri", .string(uri)), ("mimeType", .string(note.mimeType)),
                        ("text", .string(text)),
                    ])
                ])
            )
        ])
    }

    private func openForResources() async throws -> Notebook {
        do {
            return try await open().notebook
        } catch let error as CLIError {
            throw RPCError(MCPProtocol.Code.internalError, error.message)
        }
    }
}
