import Foundation
import Testing
import TroveTestSupport

@testable import TroveSync

/// `PostgresConnection` prepares each statement with parameters once per connection; these
/// tests hold it to the cases where a prepared statement stops being usable.
@Suite struct PostgresConnectionTests {
    private func connect() throws -> PostgresConnection {
        let device = try SyncServerFixture.newDevice()
        return try PostgresConnection(
            options: PostgresConnectionOptions(url: device.url, environment: [:]))
    }

    private func names(_ connection: PostgresConnection) throws -> [String] {
        let result = try connection.execute("SELECT name FROM pg_prepared_statements ORDER BY name")
        return try (0..<result.count).map { try result.string($0, 0) }
    }

    @Test func aStatementWithParametersIsPreparedOnceAndRunsFromItsPlanAfterwards() throws {
        let connection = try connect()
        for value in 1...3 {
            let result = try connection.execute("SELECT $1::int8 + 1", [.int64(Int64(value))])
            #expect(try result.integer(0, 0, as: Int64.self) == Int64(value) + 1)
        }
        let name = PostgresConnection.statementName(
            "SELECT $1::int8 + 1", [PostgresValue.int64(0).typeOID])
        #expect(try names(connection) == [name])
        #expect(name.hasPrefix("trove_sync_"))
        #expect(
            name
                != PostgresConnection.statementName(
                    "SELECT $1::int8 + 2", [PostgresValue.int64(0).typeOID]))
        #expect(
            name
                != PostgresConnection.statementName(
                    "SELECT $1::int8 + 1", [PostgresValue.text("").typeOID]))
    }

    @Test func aStatementPreparedAlreadyInTheSessionUnderItsNameIsUsed() throws {
        // Behind a pooler, another client may have prepared the same statement in this server
        // session: its name is the same, so preparing it again is not an error.
        let connection = try connect()
        let sql = "SELECT $1::text || '!'"
        let name = PostgresConnection.statementName(sql, [PostgresValue.text("").typeOID])
        try connection.execute("PREPARE \(name) (text) AS \(sql)")
        #expect(try connection.execute(sql, [.text("hello")]).string(0, 0) == "hello!")
        #expect(try names(connection) == [name])
    }

    @Test func aStatementDeallocatedOnTheServerRunsAgainAndIsPreparedAnew() throws {
        let connection = try connect()
        _ = try connection.execute("SELECT $1::text", [.text("before")])
        // What a pooler handing out another server session, or DISCARD ALL, leaves behind.
        try connection.execute("DEALLOCATE ALL")
        let result = try connection.execute("SELECT $1::text", [.text("after")])
        #expect(try result.string(0, 0) == "after")
        _ = try connection.execute("SELECT $1::text", [.text("again")])
        #expect(try names(connection).count == 1)
    }

    @Test func aStatementWhoseResultChangedShapeRunsUnpreparedOnceThenIsPreparedAgain() throws {
        let connection = try connect()
        let table =
            "shape_\(SyncServerFixture.uniqueSuffix().replacingOccurrences(of: "-", with: "_"))"
        try connection.execute("CREATE TEMP TABLE \(table) (a int8)")
        try connection.execute("INSERT INTO \(table) VALUES (7)")
        let sql = "SELECT * FROM \(table) WHERE a = $1"
        #expect(try connection.execute(sql, [.int64(7)]).count == 1)
        // A schema installed meanwhile: the server refuses the cached plan
        // ("cached plan must not change result type").
        try connection.execute("ALTER TABLE \(table) ADD COLUMN b text DEFAULT 'x'")
        let changed = try connection.execute(sql, [.int64(7)])
        #expect(changed.count == 1)
        #expect(try changed.string(0, 1) == "x")
        #expect(try connection.execute(sql, [.int64(7)]).count == 1)
    }

    @Test func aStatementThatFailsToPrepareIsNotKeptAndAnErrorKeepsItsSQLState() throws {
        let connection = try connect()
        #expect {
            try connection.execute("SELECT trove_sync.no_such_function($1)", [.int64(1)])
        } throws: { ($0 as? PostgresError)?.sqlState == "42883" }
        #expect(try names(connection).isEmpty)
        #expect {
            try connection.execute("SELECT trove_sync.space_id($1)", [.text("no such space")])
        } throws: { ($0 as? PostgresError)?.sqlState == "TS001" }
    }
}
