import Foundation

/// The PostgreSQL server a sync benchmark runs against: the one `--server URL` names, or else a
/// server of its own, started as the tests start theirs (TestPostgresServer.swift, the tests'
/// own file) but with PostgreSQL's flushing defaults, and stopped when the benchmark ends. So
/// each sync figure is one command on a machine with Debian's postgresql-15.
struct BenchPostgres {
    /// A libpq URL of a role that may install the schema and create roles.
    let adminURL: String
    /// The server started for this run; nil when `--server` named one.
    let ownServer: TestPostgresServer?

    init(_ options: BenchOptions) throws {
        if let url = options.values["server"] {
            adminURL = url
            ownServer = nil
        } else {
            let server = try TestPostgresServer(durable: true)
            adminURL = server.adminURL
            ownServer = server
        }
    }

    /// One line for the parameters a benchmark prints.
    var description: String {
        ownServer.map { "a PostgreSQL server of its own (\($0.dataDirectory), fsync on)" }
            ?? "the server --server names"
    }
}
