#ifndef TROVE_CSQLITE_SHIM_H
#define TROVE_CSQLITE_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro around a function-pointer cast that Swift cannot import.
static inline sqlite3_destructor_type trove_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

// SQLITE_CONFIG_MEMSTATUS off: SQLite then keeps no count of the memory it has allocated
// (sqlite3_memory_used and the soft heap limit, which Trove does not use), and each allocation
// no longer takes the global memory mutex and updates the counters, a cost of every row written
// or read. sqlite3_config is variadic, which Swift cannot call. It only works before SQLite is
// initialised: later it returns SQLITE_MISUSE and changes nothing.
static inline int trove_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

// The FTS5 extension API (for registering tokenizers written in Swift) is reached through
// `SELECT fts5(?1)` with a pointer bound by sqlite3_bind_pointer, which Swift cannot express
// directly (the pointer type tag must be a static C string). Returns NULL when FTS5 is missing.
static inline fts5_api *trove_fts5_api(sqlite3 *db) {
    fts5_api *api = 0;
    sqlite3_stmt *statement = 0;
    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, 0) != SQLITE_OK) {
        sqlite3_finalize(statement);
        return 0;
    }
    sqlite3_bind_pointer(statement, 1, (void *)&api, "fts5_api_ptr", 0);
    sqlite3_step(statement);
    sqlite3_finalize(statement);
    return api;
}

#endif
