import CSQLite

extension Connection {
    /// Runs `body` with a reader of the blobs in `column` of the rowid table `table` (incremental
    /// blob I/O, `sqlite3_blob_open`), closed when `body` returns.
    ///
    /// Why not a statement's `sqlite3_column_blob`: a blob larger than a page lives on a chain of
    /// overflow pages, which the statement first assembles in memory of its own before handing
    /// it over; a blob reader copies the pages straight into the caller's memory. Reads see the
    /// connection's current transaction.
    ///
    /// ```swift
    /// try connection.withBlobReader(table: "files", column: "data") { reader in
    ///     let count = try reader.open(rowid: 7)
    ///     try buffer.withUnsafeMutableBytes { try reader.read(into: $0, at: 0) }
    /// }
    /// ```
    public func withBlobReader<T>(
        table: String, column: String, _ body: (inout BlobReader) throws -> T
    ) throws -> T {
        var reader = BlobReader(db: db, table: table, column: column)
        defer { reader.close() }
        return try body(&reader)
    }
}

/// Reads blobs of one column of one table, row by row (see ``Connection/withBlobReader(table:column:_:)``).
public struct BlobReader {
    private let db: OpaquePointer
    private let table: String
    private let column: String
    private var blob: OpaquePointer?

    init(db: OpaquePointer, table: String, column: String) {
        self.db = db
        self.table = table
        self.column = column
    }

    /// Points the reader at the row `rowid` and returns the length of its blob in bytes.
    ///
    /// - Throws: ``SQLiteError`` when there is no such row, or its value is not a blob or text.
    public mutating func open(rowid: Int64) throws -> Int {
        if let blob {
            // Moving an open handle to another row skips compiling the lookup again.
            let rc = sqlite3_blob_reopen(blob, rowid)
            guard rc == SQLITE_OK else {
                // A handle that failed to move answers nothing but SQLITE_ABORT: the next open starts afresh.
                let error = SQLiteError.from(rc, db: db)
                close()
                throw error
            }
        } else {
            var opened: OpaquePointer?
            let rc = sqlite3_blob_open(db, "main", table, column, rowid, 0, &opened)
            guard rc == SQLITE_OK, let opened else {
                sqlite3_blob_close(opened)
                throw SQLiteError.from(rc, db: db)
            }
            blob = opened
        }
        return Int(sqlite3_blob_bytes(blob))
    }

    /// Copies `buffer.count` bytes of the open blob, from byte `offset` on, into `buffer`.
    ///
    /// - Throws: ``SQLiteError`` when the range passes the blob's end or the row changed since
    ///   ``open(rowid:)`` (`SQLITE_ABORT`).
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws {
        guard let blob else { preconditionFailure("read before open(rowid:)") }
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        let rc = sqlite3_blob_read(blob, base, Int32(buffer.count), Int32(offset))
        guard rc == SQLITE_OK else { throw SQLiteError.from(rc, db: db) }
    }

    mutating func close() {
        sqlite3_blob_close(blob)
        blob = nil
    }
}
