import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Somewhere text goes: the process's stdout or stderr, or a buffer in tests.
protocol TextSink: Sendable {
    func write(_ text: String)
}

/// Writes to a file descriptor of the process (1 = stdout, 2 = stderr), unbuffered.
struct FileDescriptorSink: TextSink {
    let descriptor: Int32

    init(descriptor: Int32) { self.descriptor = descriptor }

    func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                #if canImport(Glibc)
                    Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #else
                    Darwin.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #endif
            }
            if written < 0 {
                if errno == EINTR { continue }
                return  // a closed pipe (`trove search x | head -1`): nothing useful left to do
            }
            offset += written
        }
        bytes.removeAll()
    }

    /// Whether this descriptor is a terminal.
    var isTerminal: Bool { isatty(descriptor) == 1 }
}

/// Collects everything written, for tests and for capturing output.
// @unchecked Sendable: every access to `buffer` holds `lock`.
final class BufferSink: TextSink, @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = ""

    init() {}

    func write(_ text: String) {
        lock.lock()
        buffer += text
        lock.unlock()
    }

    /// Everything written so far.
    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return buffer
    }
}

/// Where a command reads and writes, and what it knows about its surroundings.
///
/// The real tool uses ``Console/process``; tests build one with buffers and a chosen environment.
///
/// ```swift
/// let out = BufferSink()
/// let console = Console(out: out, err: BufferSink(), environment: ["HOME": "/tmp"],
///                       currentDirectory: "/tmp")
/// _ = await TroveCommandLine.run(["--version"], console: console)
/// out.text   // "trove 0.1.0\n"
/// ```
package struct Console: Sendable {
    var out: any TextSink
    var err: any TextSink
    /// Whether stdout is a terminal (colors, pretty tables).
    var stdoutIsTerminal: Bool
    /// Whether stderr is a terminal (progress bar).
    var stderrIsTerminal: Bool
    /// Whether stdin is a terminal (a person typing rather than a pipe).
    var stdinIsTerminal: Bool = false
    /// Reads all of stdin; nil when there is none to read.
    var readStandardInput: @Sendable () -> String?
    var environment: [String: String]
    var currentDirectory: String

    init(
        out: any TextSink, err: any TextSink, stdoutIsTerminal: Bool = false,
        stderrIsTerminal: Bool = false,
        readStandardInput: @escaping @Sendable () -> String? = { nil },
        environment: [String: String] = [:], currentDirectory: String
    ) {
        self.out = out
        self.err = err
        self.stdoutIsTerminal = stdoutIsTerminal
        self.stderrIsTerminal = stderrIsTerminal
        self.readStandardInput = readStandardInput
        self.environment = environment
        self.currentDirectory = currentDirectory
    }

    /// The process's own stdout, stderr, stdin and environment.
    package static var process: Console {
        let out = FileDescriptorSink(descriptor: 1)
        let err = FileDescriptorSink(descriptor: 2)
        var console = Console(
            out: out, err: err, stdoutIsTerminal: out.isTerminal, stderrIsTerminal: err.isTerminal,
            readStandardInput: {
                let data = FileHandle.standardInput.readDataToEndOfFile()
                return String(decoding: data, as: UTF8.self)
            },
            environment: ProcessInfo.processInfo.environment,
            currentDirectory: FileManager.default.currentDirectoryPath)
        console.stdinIsTerminal = isatty(0) == 1
        return console
    }

    /// Whether output to a stream should be colored: only on a terminal, never when `NO_COLOR`
    /// is set to a non-empty value (https://no-color.org), never with `--no-color` or
    /// `TERM=dumb`.
    func colorEnabled(terminal: Bool, noColorFlag: Bool) -> Bool {
        guard terminal, !noColorFlag else { return false }
        if let value = environment["NO_COLOR"], !value.isEmpty { return false }
        if environment["TERM"] == "dumb" { return false }
        return true
    }
}

/// ANSI styling that turns itself off when color is not wanted.
///
/// ```swift
/// Style(enabled: false).bold("3 results")   // "3 results"
/// Style(enabled: true).bold("3 results")    // "\u{1B}[1m3 results\u{1B}[0m"
/// ```
struct Style: Sendable {
    let enabled: Bool

    init(enabled: Bool) { self.enabled = enabled }

    private func wrap(_ text: String, _ code: String) -> String {
        enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    func bold(_ text: String) -> String { wrap(text, "1") }
    func dim(_ text: String) -> String { wrap(text, "2") }
    func red(_ text: String) -> String { wrap(text, "31") }
    func green(_ text: String) -> String { wrap(text, "32") }
    func yellow(_ text: String) -> String { wrap(text, "33") }
    func cyan(_ text: String) -> String { wrap(text, "36") }
    /// Matched words in snippets: bold yellow with color, plain without (piped output stays
    /// the note's own text).
    func highlight(_ text: String) -> String { wrap(text, "1;33") }
}
