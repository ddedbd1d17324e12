// The encrypting VFS. Registered under TROVE_CIPHER_VFS_NAME; wraps the default VFS.
//
// Files it sees, by the flags SQLite opens them with:
//   main database   key header (TROVE_CIPHER_HEADER_SIZE bytes, hidden from SQLite) + sealed pages;
//                   format 2 adds a page map among them (pagemap.c) that refuses older copies
//   WAL             32-byte header and 24-byte frame headers readable; frame pages sealed
//   main journal    headers, page numbers and checksums readable; page images sealed
//   temp files      (sorts, VACUUM, statement journals, temp tables) kept in memory, never on disk
//   anything else   (a super-journal: file names only) passed through
// A database, WAL or journal opened without a `trove_slot` URI parameter is passed through
// untouched (an ATTACHed plaintext file, or VACUUM INTO a plaintext copy).
//
// Sequential page reads of a main database file are decrypted ahead on another core
// (readahead.c), used only when the ciphertext read at the time matches byte for byte.
//
// The io_methods of sealed files are version 2, so SQLite never memory-maps them (mmap would hand
// SQLite the ciphertext).

#include "internal.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#ifndef SQLITE_IOERR_DATA
#define SQLITE_IOERR_DATA (SQLITE_IOERR | (32 << 8))
#endif

// MARK: Statistics and failures

trove_cipher_statistics trove_cipher_counters;

void trove_cipher_get_statistics(trove_cipher_statistics *out) {
#define LOAD(field) out->field = __atomic_load_n(&trove_cipher_counters.field, __ATOMIC_RELAXED)
    LOAD(pages_sealed);
    LOAD(pages_opened);
    LOAD(authentication_failures);
    LOAD(memory_files_opened);
    LOAD(memory_file_bytes_written);
    LOAD(wal_frames_unreadable);
    LOAD(map_pages_written);
    LOAD(stale_pages_refused);
    LOAD(readahead_pages_opened);
    LOAD(readahead_hits);
    LOAD(readahead_misses);
    LOAD(readahead_workers_started);
#undef LOAD
    out->readahead_workers_live = (uint64_t)trove_readahead_live_workers();
}

// Thread-local: SQLite runs a statement's I/O on the calling thread, so the Swift layer reads
// the failure right after the failing call returns, on the same thread.
static _Thread_local int failure_kind;
static _Thread_local int failure_file;
static _Thread_local uint32_t failure_page;

static void record_failure(int kind, int file, uint32_t page) {
    failure_kind = kind;
    failure_file = file;
    failure_page = page;
    if (kind == TROVE_CIPHER_FAILURE_AUTHENTICATION) COUNT(authentication_failures, 1);
    if (kind == TROVE_CIPHER_FAILURE_STALE_PAGE) COUNT(stale_pages_refused, 1);
}

int trove_cipher_last_failure(int *file, uint32_t *page) {
    if (file) *file = failure_file;
    if (page) *page = failure_page;
    return failure_kind;
}

void trove_cipher_clear_failure(void) { record_failure(TROVE_CIPHER_FAILURE_NONE, 0, 0); }

// MARK: Key slots

#define SLOT_COUNT 256

typedef struct {
    int generation;  // 0: free. Part of the slot id, so a stale id never finds a reused slot.
    uint8_t key[TROVE_CIPHER_KEY_SIZE];
    uint8_t file_id[TROVE_CIPHER_FILE_ID_SIZE];
} key_slot;

static key_slot slots[SLOT_COUNT];
static int next_generation = 1;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

int trove_cipher_slot_add(const uint8_t *key, const uint8_t *file_id) {
    int id = 0;
    pthread_mutex_lock(&slots_lock);
    for (int i = 0; i < SLOT_COUNT; i++) {
        if (slots[i].generation == 0) {
            slots[i].generation = next_generation;
            next_generation = next_generation >= 0x7fffff ? 1 : next_generation + 1;
            memcpy(slots[i].key, key, TROVE_CIPHER_KEY_SIZE);
            memcpy(slots[i].file_id, file_id, TROVE_CIPHER_FILE_ID_SIZE);
            id = (slots[i].generation << 8) | i;
            break;
        }
    }
    pthread_mutex_unlock(&slots_lock);
    return id;
}

void trove_cipher_slot_remove(int id) {
    if (id <= 0) return;
    int index = id & 0xff;
    pthread_mutex_lock(&slots_lock);
    if (slots[index].generation == (id >> 8)) {
        trove_cipher_zero(&slots[index], sizeof slots[index]);
    }
    pthread_mutex_unlock(&slots_lock);
}

static int slot_copy(int id, uint8_t *key, uint8_t *file_id) {
    int found = 0;
    if (id <= 0) return 0;
    int index = id & 0xff;
    pthread_mutex_lock(&slots_lock);
    if (slots[index].generation != 0 && slots[index].generation == (id >> 8)) {
        memcpy(key, slots[index].key, TROVE_CIPHER_KEY_SIZE);
        memcpy(file_id, slots[index].file_id, TROVE_CIPHER_FILE_ID_SIZE);
        found = 1;
    }
    pthread_mutex_unlock(&slots_lock);
    return found;
}

// MARK: Files

enum { KIND_PLAIN = 0, KIND_DATABASE = 1, KIND_WAL = 2, KIND_JOURNAL = 3, KIND_MEMORY = 4 };

#define WAL_HEADER 32
#define FRAME_HEADER 24

typedef struct cipher_file {
    sqlite3_file base;
    int kind;
    // Sealed files: the data key, keyed once at open (freed and zeroed on close), and the file
    // identity.
    trove_cipher_context *cipher;
    uint8_t file_id[TROVE_CIPHER_FILE_ID_SIZE];
    // Page size; 0 until learnt from page 1, the WAL header or the journal header.
    uint32_t page_size;
    // The frame header (WAL) or page number (journal) SQLite wrote last, and where: SQLite writes
    // it just before the page it describes, so sealing that page needs no read-back.
    sqlite3_int64 pending_offset;
    uint8_t pending[FRAME_HEADER];
    // One frame of scratch space (SCRATCH_SIZE), for partial reads, for reading a WAL frame with
    // its header in one call, and for the ciphertext of a write (SQLite's buffer is never
    // modified). Owned; allocated on first use.
    uint8_t *scratch;
    // Main database file: decrypt-ahead for sequential reads (readahead.c). Owned; created on
    // the first whole-page read while decrypt-ahead is on.
    trove_readahead *readahead;
    // Main database file: the key header's format (1, or 2 with a page map), and for format 2
    // the page map (pagemap.c; owned, created once the page size is known) and the data pages
    // per group of its layout (0 for format 1: pages one after another).
    int format;
    trove_pagemap *map;
    uint32_t group_pages;
    // Memory files: the content. Owned; grows to the file's size.
    uint8_t *memory;
    sqlite3_int64 memory_size, memory_capacity;
    // The default VFS's file, allocated right after this struct (szOsFile of the default VFS).
    sqlite3_file *real;
} cipher_file;

