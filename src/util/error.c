/* The one error-code space: names, messages and the fatal flag, all
 * generated from PGW_ERRNO_MAP so they cannot drift apart. */
#define _GNU_SOURCE /* strerrorname_np */
#include "pgwire/common.h"

#include "util/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int pgw__fail_msg(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *pgw_version(void)
{
    return PGW_VERSION_STRING;
}

int pgw_is_system_error(int code)
{
    return code < 0 && code > -1000;
}

const char *pgw_strerror(int code)
{
    switch (code) {
#define PGW__ERR_MSG(name, value, fatal, msg) \
    case value:                               \
        return msg;
        PGW_ERRNO_MAP(PGW__ERR_MSG)
#undef PGW__ERR_MSG
    case 0:
        return "success";
    default:
        break;
    }
    if (pgw_is_system_error(code)) {
        /* libuv passes errno values through negated; describe them the same way. */
        const char *s = strerror(-code);
        if (s) return s;
    }
    return "unknown error";
}

const char *pgw_err_name(int code)
{
    switch (code) {
#define PGW__ERR_NAME(name, value, fatal, msg) \
    case value:                                \
        return #name;
        PGW_ERRNO_MAP(PGW__ERR_NAME)
#undef PGW__ERR_NAME
    case 0:
        return "OK";
    default:
        break;
    }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
    /* libuv's codes are negated errno values: "ECONNREFUSED", "ENOENT". */
    if (pgw_is_system_error(code)) {
        const char *s = strerrorname_np(-code);
        if (s) return s;
    }
#endif
    return "UNKNOWN";
}

int pgw_is_fatal(int code)
{
    switch (code) {
#define PGW__ERR_FATAL(name, value, fatal, msg) \
    case value:                                 \
        return fatal;
        PGW_ERRNO_MAP(PGW__ERR_FATAL)
#undef PGW__ERR_FATAL
    default:
        /* A libuv/network error on a connection is fatal for it. */
        return pgw_is_system_error(code);
    }
}
