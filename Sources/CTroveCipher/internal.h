// Declarations shared by the VFS's C files (not part of the module's public header).
#ifndef CTROVE_CIPHER_INTERNAL_H
#define CTROVE_CIPHER_INTERNAL_H

#include "CTroveCipher.h"

#include <sqlite3.h>

/// Process-wide counters (vfs.c); updated with relaxed atomics from any thread.
extern trove_cipher_statistics trove_cipher_counters;
#define COUNT(field, n) __atomic_fetch_add(&trove_cipher_counters.field, (uint64_t)(n), __ATOMIC_RELAXED)

/// Decrypt-ahead state of one open database file (readahead.c). Used by the file's reader, which
/// SQLite calls from one thread at a time, and by the file's worker thread.
typedef struct trove_readahead trove_readahead;

/// State for a database file whose pages start at `data_offset` of `real` (the default VFS's
/// file). Keeps `cipher` (the file's context, copied for the worker when it starts) and `real`
/// until freed. NULL when out of memory (the file then reads without decrypt-ahead).
trove_readahead *trove_readahead_new(sqlite3_file *real, trove_cipher_context *cipher, const uint8_t *file_id,
                                     sqlite3_int64 data_offset, uint32_t page_size);
/// Called with the ciphertext of page `page_number` just read into `page` (page_size bytes):
/// returns 1 when it replaced it with the worker's plaintext of byte-identical ciphertext, 0 when
/// the caller must decrypt it. Also follows the access pattern and moves the worker's window.
int trove_readahead_read(trove_readahead *readahead, uint32_t page_number, uint8_t *page);
/// TROVE_CIPHER_FCNTL_READAHEAD: waits (up to 5 s) until the worker is idle, then reports.
void trove_readahead_state(trove_readahead *readahead, trove_cipher_readahead_state *state);
/// Worker threads alive in the process.
int trove_readahead_live_workers(void);
/// Stops and joins the worker, zeroes every buffer, frees. Call before closing `real`.
void trove_readahead_free(trove_readahead *readahead);

#endif
