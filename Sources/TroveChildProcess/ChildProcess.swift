import Foundation

// Benchmarks/ compiles this file into trove-bench, over the same C file under another target name.
#if canImport(CChildProcess)
    import CChildProcess
#else
    import CBenchChildProcess
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// A child process, in the shape of Foundation's `Process` (the same property names), started
/// with `posix_spawn` (`trove_spawn`): Foundation's `run()` on Linux can crash the process that
/// calls it (Sources/CChildProcess says how). `trove model install` and every test start their
/// children with this.
package final class ChildProcess: @unchecked Sendable {
    /// The program.
    package var executableURL: URL?
    /// Its arguments (without the program's name).
    package var arguments: [String] = []
    /// Its environment; nil for this process's.
    package var environment: [String: String]?
    /// Its working directory; nil for this process's.
    package var currentDirectoryURL: URL?
    /// A `Pipe` or a `FileHandle` (`FileHandle.nullDevice` for /dev/null); nil for this
    /// process's own.
    package var standardInput: Any?
    /// A `Pipe` or a `FileHandle`; nil for this process's own.
    package var standardOutput: Any?
    /// A `Pipe` or a `FileHandle`; nil for this process's own.
    package var standardError: Any?

    private let lock = NSLock()
    private var pid: pid_t = 0
    private var exit: (status: Int32, reason: Process.TerminationReason)?

    package init() {}

    /// Starts the child.
    ///
    /// - Throws: `POSIXError` when it cannot be started (no such program, for one).
    package func run() throws {
        guard let executableURL else { throw POSIXError(.ENOENT) }
        let path = executableURL.path
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        let streams = [
            Self.descriptor(standardInput, reading: true, default: 0),
            Self.descriptor(standardOutput, reading: false, default: 1),
            Self.descriptor(standardError, reading: false, default: 2),
        ]
        var child: pid_t = 0
        let rc = path.withCString { cPath in
            currentDirectoryURL.map { $0.path }.withOptionalCString { directory in
                trove_spawn(
                    cPath, argv, envp, directory, streams[0], streams[1], streams[2], &child)
            }
        }
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
        lock.withLock { pid = child }
        // The child holds its ends of the pipes now; this process keeps only the others, so a
        // read sees the end of the output when the child exits.
        (standardInput as? Pipe).map { try? $0.fileHandleForReading.close() }
        (standardOutput as? Pipe).map { try? $0.fileHandleForWriting.close() }
        (standardError as? Pipe).map { try? $0.fileHandleForWriting.close() }
    }

    /// The child's process id (0 before ``run()``).
    package var processIdentifier: Int32 { lock.withLock { pid } }

    /// Whether the child has started and not yet exited.
    package var isRunning: Bool { lock.withLock { pid != 0 && !reap() } }

    /// Waits for the child to exit.
    package func waitUntilExit() {
        while !lock.withLock({ pid == 0 || reap() }) { usleep(2_000) }
    }

    /// The exit status, or the signal that ended the child (0 before it exits).
    package var terminationStatus: Int32 { lock.withLock { exit?.status ?? 0 } }

    /// Whether it exited or a signal ended it.
    package var terminationReason: Process.TerminationReason {
        lock.withLock { exit?.reason ?? .exit }
    }

    /// Sends SIGINT.
    package func interrupt() { signal(SIGINT) }

    /// Sends SIGTERM.
    package func terminate() { signal(SIGTERM) }

    private func signal(_ number: Int32) {
        lock.withLock {
            if pid != 0, exit == nil { _ = kill(pid, number) }
        }
    }

    /// Collects the child's exit status if it has exited (once; under the lock, so never
    /// blocking: ``waitUntilExit()`` polls).
    private func reap() -> Bool {
        if exit != nil { return true }
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        guard reaped == pid else { return false }
        // The wait status's layout (sys/wait.h): the low 7 bits are the signal, else the exit
        // status is the next byte.
        let signal = status & 0x7f
        exit = signal == 0 ? ((status >> 8) & 0xff, .exit) : (signal, .uncaughtSignal)
        return true
    }

    private static func descriptor(_ stream: Any?, reading: Bool, default fd: Int32) -> Int32 {
        switch stream {
        case let pipe as Pipe:
            reading
                ? pipe.fileHandleForReading.fileDescriptor
                : pipe.fileHandleForWriting.fileDescriptor
        case let handle as FileHandle:
            handle === FileHandle.nullDevice ? -1 : handle.fileDescriptor
        default: fd
        }
    }
}

extension Optional where Wrapped == String {
    fileprivate func withOptionalCString<R>(_ body: (UnsafePointer<CChar>?) -> R) -> R {
        switch self {
        case .some(let string): string.withCString { body($0) }
        case .none: body(nil)
        }
    }
}
