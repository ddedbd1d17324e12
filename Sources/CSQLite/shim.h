#ifndef TROVE_CSQLITE_SHIM_H
#define TROVE_CSQLITE_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro around a function-pointer cast that Swift cannot import.
static inline sqlite3_destructor_type trove_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
