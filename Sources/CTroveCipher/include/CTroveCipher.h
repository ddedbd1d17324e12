#ifndef CTROVE_CIPHER_H
#define CTROVE_CIPHER_H

// Trove's encrypting SQLite VFS: a shim over the platform's default VFS that seals every page of
// the main database file, of its WAL and of its rollback journal with AES-256-GCM, keeping the
// 12-byte nonce and 16-byte tag in the page's reserved bytes. Temporary files of an encrypted
// connection (sorts, VACUUM, statement journals, temp tables) are kept in memory.
//
// The physical main file is a 4,096-byte key header (written by TroveSQLite, see
// EncryptionHeader.swift) followed by SQLite's pages; the VFS hides the header from SQLite.
// Keys reach the VFS through key slots: TroveSQLite registers the unwrapped data key and the
// file's identity here and opens the file with the URI parameter `trove_slot=<id>`; the key bytes
// never appear in a filename. Documentation/ARCHITECTURE.md ("Encryption at rest") has the format.

#include <stddef.h>
#include <stdint.h>

#define TROVE_CIPHER_VFS_NAME "trove-cipher"
#define TROVE_CIPHER_SLOT_PARAMETER "trove_slot"
/// Bytes in front of SQLite's first page: the key header (two copies of one slot, see Swift).
#define TROVE_CIPHER_HEADER_SIZE 4096
/// Reserved bytes at the end of every page: nonce (12) + tag (16) + 4 zero bytes.
#define TROVE_CIPHER_RESERVE 32
#define TROVE_CIPHER_NONCE_SIZE 12
#define TROVE_CIPHER_TAG_SIZE 16
#define TROVE_CIPHER_KEY_SIZE 32
#define TROVE_CIPHER_FILE_ID_SIZE 16

/// Which file a page belongs to (part of the authenticated data, so a page can't move between them).
enum {
    TROVE_CIPHER_FILE_DATABASE = 1,
    TROVE_CIPHER_FILE_WAL = 2,
    TROVE_CIPHER_FILE_JOURNAL = 3,
    /// A page of the page map of a format-2 database file.
    TROVE_CIPHER_FILE_MAP = 4,
};

/// Why the VFS refused an operation (the last failure on the calling thread).
enum {
    TROVE_CIPHER_FAILURE_NONE = 0,
    /// A page's tag did not verify (tampered, moved, truncated or written with another key).
    TROVE_CIPHER_FAILURE_AUTHENTICATION = 1,
    /// Page 1 was written without the reserved bytes the cipher needs.
    TROVE_CIPHER_FAILURE_RESERVE = 2,
    /// A write would change the page size of an encrypted file.
    TROVE_CIPHER_FAILURE_PAGE_SIZE = 3,
    /// A write that is not one whole page at a page boundary.
    TROVE_CIPHER_FAILURE_UNALIGNED = 4,
    /// The key header is missing or belongs to another file than the key slot.
    TROVE_CIPHER_FAILURE_HEADER = 5,
    /// A page that authenticates but is not the version the page map records (an older copy of
    /// it put back), or a page the map records that is missing (the file was cut short).
    TROVE_CIPHER_FAILURE_STALE_PAGE = 6,
    /// The page map does not verify: its root records or map pages were altered, swapped, or
    /// replaced with older copies.
    TROVE_CIPHER_FAILURE_PAGE_MAP = 7,
};

/// The AEAD and key-derivation primitives. Linux: OpenSSL's libcrypto (installed by default).
/// Apple platforms: installed from Swift (CryptoKit, CommonCrypto) before the VFS is registered.
/// Every function returns 0 on success.
typedef struct trove_cipher_backend {
    int (*seal)(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_length,
                const uint8_t *input, size_t length, uint8_t *output, uint8_t *tag);
    int (*open)(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_length,
                const uint8_t *input, size_t length, uint8_t *output, const uint8_t *tag);
    int (*random)(uint8_t *output, size_t length);
    int (*pbkdf2_sha512)(const uint8_t *password, size_t password_length, const uint8_t *salt,
                         size_t salt_length, uint32_t iterations, uint8_t *output, size_t output_length);
} trove_cipher_backend;

/// Installs the primitives (Apple platforms). Must be called before `trove_cipher_register`.
void trove_cipher_set_backend(const trove_cipher_backend *backend);
/// Whether primitives are available (always on Linux; on Apple once Swift installed them).
int trove_cipher_has_backend(void);

/// AES-256-GCM through the backend. `output` may equal `input`. Returns 0 on success; `open`
/// returns nonzero when the tag does not verify.
int trove_cipher_seal(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_length,
                      const uint8_t *input, size_t length, uint8_t *output, uint8_t *tag);