static sqlite3_vfs *default_vfs;

#define REAL(f) ((f)->real)
#define REAL_METHODS(f) ((f)->real->pMethods)

static int valid_page_size(uint32_t size) {
    return size >= 512 && size <= 65536 && (size & (size - 1)) == 0;
}

// Page size from the database header (bytes 16-17; 1 means 65,536).
static uint32_t header_page_size(const uint8_t *header) {
    uint32_t size = ((uint32_t)header[16] << 8) | header[17];
    return size == 1 ? 65536 : size;
}

#define SCRATCH_SIZE (65536 + FRAME_HEADER)

static int ensure_scratch(cipher_file *f) {
    if (f->scratch) return SQLITE_OK;
    f->scratch = sqlite3_malloc(SCRATCH_SIZE);
    return f->scratch ? SQLITE_OK : SQLITE_NOMEM;
}

// Reads from the real file; a short read is zero-filled and reported through *short_read.
static int real_read(cipher_file *f, void *buffer, int amount, sqlite3_int64 offset, int *short_read) {
    int rc = REAL_METHODS(f)->xRead(REAL(f), buffer, amount, offset);
    if (rc == SQLITE_IOERR_SHORT_READ) {
        *short_read = 1;
        return SQLITE_OK;
    }
    return rc;
}

// MARK: Main database file

// Learns the page size from page 1's readable head when SQLite has written it.
static int database_learn_page_size(cipher_file *f) {
    uint8_t head[100];
    int short_read = 0;
    if (f->page_size) return SQLITE_OK;
    int rc = real_read(f, head, sizeof head, TROVE_CIPHER_HEADER_SIZE, &short_read);
    if (rc != SQLITE_OK) return rc;
    if (short_read) return SQLITE_OK;  // no page 1 yet
    uint32_t size = header_page_size(head);
    if (valid_page_size(size)) f->page_size = size;
    return SQLITE_OK;
}

// Where SQLite's page `page_number` is in the real file.
static sqlite3_int64 database_page_offset(const cipher_file *f, uint32_t page_number) {
    return TROVE_CIPHER_HEADER_SIZE + trove_pagemap_page_index(f->group_pages, page_number) * (sqlite3_int64)f->page_size;
}

static trove_pagemap_io map_io(cipher_file *f) {
    trove_pagemap_io io = {REAL(f), f->cipher, f->file_id, f->page_size, TROVE_CIPHER_HEADER_SIZE};
    return io;
}

// Format 2, once the page size is known: the page map, created and loaded on first use and
// reloaded when another connection changed it (`refresh`).
static int database_map(cipher_file *f, int refresh) {
    if (f->format < 2 || !f->page_size) return SQLITE_OK;
    int created = 0;
    if (!f->map) {
        f->map = trove_pagemap_new(f->page_size);
        if (!f->map) return SQLITE_NOMEM;
        f->group_pages = trove_pagemap_group_pages(f->page_size);
        created = 1;
    }
    if (!created && !refresh) return SQLITE_OK;
    trove_pagemap_io io = map_io(f);
    return trove_pagemap_refresh(f->map, &io);
}

static int database_flush_map(cipher_file *f) {
    if (!f->map) return SQLITE_OK;
    trove_pagemap_io io = map_io(f);
    return trove_pagemap_flush(f->map, &io);
}

// Whether `tag` is the current version of the page. A mismatch reloads the map first: a WAL
// reader refreshes it when its read lock is taken, but a checkpoint in another connection can
// finish between that and SQLite's reading how far the WAL was copied back, after which SQLite
// reads those pages from this file.
static int database_page_is_current(cipher_file *f, uint32_t page_number, const uint8_t *tag) {
    if (trove_pagemap_check(f->map, page_number, tag) == 0) return 1;
    if (database_map(f, 1) != SQLITE_OK || trove_pagemap_is_broken(f->map)) return 0;
    return trove_pagemap_check(f->map, page_number, tag) == 0;
}

