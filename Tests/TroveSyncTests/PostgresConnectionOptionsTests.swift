import Testing

@testable import TroveSync

@Suite struct PostgresConnectionOptionsTests {
    @Test(arguments: [
        "postgresql://alice@db.example.com/notes",
        "postgresql://alice@192.0.2.7:5432/notes",
        "host=db.example.com dbname=notes user=alice",
        "postgresql://alice@localhost,db.example.com/notes",
    ])
    func aRemoteHostRequiresTLSByDefault(url: String) throws {
        let options = try PostgresConnectionOptions(url: url, environment: [:])
        #expect(!options.isLocal)
        #expect(options.value("sslmode") == "require")
    }

    @Test(arguments: [
        "postgresql://alice@localhost/notes",
        "postgresql://alice@127.0.0.1:5432/notes",
        "postgresql://alice@[::1]:5432/notes",
        "postgresql://alice@%2Fvar%2Frun%2Fpostgresql/notes",
        "host=/tmp dbname=notes",
        "dbname=notes",
    ])
    func theLocalMachineNeedsNoTLS(url: String) throws {
        let options = try PostgresConnectionOptions(url: url, environment: [:])
        #expect(options.isLocal)
        #expect(options.value("sslmode") == nil)
    }

    @Test func theURLsOwnSSLModeWins() throws {
        let options = try PostgresConnectionOptions(
            url: "postgresql://alice@db.example.com/notes?sslmode=verify-full", environment: [:])
        #expect(options.value("sslmode") == "verify-full")
        #expect(options.parameters.filter { $0.key == "sslmode" }.count == 1)
    }

    @Test func aHostFromTheEnvironmentCountsToo() throws {
        let options = try PostgresConnectionOptions(
            url: "dbname=notes", environment: ["PGHOST": "db.example.com"])
        #expect(!options.isLocal)
        #expect(options.value("sslmode") == "require")
    }

    @Test func quotesAndBackslashesAreEscaped() throws {
        let options = try PostgresConnectionOptions(
            url: #"host=localhost password='it\'s \\ x'"#, environment: [:])
        #expect(options.value("password") == #"it's \ x"#)
        #expect(options.connectionString.contains(#"password='it\'s \\ x'"#))
    }

    @Test func anUnparsableURLIsATypedError() {
        #expect(throws: PostgresError.self) {
            try PostgresConnectionOptions(
                url: "postgresql://alice@db.example.com/notes?nonsense=1", environment: [:])
        }
    }
}