int trove_cipher_open(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_length,
                      const uint8_t *input, size_t length, uint8_t *output, const uint8_t *tag);
int trove_cipher_random(uint8_t *output, size_t length);
int trove_cipher_pbkdf2_sha512(const uint8_t *password, size_t password_length, const uint8_t *salt,
                               size_t salt_length, uint32_t iterations, uint8_t *output,
                               size_t output_length);
/// Overwrites `length` bytes with zeros in a way the compiler can't drop.
void trove_cipher_zero(void *pointer, size_t length);

/// X25519 (RFC 7748) and HKDF-SHA256 (RFC 5869) for sync's device keys, through OpenSSL on Linux.
/// Apple platforms use CryptoKit from Swift instead; there these return -1. Return 0 on success.
/// Keys are 32 bytes; `x25519` fails for a peer key that gives an all-zero secret.
int trove_cipher_x25519_public_key(const uint8_t *private_key, uint8_t *public_key);
int trove_cipher_x25519(const uint8_t *private_key, const uint8_t *peer_public_key, uint8_t *shared);
int trove_cipher_hkdf_sha256(const uint8_t *secret, size_t secret_length, const uint8_t *salt,
                             size_t salt_length, const uint8_t *info, size_t info_length,
                             uint8_t *output, size_t output_length);

/// A key prepared once for many pages (on Linux an OpenSSL context holding the AES key schedule
/// and GCM hash key, so a page only sets its nonce). Not thread-safe: one per open file, which
/// SQLite uses from one thread at a time. Freeing it zeroes the key material.
typedef struct trove_cipher_context trove_cipher_context;
/// NULL when out of memory or when the backend is missing.
trove_cipher_context *trove_cipher_context_new(const uint8_t *key);
void trove_cipher_context_free(trove_cipher_context *context);
int trove_cipher_context_seal(trove_cipher_context *context, const uint8_t *nonce, const uint8_t *aad,
                              size_t aad_length, const uint8_t *input, size_t length, uint8_t *output,
                              uint8_t *tag);
int trove_cipher_context_open(trove_cipher_context *context, const uint8_t *nonce, const uint8_t *aad,
                              size_t aad_length, const uint8_t *input, size_t length, uint8_t *output,
                              const uint8_t *tag);
/// The next nonce for sealing with this context: a random 96-bit value drawn on first use (and
/// again after fork()), then incremented in its low 64 bits for every page. Two contexts repeat a
/// nonce only if their random starts land within one run of each other in 2^96 values: for
/// 2^20 contexts of one key writing 2^20 pages each, a chance of about 2^-36, smaller than with
/// a fresh random nonce per page (2^40 pages: about 2^-17). It replaces a call into the random
/// generator per page (~1-3 us with OpenSSL 3's DRBG and its locks, a fifth of sealing a 4 KB page).
int trove_cipher_context_nonce(trove_cipher_context *context, uint8_t *nonce);
/// Whether keyed contexts (the VFS's pages) use the VAES/VPCLMULQDQ implementation of
/// AES-256-GCM instead of OpenSSL's: on x86-64 CPUs with AVX-512, VAES and VPCLMULQDQ, unless the
/// environment variable TROVE_CIPHER_VAES=0 was set at first use. Same answers either way.
int trove_cipher_vaes_enabled(void);
/// The VAES implementation directly, for tests against OpenSSL: 0 on success; -1 when this CPU
/// lacks it (or, for open, when the tag does not verify).
int trove_cipher_vaes_seal(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_length,
                           const uint8_t *input, size_t length, uint8_t *output, uint8_t *tag);
int trove_cipher_vaes_open(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_length,
                           const uint8_t *input, size_t length, uint8_t *output, const uint8_t *tag);
/// A second context with the same key, for another thread (the VFS's decrypt-ahead worker), made
/// without the key bytes (the file's copy of the key was zeroed once its context existed).
trove_cipher_context *trove_cipher_context_copy(const trove_cipher_context *context);

/// Registers the VFS under TROVE_CIPHER_VFS_NAME (not as the default). Idempotent, thread-safe.
/// Returns a SQLite result code.
int trove_cipher_register(void);

/// Stores a data key and the file identity it belongs to; returns the slot id (> 0), or 0 when
/// every slot is taken. The VFS copies the key into each file it opens with this slot.
int trove_cipher_slot_add(const uint8_t *key, const uint8_t *file_id);
/// Zeroes and frees a slot. Files already open keep their own copy until they close.
void trove_cipher_slot_remove(int slot);

/// The last failure on the calling thread: one of TROVE_CIPHER_FAILURE_*, with the file kind
/// (TROVE_CIPHER_FILE_*) and the 1-based page number when it concerns a page.
int trove_cipher_last_failure(int *file, uint32_t *page);
void trove_cipher_clear_failure(void);

