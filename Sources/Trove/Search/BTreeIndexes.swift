import Foundation
import TroveSQLite
import TroveVectors

/// The collection's B-tree indexes (per-field flags, compound, unique, JSON-path expressions).
final class BTreeIndexes: DerivedIndex {
    let names: [String]
    init(names: [String]) { self.names = names }

    var name: String { "b-tree(\(names.joined(separator: ", ")))" }
    var columns: [String] { [] }
    var isLoaded: Bool { true }
    func reset() {}
    func apply(rid: Int64, statement: Statement?, firstColumn: Int) {}

    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] {
        let rows = try connection.query("PRAGMA integrity_check(\(layout.table))")
        let messages = rows.compactMap { $0.string(at: 0) }.filter { $0 != "ok" }
        return messages.map { "\(name): \($0)" }
    }

    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws {
        try connection.execute(script: "REINDEX \(layout.table)")
    }
}
