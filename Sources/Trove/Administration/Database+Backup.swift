import Foundation
import TroveSQLite

// Online backup (SQLite's backup API) and compaction (VACUUM).

/// What ``Database/compact()`` did: the file's size (database plus WAL) before and after.
public struct CompactionReport: Sendable, Hashable, Codable {
    public var bytesBefore: Int64
    public var bytesAfter: Int64
}

extension Database {
    /// Copies the database to a new file at `path` while the app keeps reading and writing.
    ///
    /// The copy runs on its own read-only connection, off this actor, with SQLite's online backup
    /// API in one step: it is the database as of one snapshot, and writers keep committing
    /// meanwhile (WAL). An encrypted database gives an encrypted backup that opens with the same
    /// passphrase or key. The copy is written beside `path`, synced and renamed over it, so a
    /// failed backup leaves nothing (and, with `overwrite`, the old file intact).
    ///
    /// ```swift
    /// try await database.backup(to: "notes-backup.trove")
    /// let copy = try Database(path: "notes-backup.trove")
    /// ```
    /// - Parameters:
    ///   - path: the backup file to write.
    ///   - overwrite: replace an existing file at `path` (close any `Database` on it first);
    ///     otherwise an existing file is ``TroveError/fileExists(path:)``.
    /// - Throws: ``TroveError/fileExists(path:)``; `SQLiteError` when the copy fails.
    /// - Complexity: O(file size).
    public nonisolated func backup(to path: String, overwrite: Bool = false) async throws {
        if !overwrite, FileManager.default.fileExists(atPath: path) {
            throw TroveError.fileExists(path: path)
        }
        try refuseOwnFile(path)
        let options = await sourceOptionsForCopies()
        let temporary = path + ".backup-" + UUID().uuidString.prefix(8)
        if let source = self.path {
            try await Task.detached(priority: .utility) {
                var readOptions = options
                readOptions.readOnly = true
                readOptions.newFilePageSize = nil
                let connection = try Connection(.file(source), options: readOptions)
                try connection.backup(toNewFile: temporary)
            }.value
        } else {
            try await backupInMemory(to: temporary)
        }
        do {
            // A stale WAL beside the old target would be replayed into the new file.
            if overwrite {
                unlink(path + "-wal")
                unlink(path + "-shm")
            }
            guard rename(temporary, path) == 0 else {
                throw SQLiteError(
                    extendedCode: .ioError, message: "rename failed (path: \(path), errno \(errno))"
                )
            }
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Throws when `target` is this database's own file (an overwrite would replace it).
    nonisolated func refuseOwnFile(_ target: String) throws {
        guard let path else { return }
        let resolve = { (p: String) in
            URL(fileURLWithPath: p).standardizedFileURL.resolvingSymlinksInPath().path
        }
        if resolve(target) == resolve(path) {
            throw TroveError.invalidConfiguration("\(target) is the database's own file")
        }
    }

    /// The writer's options: the copies' connections use its encryption key.
    private func sourceOptionsForCopies() -> Connection.Options { connection.options }

    /// An in-memory database has no file to open a second connection on: copy from the writer.
    private func backupInMemory(to path: String) throws {
        try connection.backup(toNewFile: path)
    }

    /// Rebuilds the file without free pages (`VACUUM`), then truncates the WAL.
    ///
    /// Deleting many records (a purge of expired ones, a dropped collection) leaves free pages
    /// that SQLite reuses but never gives back; compaction gives them back. It holds the write
    /// lock while it runs and needs free disk space (memory, for an encrypted file) for a copy of
    /// the database. Row ids, vectors and indexes are unchanged.
    ///
    /// ```swift
    /// try await notes.purgeExpired()
    /// let report = try await database.compact()
    /// print(report.bytesBefore, "->", report.bytesAfter)
    /// ```
    /// - Complexity: O(file size).
    @discardableResult
    public func compact() async throws -> CompactionReport {
        let before = fileSize()
        checkpointer?.flush()
        try connection.execute(script: "VACUUM")
        if path != nil { try await checkpoint() }
        return CompactionReport(bytesBefore: before, bytesAfter: fileSize())
    }
}
