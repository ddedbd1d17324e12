import CSQLite

/// An error reported by SQLite, with everything needed to act on it.
///
/// Match on ``code`` (the primary result code) or ``extendedCode``, never on ``message``:
///
/// ```swift
/// do {
///     try connection.execute("INSERT INTO t(id) VALUES (1)")
/// } catch let error as SQLiteError where error.code == .constraint {
///     print("duplicate:", error.message)
/// }
/// ```
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The primary result code (the low byte of ``extendedCode``).
    public var code: ResultCode { ResultCode(rawValue: extendedCode.rawValue & 0xFF) }
    /// The extended result code, for example `SQLITE_CONSTRAINT_PRIMARYKEY`.
    public var extendedCode: ResultCode
    /// SQLite's own explanation (`sqlite3_errmsg`), or the generic text for the code.
    public var message: String
    /// The SQL that failed, when there was one.
    public var sql: String?
    /// For an encrypted file: what the cipher refused (a page that failed authentication, with
    /// its number), when that is why SQLite failed.
    public var encryptionFailure: EncryptionError?

    /// An error with an extended result code, a message and, optionally, the SQL that failed.
    public init(extendedCode: ResultCode, message: String, sql: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    public var description: String {
        var text = "SQLite error \(extendedCode.rawValue) (\(code.name)): \(message)"
        if let encryptionFailure { text += " — \(encryptionFailure)" }
        if let sql {
            // Long generated statements (multi-row inserts) would drown the message.
            text += " — while running: " + (sql.count > 300 ? sql.prefix(300) + "…" : sql)
        }
        return text
    }

    /// Builds an error from a connection's current error state.
    static func from(_ resultCode: Int32, db: OpaquePointer?, sql: String? = nil) -> SQLiteError {
        let extended = db.map { sqlite3_extended_errcode($0) } ?? resultCode
        // Prefer the extended code SQLite remembers when it agrees with the primary code we saw;
        // otherwise (e.g. the handle's state was overwritten) keep what the call returned.
        let code = (extended & 0xFF) == (resultCode & 0xFF) ? extended : resultCode
        let message: String
        if let db, let cMessage = sqlite3_errmsg(db), (extended & 0xFF) == (resultCode & 0xFF) {
            message = String(cString: cMessage)
        } else {
            message = String(cString: sqlite3_errstr(resultCode))
        }
        var error = SQLiteError(
            extendedCode: ResultCode(rawValue: code), message: message, sql: sql)
        error.encryptionFailure = EncryptionError.lastVFSFailure(for: error.code)
        return error
    }
}

/// A SQLite result code (primary or extended).
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric code, as SQLite defines it.
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    public static let `internal` = ResultCode(rawValue: SQLITE_INTERNAL)
    public static let permission = ResultCode(rawValue: SQLITE_PERM)
    public static let abort = ResultCode(rawValue: SQLITE_ABORT)
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    public static let noMemory = ResultCode(rawValue: SQLITE_NOMEM)
    public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
    public static let interrupt = ResultCode(rawValue: SQLITE_INTERRUPT)
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    public static let schema = ResultCode(rawValue: SQLITE_SCHEMA)
    public static let tooBig = ResultCode(rawValue: SQLITE_TOOBIG)
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    public static let mismatch = ResultCode(rawValue: SQLITE_MISMATCH)
    public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
    public static let range = ResultCode(rawValue: SQLITE_RANGE)
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
    // SQLITE_IOERR_DATA: a page failed its check
    public static let ioErrorData = ResultCode(rawValue: 8202)
    // SQLITE_CONSTRAINT_PRIMARYKEY
    public static let constraintPrimaryKey = ResultCode(rawValue: 1555)
    public static let constraintCheck = ResultCode(rawValue: 275)  // SQLITE_CONSTRAINT_CHECK
    public static let constraintUnique = ResultCode(rawValue: 2067)  // SQLITE_CONSTRAINT_UNIQUE
    public static let constraintNotNull = ResultCode(rawValue: 1299)  // SQLITE_CONSTRAINT_NOTNULL
    // SQLITE_CONSTRAINT_FOREIGNKEY
    public static let constraintForeignKey = ResultCode(rawValue: 787)

    /// SQLite's short English name for the code, e.g. "constraint failed".
    public var name: String { String(cString: sqlite3_errstr(rawValue)) }
    public var description: String { "\(rawValue) (\(name))" }
}