static int database_read(cipher_file *f, uint8_t *buffer, int amount, sqlite3_int64 offset) {
    int rc = database_learn_page_size(f);
    if (rc != SQLITE_OK) return rc;
    if ((rc = database_map(f, 0)) != SQLITE_OK) return rc;
    if (!f->page_size) {
        // An empty database: everything reads as zeros past the end.
        memset(buffer, 0, (size_t)amount);
        return SQLITE_IOERR_SHORT_READ;
    }
    if ((rc = ensure_scratch(f)) != SQLITE_OK) return rc;
    if (f->map && trove_pagemap_is_broken(f->map)) {
        // Perhaps read while a writer replaced it twice: read it again before giving up.
        if ((rc = database_map(f, 1)) != SQLITE_OK) return rc;
        if (trove_pagemap_is_broken(f->map)) {
            record_failure(TROVE_CIPHER_FAILURE_PAGE_MAP, TROVE_CIPHER_FILE_DATABASE, 0);
            return SQLITE_IOERR_DATA;
        }
    }
    const sqlite3_int64 size = f->page_size;
    const sqlite3_int64 end = offset + amount;
    int beyond_end = 0;
    for (sqlite3_int64 start = (offset / size) * size; start < end; start += size) {
        uint32_t page_number = (uint32_t)(start / size) + 1;
        sqlite3_int64 from = offset > start ? offset : start;
        sqlite3_int64 to = end < start + size ? end : start + size;
        int whole = from == start && to == start + size;
        uint8_t *page = whole ? buffer + (start - offset) : f->scratch;
        int short_read = 0;
        if (beyond_end) {
            memset(buffer + (from - offset), 0, (size_t)(to - from));
            continue;
        }
        const sqlite3_int64 physical = database_page_offset(f, page_number);
        rc = real_read(f, page, (int)size, physical, &short_read);
        if (rc != SQLITE_OK) return rc;
        if (short_read) {
            sqlite3_int64 file_size = 0;
            rc = REAL_METHODS(f)->xFileSize(REAL(f), &file_size);
            if (rc != SQLITE_OK) return rc;
            if (file_size <= physical && f->map && trove_pagemap_has(f->map, page_number)) {
                // The map has a version of this page: the file was cut short.
                record_failure(TROVE_CIPHER_FAILURE_STALE_PAGE, TROVE_CIPHER_FILE_DATABASE, page_number);
                return SQLITE_IOERR_DATA;
            }
            if (file_size <= physical) {
                // Past the end: SQLite expects zeros and SQLITE_IOERR_SHORT_READ.
                beyond_end = 1;
                memset(buffer + (from - offset), 0, (size_t)(to - from));
                continue;
            }
            // Part of a page: the file was cut inside it.
            record_failure(TROVE_CIPHER_FAILURE_AUTHENTICATION, TROVE_CIPHER_FILE_DATABASE, page_number);
            return SQLITE_IOERR_DATA;
        }
        // The tag, for the page map (opening zeroes the reserved bytes).
        uint8_t tag[TROVE_CIPHER_TAG_SIZE];
        memcpy(tag, page + size - TROVE_CIPHER_RESERVE + TROVE_CIPHER_NONCE_SIZE, sizeof tag);
        // The worker's plaintext, if it decrypted exactly this ciphertext; else decrypt it here.
        int decrypted_ahead = 0;
        if (whole) {
            if (!f->readahead && trove_cipher_readahead_enabled() != TROVE_CIPHER_READAHEAD_OFF)
                f->readahead = trove_readahead_new(REAL(f), f->cipher, f->file_id, TROVE_CIPHER_HEADER_SIZE,
                                                   (uint32_t)size, f->group_pages);
            decrypted_ahead = f->readahead && trove_readahead_read(f->readahead, page_number, page);
        }
        if (!decrypted_ahead
            && trove_cipher_open_page_into(f->cipher, f->file_id, TROVE_CIPHER_FILE_DATABASE, page_number, NULL, 0,
                                           page, page, (size_t)size, page_number == 1 ? 100 : 0) != 0) {
            record_failure(TROVE_CIPHER_FAILURE_AUTHENTICATION, TROVE_CIPHER_FILE_DATABASE, page_number);
            return SQLITE_IOERR_DATA;
        }
        // Authentic, but is it the current version? (Not asked of the head of page 1 that SQLite
        // reads before its WAL or journal, which may hold a newer page 1 the map will record
        // at the next checkpoint; see pagemap.c.)
        if (f->map && (whole || page_number != 1) && !database_page_is_current(f, page_number, tag)) {
            if (!whole) trove_cipher_zero(page, (size_t)size);
            else trove_cipher_zero(buffer + (start - offset), (size_t)size);
            record_failure(TROVE_CIPHER_FAILURE_STALE_PAGE, TROVE_CIPHER_FILE_DATABASE, page_number);
            return SQLITE_IOERR_DATA;
        }
        COUNT(pages_opened, 1);
        if (!whole) memcpy(buffer + (from - offset), page + (from - start), (size_t)(to - from));
    }
    return beyond_end ? SQLITE_IOERR_SHORT_READ : SQLITE_OK;
}

static int database_write(cipher_file *f, const uint8_t *buffer, int amount, sqlite3_int64 offset) {
    int rc = database_learn_page_size(f);
    if (rc != SQLITE_OK) return rc;
    if (offset == 0 && amount >= 100) {
        uint32_t size = header_page_size(buffer);
        if (f->page_size && size != f->page_size) {
            record_failure(TROVE_CIPHER_FAILURE_PAGE_SIZE, TROVE_CIPHER_FILE_DATABASE, 1);
            return SQLITE_IOERR_WRITE;
        }
        if (buffer[20] != TROVE_CIPHER_RESERVE) {
            record_failure(TROVE_CIPHER_FAILURE_RESERVE, TROVE_CIPHER_FILE_DATABASE, 1);
            return SQLITE_IOERR_WRITE;
        }
        if (!f->page_size && valid_page_size(size) && (uint32_t)amount == size) f->page_size = size;
    }
    const sqlite3_int64 size = f->page_size;
    if (!size || amount != size || offset % size != 0) {
        record_failure(TROVE_CIPHER_FAILURE_UNALIGNED, TROVE_CIPHER_FILE_DATABASE,
                       size ? (uint32_t)(offset / size) + 1 : 0);
        return SQLITE_IOERR_WRITE;
    }
    if ((rc = ensure_scratch(f)) != SQLITE_OK) return rc;
    uint32_t page_number = (uint32_t)(offset / size) + 1;
    if ((rc = database_map(f, 0)) != SQLITE_OK) return rc;
    if (f->map) {
        if (trove_pagemap_is_broken(f->map)) {
            record_failure(TROVE_CIPHER_FAILURE_PAGE_MAP, TROVE_CIPHER_FILE_DATABASE, 0);
            return SQLITE_IOERR_WRITE;
        }
        trove_pagemap_io io = map_io(f);
        if ((rc = trove_pagemap_begin(f->map, &io)) != SQLITE_OK) return rc;
    }
    if (trove_cipher_seal_page_into(f->cipher, f->file_id, TROVE_CIPHER_FILE_DATABASE, page_number, NULL, 0,
                                    buffer, f->scratch, (size_t)size, page_number == 1 ? 100 : 0) != 0)
        return SQLITE_IOERR_WRITE;
    COUNT(pages_sealed, 1);
    rc = REAL_METHODS(f)->xWrite(REAL(f), f->scratch, (int)size, database_page_offset(f, page_number));
    if (rc == SQLITE_OK && f->map)
        rc = trove_pagemap_set(f->map, page_number, f->scratch + size - TROVE_CIPHER_RESERVE + TROVE_CIPHER_NONCE_SIZE);
    return rc;
}

// MARK: WAL

static int wal_learn_page_size(cipher_file *f) {
    uint8_t header[WAL_HEADER];
    int short_read = 0;
    if (f->page_size) return SQLITE_OK;
    int rc = real_read(f, header, sizeof header, 0, &short_read);
    if (rc != SQLITE_OK) return rc;
    if (!short_read && valid_page_size(trove_get32(header + 8))) f->page_size = trove_get32(header + 8);
    return SQLITE_OK;
}

// The frame header of frame `frame_start`: for a write, from the header SQLite wrote just before
// (`use_pending`); otherwise from the file, since another connection may have rewritten the frame
// since this one last wrote there.
static int wal_frame_header(cipher_file *f, sqlite3_int64 frame_start, uint8_t *header, int use_pending) {
    if (use_pending && f->pending_offset == frame_start) {
        memcpy(header, f->pending, FRAME_HEADER);
        return SQLITE_OK;
    }
    int short_read = 0;
    int rc = real_read(f, header, FRAME_HEADER, frame_start, &short_read);
    if (rc != SQLITE_OK) return rc;
    return short_read ? SQLITE_IOERR_SHORT_READ : SQLITE_OK;
}

