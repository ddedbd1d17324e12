import CSQLite
import CTroveCipher

/// Decrypt-ahead for sequential reads of encrypted database files.
///
/// When a connection reads an encrypted file's pages in order (a table scan, or a collection
/// loading its vectors on the first query after open), a worker thread of that file decrypts the
/// next pages on another core. A read uses the worker's plaintext only when the ciphertext it
/// reads from the file itself is byte-identical to the one the worker decrypted and verified, so
/// what SQLite gets is always the decryption of what is on disk at that moment: pages rewritten
/// since, or tampered with, are decrypted (and authenticated) by the reader as without it.
///
/// By default it runs only when a core looks idle (1-minute load average below the core count
/// minus a half): with every core busy the worker would just take turns with the reader and add
/// its copies. `TROVE_CIPHER_READAHEAD=0` (off) or `=2` (always) in the environment picks the
/// policy for the process. Costs 1 MiB per open file that has scanned (zeroed after 2 idle
/// seconds, freed when the file closes) and one thread per file while it scans (at most 8 in the
/// process; a thread exits after 2 idle seconds and when its file closes).
///
/// ```swift
/// EncryptionReadAhead.policy = .off   // e.g. to measure without it
/// ```
public enum EncryptionReadAhead {
    /// When sequential reads are decrypted ahead.
    public enum Policy: Sendable, Hashable {
        /// Never.
        case off
        /// When a core looks idle (the default; never on a 1-core machine).
        case whenACoreIsIdle
        /// Whenever a scan is seen, on machines with 2 or more cores.
        case always
    }

    /// The policy, process-wide; takes effect on the next read.
    public static var policy: Policy {
        get {
            switch Int(trove_cipher_readahead_enabled()) {
            case Int(TROVE_CIPHER_READAHEAD_OFF): .off
            case Int(TROVE_CIPHER_READAHEAD_ALWAYS): .always
            default: .whenACoreIsIdle
            }
        }
        set {
            let value =
                switch newValue {
                case .off: TROVE_CIPHER_READAHEAD_OFF
                case .whenACoreIsIdle: TROVE_CIPHER_READAHEAD_IDLE_CORE
                case .always: TROVE_CIPHER_READAHEAD_ALWAYS
                }
            trove_cipher_set_readahead(Int32(value))
        }
    }
}

/// What decrypt-ahead did for one connection's main database file (tests and diagnostics).
package struct ReadAheadState: Sendable, Equatable {
    /// Reads this connection's file served with the worker's plaintext.
    package var hits: UInt64
    /// Reads whose ciphertext on disk differed from what the worker had decrypted.
    package var misses: UInt64
    /// Pages the worker holds decrypted and verified (at most 64 listed), ascending.
    package var readyPages: [UInt32]
}

extension Connection {
    /// Waits (up to 5 s) until the main file's decrypt-ahead worker has finished its window, then
    /// reports its state; nil when the file has none (plaintext, never scanned, or switched off).
    package func readAheadState() -> ReadAheadState? {
        var state = trove_cipher_readahead_state()
        guard let handle,
            sqlite3_file_control(handle, "main", TROVE_CIPHER_FCNTL_READAHEAD, &state) == SQLITE_OK
        else { return nil }
        let ready = withUnsafeBytes(of: state.ready) {
            Array($0.bindMemory(to: UInt32.self).prefix(Int(state.ready_count)))
        }
        return ReadAheadState(hits: state.hits, misses: state.misses, readyPages: ready.sorted())
    }
}
