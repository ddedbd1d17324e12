import Foundation

// Benchmarks/ compiles this file and ChildProcess.swift into trove-bench itself.
#if canImport(TroveChildProcess)
    import TroveChildProcess
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real PostgreSQL server for tests: initdb into a temporary folder, a server on a loopback
/// port and a Unix socket, password authentication by SCRAM (scram-sha-256 in pg_hba.conf),
/// stopped when the test process ends (and by a watchdog if the process dies first).
///
/// PostgreSQL refuses to run as root; when the tests run as root the server runs as the Debian
/// `postgres` user. Missing binaries are an error, never a skip: run `scripts/setup.sh`.
///
/// ```swift
/// let server = try TestPostgresServer.shared()
/// try server.createRole("alice", password: "secret")
/// let url = server.url(user: "alice", password: "secret")
/// ```
public final class TestPostgresServer: @unchecked Sendable {
    // @unchecked Sendable: the fields are constants except `running`, which the lock guards.

    /// The superuser created by initdb (SCRAM password `adminPassword`).
    public let adminUser = "trove_admin"
    /// The superuser's password.
    public let adminPassword: String
    /// The database the tests use.
    public let database = "trove"
    /// The loopback TCP port (chosen once, at start).
    public private(set) var port = 0
    /// The folder holding the Unix socket (and the data folder).
    public let baseDirectory: String
    /// The cluster's data folder (what a sentinel scan reads).
    public let dataDirectory: String
    /// This machine's first non-loopback IPv4 address, on which the server also listens (for the
    /// TLS-by-default test); nil when the machine has none.
    public let externalAddress: String?
    /// The server binaries (initdb, pg_ctl, pg_dump, psql).
    public let binDirectory: String

    private let lock = NSLock()
    private var running = false
    private let runsAsPostgresUser: Bool
    private let durable: Bool

    /// The server every test in this process shares (started on first use).
    public static func shared() throws -> TestPostgresServer { try sharedServer.get() }

    private static let sharedServer: Result<TestPostgresServer, Error> = {
        let result = Result { try TestPostgresServer() }
        if case .success = result { atexit { TestPostgresServer.stopShared() } }
        return result
    }()

    private static func stopShared() {
        if case .success(let server) = sharedServer { server.shutDown() }
    }