static int wal_write(cipher_file *f, const uint8_t *buffer, int amount, sqlite3_int64 offset) {
    const sqlite3_int64 end = offset + amount;
    sqlite3_int64 position = offset;
    int rc;
    if (offset == 0 && amount >= WAL_HEADER && valid_page_size(trove_get32(buffer + 8))) f->page_size = trove_get32(buffer + 8);
    if ((rc = wal_learn_page_size(f)) != SQLITE_OK) return rc;
    if ((rc = ensure_scratch(f)) != SQLITE_OK) return rc;
    while (position < end) {
        const uint8_t *source = buffer + (position - offset);
        if (position < WAL_HEADER || !f->page_size) {
            sqlite3_int64 to = end < WAL_HEADER || !f->page_size ? end : WAL_HEADER;
            rc = REAL_METHODS(f)->xWrite(REAL(f), source, (int)(to - position), position);
            if (rc != SQLITE_OK) return rc;
            position = to;
            continue;
        }
        const sqlite3_int64 frame_size = f->page_size + FRAME_HEADER;
        const sqlite3_int64 frame_start = WAL_HEADER + ((position - WAL_HEADER) / frame_size) * frame_size;
        const sqlite3_int64 within = position - frame_start;
        if (within < FRAME_HEADER) {
            sqlite3_int64 to = end < frame_start + FRAME_HEADER ? end : frame_start + FRAME_HEADER;
            if (within == 0 && to == frame_start + FRAME_HEADER) {
                memcpy(f->pending, source, FRAME_HEADER);
                f->pending_offset = frame_start;
            }
            rc = REAL_METHODS(f)->xWrite(REAL(f), source, (int)(to - position), position);
            if (rc != SQLITE_OK) return rc;
            position = to;
            continue;
        }
        if (within != FRAME_HEADER || end - position < f->page_size) {
            record_failure(TROVE_CIPHER_FAILURE_UNALIGNED, TROVE_CIPHER_FILE_WAL, 0);
            return SQLITE_IOERR_WRITE;
        }
        uint8_t header[FRAME_HEADER];
        if ((rc = wal_frame_header(f, frame_start, header, 1)) != SQLITE_OK) return SQLITE_IOERR_WRITE;
        f->pending_offset = -1;
        // Only the page number from the frame header is authenticated: SQLite writes the salts and
        // checksums of a transaction's later frames as zeros when it rewrote an earlier frame in
        // place, and fills them in at commit (walRewriteChecksums), after the page was sealed.
        if (trove_cipher_seal_page_into(f->cipher, f->file_id, TROVE_CIPHER_FILE_WAL, trove_get32(header), NULL, 0,
                                        source, f->scratch, f->page_size, 0) != 0)
            return SQLITE_IOERR_WRITE;
        COUNT(pages_sealed, 1);
        rc = REAL_METHODS(f)->xWrite(REAL(f), f->scratch, (int)f->page_size, position);
        if (rc != SQLITE_OK) return rc;
        position += f->page_size;
    }
    return SQLITE_OK;
}

static int wal_read(cipher_file *f, uint8_t *buffer, int amount, sqlite3_int64 offset) {
    const sqlite3_int64 end = offset + amount;
    sqlite3_int64 position = offset;
    int any_short = 0;
    int rc;
    if ((rc = wal_learn_page_size(f)) != SQLITE_OK) return rc;
    if ((rc = ensure_scratch(f)) != SQLITE_OK) return rc;
    while (position < end) {
        uint8_t *target = buffer + (position - offset);
        int short_read = 0;
        if (position < WAL_HEADER || !f->page_size) {
            sqlite3_int64 to = end < WAL_HEADER || !f->page_size ? end : WAL_HEADER;
            rc = real_read(f, target, (int)(to - position), position, &short_read);
            if (rc != SQLITE_OK) return rc;
            any_short |= short_read;
            position = to;
            continue;
        }
        const sqlite3_int64 frame_size = f->page_size + FRAME_HEADER;
        const sqlite3_int64 frame_start = WAL_HEADER + ((position - WAL_HEADER) / frame_size) * frame_size;
        const sqlite3_int64 within = position - frame_start;
        if (within < FRAME_HEADER) {
            sqlite3_int64 to = end < frame_start + FRAME_HEADER ? end : frame_start + FRAME_HEADER;
            rc = real_read(f, target, (int)(to - position), position, &short_read);
            if (rc != SQLITE_OK) return rc;
            any_short |= short_read;
            position = to;
            continue;
        }
        const sqlite3_int64 data_start = frame_start + FRAME_HEADER;
        const sqlite3_int64 data_end = data_start + f->page_size;
        sqlite3_int64 to = end < data_end ? end : data_end;
        int whole = position == data_start && to == data_end;
        uint8_t *page = whole ? target : f->scratch + FRAME_HEADER;
        // A read that began at this frame's header is SQLite's recovery scan (or its checksum
        // rewrite), which treats a frame whose checksum fails as the end of the log: a frame
        // torn by a crash must end the log there, as it would without encryption.
        int whole_frame = offset <= frame_start;
        const uint8_t *header;
        const uint8_t *sealed;
        if (whole_frame) {
            // The header is already in SQLite's buffer (read by the step above).
            header = buffer + (frame_start - offset);
            rc = real_read(f, page, (int)f->page_size, data_start, &short_read);
            sealed = page;
        } else {
            // An ordinary page read (SQLite asks for the page alone): the frame header, which has
            // the page number, comes in the same read, and the page is decrypted out of scratch
            // into SQLite's buffer. Always from the file: another connection may have rewritten
            // the frame since this one last wrote there.
            rc = real_read(f, f->scratch, (int)(FRAME_HEADER + f->page_size), frame_start, &short_read);
            header = f->scratch;
            sealed = f->scratch + FRAME_HEADER;
        }
        if (rc != SQLITE_OK) return rc;
        if (short_read) {
            any_short = 1;
            memset(page, 0, f->page_size);
        } else if (trove_cipher_open_page_into(f->cipher, f->file_id, TROVE_CIPHER_FILE_WAL, trove_get32(header), NULL, 0,
                                               sealed, page, f->page_size, 0) != 0) {
            if (!whole_frame) {
                record_failure(TROVE_CIPHER_FAILURE_AUTHENTICATION, TROVE_CIPHER_FILE_WAL, trove_get32(header));
                return SQLITE_IOERR_DATA;
            }
            COUNT(wal_frames_unreadable, 1);
            memset(page, 0, f->page_size);
        } else {
            COUNT(pages_opened, 1);
        }
        if (!whole) memcpy(target, page + (position - data_start), (size_t)(to - position));
        position = to;
    }
    return any_short ? SQLITE_IOERR_SHORT_READ : SQLITE_OK;
}

// MARK: Rollback journal
//
// A journal is a header (a sector, page size at bytes 24-27) then records of a 4-byte page
// number, the page image and a 4-byte checksum. Headers sit at sector boundaries; page images at
// offsets that are 4 more than a multiple of 8, which no header or number ever is with the
// page's length, so the page images are recognised by offset and length alone.

