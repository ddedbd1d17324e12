import Trove
import TroveSQLite

/// SQLite result codes used when Trove's error carries none.
enum ResultCodes {
    static let error: Int32 = 1  // SQLITE_ERROR
    static let cantOpen: Int32 = 14  // SQLITE_CANTOPEN
    static let constraint: Int32 = 19  // SQLITE_CONSTRAINT
}

extension SQLiteError {
    /// SQLiteVecKit's case for what the document engine threw while the store read or wrote.
    /// A `TroveSQLite.SQLiteError` that reaches here was raised while a statement ran.
    init(translating error: any Error, table: String) {
        switch error {
        case let error as SQLiteError:
            self = error
        case let error as TroveSQLite.SQLiteError:
            self = .stepFailed(code: error.code.rawValue, message: error.message)
        case let error as TroveError:
            self = Self(translating: error, table: table)
        default:
            self = .executionFailed(code: ResultCodes.error, message: String(describing: error))
        }
    }

    private init(translating error: TroveError, table: String) {
        switch error {
        case .dimensionMismatch(let expected, let actual):
            self = .dimensionMismatch(expected: expected, got: actual)
        case .metadataTooLarge(let limit, let actual):
            self = .metadataTooLarge(limit: limit, got: actual)
        case .documentNotFound(.int(let id)):
            self = .rowNotFound(id: Int(id))
        case .duplicateDocumentID(let id):
            // What SQLite reports for a second row with the same INTEGER PRIMARY KEY.
            self = .stepFailed(
                code: ResultCodes.constraint,
                message: "UNIQUE constraint failed: \(table).id (id \(id))")
        case .invalidTextQuery(let query, let reason):
            self = .invalidTextQuery(query, detail: reason)
        case .lexicalSearchDisabled:
            self = .lexicalSearchDisabled
        case .invalidLimit(let topK, _):
            self = .invalidTopK(topK)
        case .invalidDimension(let dimension):
            self = .invalidDimension(dimension)
        case .invalidName(let name, _):
            self = .invalidTableName(name)
        case .invalidFilter(let sql, let reason):
            self = .prepareFailed(code: ResultCodes.error, message: "\(reason) (in \(sql))")
        default:
            self = .executionFailed(code: ResultCodes.error, message: error.description)
        }
    }

    /// SQLiteVecKit's case for what opening the database file threw: the file is not a store
    /// this version can open.
    init(openingFileFailedWith error: any Error) {
        switch error {
        case let error as TroveSQLite.SQLiteError:
            self = .databaseOpenFailed(code: error.code.rawValue, message: error.message)
        default:
            self = .databaseOpenFailed(
                code: ResultCodes.cantOpen, message: String(describing: error))
        }
    }
}
