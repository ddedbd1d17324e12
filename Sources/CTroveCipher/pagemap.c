// The page map of a format-2 encrypted database: which version of every page is the current one,
// so that a page which authenticates but is an older copy of itself (put back from an earlier copy
// of the file, a backup, or a snapshot of the disk) is refused instead of read.
//
// Layout. Data pages come in groups of K (K = (page_size - 80) / 16, 251 for 4 KB pages). Each
// group's first page is followed by the group's two map slots, then its other K - 1 pages:
//
//   [key header][page 1][map A][map B][pages 2 ... K][page K+1][map A][map B][pages K+2 ... 2K] ...
//
// so page 1 stays right after the key header, where its readable head is found before the page
// size is known. A map page is sealed like any page (file kind MAP, page number = group + 1) and
// holds the epoch it was written in and the GCM tags of the group's K pages. The key header
// holds two root records (offsets 1024 and 1536): an epoch, the number of groups, and a GMAC under
// the data key over the tags of every group's current map page.
//
// Writing. A page write records the page's new tag in memory. Before SQLite's commit point
// (xSync, SQLITE_FCNTL_SYNC, SQLITE_FCNTL_CKPT_DONE, and on close) the changed groups are written
// to their other slot with epoch E + 1, then a root with E + 1 to the other root record. Nothing is
// overwritten that the root in force relies on, so a crash or a torn write leaves the previous
// root and the map pages it covers intact: opening uses the newest root whose GMAC verifies over,
// for each group, the newest map page not newer than that root. A map page a crashed flush left
// behind (newer than every root) is overwritten by the next flush of any writer.
//
// Reading. A whole-page read from the database file is accepted only if its tag is the map's.
// A crash between page writes and the map's leaves pages newer than the map, but only pages that
// SQLite still holds in its WAL (or rollback journal), which it reads from there until the next
// checkpoint (or rollback) writes them again and the map records them. The one read SQLite makes
// of the database file before it looks at its WAL or journal is the 100-byte head of page 1,
// checked by the tag only.
//
// Other connections (in this process and others) write the map too: at the start of every
// transaction (xLock SHARED, a WAL read lock, the WAL write or checkpoint lock) the VFS re-reads
// the two root records (one small read) and reloads the map when the root changed.

#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define MAP_HEAD 48
#define ROOT_SIZE 64
#define ROOT_AREA 1024
#define ROOT_SPACING 512
#define TAG TROVE_CIPHER_TAG_SIZE
#define NO_EPOCH UINT64_MAX

static const uint8_t map_magic[8] = {'T', 'r', 'o', 'v', 'e', 'M', 'a', 'p'};
static const uint8_t root_magic[8] = {'T', 'r', 'o', 'v', 'e', 'R', 't', '1'};

struct trove_pagemap {
    uint32_t page_size, k;
    // Groups covered by the root in force (plus groups grown into since), and allocated.
    uint32_t groups, capacity;
    uint8_t *tags;          // capacity * k tags: the current tag of every data page (zero: none)
    uint8_t *slot_tags;     // capacity * 2 tags: the GCM tag of each slot's map page as last seen
    uint64_t *slot_epochs;  // capacity * 2: their epochs (NO_EPOCH: empty or not valid)
    int8_t *current;        // capacity: the slot the root in force covers (-1: none yet)
    uint8_t *dirty;         // capacity
    int any_dirty;
    uint64_t epoch;
    int root_slot;  // which root record is in force (-1: none)
    uint8_t root[ROOT_SIZE];
    int loaded;
    int broken;
    uint8_t *scratch;  // one page: map pages being read or written
};

static void put64(uint8_t *p, uint64_t v) {
    trove_put32(p, (uint32_t)(v >> 32));
    trove_put32(p + 4, (uint32_t)v);
}

static uint64_t get64(const uint8_t *p) { return ((uint64_t)trove_get32(p) << 32) | trove_get32(p + 4); }

// MARK: Geometry

uint32_t trove_pagemap_group_pages(uint32_t page_size) {
    return (page_size - TROVE_CIPHER_RESERVE - MAP_HEAD) / TAG;
}

sqlite3_int64 trove_pagemap_page_index(uint32_t k, uint32_t page) {
    if (!k) return (sqlite3_int64)page - 1;
    uint32_t group = (page - 1) / k, i = (page - 1) % k;
    return (sqlite3_int64)group * (k + 2) + (i == 0 ? 0 : i + 2);
}