static int journal_learn_page_size(cipher_file *f) {
    uint8_t header[28];
    int short_read = 0;
    if (f->page_size) return SQLITE_OK;
    int rc = real_read(f, header, sizeof header, 0, &short_read);
    if (rc != SQLITE_OK) return rc;
    if (!short_read && valid_page_size(trove_get32(header + 24))) f->page_size = trove_get32(header + 24);
    return SQLITE_OK;
}

static int journal_is_page(cipher_file *f, int amount, sqlite3_int64 offset) {
    return f->page_size && (uint32_t)amount == f->page_size && offset % 8 == 4 && offset >= 12;
}

static int journal_page_number(cipher_file *f, sqlite3_int64 offset, uint32_t *page_number, int use_pending) {
    uint8_t bytes[4];
    if (use_pending && f->pending_offset == offset - 4) {
        *page_number = trove_get32(f->pending);
        return SQLITE_OK;
    }
    int short_read = 0;
    int rc = real_read(f, bytes, 4, offset - 4, &short_read);
    if (rc != SQLITE_OK) return rc;
    if (short_read) return SQLITE_IOERR_SHORT_READ;
    *page_number = trove_get32(bytes);
    return SQLITE_OK;
}

static int journal_write(cipher_file *f, const uint8_t *buffer, int amount, sqlite3_int64 offset) {
    int rc;
    if (offset == 0 && amount >= 28 && valid_page_size(trove_get32(buffer + 24))) f->page_size = trove_get32(buffer + 24);
    if ((rc = journal_learn_page_size(f)) != SQLITE_OK) return rc;
    if (!journal_is_page(f, amount, offset)) {
        if (amount == 4) {
            memcpy(f->pending, buffer, 4);
            f->pending_offset = offset;
        }
        return REAL_METHODS(f)->xWrite(REAL(f), buffer, amount, offset);
    }
    uint32_t page_number = 0;
    if ((rc = journal_page_number(f, offset, &page_number, 1)) != SQLITE_OK) return SQLITE_IOERR_WRITE;
    f->pending_offset = -1;
    if ((rc = ensure_scratch(f)) != SQLITE_OK) return rc;
    if (trove_cipher_seal_page_into(f->cipher, f->file_id, TROVE_CIPHER_FILE_JOURNAL, page_number, NULL, 0,
                                    buffer, f->scratch, (size_t)amount, 0) != 0)
        return SQLITE_IOERR_WRITE;
    COUNT(pages_sealed, 1);
    return REAL_METHODS(f)->xWrite(REAL(f), f->scratch, amount, offset);
}

static int journal_read(cipher_file *f, uint8_t *buffer, int amount, sqlite3_int64 offset) {
    int rc;
    if ((rc = journal_learn_page_size(f)) != SQLITE_OK) return rc;
    if (!journal_is_page(f, amount, offset)) return REAL_METHODS(f)->xRead(REAL(f), buffer, amount, offset);
    uint32_t page_number = 0;
    rc = journal_page_number(f, offset, &page_number, 0);
    if (rc == SQLITE_IOERR_SHORT_READ) {
        memset(buffer, 0, (size_t)amount);
        return rc;
    }
    if (rc != SQLITE_OK) return rc;
    int short_read = 0;
    if ((rc = real_read(f, buffer, amount, offset, &short_read)) != SQLITE_OK) return rc;
    if (short_read) return SQLITE_IOERR_SHORT_READ;  // SQLite ignores a record cut by a crash
    if (trove_cipher_open_page_into(f->cipher, f->file_id, TROVE_CIPHER_FILE_JOURNAL, page_number, NULL, 0, buffer,
                                    buffer, (size_t)amount, 0) != 0) {
        // A hot journal that fails is not rolled back: the database stays as it is on disk and
        // the caller gets a typed error rather than pages of garbage.
        record_failure(TROVE_CIPHER_FAILURE_AUTHENTICATION, TROVE_CIPHER_FILE_JOURNAL, page_number);
        return SQLITE_IOERR_DATA;
    }
    COUNT(pages_opened, 1);
    return SQLITE_OK;
}

// MARK: io_methods for sealed files

static int sealed_close(sqlite3_file *file) {
    cipher_file *f = (cipher_file *)file;
    // The worker reads through the real file: stop it first.
    trove_readahead_free(f->readahead);
    f->readahead = NULL;
    // Pages written without a sync since (synchronous = OFF, VACUUM INTO): their map now.
    if (f->map) database_flush_map(f);
    trove_pagemap_free(f->map);
    f->map = NULL;
    int rc = REAL_METHODS(f)->xClose(REAL(f));
    trove_cipher_context_free(f->cipher);
    f->cipher = NULL;
    if (f->scratch) {
        trove_cipher_zero(f->scratch, SCRATCH_SIZE);
        sqlite3_free(f->scratch);
        f->scratch = NULL;
    }
    return rc;
}

static int sealed_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    cipher_file *f = (cipher_file *)file;
    switch (f->kind) {
    case KIND_PLAIN: return REAL_METHODS(f)->xRead(REAL(f), buffer, amount, offset);
    case KIND_DATABASE: return database_read(f, buffer, amount, offset);
    case KIND_WAL: return wal_read(f, buffer, amount, offset);
    default: return journal_read(f, buffer, amount, offset);
    }
}

static int sealed_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    cipher_file *f = (cipher_file *)file;
    switch (f->kind) {
    case KIND_PLAIN: return REAL_METHODS(f)->xWrite(REAL(f), buffer, amount, offset);
    case KIND_DATABASE: return database_write(f, buffer, amount, offset);
    case KIND_WAL: return wal_write(f, buffer, amount, offset);
    default: return journal_write(f, buffer, amount, offset);
    }
}

static sqlite3_int64 hidden_bytes(cipher_file *f) { return f->kind == KIND_DATABASE ? TROVE_CIPHER_HEADER_SIZE : 0; }

// Format 2: the real file's size for a database of `size` bytes of SQLite pages.
static sqlite3_int64 database_physical_size(cipher_file *f, sqlite3_int64 size) {
    if (!f->map) return size + hidden_bytes(f);
    sqlite3_int64 pages = size / f->page_size;
    return TROVE_CIPHER_HEADER_SIZE + trove_pagemap_physical_pages(f->group_pages, pages) * f->page_size
        + size % f->page_size;
}

