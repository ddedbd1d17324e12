import Trove
import TroveSQLite

extension VectorStore {
    /// Runs one row-returning statement on the store's database: your own tables, joins with
    /// the store's table, reports.
    ///
    /// ```swift
    /// let rows = try await store.query("""
    ///     SELECT c.content, d.author FROM chunks c JOIN docs d ON d.name = c.source WHERE c.id = ?
    ///     """, bindings: [.int(1)])
    /// let author = rows.first?.text("author")
    /// ```
    /// - Throws: ``SQLiteError/prepareFailed(code:message:)`` for SQL that does not compile
    ///   (nothing ran), ``SQLiteError/stepFailed(code:message:)`` for a failure while running.
    public func query(_ sql: String, bindings: [SQLValue] = []) async throws -> [SQLRow] {
        let values = bindings.map(\.trove)
        do {
            return try await database.query(sql, bindings: values).map(SQLRow.init)
        } catch {
            throw await classified(error, sql: sql, bindings: values)
        }
    }

    /// Runs one statement on the store's database and returns how many rows it changed (0 for
    /// statements that change none, such as `CREATE TABLE`).
    ///
    /// Writes to the store's table (`UPDATE chunks SET source = ...`) reach its vector and text
    /// indexes before the next search. Do not run `BEGIN`/`COMMIT` here: the store's methods
    /// make their own transactions (use ``collection``'s `database.write` for several writes as one).
    ///
    /// - Throws: as ``query(_:bindings:)``.
    @discardableResult
    public func execute(_ sql: String, bindings: [SQLValue] = []) async throws -> Int {
        let values = bindings.map(\.trove)
        do {
            return try await database.execute(sql, bindings: values)
        } catch {
            throw await classified(error, sql: sql, bindings: values)
        }
    }

    /// Says whether a failed statement failed to compile or failed while running, as
    /// SQLiteVecKit's cases do: `EXPLAIN` compiles the statement again without running it
    /// (only on this failure path).
    private func classified(_ error: any Error, sql: String, bindings: [TroveSQLite.SQLValue]) async
        -> SQLiteError
    {
        guard let error = error as? TroveSQLite.SQLiteError else {
            return SQLiteError(translating: error, table: tableName)
        }
        // The same bindings: Trove's statements refuse a wrong number of values.
        let compiles = (try? await database.query("EXPLAIN " + sql, bindings: bindings)) != nil
        return compiles
            ? .stepFailed(code: error.code.rawValue, message: error.message)
            : .prepareFailed(code: error.code.rawValue, message: error.message)
    }
}
