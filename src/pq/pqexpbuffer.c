/*
 * PQExpBuffer: the growable string libpq exports (pqexpbuffer.h), with
 * libpq's rules: a failed allocation leaves the buffer "broken" (data at a
 * static empty string, maxlen 0), which later appends ignore and reset or
 * init repair; nothing is printed, nothing aborts.
 */
#include "pqexpbuffer.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a broken buffer's data points at: never written, never freed. */
static const char oom_buffer[1] = "";

static char *oom_data(void)
{
    return (char *)oom_buffer;
}

static void mark_broken(PQExpBuffer str)
{
    if (str->data != oom_buffer) free(str->data);
    str->data = oom_data();
    str->len = 0;
    str->maxlen = 0;
}

PQExpBuffer createPQExpBuffer(void)
{
    PQExpBuffer str = malloc(sizeof *str);
    if (str) initPQExpBuffer(str);
    return str;
}

void initPQExpBuffer(PQExpBuffer str)
{
    str->data = malloc(INITIAL_EXPBUFFER_SIZE);
    str->len = 0;
    if (!str->data) {
        str->data = oom_data();
        str->maxlen = 0;
        return;
    }
    str->maxlen = INITIAL_EXPBUFFER_SIZE;
    str->data[0] = '\0';
}

void destroyPQExpBuffer(PQExpBuffer str)
{
    if (!str) return;
    termPQExpBuffer(str);
    free(str);
}

void termPQExpBuffer(PQExpBuffer str)
{
    mark_broken(str);
}

void resetPQExpBuffer(PQExpBuffer str)
{
    if (!str) return;
    if (str->data == oom_buffer) {
        initPQExpBuffer(str);
        return;
    }
    str->len = 0;
    str->data[0] = '\0';
}

int enlargePQExpBuffer(PQExpBuffer str, size_t needed)
{
    if (PQExpBufferBroken(str)) return 0;
    /* Sizes stay below INT_MAX, as libpq's (callers keep lengths in int). */
    if (needed >= (size_t)INT_MAX - str->len) {
        mark_broken(str);
        return 0;
    }
    needed += str->len + 1;
    if (needed <= str->maxlen) return 1;
    size_t size = str->maxlen > 0 ? 2 * str->maxlen : 64;
    while (needed > size)
        size *= 2;
    if (size > (size_t)INT_MAX) size = INT_MAX;
    char *data = realloc(str->data, size);
    if (!data) {
        mark_broken(str);
        return 0;
    }
    str->data = data;
    str->maxlen = size;
    return 1;
}

/* One try at appending the formatted text: true when done (appended, or
 * the buffer broke), false when the buffer was enlarged for a retry. */
static bool append_va(PQExpBuffer str, const char *fmt, va_list ap)
{
    size_t needed = 32;
    if (str->maxlen > str->len + 16) {
        size_t avail = str->maxlen - str->len;
        int n = vsnprintf(str->data + str->len, avail, fmt, ap);
        if (n < 0 || n > INT_MAX - 1) {
            mark_broken(str);
            return true;
        }
        if ((size_t)n < avail) {
            str->len += (size_t)n;
            return true;
        }
        needed = (size_t)n + 1;
    }
    return !enlargePQExpBuffer(str, needed);
}

/* Appends the formatted text, enlarging the buffer as often as it takes. */
static void append_vformat(PQExpBuffer str, const char *fmt, va_list ap)
{
    bool done;
    do {
        va_list try_ap;
        va_copy(try_ap, ap);
        done = append_va(str, fmt, try_ap);
        va_end(try_ap);
    } while (!done);
}

void printfPQExpBuffer(PQExpBuffer str, const char *fmt, ...)
{
    /* The reset first: it repairs a broken buffer, as libpq's does. */
    resetPQExpBuffer(str);
    if (PQExpBufferBroken(str)) return;
    va_list ap;
    va_start(ap, fmt);
    append_vformat(str, fmt, ap);
    va_end(ap);
}

void appendPQExpBuffer(PQExpBuffer str, const char *fmt, ...)
{
    if (PQExpBufferBroken(str)) return;
    va_list ap;
    va_start(ap, fmt);
    append_vformat(str, fmt, ap);
    va_end(ap);
}

void appendPQExpBufferStr(PQExpBuffer str, const char *data)
{
    appendBinaryPQExpBuffer(str, data, strlen(data));
}

void appendPQExpBufferChar(PQExpBuffer str, char ch)
{
    if (!enlargePQExpBuffer(str, 1)) return;
    str->data[str->len++] = ch;
    str->data[str->len] = '\0';
}

void appendBinaryPQExpBuffer(PQExpBuffer str, const char *data, size_t datalen)
{
    if (!enlargePQExpBuffer(str, datalen)) return;
    if (datalen) memcpy(str->data + str->len, data, datalen);
    str->len += datalen;
    str->data[str->len] = '\0';
}
