// Wrappers over the SQLite that sqlite-nio bundles and links (see the header). Its header is
// not visible outside that package, so the few functions used are declared here, with the
// signatures of sqlite3.h (sqlite3_int64 is long long; destructors are void (*)(void *)).
#include "CTesseraSQLite.h"

struct sqlite3;
struct sqlite3_stmt;
typedef void (*destructor)(void *);

int sqlite_nio_sqlite3_open_v2(const char *, struct sqlite3 **, int, const char *);
int sqlite_nio_sqlite3_close_v2(struct sqlite3 *);
const char *sqlite_nio_sqlite3_errmsg(struct sqlite3 *);
int sqlite_nio_sqlite3_busy_timeout(struct sqlite3 *, int);
int sqlite_nio_sqlite3_prepare_v3(struct sqlite3 *, const char *, int, unsigned int, struct sqlite3_stmt **, const char **);
int sqlite_nio_sqlite3_finalize(struct sqlite3_stmt *);
int sqlite_nio_sqlite3_reset(struct sqlite3_stmt *);
int sqlite_nio_sqlite3_clear_bindings(struct sqlite3_stmt *);
int sqlite_nio_sqlite3_step(struct sqlite3_stmt *);
int sqlite_nio_sqlite3_bind_int64(struct sqlite3_stmt *, int, long long);
int sqlite_nio_sqlite3_bind_double(struct sqlite3_stmt *, int, double);
int sqlite_nio_sqlite3_bind_text64(struct sqlite3_stmt *, int, const char *, unsigned long long, destructor, unsigned char);
int sqlite_nio_sqlite3_bind_blob64(struct sqlite3_stmt *, int, const void *, unsigned long long, destructor);
int sqlite_nio_sqlite3_bind_null(struct sqlite3_stmt *, int);
int sqlite_nio_sqlite3_column_count(struct sqlite3_stmt *);
const char *sqlite_nio_sqlite3_column_name(struct sqlite3_stmt *, int);
int sqlite_nio_sqlite3_column_type(struct sqlite3_stmt *, int);
long long sqlite_nio_sqlite3_column_int64(struct sqlite3_stmt *, int);
double sqlite_nio_sqlite3_column_double(struct sqlite3_stmt *, int);
const unsigned char *sqlite_nio_sqlite3_column_text(struct sqlite3_stmt *, int);
const void *sqlite_nio_sqlite3_column_blob(struct sqlite3_stmt *, int);
int sqlite_nio_sqlite3_column_bytes(struct sqlite3_stmt *, int);

#define OPEN_READWRITE 0x00000002
#define OPEN_CREATE 0x00000004
#define OPEN_FULLMUTEX 0x00010000
#define OPEN_EXRESCODE 0x02000000
#define PREPARE_PERSISTENT 0x01
#define UTF8 1
#define TRANSIENT ((destructor)-1)

#define DB(db) ((struct sqlite3 *)(db))
#define STMT(statement) ((struct sqlite3_stmt *)(statement))

int tessera_sqlite_open(const char *path, tessera_sqlite **db) {
    return sqlite_nio_sqlite3_open_v2(path, (struct sqlite3 **)db, OPEN_CREATE | OPEN_READWRITE | OPEN_FULLMUTEX | OPEN_EXRESCODE, 0);
}
int tessera_sqlite_close(tessera_sqlite *db) { return sqlite_nio_sqlite3_close_v2(DB(db)); }
const char *tessera_sqlite_errmsg(tessera_sqlite *db) { return sqlite_nio_sqlite3_errmsg(DB(db)); }
int tessera_sqlite_busy_timeout(tessera_sqlite *db, int milliseconds) { return sqlite_nio_sqlite3_busy_timeout(DB(db), milliseconds); }

int tessera_sqlite_prepare(tessera_sqlite *db, const char *sql, tessera_sqlite_stmt **statement) {
    return sqlite_nio_sqlite3_prepare_v3(DB(db), sql, -1, PREPARE_PERSISTENT, (struct sqlite3_stmt **)statement, 0);
}
int tessera_sqlite_finalize(tessera_sqlite_stmt *statement) { return sqlite_nio_sqlite3_finalize(STMT(statement)); }
int tessera_sqlite_reset(tessera_sqlite_stmt *statement) { return sqlite_nio_sqlite3_reset(STMT(statement)); }
int tessera_sqlite_clear_bindings(tessera_sqlite_stmt *statement) { return sqlite_nio_sqlite3_clear_bindings(STMT(statement)); }
int tessera_sqlite_step(tessera_sqlite_stmt *statement) { return sqlite_nio_sqlite3_step(STMT(statement)); }

int tessera_sqlite_bind_int64(tessera_sqlite_stmt *statement, int index, int64_t value) {
    return sqlite_nio_sqlite3_bind_int64(STMT(statement), index, (long long)value);
}
int tessera_sqlite_bind_double(tessera_sqlite_stmt *statement, int index, double value) {
    return sqlite_nio_sqlite3_bind_double(STMT(statement), index, value);
}
int tessera_sqlite_bind_text(tessera_sqlite_stmt *statement, int index, const char *text, uint64_t length) {
    return sqlite_nio_sqlite3_bind_text64(STMT(statement), index, text, length, TRANSIENT, UTF8);
}
int tessera_sqlite_bind_blob(tessera_sqlite_stmt *statement, int index, const void *bytes, uint64_t length) {
    return sqlite_nio_sqlite3_bind_blob64(STMT(statement), index, bytes, length, TRANSIENT);
}
int tessera_sqlite_bind_null(tessera_sqlite_stmt *statement, int index) { return sqlite_nio_sqlite3_bind_null(STMT(statement), index); }

int tessera_sqlite_column_count(tessera_sqlite_stmt *statement) { return sqlite_nio_sqlite3_column_count(STMT(statement)); }
const char *tessera_sqlite_column_name(tessera_sqlite_stmt *statement, int column) {
    return sqlite_nio_sqlite3_column_name(STMT(statement), column);
}
int tessera_sqlite_column_type(tessera_sqlite_stmt *statement, int column) { return sqlite_nio_sqlite3_column_type(STMT(statement), column); }
int64_t tessera_sqlite_column_int64(tessera_sqlite_stmt *statement, int column) {
    return (int64_t)sqlite_nio_sqlite3_column_int64(STMT(statement), column);
}
double tessera_sqlite_column_double(tessera_sqlite_stmt *statement, int column) {
    return sqlite_nio_sqlite3_column_double(STMT(statement), column);
}
const unsigned char *tessera_sqlite_column_text(tessera_sqlite_stmt *statement, int column) {
    return sqlite_nio_sqlite3_column_text(STMT(statement), column);
}
const void *tessera_sqlite_column_blob(tessera_sqlite_stmt *statement, int column) {
    return sqlite_nio_sqlite3_column_blob(STMT(statement), column);
}
int tessera_sqlite_column_bytes(tessera_sqlite_stmt *statement, int column) { return sqlite_nio_sqlite3_column_bytes(STMT(statement), column); }
