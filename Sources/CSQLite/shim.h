#ifndef TROVE_CSQLITE_SHIM_H
#define TROVE_CSQLITE_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro around a function-pointer cast that Swift cannot import.
static inline sqlite3_destructor_type trove_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

// FTS5's C extension API (declared in fts5.h, which Debian's libsqlite3-dev does not ship; the
// layout below is FTS5's stable public ABI since SQLite 3.9). Trove registers its own Swift
// tokenizer through it.
typedef struct Fts5Tokenizer Fts5Tokenizer;
typedef struct trove_fts5_tokenizer {
    int (*xCreate)(void *pUserData, const char **azArg, int nArg, Fts5Tokenizer **ppOut);
    void (*xDelete)(Fts5Tokenizer *pTokenizer);
    int (*xTokenize)(Fts5Tokenizer *pTokenizer, void *pCtx, int flags, const char *pText, int nText,
                     int (*xToken)(void *pCtx, int tflags, const char *pToken, int nToken, int iStart, int iEnd));
} trove_fts5_tokenizer;

typedef struct trove_fts5_api {
    int iVersion;
    int (*xCreateTokenizer)(struct trove_fts5_api *pApi, const char *zName, void *pUserData,
                            trove_fts5_tokenizer *pTokenizer, void (*xDestroy)(void *));
    // xFindTokenizer, xCreateFunction and (v3) the _v2 entry points follow; Trove does not use them.
} trove_fts5_api;

// The connection's fts5_api, or NULL when FTS5 is not available: `SELECT fts5(?1)` with a
// pointer bound under the type "fts5_api_ptr" (https://sqlite.org/fts5.html#extending_fts5).
static inline trove_fts5_api *trove_fts5_api_from_db(sqlite3 *db) {
    trove_fts5_api *api = 0;
    sqlite3_stmt *statement = 0;
    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, 0) == SQLITE_OK) {
        sqlite3_bind_pointer(statement, 1, (void *)&api, "fts5_api_ptr", 0);
        sqlite3_step(statement);
    }
    sqlite3_finalize(statement);
    return api;
}

// Registers a tokenizer; FTS5 copies the callbacks, and calls xDestroy(pUserData) when the
// connection closes or the name is registered again (also when registration fails).
static inline int trove_fts5_create_tokenizer(
    sqlite3 *db, const char *name, void *userData,
    int (*xCreate)(void *, const char **, int, Fts5Tokenizer **), void (*xDelete)(Fts5Tokenizer *),
    int (*xTokenize)(Fts5Tokenizer *, void *, int, const char *, int,
                     int (*)(void *, int, const char *, int, int, int)),
    void (*xDestroy)(void *)) {
    trove_fts5_api *api = trove_fts5_api_from_db(db);
    if (api == 0 || api->iVersion < 2) {
        if (xDestroy) xDestroy(userData);
        return SQLITE_ERROR;
    }
    trove_fts5_tokenizer tokenizer = {xCreate, xDelete, xTokenize};
    return api->xCreateTokenizer(api, name, userData, &tokenizer, xDestroy);
}

#endif
