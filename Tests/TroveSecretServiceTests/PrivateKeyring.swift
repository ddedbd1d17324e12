import CTestSessionBus
import Foundation
import Testing
import Trove
import TroveTestSupport

/// The private D-Bus session bus of this test process: one `dbus-daemon` with a temporary
/// configuration and socket, started on first use and ended when the process exits. Its address
/// is the process's `DBUS_SESSION_BUS_ADDRESS` from before `main` (CTestSessionBus): a `setenv`
/// while tests run would race every thread reading the environment.
///
/// One bus for the whole process because GDBus keeps the process's session-bus connection once
/// made (libsecret's calls hold it), so every test after the first talks to the same bus; each
/// test gets its own keyring daemon on it (``PrivateKeyring``).
final class SessionBus: Sendable {
    /// The folder of the bus socket, chosen before `main` and removed at exit (CTestSessionBus).
    let directory: String
    /// The bus address (`unix:path=...`), the process's `DBUS_SESSION_BUS_ADDRESS` from the start.
    let address: String
    let pid: pid_t
    /// What opening a key-store database did before this process ever reached a bus (with the
    /// bus address leading nowhere): the "no keyring at all" case, which can only be seen before
    /// GDBus has a connection.
    let withoutBus: Result<Void, any Error>

    /// The bus, started on first use. - Throws: when dbus-daemon is missing or fails.
    static func shared() throws -> SessionBus { try started.get() }
    private static let started = Result { try SessionBus() }

    private init() throws {
        let dbusDaemon = try PrivateKeyring.tool("dbus-daemon")
        guard let chosen = trove_test_session_bus_directory() else {
            throw PrivateKeyring.KeyringError.failed("no folder for the private session bus")
        }
        let directory = String(cString: chosen)
        let address = "unix:path=\(directory)/bus"
        (self.directory, self.address) = (directory, address)
        guard ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] == address else {
            throw PrivateKeyring.KeyringError.failed(
                "DBUS_SESSION_BUS_ADDRESS is not the private bus chosen before main")
        }
        // Nothing listens at the address yet.
        withoutBus = Result {
            _ = try Database(
                path: "\(directory)/nowhere.trove",
                encryption: SecretServiceKeyStoreTests.encryption("nowhere"))
        }
        let config = "\(directory)/session.conf"
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>\(address)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let started = try PrivateKeyring.run(
            dbusDaemon, ["--config-file=\(config)", "--fork", "--print-pid=1"])
        guard let pid = pid_t(started.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw PrivateKeyring.KeyringError.failed("dbus-daemon printed \(started)")
        }
        self.pid = pid
        busPID = pid
        atexit { if busPID > 0 { kill(busPID, SIGTERM) } }
    }
}

/// The bus daemon to end at exit (`atexit` takes no context).
nonisolated(unsafe) private var busPID: pid_t = 0

/// A private freedesktop keyring for one test: a `gnome-keyring-daemon` (secrets component) on
/// the process's private bus (``SessionBus``), with HOME and the XDG folders in a temporary
/// directory, so no real keyring is ever touched. The login keyring is created and unlocked
/// with ``password``; ``stop()`` ends the daemon. Tests using it run serialized.
///
/// Missing daemons are a failure, not a skip: CI installs them (scripts/setup.sh).
final class PrivateKeyring {
    static let password = "trove-test-password"

    let bus: SessionBus
    let directory: TemporaryDirectory
    private var keyringPID: pid_t = 0
    private var stopped = false

    /// Starts the keyring daemon and waits until its default collection is there.
    init() throws {
        bus = try SessionBus.shared()
        let keyringDaemon = try Self.tool("gnome-keyring-daemon")
        directory = try TemporaryDirectory(prefix: "trove-kr")
        for folder in ["home", "data", "config", "run"] {
            try FileManager.default.createDirectory(
                atPath: directory.path(folder), withIntermediateDirectories: true)
        }
        let passwordFile = directory.path("password")
        try Self.password.write(toFile: passwordFile, atomically: true, encoding: .utf8)
        keyringPID = try Self.spawn(
            keyringDaemon, ["--foreground", "--unlock", "--components=secrets"],
            environment: environment,
            input: passwordFile, output: directory.path("keyring.log"))
        // Ready once the default alias names the login collection.
        let deadline = Date().addingTimeInterval(20)
        while true {
            let reply =
                (try? send(
                    "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.ReadAlias",
                    ["string:default"]))
                ?? ""
            if reply.contains("/org/freedesktop/secrets/collection/") { break }
            guard Date() < deadline else {
                stop()
                throw KeyringError.failed(
                    "gnome-keyring-daemon did not provide a default collection: \(reply)")
            }
            usleep(100_000)
        }
    }

