// The part of SQLite that Tessera calls directly: the SQLite that sqlite-nio bundles
// (its symbols carry a `sqlite_nio_` prefix), reached through these small wrappers so
// that no other module's C header is imported. Constants are SQLite's own values.
#ifndef C_TESSERA_SQLITE_H
#define C_TESSERA_SQLITE_H

#include <stdint.h>

typedef struct tessera_sqlite tessera_sqlite;
typedef struct tessera_sqlite_stmt tessera_sqlite_stmt;

#define TESSERA_SQLITE_OK 0
#define TESSERA_SQLITE_BUSY 5
#define TESSERA_SQLITE_MISUSE 21
#define TESSERA_SQLITE_ROW 100
#define TESSERA_SQLITE_DONE 101

// Column types (sqlite3_column_type).
#define TESSERA_SQLITE_INTEGER 1
#define TESSERA_SQLITE_FLOAT 2
#define TESSERA_SQLITE_TEXT 3
#define TESSERA_SQLITE_BLOB 4
#define TESSERA_SQLITE_NULL 5

// Opens (creating if needed) a database read-write, serialized, with extended result codes.
int tessera_sqlite_open(const char *path, tessera_sqlite **db);
int tessera_sqlite_close(tessera_sqlite *db);
const char *tessera_sqlite_errmsg(tessera_sqlite *db);
// How long a statement waits for a lock another connection holds before it fails with SQLITE_BUSY (0: not at all).
int tessera_sqlite_busy_timeout(tessera_sqlite *db, int milliseconds);

// Prepares a statement meant to be kept and reused (SQLITE_PREPARE_PERSISTENT).
int tessera_sqlite_prepare(tessera_sqlite *db, const char *sql, tessera_sqlite_stmt **statement);
int tessera_sqlite_finalize(tessera_sqlite_stmt *statement);
int tessera_sqlite_reset(tessera_sqlite_stmt *statement);
int tessera_sqlite_clear_bindings(tessera_sqlite_stmt *statement);
int tessera_sqlite_step(tessera_sqlite_stmt *statement);

// Binds copy their value (SQLITE_TRANSIENT); text is UTF-8. Indexes start at 1.
int tessera_sqlite_bind_int64(tessera_sqlite_stmt *statement, int index, int64_t value);
int tessera_sqlite_bind_double(tessera_sqlite_stmt *statement, int index, double value);
int tessera_sqlite_bind_text(tessera_sqlite_stmt *statement, int index, const char *text, uint64_t length);
int tessera_sqlite_bind_blob(tessera_sqlite_stmt *statement, int index, const void *bytes, uint64_t length);
int tessera_sqlite_bind_null(tessera_sqlite_stmt *statement, int index);

int tessera_sqlite_column_count(tessera_sqlite_stmt *statement);
const char *tessera_sqlite_column_name(tessera_sqlite_stmt *statement, int column);
int tessera_sqlite_column_type(tessera_sqlite_stmt *statement, int column);
int64_t tessera_sqlite_column_int64(tessera_sqlite_stmt *statement, int column);
double tessera_sqlite_column_double(tessera_sqlite_stmt *statement, int column);
const unsigned char *tessera_sqlite_column_text(tessera_sqlite_stmt *statement, int column);
const void *tessera_sqlite_column_blob(tessera_sqlite_stmt *statement, int column);
int tessera_sqlite_column_bytes(tessera_sqlite_stmt *statement, int column);

#endif