    /// Creates and starts a server of its own (for a test that stops and restarts it); stopped and
    /// removed on deinit. `durable` keeps PostgreSQL's own defaults for flushing (`fsync`,
    /// `full_page_writes`), which benchmarks want and tests do not need.
    public init(durable: Bool = false) throws {
        self.durable = durable
        binDirectory = try Self.findBinaries()
        runsAsPostgresUser = getuid() == 0
        adminPassword = "admin-\(UUID().uuidString)"
        let base = "/tmp/trove-pg-\(UUID().uuidString.prefix(8))"
        baseDirectory = base
        dataDirectory = base + "/data"
        externalAddress = Self.firstExternalIPv4()
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        chmod(base, 0o700)
        if runsAsPostgresUser {
            guard let user = getpwnam("postgres") else {
                throw TestPostgresError.setup(
                    "running as root needs the Debian `postgres` user to run the server (scripts/setup.sh installs postgresql-15)"
                )
            }
            chown(base, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        let passwordFile = base + "/admin-password"
        try adminPassword.write(toFile: passwordFile, atomically: true, encoding: .utf8)
        if runsAsPostgresUser, let user = getpwnam("postgres") {
            chown(passwordFile, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        try runServerTool(
            "initdb",
            [
                "-D", dataDirectory, "-U", adminUser, "--pwfile=\(passwordFile)",
                "--auth=scram-sha-256",
                "-E", "UTF8", "--locale=C", "--no-sync",
            ])
        try? FileManager.default.removeItem(atPath: passwordFile)

        // A free port can be taken between the check and the start: try a few.
        var lastError: Error?
        for _ in 0..<5 where !running {
            do {
                port = try Self.freePort()
                try configure()
                try startServer()
                running = true
            } catch {
                lastError = error
            }
        }
        guard running else { throw lastError ?? TestPostgresError.setup("no port") }
        startWatchdog()
        try psql("CREATE DATABASE \(database)", database: "postgres")
    }

    deinit { shutDown() }

    /// A libpq URL for `user` on the loopback port (`host` overrides: a socket folder or another
    /// address), with `extra` query parameters appended.
    public func url(user: String, password: String, host: String = "127.0.0.1", extra: String = "")
        -> String
    {
        let encodedPassword =
            password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password
        var url = "postgresql://\(user):\(encodedPassword)@\(host):\(port)/\(database)"
        if !extra.isEmpty { url += "?" + extra }
        return url
    }

    /// The superuser's URL.
    public var adminURL: String { url(user: adminUser, password: adminPassword) }

    /// Creates a login role with a SCRAM password, member of the given roles.
    public func createRole(_ name: String, password: String, inRoles roles: [String] = []) throws {
        var sql = "CREATE ROLE \(name) LOGIN PASSWORD '\(password)'"
        if !roles.isEmpty { sql += " IN ROLE " + roles.joined(separator: ", ") }
        try psql(sql)
    }

    /// Runs SQL through `psql` (as the superuser unless told otherwise) and returns its unaligned,
    /// tuples-only output. Throws ``TestPostgresError/command(_:status:output:)`` on any error;
    /// its output is then the error's SQLSTATE alone when `sqlStateOnly` is set.
    @discardableResult
    public func psql(
        _ sql: String, user: String? = nil, password: String? = nil, database: String? = nil,
        sqlStateOnly: Bool = false
    ) throws -> String {
        let connection =
            "host=127.0.0.1 port=\(port) dbname=\(database ?? self.database) user=\(user ?? adminUser)"
        var arguments = [connection, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]
        if sqlStateOnly { arguments += ["-v", "VERBOSITY=sqlstate"] }
        return try runClient("psql", arguments + ["-c", sql], password: password ?? adminPassword)
    }

    /// Runs a SQL file through `psql` as the superuser.
    @discardableResult
    public func psql(file: String) throws -> String {
        let connection = "host=127.0.0.1 port=\(port) dbname=\(database) user=\(adminUser)"
        return try runClient(
            "psql", [connection, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-f", file],
            password: adminPassword)
    }

    /// `pg_dump` of the test database as the superuser (plain SQL).
    public func dump() throws -> String {
        let connection = "host=127.0.0.1 port=\(port) dbname=\(database) user=\(adminUser)"
        return try runClient("pg_dump", ["--dbname=\(connection)"], password: adminPassword)
    }

    /// Stops the server (fast shutdown: open connections are cut, as in a real restart).
    public func stop() throws {
        lock.lock()
        defer { lock.unlock() }
        guard running else { return }
        try runServerTool("pg_ctl", ["-D", dataDirectory, "-m", "fast", "-w", "stop"])
        running = false
    }

    /// Starts the server again on the same port and data.
    public func start() throws {
        lock.lock()
        defer { lock.unlock() }
        guard !running else { return }
        try startServer()
        running = true
    }

    /// Stops the server and removes its folder.
    private func shutDown() {
        try? stop()
        try? FileManager.default.removeItem(atPath: baseDirectory)
    }

    private func configure() throws {
        var listen = "127.0.0.1"
        if let externalAddress { listen += ",\(externalAddress)" }
        let settings = """

            # trove test server
            listen_addresses = '\(listen)'
            port = \(port)
            unix_socket_directories = '\(baseDirectory)'
            password_encryption = 'scram-sha-256'
            ssl = off
            max_connections = 300
            fsync = \(durable ? "on" : "off")
            full_page_writes = \(durable ? "on" : "off")
            log_min_messages = warning

            """
        let conf = dataDirectory + "/postgresql.conf"
        let original =
            try String(contentsOfFile: conf, encoding: .utf8)
            .components(separatedBy: "\n# trove test server").first ?? ""
        try (original + settings).write(toFile: conf, atomically: true, encoding: .utf8)
        var hba = """
            local all all scram-sha-256
            host all all 127.0.0.1/32 scram-sha-256
            host all all ::1/128 scram-sha-256

            """
        if let externalAddress { hba += "host all all \(externalAddress)/32 scram-sha-256\n" }
        try hba.write(toFile: dataDirectory + "/pg_hba.conf", atomically: true, encoding: .utf8)
        if runsAsPostgresUser, let user = getpwnam("postgres") {
            for file in [conf, dataDirectory + "/pg_hba.conf"] {
                chown(file, user.pointee.pw_uid, user.pointee.pw_gid)
            }
        }
    }

    private func startServer() throws {
        try runServerTool(
            "pg_ctl",
            ["-D", dataDirectory, "-l", baseDirectory + "/server.log", "-w", "-t", "60", "start"])
    }

    /// Stops the server if this process dies without running its exit handlers.
    private func startWatchdog() {
        var command = "\(binDirectory)/pg_ctl -D '\(dataDirectory)' -m immediate stop"
        if runsAsPostgresUser { command = "runuser -u postgres -- " + command }
        let script = """
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            if [ -d '\(dataDirectory)' ]; then \(command) >/dev/null 2>&1; rm -rf '\(baseDirectory)'; fi
            """
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }

    /// Runs a server tool, as the `postgres` user when this process is root.
    @discardableResult
    private func runServerTool(_ tool: String, _ arguments: [String]) throws -> String {
        if runsAsPostgresUser {
            return try Self.run(
                "/usr/sbin/runuser",
                ["-u", "postgres", "--", binDirectory + "/" + tool] + arguments)
        }
        return try Self.run(binDirectory + "/" + tool, arguments)
    }

    private func runClient(_ tool: String, _ arguments: [String], password: String) throws -> String
    {
        try Self.run(
            binDirectory + "/" + tool, arguments,
            environment: ["PGPASSWORD": password, "PGCONNECT_TIMEOUT": "10"])
    }

    /// Runs a program to completion; its output, or an error with its output on failure.
    ///
    /// posix_spawn and waitpid, with output in files: `pg_ctl start` leaves the server running
    /// with whatever it inherited, which with Foundation's Process (pipes, its own child
    /// monitoring) hung the caller.
    static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:])
        throws -> String
    {
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        env["LC_ALL"] = "C"
        let outputPath = NSTemporaryDirectory() + "trove-pg-out-\(UUID().uuidString)"
        let errorPath = NSTemporaryDirectory() + "trove-pg-err-\(UUID().uuidString)"
        defer {
            try? FileManager.default.removeItem(atPath: outputPath)
            try? FileManager.default.removeItem(atPath: errorPath)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(
            &actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(
            &actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] =
            env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard spawned == 0 else {
            throw TestPostgresError.setup(
                "cannot run \(path): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED/WEXITSTATUS, which Swift does not import: low 7 bits 0, code in bits 8-15.
        let exitCode: Int32 = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard exitCode == 0 else {
            let errorText = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            throw TestPostgresError.command(
                ([path] + arguments).joined(separator: " "), status: exitCode,
                output: text + errorText)
        }
        return text
    }

    private static func findBinaries() throws -> String {
        var candidates: [String] = []
        if let configured = ProcessInfo.processInfo.environment["TROVE_POSTGRES_BIN"] {
            candidates.append(configured)
        }
        candidates.append("/usr/lib/postgresql/15/bin")
        let versions =
            (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        candidates += versions.sorted().reversed().map { "/usr/lib/postgresql/\($0)/bin" }
        candidates += ["/usr/local/bin", "/opt/homebrew/bin", "/usr/bin"]
        for directory in candidates
        where FileManager.default.isExecutableFile(atPath: directory + "/initdb")
            && FileManager.default.isExecutableFile(atPath: directory + "/pg_ctl")
        {
            return directory
        }
        throw TestPostgresError.setup(
            "PostgreSQL server binaries (initdb, pg_ctl) not found in \(candidates.joined(separator: ", ")): "
                + "run scripts/setup.sh (Debian: postgresql-15) or set TROVE_POSTGRES_BIN")
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestPostgresError.setup("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                guard bind(fd, pointer, length) == 0 else { return -1 }
                return getsockname(fd, pointer, &length)
            }
        }
        guard bound == 0 else { throw TestPostgresError.setup("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func firstExternalIPv4() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr,
                address.pointee.sa_family == sa_family_t(AF_INET),
                entry.pointee.ifa_flags & UInt32(IFF_UP) != 0,
                entry.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0
            else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let ok = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                var addr = inet.pointee.sin_addr
                return inet_ntop(AF_INET, &addr, &text, socklen_t(INET_ADDRSTRLEN)) != nil
            }
            if ok { return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } }
        }
        return nil
    }
}

/// Why the test server could not do what a test asked.
public enum TestPostgresError: Error, CustomStringConvertible {
    /// The server could not be set up (binaries or the `postgres` user missing, no port).
    case setup(String)
    /// A server or client program failed.
    case command(String, status: Int32, output: String)

    public var description: String {
        switch self {
        case .setup(let message): return "test PostgreSQL: \(message)"
        case .command(let command, let status, let output):
            return "test PostgreSQL: `\(command)` exited with \(status): \(output)"
        }
    }
}
