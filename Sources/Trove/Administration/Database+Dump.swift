import Foundation
import TroveSQLite

// Dump to and load from the portable line-oriented JSON format (DumpFormat.swift).

extension Database {
    /// Writes every collection (schema or configuration, embedding manifest, every record with
    /// its vectors bit-exact and its expiry) to a dump file at `path`.
    ///
    /// The dump reads one snapshot on a reader connection, so writers keep going; records are
    /// streamed through a 1 MB buffer, so memory does not grow with the database. The file is
    /// written beside `path` and renamed over it at the end: a failed dump leaves nothing.
    /// Expired documents are not dumped (they are invisible to every read).
    ///
    /// ```swift
    /// let report = try await database.dump(to: "backup.trove-dump")
    /// let copy = try Database(path: "copy.trove")
    /// try await copy.load(from: "backup.trove-dump")
    /// ```
    /// - Parameters:
    ///   - path: the dump file to write.
    ///   - overwrite: replace an existing file (otherwise ``TroveError/fileExists(path:)``).
    /// - Returns: the records per collection and the bytes written.
    /// - Complexity: O(database size) time, O(1) memory beyond the largest record.
    @discardableResult
    public nonisolated func dump(to path: String, overwrite: Bool = false) async throws
        -> DumpReport
    {
        if !overwrite, FileManager.default.fileExists(atPath: path) {
            throw TroveError.fileExists(path: path)
        }
        try refuseOwnFile(path)
        let temporary = path + ".dump-" + UUID().uuidString.prefix(8)
        guard FileManager.default.createFile(atPath: temporary, contents: nil) else {
            throw SQLiteError(extendedCode: .cantOpen, message: "cannot create \(temporary)")
        }
        do {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: temporary))
            let report = try await dump { bytes in try handle.write(contentsOf: bytes) }
            try handle.synchronize()
            try handle.close()
            if overwrite { try? FileManager.default.removeItem(atPath: path) }
            try FileManager.default.moveItem(atPath: temporary, toPath: path)
            return report
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }

    /// Writes the dump through `write`, called with chunks of about 1 MB (standard output, a
    /// socket, a compressor).
    ///
    /// ```swift
    /// try await database.dump { chunk in FileHandle.standardOutput.write(chunk) }
    /// ```
    @discardableResult
    public nonisolated func dump(_ write: @escaping @Sendable (Data) throws -> Void) async throws
        -> DumpReport
    {
        try await reading(transaction: true) { connection, lookup in
            try withoutActuallyEscaping(lookup) { lookup in
                try Self.writeDump(
                    DumpSource(connection: connection, documentStore: lookup), to: DumpWriter(write)
                )
            }
        }
    }

    private static func writeDump(_ source: DumpSource, to writer: DumpWriter) throws -> DumpReport
    {
        let connection = source.connection
        let sections = try DumpCatalog.kinds.flatMap { try $0.sections(in: source) }
        let version = try connection.scalar(
            "SELECT value FROM \(CollectionSchema.metaTable) WHERE key = 'format_version'")?
            .stringValue
        let header = DumpHeader(
            format: DumpFormat.name, version: DumpFormat.version,
            fileFormatVersion: version.flatMap { Int($0) } ?? CollectionSchema.formatVersion,
            sections: sections.map(\.header))
        try writer.line(DumpLines.encode(header))
        var counts: [String: Int] = [:]
        var total = 0
        for section in sections {
            let statement = try connection.prepare(section.select)
            let columns = section.header.columns.count
            var written = 0
            try statement.forEachRow(section.bindings) { row in
                try writer.record(section: section.header.name, columns: columns, row: row)
                written += 1
            }
            // The count came from the same snapshot, so only a bug could make them differ.
            precondition(
                written == section.header.records,
                "dump of \(section.header.name): count changed within one snapshot")
            counts[section.header.name] = written
            total += written
        }
        let trailer = DumpTrailer(end: .init(checksum: writer.checksumHex, records: total))
        try writer.line(DumpLines.encode(trailer))
        try writer.flush()
        return DumpReport(records: counts, bytes: writer.bytesWritten)
    }

    /// Loads a dump into this database, which must be empty (no collections, no tables): all or
    /// nothing, in one transaction, then verifies every collection.
    ///
    /// ```swift
    /// let database = try Database(path: "restored.trove")
    /// let report = try await database.load(
    ///     from: "backup.trove-dump", renaming: DumpRenames(collections: ["notes": "archive"]))
    /// assert(report.problems.isEmpty)
    /// ```
    /// - Parameters:
    ///   - path: the dump file to read.
    ///   - renames: new names for collections and for document collections' fields.
    /// - Returns: the records per new collection name and what verification found.
    /// - Throws: ``TroveError/databaseNotEmpty(objects:)``; ``TroveError/invalidDump(line:reason:)``
    ///   for a truncated, corrupt or unknown-version dump; ``TroveError/unknownField(field:known:)``
    ///   for a rename of a field that does not exist. Nothing is loaded when it throws.
    /// - Complexity: O(dump size); memory O(1) beyond the largest record.
    @discardableResult
    public func load(from path: String, renaming renames: DumpRenames = .none) throws -> LoadReport
    {
        guard let reader = DumpLineReader(path: path) else {
            throw TroveError.invalidDump(line: 0, reason: "cannot open \(path)")
        }
        let records = try connection.transaction(.immediate) {
            // Checked under the write lock, so nobody creates a table between the check and the load.
            let existing = try connection.query(
                "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name != ? ORDER BY name",
                [.text(CollectionSchema.metaTable)]
            ).compactMap { $0.string(at: 0) }
            guard existing.isEmpty else { throw TroveError.databaseNotEmpty(objects: existing) }
            return try DumpLoader(connection: connection, renames: renames, reader: reader).run()
        }
        connection.clearStatementCache()
        return LoadReport(records: records, problems: try verify().problems)
    }
}
