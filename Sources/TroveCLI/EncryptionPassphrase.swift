import Foundation
import Trove
import TroveSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How `trove` opens encrypted databases: the passphrase comes from `TROVE_PASSWORD_FILE` (the
/// first line of that file), else `TROVE_PASSWORD`, else a prompt on the terminal with echo off,
/// as restic does. `trove index --encrypt` creates a new database encrypted.
enum EncryptionPassphrase {
    /// Opens `path` as plaintext or encrypted, whichever it is; `encrypt` creates a missing file
    /// encrypted.
    ///
    /// - Throws: ``CLIError/wrongPassphrase(_:)`` for a wrong or missing passphrase (exit 6);
    ///   ``CLIError/usage(_:command:)`` for `--encrypt` on an existing plaintext database.
    static func openDatabase(path: String, context: CommandContext, encrypt: Bool = false) throws
        -> Database
    {
        let info: EncryptionInfo?
        do {
            info = try EncryptionInfo.of(path: path)
        } catch let error as EncryptionError {
            throw CLIError.failure(error.description)
        }
        let exists =
            FileManager.default.fileExists(atPath: path)
            && ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) > 0
        if info == nil && exists {
            if encrypt {
                throw CLIError.usage(
                    "\(path) already exists and is not encrypted; --encrypt only creates new databases "
                        + "(use another --db path)", command: "index")
            }
            return try Database(path: path)
        }
        if info == nil && !encrypt { return try Database(path: path) }
        let passphrase = try passphrase(context: context, confirm: info == nil)
        do {
            return try Database(path: path, encryption: .passphrase(passphrase))
        } catch EncryptionError.wrongKey {
            throw CLIError.wrongPassphrase(
                "wrong passphrase for \(path) (from \(source(context)))")
        } catch let error as EncryptionError {
            throw CLIError.failure(error.description)
        }
    }

    /// Where the passphrase comes from, for messages.
    static func source(_ context: CommandContext) -> String {
        let environment = context.console.environment
        if environment["TROVE_PASSWORD_FILE"] != nil { return "TROVE_PASSWORD_FILE" }
        if environment["TROVE_PASSWORD"] != nil { return "TROVE_PASSWORD" }
        return "the terminal"
    }

    /// The passphrase, from the environment or the terminal.
    static func passphrase(context: CommandContext, confirm: Bool) throws -> String {
        let environment = context.console.environment
        if let file = environment["TROVE_PASSWORD_FILE"] {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CLIError.wrongPassphrase("cannot read TROVE_PASSWORD_FILE (\(file))")
            }
            let text = String(decoding: data, as: UTF8.self)
            let firstLine =
                text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init)
                ?? ""
            let passphrase = firstLine.hasSuffix("\r") ? String(firstLine.dropLast()) : firstLine
            guard !passphrase.isEmpty else {
                throw CLIError.wrongPassphrase("TROVE_PASSWORD_FILE (\(file)) is empty")
            }
            return passphrase
        }
        if let passphrase = environment["TROVE_PASSWORD"] {
            guard !passphrase.isEmpty else {
                throw CLIError.wrongPassphrase("TROVE_PASSWORD is empty")
            }
            return passphrase
        }
        guard context.console.stdinIsTerminal,
            let first = prompt("Passphrase for the database: ")
        else {
            throw CLIError.wrongPassphrase(
                "the database is encrypted: set TROVE_PASSWORD_FILE or TROVE_PASSWORD, or run on a terminal"
            )
        }
        guard !first.isEmpty else { throw CLIError.wrongPassphrase("the passphrase is empty") }
        if confirm {
            guard prompt("Repeat the passphrase: ") == first else {
                throw CLIError.wrongPassphrase("the two passphrases differ")
            }
        }
        return first
    }

    /// Reads one line from the terminal with echo off (restored on every path).
    static func prompt(_ text: String) -> String? {
        let fd = open("/dev/tty", O_RDWR)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        _ = text.withCString { write(fd, $0, strlen($0)) }
        var saved = termios()
        let canHide = tcgetattr(fd, &saved) == 0
        if canHide {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(fd, TCSAFLUSH, &quiet)
        }
        defer {
            if canHide { tcsetattr(fd, TCSAFLUSH, &saved) }
            _ = write(fd, "\n", 1)
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            bytes.append(byte)
        }
        defer { for i in bytes.indices { bytes[i] = 0 } }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