static int sealed_truncate(sqlite3_file *file, sqlite3_int64 size) {
    cipher_file *f = (cipher_file *)file;
    if (f->kind == KIND_WAL || f->kind == KIND_JOURNAL) f->pending_offset = -1;
    if (f->kind == KIND_DATABASE) {
        int rc = database_learn_page_size(f);
        if (rc == SQLITE_OK) rc = database_map(f, 0);
        if (rc != SQLITE_OK) return rc;
        if (f->map) trove_pagemap_truncate(f->map, (uint32_t)(size / f->page_size));
        return REAL_METHODS(f)->xTruncate(REAL(f), database_physical_size(f, size));
    }
    return REAL_METHODS(f)->xTruncate(REAL(f), size + hidden_bytes(f));
}

static int sealed_sync(sqlite3_file *file, int flags) {
    cipher_file *f = (cipher_file *)file;
    // The map of the pages written, before the sync that makes them durable (pagemap.c).
    int rc = f->kind == KIND_DATABASE ? database_flush_map(f) : SQLITE_OK;
    if (rc != SQLITE_OK) return rc;
    return REAL_METHODS(f)->xSync(REAL(f), flags);
}

static int sealed_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    cipher_file *f = (cipher_file *)file;
    int rc = REAL_METHODS(f)->xFileSize(REAL(f), size);
    if (rc != SQLITE_OK) return rc;
    if (f->kind == KIND_DATABASE && f->format >= 2) {
        sqlite3_int64 physical = *size - TROVE_CIPHER_HEADER_SIZE;
        if (physical <= 0) {
            *size = 0;
            return SQLITE_OK;
        }
        if ((rc = database_learn_page_size(f)) != SQLITE_OK) return rc;
        if (!f->page_size) {
            *size = 0;
            return SQLITE_OK;
        }
        uint32_t k = trove_pagemap_group_pages(f->page_size);
        int partial_is_data = 0;
        sqlite3_int64 pages = trove_pagemap_data_pages(k, physical / f->page_size, &partial_is_data);
        *size = pages * f->page_size + (partial_is_data ? physical % f->page_size : 0);
        return SQLITE_OK;
    }
    *size -= hidden_bytes(f);
    if (*size < 0) *size = 0;
    return rc;
}

static int sealed_lock(sqlite3_file *file, int lock) {
    cipher_file *f = (cipher_file *)file;
    int rc = REAL_METHODS(f)->xLock(REAL(f), lock);
    // A transaction starts: another connection may have written pages and the map since.
    if (rc == SQLITE_OK && lock == SQLITE_LOCK_SHARED && f->kind == KIND_DATABASE && f->format >= 2
        && database_learn_page_size(f) == SQLITE_OK)
        rc = database_map(f, 1);
    return rc;
}

static int sealed_unlock(sqlite3_file *file, int lock) {
    cipher_file *f = (cipher_file *)file;
    return REAL_METHODS(f)->xUnlock(REAL(f), lock);
}

static int sealed_check_reserved_lock(sqlite3_file *file, int *out) {
    cipher_file *f = (cipher_file *)file;
    return REAL_METHODS(f)->xCheckReservedLock(REAL(f), out);
}

static int sealed_file_control(sqlite3_file *file, int op, void *argument) {
    cipher_file *f = (cipher_file *)file;
    if (f->kind == KIND_PLAIN) return REAL_METHODS(f)->xFileControl(REAL(f), op, argument);
    switch (op) {
    case SQLITE_FCNTL_MMAP_SIZE:
        // Refused: a mapping would give SQLite the ciphertext.
        *(sqlite3_int64 *)argument = 0;
        return SQLITE_OK;
    case SQLITE_FCNTL_SIZE_HINT: {
        sqlite3_int64 hint = f->kind == KIND_DATABASE ? database_physical_size(f, *(sqlite3_int64 *)argument)
                                                      : *(sqlite3_int64 *)argument + hidden_bytes(f);
        return REAL_METHODS(f)->xFileControl(REAL(f), op, &hint);
    }
    case SQLITE_FCNTL_SYNC:
    case SQLITE_FCNTL_CKPT_DONE:
        // Just before SQLite's commit point (also when synchronous = OFF skips xSync): the map
        // of the pages written must be in the file before SQLite stops keeping them elsewhere.
        if (f->kind == KIND_DATABASE) {
            int rc = database_flush_map(f);
            if (rc != SQLITE_OK) return rc;
        }
        return REAL_METHODS(f)->xFileControl(REAL(f), op, argument);
    case SQLITE_FCNTL_VFSNAME:
        *(char **)argument = sqlite3_mprintf("%s", TROVE_CIPHER_VFS_NAME);
        return SQLITE_OK;
    case TROVE_CIPHER_FCNTL_READAHEAD:
        if (f->kind != KIND_DATABASE || !f->readahead) return SQLITE_NOTFOUND;
        trove_readahead_state(f->readahead, (trove_cipher_readahead_state *)argument);
        return SQLITE_OK;
    default:
        return REAL_METHODS(f)->xFileControl(REAL(f), op, argument);
    }
}

static int sealed_sector_size(sqlite3_file *file) {
    cipher_file *f = (cipher_file *)file;
    return REAL_METHODS(f)->xSectorSize(REAL(f));
}

static int sealed_device_characteristics(sqlite3_file *file) {
    cipher_file *f = (cipher_file *)file;
    // Atomic-write capabilities would let SQLite skip the journal for writes whose alignment
    // the hidden key header shifts; the rest (power-safe overwrite, safe append) still hold.
    int mask = SQLITE_IOCAP_ATOMIC | SQLITE_IOCAP_ATOMIC512 | SQLITE_IOCAP_ATOMIC1K | SQLITE_IOCAP_ATOMIC2K
        | SQLITE_IOCAP_ATOMIC4K | SQLITE_IOCAP_ATOMIC8K | SQLITE_IOCAP_ATOMIC16K | SQLITE_IOCAP_ATOMIC32K
        | SQLITE_IOCAP_ATOMIC64K | SQLITE_IOCAP_BATCH_ATOMIC;
    int characteristics = REAL_METHODS(f)->xDeviceCharacteristics(REAL(f));
    return f->kind == KIND_PLAIN ? characteristics : characteristics & ~mask;
}

static int sealed_shm_map(sqlite3_file *file, int region, int size, int extend, void volatile **out) {
    cipher_file *f = (cipher_file *)file;
    return REAL_METHODS(f)->xShmMap(REAL(f), region, size, extend, out);
}

// WAL index lock slots (wal.c): the write lock, the checkpoint lock, then the read locks from 3.
#define WAL_WRITE_LOCK_SLOT 0
#define WAL_CHECKPOINT_LOCK_SLOT 1
#define WAL_FIRST_READ_LOCK_SLOT 3

