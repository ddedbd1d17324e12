// Decrypt-ahead: while a connection reads an encrypted database file's pages in order (a table
// scan, loading a collection's vectors), a worker thread of that file reads and decrypts the next
// pages on another core, so the reading thread finds their plaintext ready.
//
// Airtight by construction: the reader still reads each page's ciphertext from the file itself,
// at the moment SQLite asks for it, and takes the worker's plaintext only if that ciphertext is
// byte-identical to the one the worker decrypted and verified (memcmp of the whole page). So the
// page returned is always exactly Dec(key, what is on disk now): a page rewritten by a writer or
// a checkpoint since the worker read it, or changed by anyone else, simply does not match, and the
// reader decrypts (and authenticates) what it read, as without decrypt-ahead. Nothing needs
// invalidating. A page whose tag fails in the worker is not kept; the reader reports it.
//
// Threads: at most one worker per open database file, started when the reader has made
// READAHEAD_RUN steps in one direction (gaps of up to READAHEAD_GAP pages allowed, since a
// table's pages interleave with other tables'), at most READAHEAD_MAX_WORKERS in the process, none
// on a 1-core machine. A worker idle for READAHEAD_IDLE_SECONDS zeroes its buffers and exits (a
// later scan starts a new one); closing the file stops and joins it before the real file closes.
// The reader never waits for the worker: a page the worker has not finished is decrypted by the
// reader. The lock is held only for bookkeeping and the reader's compare-and-copy (~1-2 us).
//
// Memory: a ring of READAHEAD_BYTES (1 MiB) per file that has scanned, pairs of (ciphertext,
// plaintext), allocated when the first run is seen, zeroed when the worker goes idle, freed on close; the window is the ring's size (the next `count` pages),
// so the worker never overwrites a page the reader may still want while it moves forward.
// The file is never memory-mapped (vfs.c refuses mmap), so every page goes through here.

#include "internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define READAHEAD_BYTES (1 << 20)
#define READAHEAD_MIN_ENTRIES 8
#define READAHEAD_MAX_ENTRIES 64
#define READAHEAD_GAP 8
#define READAHEAD_RUN 2
#define READAHEAD_MAX_WORKERS 8
#define READAHEAD_IDLE_SECONDS 2
#define READAHEAD_STACK (256 * 1024)

enum { ENTRY_EMPTY = 0, ENTRY_FILLING = 1, ENTRY_READY = 2 };

typedef struct {
    int64_t page_number;
    int state;
    uint8_t *ciphertext, *plaintext;
} readahead_entry;

struct trove_readahead {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    // The worker thread. `joinable`: started and not yet joined (reader-only). `running`: in its
    // loop (under lock; cleared by the worker when it exits).
    pthread_t thread;
    pid_t process;  // that started it: a child after fork() has no worker to stop or join
    int joinable;
    int running;
    int waiting;
    int stop;
    // What the worker reads, fixed at creation. `file_cipher` is the reader's context, copied into
    // `cipher` (the worker's own: a context is not thread-safe) when the ring is allocated.
    sqlite3_file *real;
    trove_cipher_context *file_cipher, *cipher;
    uint8_t file_id[TROVE_CIPHER_FILE_ID_SIZE];
    sqlite3_int64 data_offset;
    uint32_t page_size, group_pages;
    // The ring (NULL until the first run): entry of page p at p % count.
    int count;
    readahead_entry *entries;
    uint8_t *memory;
    // The worker's window, under lock: it fetches next, next + direction, ... until `end`
    // (exclusive), skipping pages at or past `eof_page` (0: no end seen).
    int64_t next, end, eof_page;
    int direction;
    // The reader's access pattern and this file's counts (reader-only).
    int64_t last;
    int run, run_direction;
    uint64_t hits, misses;
};

static int enabled = -1;  // a TROVE_CIPHER_READAHEAD_* policy; -1: not read from the environment yet
static int live_workers;

static int cores(void) {
    static int count;
    if (!__atomic_load_n(&count, __ATOMIC_RELAXED)) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        __atomic_store_n(&count, n > 0 ? (int)n : 1, __ATOMIC_RELAXED);
    }
    return __atomic_load_n(&count, __ATOMIC_RELAXED);
}

