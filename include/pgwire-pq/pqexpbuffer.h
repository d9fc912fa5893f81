/*
 * libpgwire-pq: PQExpBuffer, the growable string libpq exports and psql and
 * pgbench use (libpq's pqexpbuffer.h, ABI-identical).
 *
 * The buffer owns data (malloc'd, always NUL-terminated, len bytes before
 * the NUL, maxlen allocated). When an allocation fails the buffer becomes
 * "broken": data points at a static empty string, len and maxlen are 0,
 * every later append is ignored, and PQExpBufferBroken says so; reset or
 * init makes it usable again. No function prints or aborts.
 */
#ifndef PQEXPBUFFER_H
#define PQEXPBUFFER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct PQExpBufferData {
    char *data;    /* the text, NUL-terminated */
    size_t len;    /* its length, not counting the NUL */
    size_t maxlen; /* bytes allocated at data; 0 when broken */
} PQExpBufferData;

typedef PQExpBufferData *PQExpBuffer;

/* True when str is NULL or an allocation on it failed. */
#define PQExpBufferBroken(str) ((str) == NULL || (str)->maxlen == 0)
/* The same for a PQExpBufferData held by value. */
#define PQExpBufferDataBroken(buf) ((buf).maxlen == 0)

/* The size a new buffer starts with. */
#define INITIAL_EXPBUFFER_SIZE 256

#if defined(__GNUC__)
#define PQ__PRINTF_2_3 __attribute__((format(printf, 2, 3)))
#else
#define PQ__PRINTF_2_3
#endif

/* A new empty buffer on the heap (free with destroyPQExpBuffer); NULL when
 * out of memory. */
extern PQExpBuffer createPQExpBuffer(void);
/* Makes the caller's struct an empty buffer (free with termPQExpBuffer);
 * broken when out of memory. */
extern void initPQExpBuffer(PQExpBuffer str);
/* Frees a buffer from createPQExpBuffer and its data; NULL is ignored. */
extern void destroyPQExpBuffer(PQExpBuffer str);
/* Frees the data of a buffer from initPQExpBuffer (the struct is the
 * caller's); leaves it broken until initPQExpBuffer again. */
extern void termPQExpBuffer(PQExpBuffer str);
/* Empties the buffer, keeping its allocation; a broken buffer becomes an
 * empty usable one again (a new allocation, broken if that fails). */
extern void resetPQExpBuffer(PQExpBuffer str);
/* Makes room for needed more bytes plus the NUL. 1 on success, 0 when out
 * of memory or the size would pass INT_MAX (the buffer is then broken). */
extern int enlargePQExpBuffer(PQExpBuffer str, size_t needed);
/* Replaces the contents with the printf-formatted text. */
extern void printfPQExpBuffer(PQExpBuffer str, const char *fmt, ...) PQ__PRINTF_2_3;
/* Appends the printf-formatted text. */
extern void appendPQExpBuffer(PQExpBuffer str, const char *fmt, ...) PQ__PRINTF_2_3;
/* Appends the NUL-terminated string data. */
extern void appendPQExpBufferStr(PQExpBuffer str, const char *data);
/* Appends one character. */
extern void appendPQExpBufferChar(PQExpBuffer str, char ch);
/* Appends datalen bytes (which may hold NULs); a NUL follows them. */
extern void appendBinaryPQExpBuffer(PQExpBuffer str, const char *data, size_t datalen);

#ifdef __cplusplus
}
#endif

#endif
