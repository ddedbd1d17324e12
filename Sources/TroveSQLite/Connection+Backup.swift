import CSQLite
import Foundation

// Online backup through SQLite's backup API (sqlite3_backup_*): a page-by-page copy of one
// connection's main database into a new file, consistent as of one read transaction.

extension Connection {
    /// Copies this connection's main database into a new file at `destination` (which must not
    /// exist) with SQLite's online backup API, then syncs it.
    ///
    /// The copy is taken in one step, inside one read transaction on this connection: in WAL mode
    /// writers on other connections keep committing meanwhile, and the copy is the database as of
    /// that transaction's snapshot. (Copying in several steps would restart from the first page
    /// whenever another connection commits, so under steady writes it might never finish.)
    ///
    /// An encrypted source gives an encrypted copy: the destination starts with the source's key
    /// header (same wrapped data key, same passphrase, same file identity) and every page is
    /// sealed again by the cipher VFS as it is written. The source's key is never exposed.
    ///
    /// ```swift
    /// let source = try Connection(path: "notes.trove", options: .init(readOnly: true))
    /// try source.backup(toNewFile: "notes-backup.trove")
    /// ```
    ///
    /// - Throws: ``SQLiteError`` with code `cantOpen` when `destination` exists or can't be
    ///   created, or what the copy failed with; a partly written destination is removed.
    /// - Complexity: O(database size): every page is read and written once.
    public func backup(toNewFile destination: String) throws {
        guard let source = handle else {
            throw SQLiteError(extendedCode: .misuse, message: "the connection is closed")
        }
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw SQLiteError(
                extendedCode: .cantOpen, message: "the backup target exists (path: \(destination))")
        }
        do {
            var options = Options(create: true, walMode: false, busyTimeout: .zero)
            if let key = self.options.encryption, location != .inMemory {
                // Same key header: the copy opens with the same passphrase, and the source's key
                // slot (matched by file identity) seals its pages.
                guard case .encrypted(let header) = try EncryptionHeader.probe(path: key.path)
                else {
                    throw EncryptionError.corruptHeader(
                        path: key.path, reason: "the key header changed while open")
                }
                try header.createFile(at: destination)
                options.encryption = key
            }
            let target = try Connection(.file(destination), options: options)
            defer { target.close() }
            guard let backup = sqlite3_backup_init(target.handle, "main", source, "main") else {
                throw SQLiteError.from(sqlite3_errcode(target.handle), db: target.handle)
            }
            let step = sqlite3_backup_step(backup, -1)
            let finish = sqlite3_backup_finish(backup)
            guard step == SQLITE_DONE else { throw SQLiteError.from(step, db: target.handle) }
            guard finish == SQLITE_OK else { throw SQLiteError.from(finish, db: target.handle) }
            target.close()
            try Self.syncFile(destination)
        } catch {
            unlink(destination)
            unlink(destination + "-journal")
            throw error
        }
    }
}