static sqlite3_int64 slot_index(uint32_t k, uint32_t group, int slot) {
    return (sqlite3_int64)group * (k + 2) + 1 + slot;
}

sqlite3_int64 trove_pagemap_data_pages(uint32_t k, sqlite3_int64 physical_pages, int *partial_is_data) {
    if (!k) {
        if (partial_is_data) *partial_is_data = 1;
        return physical_pages;
    }
    sqlite3_int64 groups = physical_pages / (k + 2), r = physical_pages % (k + 2);
    if (partial_is_data) *partial_is_data = r == 0 || r >= 3;
    return groups * k + (r == 0 ? 0 : r <= 3 ? 1 : r - 2);
}

sqlite3_int64 trove_pagemap_physical_pages(uint32_t k, sqlite3_int64 data_pages) {
    if (!k) return data_pages;
    if (data_pages <= 0) return 0;
    uint32_t group = (uint32_t)((data_pages - 1) / k), i = (uint32_t)((data_pages - 1) % k);
    // Through the last page, and at least through the group's map slots, which follow its first page.
    return (sqlite3_int64)group * (k + 2) + i + 3;
}

// MARK: State

trove_pagemap *trove_pagemap_new(uint32_t page_size) {
    trove_pagemap *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->page_size = page_size;
    m->k = trove_pagemap_group_pages(page_size);
    m->root_slot = -1;
    m->scratch = malloc(page_size);
    if (!m->scratch) {
        free(m);
        return NULL;
    }
    return m;
}

static void free_arrays(trove_pagemap *m) {
    free(m->tags);
    free(m->slot_tags);
    free(m->slot_epochs);
    free(m->current);
    free(m->dirty);
    m->tags = m->slot_tags = m->dirty = NULL;
    m->slot_epochs = NULL;
    m->current = NULL;
    m->capacity = 0;
}

void trove_pagemap_free(trove_pagemap *m) {
    if (!m) return;
    free_arrays(m);
    trove_cipher_zero(m->scratch, m->page_size);
    free(m->scratch);
    free(m);
}

int trove_pagemap_is_broken(const trove_pagemap *m) { return m->broken; }

// Grows the arrays to at least `groups` (new groups: no tags, no slots, not dirty).
static int reserve_groups(trove_pagemap *m, uint32_t groups) {
    if (groups <= m->capacity) return 0;
    uint32_t capacity = m->capacity ? m->capacity : 8;
    while (capacity < groups) capacity *= 2;
    uint8_t *tags = realloc(m->tags, (size_t)capacity * m->k * TAG);
    if (tags) m->tags = tags;
    uint8_t *slot_tags = realloc(m->slot_tags, (size_t)capacity * 2 * TAG);
    if (slot_tags) m->slot_tags = slot_tags;
    uint64_t *slot_epochs = realloc(m->slot_epochs, (size_t)capacity * 2 * sizeof(uint64_t));
    if (slot_epochs) m->slot_epochs = slot_epochs;
    int8_t *current = realloc(m->current, capacity);
    if (current) m->current = current;
    uint8_t *dirty = realloc(m->dirty, capacity);
    if (dirty) m->dirty = dirty;
    if (!tags || !slot_tags || !slot_epochs || !current || !dirty) return -1;
    size_t old = m->capacity, added = capacity - old;
    memset(m->tags + old * m->k * TAG, 0, added * m->k * TAG);
    memset(m->slot_tags + old * 2 * TAG, 0, added * 2 * TAG);
    for (size_t i = old * 2; i < (size_t)capacity * 2; i++) m->slot_epochs[i] = NO_EPOCH;
    memset(m->current + old, -1, added);
    memset(m->dirty + old, 0, added);
    m->capacity = capacity;
    return 0;
}

// MARK: Root records

