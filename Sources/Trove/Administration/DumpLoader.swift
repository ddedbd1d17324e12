import Foundation
import TroveSQLite

/// Converting between stored SQL values and the dump's JSON values.
enum DumpLines {
    static func sql(_ value: Value) -> SQLValue? {
        switch value {
        case .null: return .null
        case .int(let v): return .integer(v)
        case .double(let v): return .real(v)
        case .string(let v): return .text(v)
        case .object(let members) where members.count == 1:
            switch (members.first!.key, members.first!.value) {
            case ("base64", .string(let text)):
                return Data(base64Encoded: text).map { .blob([UInt8]($0)) }
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

    func fail(_ reason: String) -> TroveError {
        .invalidDump(line: reader.lineNumber, reason: reason)
    }

    static let trailerPrefix = Array("{\"end\":".utf8)

    /// - Returns: records per new collection name.
    func run() throws -> [String: Int] {
        var checksum = FNV1a64()
        guard let first = try reader.next(), first.terminated else {
            throw fail("the file is empty or has no header line")
        }
        checksum.add(first.bytes)
        checksum.add(CollectionOfOne(0x0A))
        let header: DumpHeader
        do {
            header = try JSONDecoder().decode(DumpHeader.self, from: Data(first.bytes))
        } catch {
            throw fail("the header is not a Trove dump header (\(error))")
        }
        guard header.format == DumpFormat.name else {
            throw fail("not a Trove dump (format \(header.format))")
        }
        guard header.version == DumpFormat.version else {
            throw fail(
                "dump version \(header.version) is not supported (this Trove reads version \(DumpFormat.version))"
            )
        }
        var targets: [String: (target: DumpLoadTarget, statement: Statement, expected: Int)] = [:]
        var loaded: [String: Int] = [:]
        var triggers: [(trigger: String, sql: String, fts: String)] = []
        var newNames: Set<String> = []
        for section in header.sections {
            guard let kind = DumpCatalog.kind(named: section.kind) else {
                throw fail("unknown section kind \(section.kind)")
            }
            guard targets[section.name] == nil else {
                throw fail("section \(section.name) appears twice")
            }
            let target: DumpLoadTarget
            do {
                target = try kind.create(section, renames: renames, on: connection)
            } catch DumpError.section(let name, let reason) {
                throw fail("section \(name): \(reason)")
            } catch let error as SQLiteError {
                throw fail("section \(section.name) cannot be created (\(error.message))")
            }
            guard newNames.insert(target.name).inserted else {
                throw fail("two sections would be named \(target.name)")
            }
            if let fullText = target.fullText,
                let sql = try connection.scalar(
                    "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?",
                    [.text(fullText.trigger)])?
                    .stringValue
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
                    throw fail(
                        "checksum mismatch: the dump was changed or damaged (expected \(trailer.end.checksum), computed \(checksum.hex))"
                    )
                }
                guard trailer.end.records == total else {
                    throw fail(
                        "the trailer counts \(trailer.end.records) records, the file holds \(total)"
                    )
                }
                guard try reader.next() == nil else { throw fail("text after the trailer") }
                for (name, entry) in targets where loaded[name] != entry.expected {
                    throw fail(
                        "section \(name) has \(loaded[name] ?? 0) records, its header says \(entry.expected)"
                    )
                }
                for trigger in triggers {
                    try connection.execute(
                        "INSERT INTO \(trigger.fts)(\(trigger.fts)) VALUES ('rebuild')")
                    try connection.execute(script: trigger.sql)
                }
                if targets[EdgeTable.name] != nil { try renameLinkedCollections() }
                return Dictionary(
                    uniqueKeysWithValues: targets.map {
                        ($0.value.target.name, loaded[$0.key] ?? 0)
                    })
            }
            checksum.add(line.bytes)
            checksum.add(CollectionOfOne(0x0A))
            let (name, bound) =
                try DumpRecordParser.parse(line.bytes)
                ?? parseRecord(String(decoding: line.bytes, as: UTF8.self))
            guard let entry = targets[name] else {
                throw fail("a record for \(name), which has no section in the header")
            }
            guard bound.count == entry.target.columnCount else {
                throw fail(
                    "a record of \(name) has \(bound.count) values, its section \(entry.target.columnCount) columns"
                )
            }
            do {
                try entry.statement.execute(bound)
            } catch let error as SQLiteError
                where error.code == .constraint || error.code == .mismatch
            {
                throw fail("a record of \(name) was refused by its table (\(error.message))")
            }
            loaded[name, default: 0] += 1
            total += 1
        }
        throw fail("the dump ends before its trailer (truncated)")
    }

    /// Links name their ends' collections: a renamed collection is renamed in every link too, in
    /// one statement (so swapped names cannot collide halfway).
    func renameLinkedCollections() throws {
        let renamed = renames.collections.filter { $0.key != $0.value }.sorted { $0.key < $1.key }
        guard !renamed.isEmpty else { return }
        var values: [SQLValue] = []
        let cases = renamed.map { old, new -> String in
            values += [.text(old), .text(new)]
            return "WHEN ?\(values.count - 1) THEN ?\(values.count)"
        }.joined(separator: " ")
        try connection.execute(
            """
            UPDATE \(EdgeTable.name) SET from_collection = CASE from_collection \(cases) ELSE from_collection END,
                to_collection = CASE to_collection \(cases) ELSE to_collection END
            """, values)
    }

    /// A record in any valid JSON spelling (the fast parser takes only the dump's own), or the
    /// reason it is not one.
    func parseRecord(_ text: String) throws -> (String, [SQLValue]) {
        let record: Value
        do {
            record = try JSONCoding.value(text)
        } catch {
            throw fail("not a JSON record (\(error))")
        }
        guard case .string(let name)? = record.objectValue?["c"],
            case .array(let values)? = record.objectValue?["v"]
        else {
            throw fail("a record needs \"c\" (its section) and \"v\" (its values)")
        }
        return (
            name,
            try values.map { value in
                guard let sql = DumpLines.sql(value) else {
                    throw fail("a value of \(name) is not a dump value: \(value)")
                }
                return sql
            }
        )
    }
}
