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
/// On by default on machines with two or more cores; `TROVE_CIPHER_READAHEAD=0` in the
/// environment turns it off for the process. Costs up to 1 MiB and one thread per file while it
/// scans; the thread exits after 2 idle seconds and when the file closes.
///
/// ```swift
/// EncryptionReadAhead.isEnabled = false   // e.g. to measure without it
/// ```
public enum EncryptionReadAhead {
    /// Whether sequential reads are decrypted ahead (process-wide; takes effect on the next read).
    public static var isEnabled: Bool {
        get { trove_cipher_readahead_enabled() != 0 }
        set { trove_cipher_set_readahead(newValue ? 1 : 0) }
    }
}