static int sealed_shm_lock(sqlite3_file *file, int offset, int n, int flags) {
    cipher_file *f = (cipher_file *)file;
    int rc = REAL_METHODS(f)->xShmLock(REAL(f), offset, n, flags);
    // A WAL read transaction, write transaction or checkpoint starts: another connection may have
    // checkpointed pages, and written the map, since this one last looked (pagemap.c).
    if (rc == SQLITE_OK && f->map && (flags & SQLITE_SHM_LOCK)
        && (((flags & SQLITE_SHM_SHARED) && offset >= WAL_FIRST_READ_LOCK_SLOT)
            || ((flags & SQLITE_SHM_EXCLUSIVE) && offset <= WAL_CHECKPOINT_LOCK_SLOT)))
        rc = database_map(f, 1);
    return rc;
}

static void sealed_shm_barrier(sqlite3_file *file) {
    cipher_file *f = (cipher_file *)file;
    REAL_METHODS(f)->xShmBarrier(REAL(f));
}

static int sealed_shm_unmap(sqlite3_file *file, int delete_flag) {
    cipher_file *f = (cipher_file *)file;
    return REAL_METHODS(f)->xShmUnmap(REAL(f), delete_flag);
}

static const sqlite3_io_methods sealed_methods = {
    2,  // no xFetch/xUnfetch: never memory-mapped
    sealed_close, sealed_read, sealed_write, sealed_truncate, sealed_sync, sealed_file_size,
    sealed_lock, sealed_unlock, sealed_check_reserved_lock, sealed_file_control, sealed_sector_size,
    sealed_device_characteristics, sealed_shm_map, sealed_shm_lock, sealed_shm_barrier, sealed_shm_unmap,
    0, 0,
};

static int plain_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) {
    cipher_file *f = (cipher_file *)file;
    if (REAL_METHODS(f)->iVersion < 3 || !REAL_METHODS(f)->xFetch) {
        *out = 0;
        return SQLITE_OK;
    }
    return REAL_METHODS(f)->xFetch(REAL(f), offset, amount, out);
}

static int plain_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    cipher_file *f = (cipher_file *)file;
    if (REAL_METHODS(f)->iVersion < 3 || !REAL_METHODS(f)->xUnfetch) return SQLITE_OK;
    return REAL_METHODS(f)->xUnfetch(REAL(f), offset, pointer);
}

// Files passed through untouched (no key slot): the default VFS's behaviour, memory maps included.
static const sqlite3_io_methods plain_methods = {
    3,
    sealed_close, sealed_read, sealed_write, sealed_truncate, sealed_sync, sealed_file_size,
    sealed_lock, sealed_unlock, sealed_check_reserved_lock, sealed_file_control, sealed_sector_size,
    sealed_device_characteristics, sealed_shm_map, sealed_shm_lock, sealed_shm_barrier, sealed_shm_unmap,
    plain_fetch, plain_unfetch,
};

// MARK: Memory files (temporary files of encrypted connections)

static int memory_close(sqlite3_file *file) {
    cipher_file *f = (cipher_file *)file;
    if (f->memory) {
        trove_cipher_zero(f->memory, (size_t)f->memory_capacity);
        sqlite3_free(f->memory);
    }
    f->memory = NULL;
    f->memory_size = f->memory_capacity = 0;
    return SQLITE_OK;
}

static int memory_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    cipher_file *f = (cipher_file *)file;
    sqlite3_int64 available = f->memory_size - offset;
    if (available >= amount) {
        memcpy(buffer, f->memory + offset, (size_t)amount);
        return SQLITE_OK;
    }
    if (available < 0) available = 0;
    if (available) memcpy(buffer, f->memory + offset, (size_t)available);
    memset((uint8_t *)buffer + available, 0, (size_t)(amount - available));
    return SQLITE_IOERR_SHORT_READ;
}

static int memory_reserve(cipher_file *f, sqlite3_int64 size) {
    if (size <= f->memory_capacity) return SQLITE_OK;
    sqlite3_int64 capacity = f->memory_capacity ? f->memory_capacity : 65536;
    while (capacity < size) capacity *= 2;
    uint8_t *grown = sqlite3_malloc64((sqlite3_uint64)capacity);
    if (!grown) return SQLITE_IOERR_NOMEM;
    if (f->memory) {
        memcpy(grown, f->memory, (size_t)f->memory_size);
        trove_cipher_zero(f->memory, (size_t)f->memory_capacity);
        sqlite3_free(f->memory);
    }
    memset(grown + f->memory_size, 0, (size_t)(capacity - f->memory_size));
    f->memory = grown;
    f->memory_capacity = capacity;
    return SQLITE_OK;
}

static int memory_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    cipher_file *f = (cipher_file *)file;
    int rc = memory_reserve(f, offset + amount);
    if (rc != SQLITE_OK) return rc;
    memcpy(f->memory + offset, buffer, (size_t)amount);
    if (offset + amount > f->memory_size) f->memory_size = offset + amount;
    COUNT(memory_file_bytes_written, amount);
    return SQLITE_OK;
}

static int memory_truncate(sqlite3_file *file, sqlite3_int64 size) {
    cipher_file *f = (cipher_file *)file;
    if (size < f->memory_size) {
        memset(f->memory + size, 0, (size_t)(f->memory_size - size));
        f->memory_size = size;
    }
    return SQLITE_OK;
}

static int memory_sync(sqlite3_file *file, int flags) { (void)file; (void)flags; return SQLITE_OK; }

static int memory_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    *size = ((cipher_file *)file)->memory_size;
    return SQLITE_OK;
}

static int memory_lock(sqlite3_file *file, int lock) { (void)file; (void)lock; return SQLITE_OK; }

static int memory_check_reserved_lock(sqlite3_file *file, int *out) {
    (void)file;
    *out = 0;
    return SQLITE_OK;
}

static int memory_file_control(sqlite3_file *file, int op, void *argument) {
    (void)file;
    if (op == SQLITE_FCNTL_VFSNAME) {
        *(char **)argument = sqlite3_mprintf("%s(memory)", TROVE_CIPHER_VFS_NAME);
        return SQLITE_OK;
    }
    return SQLITE_NOTFOUND;
}

static int memory_sector_size(sqlite3_file *file) { (void)file; return 4096; }

static int memory_device_characteristics(sqlite3_file *file) {
    (void)file;
    return SQLITE_IOCAP_POWERSAFE_OVERWRITE | SQLITE_IOCAP_SAFE_APPEND | SQLITE_IOCAP_SEQUENTIAL;
}

static const sqlite3_io_methods memory_methods = {
    1,
    memory_close, memory_read, memory_write, memory_truncate, memory_sync, memory_file_size,
    memory_lock, memory_lock, memory_check_reserved_lock, memory_file_control, memory_sector_size,
    memory_device_characteristics, 0, 0, 0, 0, 0, 0,
};

