// trove-bench sync-postgres: push and pull of sealed change sets through PostgresTransport (the
// trove_sync functions, row-level security, NOTIFY) against the limit: the same payload bytes
// inserted and selected through raw libpq (binary arrays, one multi-row INSERT per batch; a
// binary SELECT per page) into a plain table with the same keys.
import CBenchLibPQ
import Foundation
import TroveSync

func runSyncPostgresBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    guard !options.has("help") else {
        print("""
            trove-bench sync-postgres [--server URL] [--changes N] [--payload BYTES] [--batch B] [--page P] [--rounds R]
              URL: a libpq URL of a role that may install the schema and create roles (a scratch database);
              without it, a PostgreSQL 15 server of its own (Debian's, fsync on) is started and stopped.
              N change sets (default 100,000) of BYTES random bytes (default 512), R rounds alternating:
                push    PostgresTransport.push, B change sets per call (default 100, as SyncSpace pushes)
                limit   the same bytes: INSERT ... SELECT FROM unnest(binary arrays), B rows per statement
                pull    PostgresTransport.pull, P per call (default 200, as SyncSpace pulls)
                select  the same rows: binary SELECT ... WHERE seq > cursor ORDER BY seq LIMIT P
              Both tables are analyzed between the pushes and the pulls (as autovacuum would), and
              emptied after each round (the limit's dropped, the round's change sets deleted).
              Prints changes/s per round and Trove/limit ratios (median).
            """)
        return
    }
    let postgres = try BenchPostgres(options)
    let adminURL = postgres.adminURL
    print("PostgreSQL: \(postgres.description)")
    let count = options.int("changes", 100_000)
    let size = options.int("payload", 512)
    let batch = options.int("batch", 100)
    let page = options.int("page", 200)
    let rounds = options.int("rounds", 3)
    let admin = try RawPostgres(adminURL)
    print("sync-postgres: \(count) change sets of \(size) bytes, pushes of \(batch), pulls of \(page), \(rounds) rounds, server \(admin.serverVersion)")

    _ = try await PostgresTransport.installServerSchema(url: adminURL)
    let role = "bench_device_\(getpid())"
    let password = UUID().uuidString
    try admin.exec("DROP ROLE IF EXISTS \(role)")
    try admin.exec("CREATE ROLE \(role) LOGIN PASSWORD '\(password)' IN ROLE trove_sync_device")
    let deviceURL = "host=\(admin.host) port=\(admin.port) dbname=\(admin.database) user=\(role) password=\(password)"
    let transport = try PostgresTransport(url: deviceURL)
    defer { transport.close() }

    var random = BenchRandom(state: 0x5e9c_0de)
    let payloads: [Data] = (0..<count).map { _ in Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }) }
    let device = "bench-device-0123456789abcdef0123"
    var ratios: (push: [Double], pull: [Double]) = ([], [])
    let clock = ContinuousClock()
    func rate(_ duration: Duration) -> Double {
        Double(count) / (Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    for round in 0..<rounds {
        let space = "bench-\(getpid())-\(round)"
        try await transport.createSpace(space)
        let table = "bench_limit_\(getpid())_\(round)"
        try admin.exec("""
            CREATE TABLE \(table) (space_id bigint NOT NULL, server_sequence bigint NOT NULL, device text NOT NULL,
              device_sequence bigint NOT NULL, payload bytea NOT NULL,
              PRIMARY KEY (space_id, server_sequence), UNIQUE (space_id, device, device_sequence));
            ALTER TABLE \(table) ALTER COLUMN payload SET STORAGE EXTERNAL
            """)
        var pushRate = 0.0
        var limitInsertRate = 0.0
        for step in (round % 2 == 0 ? ["trove", "limit"] : ["limit", "trove"]) {
            let start = clock.now
            for first in stride(from: 0, to: count, by: batch) {
                let range = first..<min(count, first + batch)
                if step == "trove" {
                    let sets = range.map { SealedChangeSet(device: device, deviceSequence: Int64($0 + 1), payload: payloads[$0]) }
                    let sequences = try await transport.push(sets, space: space)
                    precondition(sequences.last == Int64(range.upperBound))
                } else {
                    try admin.execBinary(
                        "INSERT INTO \(table) SELECT 1, s, d, s, p FROM unnest($1::bigint[], $2::text[], $3::bytea[]) AS u (s, d, p)",
                        [BinaryArray.int8(range.map { Int64($0 + 1) }), BinaryArray.text(range.map { _ in device }),
                         BinaryArray.bytea(range.map { payloads[$0] })])
                }
            }
            if step == "trove" { pushRate = rate(clock.now - start) } else { limitInsertRate = rate(clock.now - start) }
        }
        // Statistics for both tables, as autovacuum would gather them on a live server: without
        // them the planner may sort each page's remaining rows instead of walking the key.
        try admin.exec("ANALYZE \(table); ANALYZE trove_sync.changes")
        var pullRate = 0.0
        var selectRate = 0.0
        for step in (round % 2 == 0 ? ["limit", "trove"] : ["trove", "limit"]) {
            let start = clock.now
            var cursor: Int64 = 0
            var bytes = 0
            while cursor < Int64(count) {
                if step == "trove" {
                    let sets = try await transport.pull(space: space, after: cursor, limit: page)
                    bytes += sets.reduce(0) { $0 + $1.payload.count }
                    cursor = sets.last?.serverSequence ?? Int64(count)
                } else {
                    let (last, read) = try admin.selectPage(
                        "SELECT server_sequence, device, device_sequence, payload FROM \(table) "
                            + "WHERE space_id = 1 AND server_sequence > $1 ORDER BY server_sequence LIMIT \(page)", after: cursor)
                    bytes += read
                    cursor = last ?? Int64(count)
                }
            }
            precondition(bytes == count * size, "read \(bytes) bytes")
            if step == "trove" { pullRate = rate(clock.now - start) } else { selectRate = rate(clock.now - start) }
        }
        // Each round starts from empty tables on both sides: the limit's table is dropped, and
        // the round's change sets leave the feed (else Trove's feed would hold every round so
        // far, and its pulls read a table larger than the limit's).
        try admin.exec("DROP TABLE \(table)")
        try admin.exec("DELETE FROM trove_sync.changes WHERE space_id = (SELECT id FROM trove_sync.spaces WHERE name = '\(space)')")
        try admin.exec("VACUUM trove_sync.changes")
        ratios.push.append(pushRate / limitInsertRate)
        ratios.pull.append(pullRate / selectRate)
        print(String(format: "round %d: push %8.0f/s  limit insert %8.0f/s  (%.2f)   pull %8.0f/s  limit select %8.0f/s  (%.2f)",
                     round + 1, pushRate, limitInsertRate, pushRate / limitInsertRate, pullRate, selectRate, pullRate / selectRate))
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    print(String(format: "median Trove/limit: push %.2f, pull %.2f (target at least 0.80 both ways at 1,000 per push)", median(ratios.push), median(ratios.pull)))
    try admin.exec("DROP OWNED BY \(role); DROP ROLE \(role)")
}

/// A bare libpq connection for the limit side (no Trove code in the way).
final class RawPostgres {
    private let connection: OpaquePointer

    init(_ url: String) throws {
        guard let connection = PQconnectdb(url), PQstatus(connection) == CONNECTION_OK else {
            throw SyncBenchError("cannot connect to the --server URL")
        }
        self.connection = connection
    }

    deinit { PQfinish(connection) }

    var host: String { String(cString: PQhost(connection)) }
    var port: String { String(cString: PQport(connection)) }
    var database: String { String(cString: PQdb(connection)) }
    var serverVersion: String { "PostgreSQL \(PQserverVersion(connection) / 10000).\(PQserverVersion(connection) % 10000)" }

    func exec(_ sql: String) throws {
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw SyncBenchError(String(cString: PQerrorMessage(connection)))
        }
    }

    func execBinary(_ sql: String, _ parameters: [[UInt8]]) throws {
        let result = run(sql, parameters)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw SyncBenchError(String(cString: PQerrorMessage(connection))) }
    }

    /// One page in binary; returns the last sequence and the payload bytes read.
    func selectPage(_ sql: String, after: Int64) throws -> (Int64?, Int) {
        var cursor: [UInt8] = []
        cursor.appendBig(after)
        let result = run(sql, [cursor])
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else { throw SyncBenchError(String(cString: PQerrorMessage(connection))) }
        let rows = PQntuples(result)
        var bytes = 0
        var last: Int64?
        for row in 0..<rows {
            // Copy every value out, as PostgresTransport does (the payload into Data).
            let payload = Data(bytes: PQgetvalue(result, row, 3), count: Int(PQgetlength(result, row, 3)))
            _ = String(cString: PQgetvalue(result, row, 1))
            bytes += payload.count
            var value: UInt64 = 0
            let pointer = UnsafeRawPointer(PQgetvalue(result, row, 0)!)
            for i in 0..<8 { value = value << 8 | UInt64(pointer.load(fromByteOffset: i, as: UInt8.self)) }
            last = Int64(bitPattern: value)
        }
        return (last, bytes)
    }

    private func run(_ sql: String, _ parameters: [[UInt8]]) -> OpaquePointer? {
        let buffers = parameters.map { bytes -> UnsafeMutablePointer<CChar> in
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
            bytes.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            return buffer
        }
        defer { buffers.forEach { $0.deallocate() } }
        let values: [UnsafePointer<CChar>?] = buffers.map { UnsafePointer($0) }
        let lengths = parameters.map { Int32($0.count) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        return PQexecParams(connection, sql, Int32(parameters.count), nil, values, lengths, formats, 1)
    }
}

/// One-dimensional arrays in PostgreSQL's binary format (array_send's layout).
enum BinaryArray {
    static func int8(_ values: [Int64]) -> [UInt8] { encode(elementType: 20, values.map { v in var b: [UInt8] = []; b.appendBig(v); return b }) }
    static func text(_ values: [String]) -> [UInt8] { encode(elementType: 25, values.map { Array($0.utf8) }) }
    static func bytea(_ values: [Data]) -> [UInt8] { encode(elementType: 17, values.map { Array($0) }) }

    private static func encode(elementType: UInt32, _ elements: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        out.appendBig(Int32(1))
        out.appendBig(Int32(0))
        out.appendBig(elementType)
        out.appendBig(Int32(elements.count))
        out.appendBig(Int32(1))
        for element in elements {
            out.appendBig(Int32(element.count))
            out.append(contentsOf: element)
        }
        return out
    }
}

struct SyncBenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Array where Element == UInt8 {
    mutating func appendBig<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}
