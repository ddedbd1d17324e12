import CLibPQ
import Foundation
import Trove

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One libpq connection. Every call blocks until the server answers, so a connection is used
/// from one thread at a time, never from Swift's cooperative pool (``PostgresSession`` runs it on
/// a queue of its own; ``PostgresListener`` on a thread of its own).
final class PostgresConnection {
    // Owned: PQfinish on deinit. libpq keeps its buffers (a few KB plus the largest result being
    // read) inside it.
    private let connection: OpaquePointer

    /// Connects (blocking: DNS, TCP, TLS, SCRAM).
    ///
    /// - Throws: ``PostgresError/connectionFailed(_:)`` with libpq's message (never the URL, which
    ///   may hold a password).
    init(options: PostgresConnectionOptions) throws {
        guard let connection = PQconnectdb(options.connectionString) else {
            throw PostgresError.connectionFailed("out of memory")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.message(PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError.connectionFailed(message)
        }
        // libpq prints server notices (and "terminating connection" on a restart) on stderr by
        // default; a library must not write there. Errors still arrive through results.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        self.connection = connection
    }

    deinit { PQfinish(connection) }

    /// Whether the connection is still usable (false once the server closed it).
    var isHealthy: Bool { PQstatus(connection) == CONNECTION_OK }

    /// Whether the session runs over TLS.
    var usesTLS: Bool { PQsslInUse(connection) == 1 }

    /// The socket, for `poll` while waiting for notifications.
    var socket: Int32 { PQsocket(connection) }

    /// The statements with parameters prepared on this connection, by their text, with their
    /// names (``statementName(_:_:)``): each is parsed and planned by the server once per
    /// connection, then run from its cached plan (push and pull run thousands of times per
    /// connection, and the pulls are SQL functions the planner inlines, so planning them each
    /// time would cost more than running them).
    private var prepared: [String: String] = [:]

    /// Runs one statement with parameters in binary format and returns its rows in binary format.
    /// A statement with parameters is prepared on its first run on this connection.
    ///
    /// - Throws: ``PostgresError`` with the server's SQLSTATE and message, or
    ///   ``PostgresError/connectionFailed(_:)`` when the connection is gone.
    @discardableResult
    func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
        // Each parameter's bytes live in one buffer owned here until libpq returns.
        let encoded = parameters.map(\.binary)
        let types = parameters.map(\.typeOID)
        let lengths = encoded.map { Int32($0.count) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        let buffers = encoded.map { bytes -> UnsafeMutablePointer<CChar> in
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
            bytes.withUnsafeBytes { source in
                if let base = source.baseAddress {
                    UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: bytes.count)
                }
            }
            return buffer
        }
        defer { buffers.forEach { $0.deallocate() } }
        let values: [UnsafePointer<CChar>?] = buffers.map { UnsafePointer($0) }
        let count = Int32(parameters.count)
        guard !parameters.isEmpty else {
            return try check(PQexecParams(connection, sql, 0, nil, nil, nil, nil, 1))
        }
        let name: String
        if let known = prepared[sql] {
            name = known
        } else {
            name = Self.statementName(sql, types)
            do {
                _ = try check(PQprepare(connection, name, sql, count, types))
            } catch let error as PostgresError where error.sqlState == "42P05" {
                // Prepared already in this server session (behind a pooler, by another client):
                // the name says which text and types, so it is this statement.
            }
            prepared[sql] = name
        }
        do {
            return try check(
                PQexecPrepared(connection, name, count, values, lengths, formats, 1))
        } catch let error as PostgresError
            where error.sqlState == "26000" || error.sqlState == "0A000"
        {
            // The prepared statement is gone (a pooler that hands out another server session,
            // or DISCARD ALL) or its result's shape changed (a schema installed meanwhile): run
            // it unprepared this once, and prepare it again next time.
            prepared[sql] = nil
            _ = try? check(PQexec(connection, "DEALLOCATE \(name)"))
            return try check(
                PQexecParams(connection, sql, count, types, values, lengths, formats, 1))
        }
    }

    /// A prepared statement's name, from its text and parameter types: the same name always
    /// means the same statement, also in a server session a pooler shares between clients.
    static func statementName(_ sql: String, _ types: [UInt32]) -> String {
        // FNV-1a: stable across runs and platforms (Swift's hashValue is seeded).
        var hash = FNV1a64()
        hash.add(sql.utf8)
        for type in types { withUnsafeBytes(of: type.bigEndian) { hash.add($0) } }
        return "trove_sync_" + hash.hex
    }

    /// Runs a script of several statements (the server schema) in the simple query protocol.
    /// PQexec returns the last statement's result; a failure stops the script and is what it
    /// reports.
    func executeScript(_ sql: String) throws {
        _ = try check(PQexec(connection, sql))
    }

    /// Reads whatever the server sent (notifications) without blocking.
    ///
    /// - Throws: ``PostgresError/connectionFailed(_:)`` when the connection is gone.
    func consumeInput() throws {
        guard PQconsumeInput(connection) == 1 else {
            throw PostgresError.connectionFailed(Self.message(PQerrorMessage(connection)))
        }
    }

    /// The next notification already read, if any: its channel.
    func nextNotification() -> String? {
        guard let notification = PQnotifies(connection) else { return nil }
        defer { PQfreemem(notification) }
        return String(cString: notification.pointee.relname)
    }

    /// A SQL identifier, quoted by libpq (for LISTEN, which takes no parameters).
    func quotedIdentifier(_ name: String) throws -> String {
        guard let quoted = PQescapeIdentifier(connection, name, name.utf8.count) else {
            throw PostgresError.unexpectedResult(Self.message(PQerrorMessage(connection)))
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    /// Takes ownership of `result` and returns it if it succeeded; throws its error otherwise.
    private func check(_ result: OpaquePointer?) throws -> PostgresResult {
        guard let result else {
            throw PostgresError.connectionFailed(Self.message(PQerrorMessage(connection)))
        }
        let owned = PostgresResult(owning: result)
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return owned
        default:
            let field = { (code: UInt8) -> String? in
                PQresultErrorField(result, Int32(code)).map { String(cString: $0) }
            }
            let message = field(UInt8(ascii: "M")) ?? Self.message(PQresultErrorMessage(result))
            guard let state = field(UInt8(ascii: "C")), isHealthy else {
                // No SQLSTATE (the client noticed the failure) or the connection died with it.
                throw PostgresError.connectionFailed(message)
            }
            throw PostgresError.reported(sqlState: state, message: message)
        }
    }

    private static func message(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown error" }
        return String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
