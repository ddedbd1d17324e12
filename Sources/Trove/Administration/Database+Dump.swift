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
    /// - Parameter overwrite: replace an existing file (otherwise ``TroveError/fileExists(path:)``).
    /// - Returns: the records per collection and the bytes written.
    /// - Complexity: O(database size) time, O(1) memory beyond the largest record.
    @discardableResult
    public nonisolated func dump(to path: String, overwrite: Bool = false) async throws -> DumpReport {
        if !overwrite, FileManager.default.fileExists(atPath: path) { throw TroveError.fileExists(path: path) }
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
    public nonisolated func dump(_ write: @escaping @Sendable (Data) throws -> Void) async throws -> DumpReport {
        try await reading(transaction: true) { connection, lookup in
            try withoutActuallyEscaping(lookup) { lookup in
                try Self.writeDump(DumpSource(connection: connection, documentStore: lookup), to: DumpWriter(write))
            }
        }
    }

    private static func writeDump(_ source: DumpSource, to writer: DumpWriter) throws -> DumpReport {
        let connection = source.connection
        let sections = try DumpCatalog.kinds.flatMap { try $0.sections(in: source) }
        let version = try connection.scalar(
            "SELECT value FROM \(CollectionSchema.metaTable) WHERE key = 'format_version'")?.stringValue
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
            precondition(written == section.header.records, "dump of \(section.header.name): count changed within one snapshot")
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
    /// - Parameter renaming: new names for collections and for document collections' fields.
    /// - Returns: the records per new collection name and what verification found.
    /// - Throws: ``TroveError/databaseNotEmpty(objects:)``; ``TroveError/invalidDump(line:reason:)``
    ///   for a truncated, corrupt or unknown-version dump; ``TroveError/unknownField(field:known:)``
    ///   for a rename of a field that does not exist. Nothing is loaded when it throws.
    /// - Complexity: O(dump size); memory O(1) beyond the largest record.
    @discardableResult
    public func load(from path: String, renaming renames: DumpRenames = .none) throws -> LoadReport {
        guard let reader = DumpLineReader(path: path) else { throw TroveError.invalidDump(line: 0, reason: "cannot open \(path)") }
        let records = try connection.transaction(.immediate) {
            // Checked under the write lock, so nobody creates a table between the check and the load.
            let existing = try connection.query(
                "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name != ? ORDER BY name",
                [.text(CollectionSchema.metaTable)]).compactMap { $0.string(at: 0) }
            guard existing.isEmpty else { throw TroveError.databaseNotEmpty(objects: existing) }
            return try DumpLoader(connection: connection, renames: renames, reader: reader).run()
        }
        connection.clearStatementCache()
        var problems: [String] = []
        for name in try collectionNames() {
            problems += try withEngine(name) { try $0.health() }.problems.map { "\(name): \($0)" }
        }
        for name in try documentCollectionNames() {
            let store = try documentStore(name, requested: nil)
            problems += try writing { try store.indexes.verify($0) }.map { "\(name): \($0)" }
        }
        return LoadReport(records: records, problems: problems)
    }
}

/// Converting between stored SQL values and the dump's JSON values.
enum DumpLines {
    static func sql(_ value: JSONValue) -> SQLValue? {
        switch value {
        case .null: return .null
        case .int(let v): return .integer(v)
        case .double(let v): return .real(v)
        case .string(let v): return .text(v)
        case .object(let members) where members.count == 1:
            switch (members[0].0, members[0].1) {
            case ("base64", .string(let text)): return Data(base64Encoded: text).map { .blob([UInt8]($0)) }
            case ("real", .string("inf")): return .real(.infinity)
            case ("real", .string("-inf")): return .real(-.infinity)
            default: return nil
            }
        default: return nil
        }
    }

    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

/// Buffers dump lines, hands them to the output in chunks, and checksums every byte.
final class DumpWriter {
    private let output: (Data) throws -> Void
    private var buffer: [UInt8] = []  // up to DumpFormat.bufferSize bytes, then flushed
    private(set) var bytesWritten = 0
    private var checksum = FNV1a64()

    init(_ output: @escaping (Data) throws -> Void) {
        self.output = output
        buffer.reserveCapacity(DumpFormat.bufferSize + 4096)
    }

    func line(_ text: String) throws {
        let start = buffer.count
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        checksum.add(buffer[start...])
        if buffer.count >= DumpFormat.bufferSize { try flush() }
    }

    var checksumHex: String { checksum.hex }

    /// Writes `{"c":"<section>","v":[...]}` for the row `statement` is on, straight into the
    /// buffer (no intermediate `JSONValue`: this is the dump's inner loop).
    func record(section: String, columns: Int, row statement: Statement) throws {
        let start = buffer.count
        append("{\"c\":")
        quote(section)
        append(",\"v\":[")
        for column in 0..<columns {
            if column > 0 { buffer.append(UInt8(ascii: ",")) }
            switch statement.value(at: column) {
            case .null: append("null")
            case .integer(let v): append(String(v))
            case .real(let v) where v.isFinite:
                // Swift's description is the shortest text that reads back as the same Double.
                append(v.description.replacingOccurrences(of: "e+", with: "e"))
            case .real(let v): append(v > 0 ? "{\"real\":\"inf\"}" : "{\"real\":\"-inf\"}")
            case .text(let v): quote(v)
            case .blob(let v):
                append("{\"base64\":\"")
                append(Data(v).base64EncodedString())
                append("\"}")
            }
        }
        append("]}\n")
        checksum.add(buffer[start...])
        if buffer.count >= DumpFormat.bufferSize { try flush() }
    }

    private func append(_ text: String) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
    }

    /// A JSON string: quote, backslash and control characters escaped, everything else as UTF-8.
    private func quote(_ text: String) {
        var text = text
        buffer.append(UInt8(ascii: "\""))
        text.withUTF8 { bytes in
            var runStart = 0
            for (i, byte) in bytes.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                switch byte {
                case 0x22: buffer.append(contentsOf: [0x5C, 0x22])
                case 0x5C: buffer.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: buffer.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: buffer.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: buffer.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default: buffer.append(contentsOf: Array(String(format: "\\u%04x", byte).utf8))
                }
                runStart = i + 1
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        buffer.append(UInt8(ascii: "\""))
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try output(Data(buffer))
        bytesWritten += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }
}

/// FNV-1a, 64 bits: a checksum against truncation and corruption (not against tampering).
struct FNV1a64 {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ bytes: some Sequence<UInt8>) {
        var h = value
        for byte in bytes { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        value = h
    }

    var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// Reads a dump file line by line through a 1 MB buffer.
final class DumpLineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []  // unread bytes: at most one chunk plus one partial line
    private var position = 0
    private var atEnd = false
    /// The number of the line last returned (1-based).
    private(set) var lineNumber = 0

    init?(path: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        self.handle = handle
    }

    deinit { try? handle.close() }

    /// The next line without its newline, and whether a newline ended it; nil at the end.
    func next() throws -> (bytes: ArraySlice<UInt8>, terminated: Bool)? {
        while true {
            if let newline = buffer[position...].firstIndex(of: 0x0A) {
                let line = buffer[position..<newline]
                position = newline + 1
                lineNumber += 1
                return (line, true)
            }
            if atEnd {
                guard position < buffer.count else { return nil }
                let line = buffer[position...]
                position = buffer.count
                lineNumber += 1
                return (line, false)
            }
            buffer.removeFirst(position)
            position = 0
            let chunk = try handle.read(upToCount: DumpFormat.bufferSize) ?? Data()
            if chunk.isEmpty { atEnd = true } else { buffer.append(contentsOf: chunk) }
        }
    }
}

/// One load: header, sections, records, trailer, inside the caller's transaction.
struct DumpLoader {
    let connection: Connection
    let renames: DumpRenames
    let reader: DumpLineReader

    func fail(_ reason: String) -> TroveError { .invalidDump(line: reader.lineNumber, reason: reason) }

    static let trailerPrefix = Array("{\"end\":".utf8)

    /// - Returns: records per new collection name.
    func run() throws -> [String: Int] {
        var checksum = FNV1a64()
        guard let first = try reader.next(), first.terminated else { throw fail("the file is empty or has no header line") }
        checksum.add(first.bytes)
        checksum.add(CollectionOfOne(0x0A))
        let header: DumpHeader
        do {
            header = try JSONDecoder().decode(DumpHeader.self, from: Data(first.bytes))
        } catch {
            throw fail("the header is not a Trove dump header (\(error))")
        }
        guard header.format == DumpFormat.name else { throw fail("not a Trove dump (format \(header.format))") }
        guard header.version == DumpFormat.version else {
            throw fail("dump version \(header.version) is not supported (this Trove reads version \(DumpFormat.version))")
        }
        var targets: [String: (target: DumpLoadTarget, statement: Statement, expected: Int)] = [:]
        var loaded: [String: Int] = [:]
        var triggers: [(trigger: String, sql: String, fts: String)] = []
        var newNames: Set<String> = []
        for section in header.sections {
            guard let kind = DumpCatalog.kind(named: section.kind) else { throw fail("unknown section kind \(section.kind)") }
            guard targets[section.name] == nil else { throw fail("section \(section.name) appears twice") }
            let target: DumpLoadTarget
            do {
                target = try kind.create(section, renames: renames, on: connection)
            } catch DumpError.section(let name, let reason) {
                throw fail("section \(name): \(reason)")
            } catch let error as SQLiteError {
                throw fail("section \(section.name) cannot be created (\(error.message))")
            }
            guard newNames.insert(target.name).inserted else { throw fail("two sections would be named \(target.name)") }
            if let fullText = target.fullText,
                let sql = try connection.scalar(
                    "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", [.text(fullText.trigger)])?.stringValue
            {
                try connection.execute(script: "DROP TRIGGER \"\(fullText.trigger)\"")
                triggers.append((fullText.trigger, sql, fullText.table))
            }
            targets[section.name] = (target, try connection.prepare(target.insert), section.records)
            loaded[section.name] = 0
        }
        var total = 0
        while let line = try reader.next() {
            guard line.terminated else { throw fail("the last line is cut short (truncated dump)") }
            if line.bytes.starts(with: Self.trailerPrefix) {
                let trailer: DumpTrailer
                do {
                    trailer = try JSONDecoder().decode(DumpTrailer.self, from: Data(line.bytes))
                } catch {
                    throw fail("the trailer is unreadable (\(error))")
                }
                guard trailer.end.checksum == checksum.hex else {
                    throw fail("checksum mismatch: the dump was changed or damaged (expected \(trailer.end.checksum), computed \(checksum.hex))")
                }
                guard trailer.end.records == total else { throw fail("the trailer counts \(trailer.end.records) records, the file holds \(total)") }
                guard try reader.next() == nil else { throw fail("text after the trailer") }
                for (name, entry) in targets where loaded[name] != entry.expected {
                    throw fail("section \(name) has \(loaded[name] ?? 0) records, its header says \(entry.expected)")
                }
                for trigger in triggers {
                    try connection.execute("INSERT INTO \(trigger.fts)(\(trigger.fts)) VALUES ('rebuild')")
                    try connection.execute(script: trigger.sql)
                }
                return Dictionary(uniqueKeysWithValues: targets.map { ($0.value.target.name, loaded[$0.key] ?? 0) })
            }
            checksum.add(line.bytes)
            checksum.add(CollectionOfOne(0x0A))
            let (name, bound) = try DumpRecordParser.parse(line.bytes) ?? parseRecord(String(decoding: line.bytes, as: UTF8.self))
            guard let entry = targets[name] else { throw fail("a record for \(name), which has no section in the header") }
            guard bound.count == entry.target.columnCount else {
                throw fail("a record of \(name) has \(bound.count) values, its section \(entry.target.columnCount) columns")
            }
            do {
                try entry.statement.execute(bound)
            } catch let error as SQLiteError where error.code == .constraint || error.code == .mismatch {
                throw fail("a record of \(name) was refused by its table (\(error.message))")
            }
            loaded[name, default: 0] += 1
            total += 1
        }
        throw fail("the dump ends before its trailer (truncated)")
    }

    /// A record in any valid JSON spelling (the fast parser takes only the dump's own), or the
    /// reason it is not one.
    func parseRecord(_ text: String) throws -> (String, [SQLValue]) {
        let record: JSONValue
        do {
            record = try JSONValue.parse(text)
        } catch {
            throw fail("not a JSON record (\(error))")
        }
        guard case .string(let name)? = record["c"], case .array(let values)? = record["v"] else {
            throw fail("a record needs \"c\" (its section) and \"v\" (its values)")
        }
        return (name, try values.map { value in
            guard let sql = DumpLines.sql(value) else { throw fail("a value of \(name) is not a dump value: \(value.serialized())") }
            return sql
        })
    }
}
