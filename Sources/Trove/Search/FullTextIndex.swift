import Foundation
import TroveSQLite
import TroveVectors

/// The collection's FTS5 index, kept by triggers in the writing transaction.
final class FullTextIndex: DerivedIndex {
    let definition: FullTextDefinition
    init(_ definition: FullTextDefinition) { self.definition = definition }

    var name: String { "fts5(\(definition.fields.joined(separator: ", ")))" }
    var columns: [String] { [] }
    var isLoaded: Bool { true }
    func reset() {}
    func apply(rid: Int64, statement: Statement?, firstColumn: Int) {}

    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] {
        // FTS5's check is issued as an INSERT command (it changes nothing): not on a read-only file.
        guard !connection.isReadOnly else { return [] }
        do {
            try connection.execute(
                "INSERT INTO \(layout.fts)(\(layout.fts), rank) VALUES ('integrity-check', 1)")
            return []
        } catch let error as SQLiteError where error.code == .corrupt {
            return ["\(name): \(error.message)"]
        }
    }

    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws {
        try connection.execute("INSERT INTO \(layout.fts)(\(layout.fts)) VALUES ('rebuild')")
    }
}