    /// The environment the daemons and tools run in: this keyring's bus and private folders.
    var environment: [String: String] {
        [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": directory.path("home"), "XDG_DATA_HOME": directory.path("data"),
            "XDG_CONFIG_HOME": directory.path("config"), "XDG_RUNTIME_DIR": directory.path("run"),
            "DBUS_SESSION_BUS_ADDRESS": bus.address,
        ]
    }

    /// Locks the default collection (the login keyring), as the session does on screen lock.
    func lock() throws {
        _ = try send(
            "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock",
            ["array:objpath:/org/freedesktop/secrets/aliases/default"])
    }

    /// Stores `secret` under service and account with `secret-tool`, as another program would.
    func storeWithSecretTool(_ secret: String, service: String, account: String) throws {
        _ = try Self.run(
            try Self.tool("secret-tool"),
            ["store", "--label=not a Trove key", "service", service, "account", account],
            environment: environment, input: secret)
    }

    /// What `secret-tool` finds under service and account (empty when nothing).
    func lookUpWithSecretTool(service: String, account: String) throws -> String {
        (try? Self.run(
            try Self.tool("secret-tool"), ["lookup", "service", service, "account", account],
            environment: environment))
            ?? ""
    }

    /// Ends the keyring daemon: the bus stays, with no Secret Service on it.
    func stop() {
        guard !stopped else { return }
        stopped = true
        kill(keyringPID, SIGTERM)
        var status: Int32 = 0
        waitpid(keyringPID, &status, 0)
    }

    deinit { stop() }

    // MARK: Tools

    enum KeyringError: Error, CustomStringConvertible {
        case missingTool(String)
        case failed(String)
        var description: String {
            switch self {
            case .missingTool(let name):
                "\(name) is not installed: the keyring tests need dbus-daemon, gnome-keyring-daemon, dbus-send and "
                    + "secret-tool (bash scripts/setup.sh installs them)"
            case .failed(let reason): reason
            }
        }
    }

    /// The path of an installed tool. - Throws: ``KeyringError/missingTool(_:)``.
    static func tool(_ name: String) throws -> String {
        for folder in ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin"] {
            let path = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw KeyringError.missingTool(name)
    }

    /// A D-Bus call to the Secret Service on this bus; returns the printed reply.
    private func send(_ object: String, _ method: String, _ arguments: [String]) throws -> String {
        try Self.run(
            try Self.tool("dbus-send"),
            ["--session", "--print-reply", "--dest=org.freedesktop.secrets", object, method]
                + arguments,
            environment: environment)
    }

    /// Runs a tool to its end, its output in a file (never a pipe: `dbus-daemon --fork` leaves
    /// its daemon holding the parent's output). - Returns: its standard output.
    /// - Throws: when it fails.
    @discardableResult
    static func run(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil,
        input: String? = nil
    )
        throws -> String
    {
        let scratch = try TemporaryDirectory(prefix: "trove-kr-run")
        let (inputFile, outputFile) = (scratch.path("in"), scratch.path("out"))
        try (input ?? "").write(toFile: inputFile, atomically: true, encoding: .utf8)
        let pid = try spawn(
            path, arguments, environment: environment, input: inputFile, output: outputFile)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw KeyringError.failed(
                "\(path) \(arguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
        return text
    }

    /// Starts `path` with stdin from `input` and stdout and stderr to `output`. - Returns: its pid.
    static func spawn(
        _ path: String, _ arguments: [String], environment: [String: String]?, input: String,
        output: String
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let environment = (environment ?? ProcessInfo.processInfo.environment).map { "\($0)=\($1)" }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        // The test's thread blocks signals (a dispatch worker): the daemons must not inherit that,
        // or SIGTERM never reaches them.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw KeyringError.failed(
                "\(path) could not start: \(String(cString: strerror(result)))")
        }
        return pid
    }
}
