import Trove
import TroveSQLite

/// A `where:` argument: an SQL condition over a search's ranked rows, with its `?` bindings.
///
/// A condition over the table's own columns becomes the engine's `Filter.sql`, applied before
/// ranking like any filter. One that reads `distance` (or the `c.` spelling of SQLiteVecKit's
/// text search) cannot: `distance` only exists once a row is ranked. Such a condition is
/// evaluated here, over ranked rows: their ids and distances go to SQLite as one JSON array,
/// joined back to the table, and the condition keeps or drops each. Either way the statement is
/// one read-only `SELECT`, so a fragment can never write.
struct WhereFragment: Sendable {
    /// The condition as the caller wrote it.
    let condition: String
    /// The caller's values for its `?` placeholders.
    let bindings: [TroveSQLite.SQLValue]
    /// The store's table.
    let table: String

    /// The rows the condition sees are `c`: `id`, `content`, `source`, `metadata` and
    /// `distance`, unqualified or as `c.content` (the spelling SQLiteVecKit's text search needs).
    /// The JSON array is the first placeholder, so the caller's `?` are bound after it.
    private var sql: String {
        """
        SELECT c.id FROM (
            SELECT t."id" AS id, t."content" AS content, t."source" AS source, t."metadata" AS metadata,
                ranked.distance AS distance
            FROM (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS distance
                  FROM json_each(?)) AS ranked
            JOIN "\(table)" AS t ON t."id" = ranked.id
        ) AS c
        WHERE (\(condition))
        """
    }

    /// Whether the condition compiles over the table's columns alone (no `distance`, no `c.`),
    /// so the engine can apply it before ranking; checked without evaluating it on any row.
    func readsTableOnly(on transaction: ReadTransaction) -> Bool {
        (try? transaction.query("SELECT 1 FROM \"\(table)\" WHERE (\(condition)) LIMIT 0", bindings))
            != nil
    }

    /// The engine's filter for a condition that ``readsTableOnly(on:)``.
    var filter: Filter { .sql(condition, bindings) }

    /// Compiles the statement by running it over no rows, so a condition that is not valid SQL
    /// is refused before any search runs.
    ///
    /// - Throws: ``SQLiteError/prepareFailed(code:message:)``.
    func checkCompiles(on transaction: ReadTransaction) throws {
        do {
            _ = try transaction.query(sql, [.text("[]")] + bindings)
        } catch let error as TroveSQLite.SQLiteError {
            throw SQLiteError.prepareFailed(code: error.code.rawValue, message: error.message)
        }
    }

    /// The ids of `rows` that pass the condition, each evaluated with its own distance.
    ///
    /// - Complexity: one statement; the rows travel as one JSON text of about 25 bytes a row.
    func passing(_ rows: ArraySlice<RankedRow>, on transaction: ReadTransaction) throws -> Set<Int>
    {
        guard !rows.isEmpty else { return [] }
        // A finite Double's description is a JSON number that reads back as the same Double.
        let json =
            "["
            + rows.map { "[\($0.id),\($0.distance.isFinite ? "\($0.distance)" : "null")]" }
            .joined(separator: ",") + "]"
        let result = try transaction.query(sql, [.text(json)] + bindings)
        return Set(result.compactMap { $0[0].int64Value.map { Int($0) } })
    }
}