int trove_cipher_readahead_enabled(void) {
    int value = __atomic_load_n(&enabled, __ATOMIC_RELAXED);
    if (value < 0) {
        const char *setting = getenv("TROVE_CIPHER_READAHEAD");
        value = TROVE_CIPHER_READAHEAD_IDLE_CORE;
        if (setting && strcmp(setting, "0") == 0) value = TROVE_CIPHER_READAHEAD_OFF;
        if (setting && strcmp(setting, "2") == 0) value = TROVE_CIPHER_READAHEAD_ALWAYS;
        int expected = -1;
        __atomic_compare_exchange_n(&enabled, &expected, value, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        value = __atomic_load_n(&enabled, __ATOMIC_RELAXED);
    }
    return value;
}

int trove_readahead_live_workers(void) { return __atomic_load_n(&live_workers, __ATOMIC_RELAXED); }

void trove_cipher_set_readahead(int value) {
    if (value < TROVE_CIPHER_READAHEAD_OFF || value > TROVE_CIPHER_READAHEAD_ALWAYS) value = TROVE_CIPHER_READAHEAD_OFF;
    __atomic_store_n(&enabled, value, __ATOMIC_RELAXED);
}

// Whether a core looks idle: the 1-minute load average below cores - 0.5 (the scan itself counts
// about 1). Read at most once a second for the whole process (getloadavg reads /proc/loadavg).
// With every core busy the worker would only take turns with the reader on the same cores and
// add its copies (measured: slower, see BENCHMARKS.md "Encryption at rest").
static int idle_core(void) {
    static int64_t checked_at;  // seconds, CLOCK_MONOTONIC; 0: never
    static int idle;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t at = __atomic_load_n(&checked_at, __ATOMIC_RELAXED);
    if (at == 0 || now.tv_sec - at >= 1) {
        double load[1];
        int value = getloadavg(load, 1) == 1 && load[0] < cores() - 0.5;
        __atomic_store_n(&idle, value, __ATOMIC_RELAXED);
        __atomic_store_n(&checked_at, (int64_t)now.tv_sec > 0 ? (int64_t)now.tv_sec : 1, __ATOMIC_RELAXED);
    }
    return __atomic_load_n(&idle, __ATOMIC_RELAXED);
}

trove_readahead *trove_readahead_new(sqlite3_file *real, trove_cipher_context *cipher, const uint8_t *file_id,
                                     sqlite3_int64 data_offset, uint32_t page_size, uint32_t group_pages) {
    trove_readahead *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    if (pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r);
        return NULL;
    }
    if (pthread_cond_init(&r->wake, NULL) != 0) {
        pthread_mutex_destroy(&r->lock);
        free(r);
        return NULL;
    }
    r->real = real;
    r->file_cipher = cipher;
    memcpy(r->file_id, file_id, TROVE_CIPHER_FILE_ID_SIZE);
    r->data_offset = data_offset;
    r->page_size = page_size;
    r->group_pages = group_pages;
    return r;
}

// The ring and the worker's key, on the first run (reader thread).
static int allocate_ring(trove_readahead *r) {
    int count = (int)(READAHEAD_BYTES / (2 * (size_t)r->page_size));
    if (count < READAHEAD_MIN_ENTRIES) count = READAHEAD_MIN_ENTRIES;
    if (count > READAHEAD_MAX_ENTRIES) count = READAHEAD_MAX_ENTRIES;
    readahead_entry *entries = calloc((size_t)count, sizeof *entries);
    uint8_t *memory = malloc((size_t)count * 2 * r->page_size);
    trove_cipher_context *cipher = trove_cipher_context_copy(r->file_cipher);
    if (!entries || !memory || !cipher) {
        free(entries);
        free(memory);
        trove_cipher_context_free(cipher);
        return 0;
    }
    for (int i = 0; i < count; i++) {
        entries[i].ciphertext = memory + (size_t)i * 2 * r->page_size;
        entries[i].plaintext = entries[i].ciphertext + r->page_size;
    }
    pthread_mutex_lock(&r->lock);
    r->count = count;
    r->entries = entries;
    r->memory = memory;
    r->cipher = cipher;
    pthread_mutex_unlock(&r->lock);
    return 1;
}