/// Seals one page in place: `page` holds `page_size` bytes; the first `plaintext_head` bytes stay
/// readable but are authenticated; the last TROVE_CIPHER_RESERVE bytes receive nonce and tag.
/// `extra` (may be NULL, at most 16 bytes) is additional authenticated data.
int trove_cipher_seal_page(const uint8_t *key, const uint8_t *file_id, int file, uint32_t page_number,
                           const uint8_t *extra, size_t extra_length, uint8_t *page, size_t page_size,
                           size_t plaintext_head);
/// Opens one page sealed by `trove_cipher_seal_page` in place and zeroes its reserved bytes.
/// Returns 0 when the tag verifies; otherwise nonzero and the page content is unspecified.
int trove_cipher_open_page(const uint8_t *key, const uint8_t *file_id, int file, uint32_t page_number,
                           const uint8_t *extra, size_t extra_length, uint8_t *page, size_t page_size,
                           size_t plaintext_head);

/// The same with a prepared key, from `input` into `output` (page_size bytes each; they may be
/// the same buffer, but must not otherwise overlap). Sealing reads SQLite's page and writes the
/// ciphertext elsewhere, and opening decrypts straight out of a read buffer, so neither copies
/// the page first.
int trove_cipher_seal_page_into(trove_cipher_context *cipher, const uint8_t *file_id, int file,
                                uint32_t page_number, const uint8_t *extra, size_t extra_length,
                                const uint8_t *input, uint8_t *output, size_t page_size, size_t plaintext_head);
int trove_cipher_open_page_into(trove_cipher_context *cipher, const uint8_t *file_id, int file,
                                uint32_t page_number, const uint8_t *extra, size_t extra_length,
                                const uint8_t *input, uint8_t *output, size_t page_size, size_t plaintext_head);

/// Counters for tests and diagnostics (process-wide, since the VFS was registered).
typedef struct trove_cipher_statistics {
    uint64_t pages_sealed;
    uint64_t pages_opened;
    uint64_t authentication_failures;
    uint64_t memory_files_opened;
    uint64_t memory_file_bytes_written;
    uint64_t wal_frames_unreadable;
    /// Format-2 files: map pages written, and whole-page reads refused as not the current version.
    uint64_t map_pages_written;
    uint64_t stale_pages_refused;
    /// Decrypt-ahead (see trove_cipher_set_readahead): pages the worker decrypted and verified,
    /// reads served with its plaintext (ciphertext byte-identical), reads whose ciphertext on disk
    /// differed from the worker's (decrypted by the reader instead), worker threads started.
    uint64_t readahead_pages_opened;
    uint64_t readahead_hits;
    uint64_t readahead_misses;
    uint64_t readahead_workers_started;
    /// Worker threads alive now (at most 8 in a process).
    uint64_t readahead_workers_live;
} trove_cipher_statistics;
void trove_cipher_get_statistics(trove_cipher_statistics *statistics);

/// Decrypt-ahead for sequential reads of an encrypted database file: when a connection reads
/// pages in order (a table scan), a worker thread of that file decrypts the next pages on another
/// core, and a read uses the worker's plaintext only when the ciphertext it reads itself is
/// byte-identical to the one the worker decrypted (so what it returns is always the decryption of
/// what is on disk now). Policies: off; when a core looks idle (the default: 1-minute load
/// average below cores - 0.5, never on 1 core); always (on 2 or more cores). The environment
/// variable TROVE_CIPHER_READAHEAD=0 or =2 picks off or always at first use. Takes effect on the
/// next read.
enum {
    TROVE_CIPHER_READAHEAD_OFF = 0,
    TROVE_CIPHER_READAHEAD_IDLE_CORE = 1,
    TROVE_CIPHER_READAHEAD_ALWAYS = 2,
};
void trove_cipher_set_readahead(int policy);
/// The current policy (TROVE_CIPHER_READAHEAD_*).
int trove_cipher_readahead_enabled(void);

/// sqlite3_file_control opcode (tests, diagnostics) on an encrypted main database: waits up to 5 s
/// for the file's decrypt-ahead worker to finish its window, then fills the struct below.
/// SQLITE_NOTFOUND when the file has no decrypt-ahead state (never scanned, or it is off).
#define TROVE_CIPHER_FCNTL_READAHEAD 0x54524131
#define TROVE_CIPHER_READAHEAD_LIST 64
typedef struct trove_cipher_readahead_state {
    /// This file's reads served by the worker, and reads whose ciphertext had changed.
    uint64_t hits, misses;
    /// Pages the worker holds decrypted and verified, ready for the reader (at most 64 listed).
    int ready_count;
    uint32_t ready[TROVE_CIPHER_READAHEAD_LIST];
} trove_cipher_readahead_state;

#endif
