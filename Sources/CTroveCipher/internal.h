// Declarations shared by the VFS's C files (not part of the module's public header).
#ifndef CTROVE_CIPHER_INTERNAL_H
#define CTROVE_CIPHER_INTERNAL_H

#include "CTroveCipher.h"

#include <sqlite3.h>

/// Big-endian integers in the file's headers, and an all-zero check (vfs.c, pagemap.c).
static inline void trove_put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline uint32_t trove_get32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline int trove_is_zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
}

/// Process-wide counters (vfs.c); updated with relaxed atomics from any thread.
extern trove_cipher_statistics trove_cipher_counters;
#define COUNT(field, n) __atomic_fetch_add(&trove_cipher_counters.field, (uint64_t)(n), __ATOMIC_RELAXED)

/// Decrypt-ahead state of one open database file (readahead.c). Used by the file's reader, which
/// SQLite calls from one thread at a time, and by the file's worker thread.
typedef struct trove_readahead trove_readahead;

/// State for a database file whose pages start at `data_offset` of `real` (the default VFS's
/// file), laid out as `trove_pagemap_page_index` says for `group_pages` (0: one after another). Keeps `cipher` (the file's context, copied for the worker when it starts) and `real`
/// until freed. NULL when out of memory (the file then reads without decrypt-ahead).
trove_readahead *trove_readahead_new(sqlite3_file *real, trove_cipher_context *cipher, const uint8_t *file_id,
                                     sqlite3_int64 data_offset, uint32_t page_size, uint32_t group_pages);
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

/// AES-256-GCM with VAES and VPCLMULQDQ (gcm_vaes.c; x86-64 with AVX-512). The keyed contexts
/// use it when the CPU has them; answers equal OpenSSL's. A key holds the AES schedule and the
/// powers of the hash key; freeing zeroes it.
typedef struct trove_gcm_key trove_gcm_key;
int trove_gcm_vaes_available(void);
trove_gcm_key *trove_gcm_vaes_key_new(const uint8_t *key);
trove_gcm_key *trove_gcm_vaes_key_copy(const trove_gcm_key *source);
void trove_gcm_vaes_key_free(trove_gcm_key *key);
void trove_gcm_vaes_seal(const trove_gcm_key *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_length,
                         const uint8_t *input, size_t length, uint8_t *output, uint8_t *tag);
int trove_gcm_vaes_open(const trove_gcm_key *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_length,
                        const uint8_t *input, size_t length, uint8_t *output, const uint8_t *tag);

/// The page map of a format-2 database file (pagemap.c): the current tag of every page, kept in
/// the file and checked on every whole-page read. One per open file, used from one thread at a time.
typedef struct trove_pagemap trove_pagemap;

/// What the page map reads and writes through: the default VFS's file, the file's key and
/// identity, its page size and the offset of its first page.
typedef struct trove_pagemap_io {
    sqlite3_file *real;
    trove_cipher_context *cipher;
    const uint8_t *file_id;
    uint32_t page_size;
    sqlite3_int64 data_offset;
} trove_pagemap_io;

/// Data pages per group (one map page's worth of tags).
uint32_t trove_pagemap_group_pages(uint32_t page_size);
/// Where data page `page` (1-based) is, in pages from the first page; `group_pages` 0: page - 1.
sqlite3_int64 trove_pagemap_page_index(uint32_t group_pages, uint32_t page);
/// Data pages in a file of `physical_pages` whole pages (map slots excluded), and whether a
/// partial page after them would be a data page.
sqlite3_int64 trove_pagemap_data_pages(uint32_t group_pages, sqlite3_int64 physical_pages, int *partial_is_data);
/// Whole pages a file of `data_pages` data pages occupies (with the map slots of its groups).
sqlite3_int64 trove_pagemap_physical_pages(uint32_t group_pages, sqlite3_int64 data_pages);

trove_pagemap *trove_pagemap_new(uint32_t page_size);
void trove_pagemap_free(trove_pagemap *map);
/// Re-reads the root records and reloads the map when another connection changed it. Returns a
/// SQLite result code for I/O failures; a map that does not verify sets the broken state instead.
int trove_pagemap_refresh(trove_pagemap *map, const trove_pagemap_io *io);
/// Whether the last refresh found no root that verifies (tampered, swapped or rolled-back map).
int trove_pagemap_is_broken(const trove_pagemap *map);
/// 0 when `tag` is the current tag of `page`.
int trove_pagemap_check(const trove_pagemap *map, uint32_t page, const uint8_t *tag);
/// Whether the map knows a current version of `page` (so it must exist in the file).
int trove_pagemap_has(const trove_pagemap *map, uint32_t page);
/// Before the first page of a new file: writes the first root (synced).
int trove_pagemap_begin(trove_pagemap *map, const trove_pagemap_io *io);
/// Records the tag of a page just written.
int trove_pagemap_set(trove_pagemap *map, uint32_t page, const uint8_t *tag);
/// Forgets pages after `pages` (the file was truncated to that many).
void trove_pagemap_truncate(trove_pagemap *map, uint32_t pages);
/// Writes the changed groups and a new root (not synced: the caller's sync, if any, follows).
int trove_pagemap_flush(trove_pagemap *map, const trove_pagemap_io *io);

#endif