static int has_work(const trove_readahead *r) {
    if (!r->direction || r->next == r->end || r->next < 1 || r->next > 0xffffffffLL) return 0;
    return !(r->eof_page && r->next >= r->eof_page);
}

// Under lock: forget every kept page and zero the buffers (idle exit and close).
static void clear_ring(trove_readahead *r) {
    for (int i = 0; i < r->count; i++) r->entries[i].state = ENTRY_EMPTY;
    if (r->memory) trove_cipher_zero(r->memory, (size_t)r->count * 2 * r->page_size);
}

static void *worker_main(void *argument) {
    trove_readahead *r = argument;
    const size_t size = r->page_size;
    pthread_mutex_lock(&r->lock);
    while (!r->stop) {
        if (has_work(r)) {
            const int64_t page = r->next;
            readahead_entry *e = &r->entries[page % r->count];
            e->state = ENTRY_FILLING;
            e->page_number = page;
            r->next += r->direction;
            pthread_mutex_unlock(&r->lock);
            // The default VFS's xRead (unix: pread(2) on the file's descriptor, which another
            // thread may use at the same time; a read racing a write may return a mix, which then
            // fails its tag or the reader's comparison). It takes no lock and changes no state
            // the reader relies on.
            int rc = r->real->pMethods->xRead(r->real, e->ciphertext, (int)size,
                                             r->data_offset + trove_pagemap_page_index(r->group_pages, (uint32_t)page) * (sqlite3_int64)size);
            int verified = rc == SQLITE_OK
                && trove_cipher_open_page_into(r->cipher, r->file_id, TROVE_CIPHER_FILE_DATABASE, (uint32_t)page,
                                               NULL, 0, e->ciphertext, e->plaintext, size, page == 1 ? 100 : 0) == 0;
            pthread_mutex_lock(&r->lock);
            e->state = verified ? ENTRY_READY : ENTRY_EMPTY;
            if (verified) COUNT(readahead_pages_opened, 1);
            if (rc == SQLITE_IOERR_SHORT_READ && (!r->eof_page || page < r->eof_page)) r->eof_page = page;
            continue;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += READAHEAD_IDLE_SECONDS;
        r->waiting = 1;
        int rc = pthread_cond_timedwait(&r->wake, &r->lock, &until);
        r->waiting = 0;
        if (rc != 0 && !has_work(r)) {
            // Idle: plaintext doesn't linger in the ring between scans.
            clear_ring(r);
            break;
        }
    }
    r->running = 0;
    pthread_mutex_unlock(&r->lock);
    __atomic_fetch_sub(&live_workers, 1, __ATOMIC_RELAXED);
    return NULL;
}

// Starts a worker (reader thread, lock not held). Joins one that exited idle first.
static void start_worker(trove_readahead *r) {
    if (r->joinable) {
        pthread_join(r->thread, NULL);
        r->joinable = 0;
    }
    if (__atomic_fetch_add(&live_workers, 1, __ATOMIC_RELAXED) >= READAHEAD_MAX_WORKERS) {
        __atomic_fetch_sub(&live_workers, 1, __ATOMIC_RELAXED);
        return;
    }
    pthread_mutex_lock(&r->lock);
    r->running = 1;
    pthread_mutex_unlock(&r->lock);
    // Signals go to the application's threads, never to this one.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_attr_t attributes;
    int rc = pthread_attr_init(&attributes);
    if (rc == 0) {
        pthread_attr_setstacksize(&attributes, READAHEAD_STACK);
        rc = pthread_create(&r->thread, &attributes, worker_main, r);
        pthread_attr_destroy(&attributes);
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (rc != 0) {
        pthread_mutex_lock(&r->lock);
        r->running = 0;
        pthread_mutex_unlock(&r->lock);
        __atomic_fetch_sub(&live_workers, 1, __ATOMIC_RELAXED);
        return;
    }
    r->joinable = 1;
    r->process = getpid();
    COUNT(readahead_workers_started, 1);
}

int trove_readahead_read(trove_readahead *r, uint32_t page_number, uint8_t *page) {
    const int64_t p = page_number;
    const int64_t step = p - r->last;
    const int direction = step > 0 && step <= READAHEAD_GAP ? 1 : step < 0 && step >= -READAHEAD_GAP ? -1 : 0;
    if (direction && direction == r->run_direction) {
        r->run++;
    } else {
        r->run = direction ? 1 : 0;
        r->run_direction = direction;
    }
    r->last = p;
    int policy = r->run >= READAHEAD_RUN && cores() > 1 ? trove_cipher_readahead_enabled() : TROVE_CIPHER_READAHEAD_OFF;
    const int sequential = policy == TROVE_CIPHER_READAHEAD_ALWAYS
        || (policy == TROVE_CIPHER_READAHEAD_IDLE_CORE && idle_core());
    if (!r->entries && (!sequential || !allocate_ring(r))) return 0;

    int hit = 0, start = 0;
    pthread_mutex_lock(&r->lock);
    readahead_entry *e = &r->entries[p % r->count];
    if (e->state == ENTRY_READY && e->page_number == p) {
        if (memcmp(e->ciphertext, page, r->page_size) == 0) {
            memcpy(page, e->plaintext, r->page_size);
            hit = 1;
            r->hits++;
            COUNT(readahead_hits, 1);
        } else {
            r->misses++;
            COUNT(readahead_misses, 1);
        }
        e->state = ENTRY_EMPTY;
    }
    if (r->eof_page && p >= r->eof_page) r->eof_page = 0;  // the file grew
    if (sequential) {
        // The window: the `count` pages after this one in the run's direction.
        const int64_t first = p + r->run_direction;
        const int64_t end = r->run_direction > 0 ? p + 1 + r->count : (p - 1 - r->count < 0 ? 0 : p - 1 - r->count);
        const int inside = r->run_direction > 0 ? r->next >= first && r->next <= end : r->next <= first && r->next >= end;
        if (r->direction != r->run_direction || !inside) r->next = first;
        r->direction = r->run_direction;
        r->end = end;
        if (!r->running) {
            start = 1;
        } else if (r->waiting && has_work(r)) {
            // Woken for a quarter of the ring at a time, not for every page.
            const int64_t pending = (r->end - r->next) * r->direction;
            if (pending >= r->count / 4) pthread_cond_signal(&r->wake);
        }
    }
    pthread_mutex_unlock(&r->lock);
    if (start) start_worker(r);
    return hit;
}

void trove_readahead_state(trove_readahead *r, trove_cipher_readahead_state *state) {
    memset(state, 0, sizeof *state);
    state->hits = r->hits;
    state->misses = r->misses;
    for (int waited = 0; waited < 5000; waited++) {
        pthread_mutex_lock(&r->lock);
        int idle = !r->running || (r->waiting && !has_work(r));
        if (idle || waited == 4999) {
            for (int i = 0; i < r->count && state->ready_count < TROVE_CIPHER_READAHEAD_LIST; i++)
                if (r->entries[i].state == ENTRY_READY) state->ready[state->ready_count++] = (uint32_t)r->entries[i].page_number;
            pthread_mutex_unlock(&r->lock);
            return;
        }
        pthread_mutex_unlock(&r->lock);
        usleep(1000);
    }
}

void trove_readahead_free(trove_readahead *r) {
    if (!r) return;
    if (r->joinable && r->process != getpid()) {
        // A forked child closing an inherited file: the worker (and maybe the lock's holder) is
        // the parent's. Zero and let go of the memory without touching either.
        if (r->memory) trove_cipher_zero(r->memory, (size_t)r->count * 2 * r->page_size);
        free(r->entries);
        free(r->memory);
        trove_cipher_context_free(r->cipher);
        trove_cipher_zero(r, sizeof *r);
        free(r);
        return;
    }
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    pthread_cond_broadcast(&r->wake);
    pthread_mutex_unlock(&r->lock);
    if (r->joinable) pthread_join(r->thread, NULL);
    if (r->entries) clear_ring(r);
    free(r->entries);
    free(r->memory);
    trove_cipher_context_free(r->cipher);
    pthread_cond_destroy(&r->wake);
    pthread_mutex_destroy(&r->lock);
    trove_cipher_zero(r, sizeof *r);
    free(r);
}