// The GMAC of a root: AAD = magic, file id, epoch, groups, page size, then each group's current
// map-page tag (zeros for a group without one). Empty plaintext: the tag alone is the MAC.
static int root_mac(const trove_pagemap_io *io, uint64_t epoch, uint32_t groups, const uint8_t *map_tags,
                    const uint8_t *nonce, uint8_t *tag) {
    size_t length = 8 + TROVE_CIPHER_FILE_ID_SIZE + 8 + 4 + 4 + (size_t)groups * TAG;
    uint8_t *aad = malloc(length);
    if (!aad) return -1;
    memcpy(aad, root_magic, 8);
    memcpy(aad + 8, io->file_id, TROVE_CIPHER_FILE_ID_SIZE);
    put64(aad + 24, epoch);
    trove_put32(aad + 32, groups);
    trove_put32(aad + 36, io->page_size);
    if (groups) memcpy(aad + 40, map_tags, (size_t)groups * TAG);
    int rc = trove_cipher_context_seal(io->cipher, nonce, aad, length, NULL, 0, NULL, tag);
    free(aad);
    return rc;
}

// Reads the two root records; a short read leaves zeros (no record).
static int read_roots(const trove_pagemap_io *io, uint8_t roots[2][ROOT_SIZE]) {
    for (int s = 0; s < 2; s++) {
        int rc = io->real->pMethods->xRead(io->real, roots[s], ROOT_SIZE, ROOT_AREA + s * ROOT_SPACING);
        if (rc == SQLITE_IOERR_SHORT_READ) continue;  // zero-filled
        if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

static int root_is_plausible(const trove_pagemap *m, const uint8_t *root) {
    return memcmp(root, root_magic, 8) == 0 && trove_get32(root + 20) == m->page_size;
}

// MARK: Loading

// One slot's map page: reads it, checks its tag and shape, and copies its page tags to `entries`
// (k tags). Returns 0 and its epoch when valid.
static int read_slot(trove_pagemap *m, const trove_pagemap_io *io, uint32_t group, int slot, uint8_t *entries,
                     uint64_t *epoch) {
    uint8_t *page = m->scratch;
    sqlite3_int64 offset = io->data_offset + slot_index(m->k, group, slot) * m->page_size;
    int rc = io->real->pMethods->xRead(io->real, page, (int)m->page_size, offset);
    if (rc != SQLITE_OK) return -1;  // short read: the slot was never written
    if (trove_cipher_open_page_into(io->cipher, io->file_id, TROVE_CIPHER_FILE_MAP, group + 1, NULL, 0, page, page,
                                    m->page_size, 0) != 0)
        return -1;
    if (memcmp(page, map_magic, 8) != 0 || trove_get32(page + 16) != group || trove_get32(page + 20) != m->k) return -1;
    *epoch = get64(page + 8);
    if (entries) memcpy(entries, page + MAP_HEAD, (size_t)m->k * TAG);
    return 0;
}

// The GCM tag at the end of a slot, without decrypting it (all zeros when it isn't there).
static int read_slot_tag(const trove_pagemap *m, const trove_pagemap_io *io, uint32_t group, int slot, uint8_t *tag) {
    uint8_t reserve[TROVE_CIPHER_RESERVE];
    sqlite3_int64 offset = io->data_offset + slot_index(m->k, group, slot) * m->page_size + m->page_size
        - TROVE_CIPHER_RESERVE;
    int rc = io->real->pMethods->xRead(io->real, reserve, TROVE_CIPHER_RESERVE, offset);
    if (rc == SQLITE_IOERR_SHORT_READ) {
        memset(tag, 0, TAG);
        return SQLITE_OK;
    }
    if (rc != SQLITE_OK) return rc;
    memcpy(tag, reserve + TROVE_CIPHER_NONCE_SIZE, TAG);
    return SQLITE_OK;
}

// Builds the map a root record describes into `next` (empty, same geometry); 0 when the root's
// GMAC verifies. Reuses this map's current slots whose tags have not changed (not decrypted again).
static int load_root(trove_pagemap *m, trove_pagemap *next, const trove_pagemap_io *io, const uint8_t *root) {
    uint64_t epoch = get64(root + 8);
    uint32_t groups = trove_get32(root + 16);
    // A root can't cover more groups than the file can hold (keeps a forged count from allocating).
    sqlite3_int64 file_size = 0;
    if (io->real->pMethods->xFileSize(io->real, &file_size) != SQLITE_OK) return -1;
    if ((sqlite3_int64)groups * (m->k + 2) * m->page_size > file_size + (sqlite3_int64)(m->k + 2) * m->page_size)
        return -1;
    if (reserve_groups(next, groups ? groups : 1) != 0) return -1;
    uint8_t *chosen = calloc(groups ? groups : 1, TAG);
    uint8_t *entries = malloc((size_t)2 * m->k * TAG);
    if (!chosen || !entries) {
        free(chosen);
        free(entries);
        return -1;
    }
    int ok = 1;
    for (uint32_t g = 0; g < groups && ok; g++) {
        int best = -1;
        uint64_t best_epoch = 0;
        for (int s = 0; s < 2; s++) {
            uint8_t *tag = next->slot_tags + ((size_t)g * 2 + s) * TAG;
            if (read_slot_tag(m, io, g, s, tag) != SQLITE_OK) {
                ok = 0;
                break;
            }
            uint64_t slot_epoch = NO_EPOCH;
            if (trove_is_zero(tag, TAG)) {
                // never written
            } else if (m->loaded && g < m->capacity && m->current[g] == s
                       && memcmp(m->slot_tags + ((size_t)g * 2 + s) * TAG, tag, TAG) == 0) {
                // The page this map already verified: same tag, same content.
                slot_epoch = m->slot_epochs[(size_t)g * 2 + s];
                memcpy(entries + (size_t)s * m->k * TAG, m->tags + (size_t)g * m->k * TAG, (size_t)m->k * TAG);
            } else if (read_slot(m, io, g, s, entries + (size_t)s * m->k * TAG, &slot_epoch) != 0) {
                slot_epoch = NO_EPOCH;
            }
            next->slot_epochs[(size_t)g * 2 + s] = slot_epoch;
            if (slot_epoch != NO_EPOCH && slot_epoch <= epoch && (best < 0 || slot_epoch > best_epoch)) {
                best = s;
                best_epoch = slot_epoch;
            }
        }
        if (!ok) break;
        next->current[g] = (int8_t)best;
        if (best >= 0) {
            memcpy(chosen + (size_t)g * TAG, next->slot_tags + ((size_t)g * 2 + best) * TAG, TAG);
            memcpy(next->tags + (size_t)g * m->k * TAG, entries + (size_t)best * m->k * TAG, (size_t)m->k * TAG);
        }
        // A valid map page newer than the root: another connection's flush in progress, or
        // one that crashed before its root. Remembered as unknown, so that this connection's
        // next flush, if it writes one, finds it changed and rewrites the group (pagemap_flush).
        int other = best >= 0 ? 1 - best : 0;
        uint64_t other_epoch = next->slot_epochs[(size_t)g * 2 + other];
        if (other_epoch != NO_EPOCH && other_epoch > epoch) {
            memset(next->slot_tags + ((size_t)g * 2 + other) * TAG, 0, TAG);
            next->slot_epochs[(size_t)g * 2 + other] = NO_EPOCH;
        }
    }
    uint8_t tag[TAG];
    if (ok) ok = root_mac(io, epoch, groups, chosen, root + 24, tag) == 0 && memcmp(tag, root + 36, TAG) == 0;
    free(chosen);
    trove_cipher_zero(entries, (size_t)2 * m->k * TAG);
    free(entries);
    if (!ok) return -1;
    next->groups = groups;
    next->epoch = epoch;
    memcpy(next->root, root, ROOT_SIZE);
    next->loaded = 1;
    return 0;
}

int trove_pagemap_refresh(trove_pagemap *m, const trove_pagemap_io *io) {
    // A connection with pages written and not yet in the map keeps its own newer state (the
    // refresh points are transaction starts, where it has none).
    if (m->any_dirty && m->loaded && !m->broken) return SQLITE_OK;
    for (int attempt = 0; attempt < 4; attempt++) {
        uint8_t roots[2][ROOT_SIZE];
        memset(roots, 0, sizeof roots);
        int rc = read_roots(io, roots);
        if (rc != SQLITE_OK) return rc;
        int order[2] = {0, 1};
        int plausible[2] = {root_is_plausible(m, roots[0]), root_is_plausible(m, roots[1])};
        if (plausible[1] && (!plausible[0] || get64(roots[1] + 8) > get64(roots[0] + 8))) {
            order[0] = 1;
            order[1] = 0;
        }
        if (!plausible[0] && !plausible[1]) {
            // No root yet: only a file without pages (the first write writes the first root).
            sqlite3_int64 size = 0;
            if ((rc = io->real->pMethods->xFileSize(io->real, &size)) != SQLITE_OK) return rc;
            m->loaded = 1;
            m->broken = size > io->data_offset;
            m->root_slot = -1;
            return SQLITE_OK;
        }
        // Unchanged since the last load: nothing to read.
        if (m->loaded && !m->broken && m->root_slot == order[0] && memcmp(roots[order[0]], m->root, ROOT_SIZE) == 0)
            return SQLITE_OK;
        for (int i = 0; i < 2; i++) {
            int s = order[i];
            if (!plausible[s]) continue;
            trove_pagemap *next = trove_pagemap_new(m->page_size);
            if (!next) return SQLITE_NOMEM;
            if (load_root(m, next, io, roots[s]) == 0) {
                free_arrays(m);
                m->tags = next->tags;
                m->slot_tags = next->slot_tags;
                m->slot_epochs = next->slot_epochs;
                m->current = next->current;
                m->dirty = next->dirty;
                m->capacity = next->capacity;
                m->groups = next->groups;
                m->any_dirty = 0;
                m->epoch = next->epoch;
                memcpy(m->root, next->root, ROOT_SIZE);
                m->root_slot = s;
                m->loaded = 1;
                m->broken = 0;
                free(next);
                return SQLITE_OK;
            }
            trove_pagemap_free(next);
        }
        // Neither root verifies: a writer may have moved on twice while this read; try again.
    }
    m->broken = 1;
    return SQLITE_OK;
}

// MARK: Pages

int trove_pagemap_check(const trove_pagemap *m, uint32_t page, const uint8_t *tag) {
    uint32_t group = (page - 1) / m->k;
    if (group >= m->groups || group >= m->capacity) return -1;
    return memcmp(m->tags + ((size_t)(page - 1)) * TAG, tag, TAG) == 0 ? 0 : -1;
}

int trove_pagemap_has(const trove_pagemap *m, uint32_t page) {
    uint32_t group = (page - 1) / m->k;
    if (group >= m->groups || group >= m->capacity) return 0;
    return !trove_is_zero(m->tags + ((size_t)(page - 1)) * TAG, TAG);
}

int trove_pagemap_set(trove_pagemap *m, uint32_t page, const uint8_t *tag) {
    uint32_t group = (page - 1) / m->k;
    if (reserve_groups(m, group + 1) != 0) return SQLITE_NOMEM;
    if (group >= m->groups) m->groups = group + 1;
    memcpy(m->tags + ((size_t)(page - 1)) * TAG, tag, TAG);
    m->dirty[group] = 1;
    m->any_dirty = 1;
    return SQLITE_OK;
}

void trove_pagemap_truncate(trove_pagemap *m, uint32_t pages) {
    // Nothing to forget (SQLite truncates to the same size after every full checkpoint): no
    // change, no flush.
    size_t known = (size_t)m->groups * m->k;
    if (known > m->capacity * (size_t)m->k) known = (size_t)m->capacity * m->k;
    if (pages >= known || trove_is_zero(m->tags + (size_t)pages * TAG, (known - pages) * TAG)) return;
    uint32_t groups = pages ? (pages - 1) / m->k + 1 : 0;
    for (uint32_t g = groups; g < m->capacity; g++) {
        memset(m->tags + (size_t)g * m->k * TAG, 0, (size_t)m->k * TAG);
        memset(m->slot_tags + (size_t)g * 2 * TAG, 0, 2 * TAG);
        m->slot_epochs[(size_t)g * 2] = m->slot_epochs[(size_t)g * 2 + 1] = NO_EPOCH;
        m->current[g] = -1;
        m->dirty[g] = 0;
    }
    m->groups = groups;
    if (groups) {
        uint32_t g = groups - 1, kept = pages - g * m->k;
        memset(m->tags + ((size_t)g * m->k + kept) * TAG, 0, (size_t)(m->k - kept) * TAG);
        m->dirty[g] = 1;
    }
    m->any_dirty = 1;  // the root records the new group count
}

// MARK: Writing

static int write_root(trove_pagemap *m, const trove_pagemap_io *io, uint64_t epoch, int slot) {
    uint8_t root[ROOT_SIZE];
    uint8_t *chosen = calloc(m->groups ? m->groups : 1, TAG);
    if (!chosen) return SQLITE_NOMEM;
    for (uint32_t g = 0; g < m->groups; g++)
        if (m->current[g] >= 0) memcpy(chosen + (size_t)g * TAG, m->slot_tags + ((size_t)g * 2 + m->current[g]) * TAG, TAG);
    memset(root, 0, sizeof root);
    memcpy(root, root_magic, 8);
    put64(root + 8, epoch);
    trove_put32(root + 16, m->groups);
    trove_put32(root + 20, m->page_size);
    int rc = trove_cipher_context_nonce(io->cipher, root + 24) == 0
            && root_mac(io, epoch, m->groups, chosen, root + 24, root + 36) == 0
        ? SQLITE_OK
        : SQLITE_IOERR_WRITE;
    free(chosen);
    if (rc != SQLITE_OK) return rc;
    rc = io->real->pMethods->xWrite(io->real, root, ROOT_SIZE, ROOT_AREA + slot * ROOT_SPACING);
    if (rc != SQLITE_OK) return rc;
    memcpy(m->root, root, ROOT_SIZE);
    m->root_slot = slot;
    m->epoch = epoch;
    return SQLITE_OK;
}

int trove_pagemap_begin(trove_pagemap *m, const trove_pagemap_io *io) {
    if (m->root_slot >= 0) return SQLITE_OK;
    // The first root, before the first page: from now on a file with pages and no root is refused.
    m->groups = 0;
    int rc = write_root(m, io, 0, 0);
    if (rc == SQLITE_OK) rc = io->real->pMethods->xSync(io->real, SQLITE_SYNC_NORMAL);
    return rc;
}

int trove_pagemap_flush(trove_pagemap *m, const trove_pagemap_io *io) {
    if (!m->any_dirty || m->broken) return SQLITE_OK;
    uint64_t epoch = m->epoch + 1;
    int rc = SQLITE_OK;
    // A map page another connection's crashed flush left in a slot this map does not use: its
    // group is rewritten now, before a root newer than it exists.
    for (uint32_t g = 0; g < m->groups && rc == SQLITE_OK; g++) {
        if (m->dirty[g]) continue;
        int other = m->current[g] >= 0 ? 1 - m->current[g] : 0;
        uint8_t tag[TAG];
        rc = read_slot_tag(m, io, g, other, tag);
        if (rc == SQLITE_OK && memcmp(tag, m->slot_tags + ((size_t)g * 2 + other) * TAG, TAG) != 0) m->dirty[g] = 1;
    }
    for (uint32_t g = 0; g < m->groups && rc == SQLITE_OK; g++) {
        if (!m->dirty[g]) continue;
        int slot = m->current[g] == 0 ? 1 : 0;
        uint8_t *page = m->scratch;
        memset(page, 0, m->page_size);
        memcpy(page, map_magic, 8);
        put64(page + 8, epoch);
        trove_put32(page + 16, g);
        trove_put32(page + 20, m->k);
        memcpy(page + MAP_HEAD, m->tags + (size_t)g * m->k * TAG, (size_t)m->k * TAG);
        if (trove_cipher_seal_page_into(io->cipher, io->file_id, TROVE_CIPHER_FILE_MAP, g + 1, NULL, 0, page, page,
                                        m->page_size, 0) != 0) {
            rc = SQLITE_IOERR_WRITE;
            break;
        }
        rc = io->real->pMethods->xWrite(io->real, page, (int)m->page_size,
                                        io->data_offset + slot_index(m->k, g, slot) * m->page_size);
        if (rc != SQLITE_OK) break;
        COUNT(map_pages_written, 1);
        memcpy(m->slot_tags + ((size_t)g * 2 + slot) * TAG, page + m->page_size - TROVE_CIPHER_RESERVE + TROVE_CIPHER_NONCE_SIZE,
               TAG);
        m->slot_epochs[(size_t)g * 2 + slot] = epoch;
        m->current[g] = (int8_t)slot;
        m->dirty[g] = 0;
    }
    if (rc == SQLITE_OK) rc = write_root(m, io, epoch, m->root_slot == 0 ? 1 : 0);
    if (rc != SQLITE_OK) {
        // Slots were written but no root covers them: reload from the file before the next use,
        // so the next flush knows which slots the root in force relies on.
        m->broken = 1;
        return rc;
    }
    m->any_dirty = 0;
    return SQLITE_OK;
}