// MARK: The VFS

// Checks that the key header's identity (in either of its two copies) matches the key slot's.
// Also learns the format (bytes 8-11: 1, or 2 with a page map).
static int check_header(cipher_file *f) {
    uint8_t header[16 + TROVE_CIPHER_FILE_ID_SIZE];
    static const sqlite3_int64 copies[2] = {0, 512};
    for (int i = 0; i < 2; i++) {
        int short_read = 0;
        int rc = real_read(f, header, sizeof header, copies[i], &short_read);
        if (rc != SQLITE_OK) return rc;
        uint32_t format = trove_get32(header + 8);
        if (!short_read && memcmp(header + 16, f->file_id, TROVE_CIPHER_FILE_ID_SIZE) == 0
            && (format == 1 || format == 2)) {
            f->format = (int)format;
            return SQLITE_OK;
        }
    }
    record_failure(TROVE_CIPHER_FAILURE_HEADER, TROVE_CIPHER_FILE_DATABASE, 0);
    return SQLITE_CANTOPEN;
}

static int vfs_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *out_flags) {
    cipher_file *f = (cipher_file *)file;
    memset(f, 0, sizeof *f);
    f->real = (sqlite3_file *)&f[1];
    f->pending_offset = -1;
    (void)vfs;
    int type = flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_TEMP_DB | SQLITE_OPEN_TRANSIENT_DB
                        | SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_TEMP_JOURNAL | SQLITE_OPEN_SUBJOURNAL
                        | SQLITE_OPEN_SUPER_JOURNAL | SQLITE_OPEN_WAL);
    if (type == SQLITE_OPEN_TEMP_DB || type == SQLITE_OPEN_TRANSIENT_DB || type == SQLITE_OPEN_TEMP_JOURNAL
        || type == SQLITE_OPEN_SUBJOURNAL) {
        // Temporary files never reach the disk: their content would be plaintext pages and rows.
        f->kind = KIND_MEMORY;
        f->base.pMethods = &memory_methods;
        if (out_flags) *out_flags = flags;
        COUNT(memory_files_opened, 1);
        return SQLITE_OK;
    }
    const char *slot = NULL;
    if (name && (type == SQLITE_OPEN_MAIN_DB || type == SQLITE_OPEN_MAIN_JOURNAL || type == SQLITE_OPEN_WAL))
        slot = sqlite3_uri_parameter(name, TROVE_CIPHER_SLOT_PARAMETER);
    if (slot) {
        uint8_t key[TROVE_CIPHER_KEY_SIZE];
        if (!slot_copy(atoi(slot), key, f->file_id)) {
            record_failure(TROVE_CIPHER_FAILURE_HEADER, TROVE_CIPHER_FILE_DATABASE, 0);
            return SQLITE_CANTOPEN;
        }
        f->cipher = trove_cipher_context_new(key);
        trove_cipher_zero(key, sizeof key);
        if (!f->cipher) return SQLITE_NOMEM;
        f->kind = type == SQLITE_OPEN_MAIN_DB ? KIND_DATABASE : type == SQLITE_OPEN_WAL ? KIND_WAL : KIND_JOURNAL;
    } else {
        f->kind = KIND_PLAIN;
    }
    int rc = default_vfs->xOpen(default_vfs, name, f->real, flags, out_flags);
    if (rc != SQLITE_OK) {
        // The default VFS leaves pMethods NULL on failure, so SQLite won't call our close.
        trove_cipher_context_free(f->cipher);
        f->cipher = NULL;
        return rc;
    }
    if (f->kind == KIND_PLAIN) {
        f->base.pMethods = &plain_methods;
        return SQLITE_OK;
    }
    f->base.pMethods = &sealed_methods;
    if (f->kind == KIND_DATABASE && (rc = check_header(f)) != SQLITE_OK) {
        sealed_close(file);
        f->base.pMethods = NULL;
        return rc;
    }
    return SQLITE_OK;
}

static int vfs_delete(sqlite3_vfs *vfs, const char *name, int sync_directory) {
    (void)vfs;
    return default_vfs->xDelete(default_vfs, name, sync_directory);
}

static int vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return default_vfs->xAccess(default_vfs, name, flags, out);
}

static int vfs_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return default_vfs->xFullPathname(default_vfs, name, size, out);
}

static void *vfs_dlopen(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return default_vfs->xDlOpen(default_vfs, name);
}

static void vfs_dlerror(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    default_vfs->xDlError(default_vfs, size, out);
}

static void (*vfs_dlsym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return default_vfs->xDlSym(default_vfs, handle, symbol);
}

static void vfs_dlclose(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    default_vfs->xDlClose(default_vfs, handle);
}

static int vfs_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return default_vfs->xRandomness(default_vfs, size, out);
}

static int vfs_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return default_vfs->xSleep(default_vfs, microseconds);
}

static int vfs_current_time(sqlite3_vfs *vfs, double *out) {
    (void)vfs;
    return default_vfs->xCurrentTime(default_vfs, out);
}

static int vfs_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return default_vfs->xGetLastError ? default_vfs->xGetLastError(default_vfs, size, out) : 0;
}

static int vfs_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    if (default_vfs->iVersion >= 2 && default_vfs->xCurrentTimeInt64)
        return default_vfs->xCurrentTimeInt64(default_vfs, out);
    double now = 0;
    int rc = default_vfs->xCurrentTime(default_vfs, &now);
    *out = (sqlite3_int64)(now * 86400000.0);
    return rc;
}

static sqlite3_vfs cipher_vfs = {
    2, 0, 0, 0, TROVE_CIPHER_VFS_NAME, 0,
    vfs_open, vfs_delete, vfs_access, vfs_full_pathname, vfs_dlopen, vfs_dlerror, vfs_dlsym, vfs_dlclose,
    vfs_randomness, vfs_sleep, vfs_current_time, vfs_get_last_error, vfs_current_time_int64,
    0, 0, 0,
};

static pthread_once_t register_once = PTHREAD_ONCE_INIT;
static int register_result = SQLITE_ERROR;

static void register_vfs(void) {
    if (!trove_cipher_has_backend()) {
        register_result = SQLITE_ERROR;
        return;
    }
    default_vfs = sqlite3_vfs_find(0);
    if (!default_vfs) {
        register_result = SQLITE_ERROR;
        return;
    }
    cipher_vfs.szOsFile = (int)sizeof(cipher_file) + default_vfs->szOsFile;
    cipher_vfs.mxPathname = default_vfs->mxPathname;
    register_result = sqlite3_vfs_register(&cipher_vfs, 0);
}

int trove_cipher_register(void) {
    pthread_once(&register_once, register_vfs);
    return register_result;
}
