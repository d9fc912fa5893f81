/*
 * Time zones for printing timestamptz as the server does: the UTC offset
 * of a zone at an instant, from a TZif file (the system's tzdata, which
 * Debian's server reads too) or from a POSIX TZ string ("<+0530>-5:30",
 * "CST6CDT,M3.2.0,M11.1.0"), with the server's rules (its tzcode):
 *   - before the first transition, the zone's default type: type 0 when
 *     no transition uses it, else the standard type nearest below the
 *     first transition's, else the first standard type;
 *   - from the last transition on, the file's footer TZ string when it has
 *     one (zic guarantees it agrees with the table), else the last type.
 * No global state: no TZ variable, no localtime, no tzset.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* O_CLOEXEC */
#endif
#include "types/types_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#define SECS_PER_DAY      86400
#define TZ_MAX_FILE       (256 * 1024) /* the largest tzdata file is ~4 KiB */
#define TZ_MAX_TRANSITION 100000
#define TZ_DEFAULT_DIR    "/usr/share/zoneinfo"
#define TZ_MAX_SECS       (INT64_C(1) << 55)

/* One rule of a POSIX TZ string: when DST starts or ends. */
typedef struct posix_rule {
    char kind;    /* 'J': Julian day 1..365 without Feb 29; 'D': day 0..365; 'M' */
    int day;      /* J, D: the day; M: day of week 0..6 (Sunday 0) */
    int week;     /* M: 1..5 (5: the last) */
    int mon;      /* M: 1..12 */
    int32_t secs; /* local time of the change, seconds after midnight */
} posix_rule_t;

typedef struct posix_tz {
    int32_t std_off, dst_off; /* seconds east of UTC */
    bool has_dst;
    posix_rule_t start, end;
} posix_tz_t;

struct pgw_tz {
    const pgw_allocator_t *alloc;
    size_t ntrans;
    int64_t *at;     /* transition instants, Unix seconds, ascending */
    uint8_t *idx;    /* the type in force from at[i] */
    int32_t *offs;   /* each type's offset, seconds east of UTC */
    uint8_t *is_dst; /* each type's DST flag */
    size_t ntypes;
    uint8_t default_type; /* before at[0] */
    bool has_footer;
    posix_tz_t footer;
};

/* ---------------------------------------------------------- POSIX strings */

typedef struct scan {
    const char *s, *end;
} scan_t;

static int scan_num(scan_t *c, int max, int *out)
{
    int n = 0, any = 0;
    while (c->s < c->end && *c->s >= '0' && *c->s <= '9') {
        n = n * 10 + (*c->s++ - '0');
        if (n > max) return PGW_EFORMAT;
        any = 1;
    }
    if (!any) return PGW_EFORMAT;
    *out = n;
    return 0;
}

/* [+-]hh[:mm[:ss]] as seconds (the sign is applied). */
static int scan_secs(scan_t *c, int max_hours, int32_t *out)
{
    int neg = 0, h, m = 0, s = 0;
    if (c->s < c->end && (*c->s == '+' || *c->s == '-')) neg = *c->s++ == '-';
    if (scan_num(c, max_hours, &h) < 0) return PGW_EFORMAT;
    if (c->s < c->end && *c->s == ':') {
        c->s++;
        if (scan_num(c, 59, &m) < 0) return PGW_EFORMAT;
        if (c->s < c->end && *c->s == ':') {
            c->s++;
            if (scan_num(c, 60, &s) < 0) return PGW_EFORMAT;
        }
    }
    int32_t v = (int32_t)(h * 3600 + m * 60 + s);
    *out = neg ? -v : v;
    return 0;
}

/* A zone abbreviation: <...> or letters (the server accepts an empty one). */
static int scan_name(scan_t *c, int allow_empty)
{
    if (c->s < c->end && *c->s == '<') {
        while (c->s < c->end && *c->s != '>')
            c->s++;
        if (c->s == c->end) return PGW_EFORMAT;
        c->s++;
        return 0;
    }
    const char *start = c->s;
    while (c->s < c->end && *c->s != ',' && *c->s != '+' && *c->s != '-' &&
           !(*c->s >= '0' && *c->s <= '9'))
        c->s++;
    return c->s > start || allow_empty ? 0 : PGW_EFORMAT;
}

/* POSIX offsets count west of UTC; ours count east. */
static int scan_offset(scan_t *c, int32_t *east)
{
    int32_t west;
    int rc = scan_secs(c, 24 * 7 - 1, &west);
    *east = -west;
    return rc;
}

static int scan_rule(scan_t *c, posix_rule_t *r)
{
    int rc;
    memset(r, 0, sizeof *r);
    if (c->s < c->end && *c->s == 'J') {
        c->s++;
        r->kind = 'J';
        rc = scan_num(c, 365, &r->day);
        if (rc == 0 && r->day < 1) rc = PGW_EFORMAT;
    } else if (c->s < c->end && *c->s == 'M') {
        c->s++;
        r->kind = 'M';
        rc = scan_num(c, 12, &r->mon);
        if (rc == 0 && (r->mon < 1 || c->s == c->end || *c->s++ != '.')) rc = PGW_EFORMAT;
        if (rc == 0) rc = scan_num(c, 5, &r->week);
        if (rc == 0 && (r->week < 1 || c->s == c->end || *c->s++ != '.')) rc = PGW_EFORMAT;
        if (rc == 0) rc = scan_num(c, 6, &r->day);
    } else {
        r->kind = 'D';
        rc = scan_num(c, 365, &r->day);
    }
    if (rc < 0) return rc;
    r->secs = 2 * 3600;
    if (c->s < c->end && *c->s == '/') {
        c->s++;
        rc = scan_secs(c, 24 * 7 - 1, &r->secs);
    }
    return rc;
}

/* std offset [dst [offset] ,start[/time],end[/time]]. A DST zone without
 * rules would take them from the server's "posixrules" file: not done here
 * (PGW_ENOTSUP) rather than guessed. */
static int posix_parse(const char *s, size_t len, posix_tz_t *out)
{
    scan_t c = {s, s + len};
    memset(out, 0, sizeof *out);
    if (scan_name(&c, 1) < 0 || scan_offset(&c, &out->std_off) < 0) return PGW_EFORMAT;
    if (c.s == c.end) return 0;
    if (scan_name(&c, 0) < 0) return PGW_EFORMAT;
    out->has_dst = true;
    out->dst_off = out->std_off + 3600;
    if (c.s < c.end && *c.s != ',' && scan_offset(&c, &out->dst_off) < 0) return PGW_EFORMAT;
    if (c.s == c.end) return PGW_ENOTSUP;
    if (*c.s++ != ',' || scan_rule(&c, &out->start) < 0) return PGW_EFORMAT;
    if (c.s == c.end || *c.s++ != ',' || scan_rule(&c, &out->end) < 0) return PGW_EFORMAT;
    return c.s == c.end ? 0 : PGW_EFORMAT;
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Day of the year (0-based) on which rule r falls in year y. */
static int64_t rule_yday(const posix_rule_t *r, int64_t y, int64_t jan1_days)
{
    if (r->kind == 'J') return r->day - 1 + (is_leap(y) && r->day >= 60);
    if (r->kind == 'D') return r->day;
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t yday = 0;
    for (int m = 1; m < r->mon; m++)
        yday += mdays[m - 1] + (m == 2 && is_leap(y));
    int dim = mdays[r->mon - 1] + (r->mon == 2 && is_leap(y));
    /* 1970-01-01 was a Thursday (4). */
    int64_t wday = ((jan1_days + yday + 4) % 7 + 7) % 7;
    int64_t first = (r->day - wday + 7) % 7; /* first such weekday, 0-based in month */
    int64_t d = first + 7 * (r->week - 1);
    while (d >= dim)
        d -= 7;
    return yday + d;
}

/* The offset of a POSIX zone at Unix time t. */
static int32_t posix_offset(const posix_tz_t *z, int64_t t)
{
    if (!z->has_dst) return z->std_off;
    int64_t y;
    int32_t m, d;
    pgw__civil_from_days(pgw__floor_div(t, SECS_PER_DAY), &y, &m, &d);
    int64_t jan1 = pgw__days_from_civil(y, 1, 1);
    /* A rule's time is local: standard time before DST starts, DST before
     * it ends. */
    int64_t start =
        (jan1 + rule_yday(&z->start, y, jan1)) * SECS_PER_DAY + z->start.secs - z->std_off;
    int64_t end = (jan1 + rule_yday(&z->end, y, jan1)) * SECS_PER_DAY + z->end.secs - z->dst_off;
    bool dst = start < end ? (t >= start && t < end) : !(t >= end && t < start);
    return dst ? z->dst_off : z->std_off;
}

/* ---------------------------------------------------------------- TZif */

typedef struct tzif_counts {
    uint32_t isut, isstd, leap, time, type, chars;
} tzif_counts_t;

static int tzif_header(const uint8_t *p, size_t len, tzif_counts_t *n, char *version)
{
    if (len < 44 || memcmp(p, "TZif", 4) != 0) return PGW_EFORMAT;
    *version = (char)p[4];
    const uint8_t *c = p + 20;
    n->isut = pgw__get32(c), n->isstd = pgw__get32(c + 4), n->leap = pgw__get32(c + 8);
    n->time = pgw__get32(c + 12), n->type = pgw__get32(c + 16), n->chars = pgw__get32(c + 20);
    if (n->time > TZ_MAX_TRANSITION || n->type == 0 || n->type > 256 || n->chars > 65536 ||
        n->leap > 65536 || (n->isut && n->isut != n->type) || (n->isstd && n->isstd != n->type))
        return PGW_EFORMAT;
    return 0;
}

/* Size of a data block with w-byte times. */
static size_t tzif_block(const tzif_counts_t *n, size_t w)
{
    return (size_t)n->time * (w + 1) + (size_t)n->type * 6 + n->chars + (size_t)n->leap * (w + 4) +
           n->isstd + n->isut;
}

static void tz_release(pgw_tz_t *tz)
{
    pgw__free(tz->alloc, tz->at);
    pgw__free(tz->alloc, tz->idx);
    pgw__free(tz->alloc, tz->offs);
    pgw__free(tz->alloc, tz->is_dst);
}

/* The type for instants before the first transition (the server's rule). */
static uint8_t default_type(const pgw_tz_t *tz)
{
    size_t i;
    for (i = 0; i < tz->ntrans && tz->idx[i] != 0; i++)
        ;
    if (i == tz->ntrans) return 0;
    if (tz->ntrans && tz->is_dst[tz->idx[0]]) {
        for (int t = (int)tz->idx[0] - 1; t >= 0; t--)
            if (!tz->is_dst[t]) return (uint8_t)t;
    }
    for (size_t t = 0; t < tz->ntypes; t++)
        if (!tz->is_dst[t]) return (uint8_t)t;
    return 0;
}

/* Read the block at p (w-byte times) into tz. */
static int tzif_load_block(pgw_tz_t *tz, const uint8_t *p, const tzif_counts_t *n, size_t w)
{
    tz->ntrans = n->time;
    tz->ntypes = n->type;
    tz->at = pgw__calloc(tz->alloc, n->time ? n->time : 1, sizeof *tz->at);
    tz->idx = pgw__calloc(tz->alloc, n->time ? n->time : 1, 1);
    tz->offs = pgw__calloc(tz->alloc, n->type, sizeof *tz->offs);
    tz->is_dst = pgw__calloc(tz->alloc, n->type, 1);
    if (!tz->at || !tz->idx || !tz->offs || !tz->is_dst) return PGW_ENOMEM;
    for (size_t i = 0; i < n->time; i++, p += w) {
        tz->at[i] = w == 8 ? (int64_t)pgw__get64(p) : (int64_t)(int32_t)pgw__get32(p);
        if (i && tz->at[i] <= tz->at[i - 1]) return PGW_EFORMAT;
    }
    for (size_t i = 0; i < n->time; i++) {
        tz->idx[i] = *p++;
        if (tz->idx[i] >= n->type) return PGW_EFORMAT;
    }
    for (size_t i = 0; i < n->type; i++, p += 6) {
        int32_t off = (int32_t)pgw__get32(p);
        if (off <= -26 * 3600 || off >= 26 * 3600 || p[4] > 1 || p[5] >= n->chars + (n->chars == 0))
            return PGW_EFORMAT;
        tz->offs[i] = off;
        tz->is_dst[i] = p[4];
    }
    tz->default_type = default_type(tz);
    return 0;
}

/* The footer "\n<TZ string>\n" of a version 2+ file, if any. */
static int tzif_footer(pgw_tz_t *tz, const uint8_t *p, size_t len)
{
    if (len < 2 || p[0] != '\n') return PGW_EFORMAT;
    const uint8_t *nl = memchr(p + 1, '\n', len - 1);
    if (!nl) return PGW_EFORMAT;
    size_t n = (size_t)(nl - p - 1);
    if (n == 0) return 0;
    int rc = posix_parse((const char *)p + 1, n, &tz->footer);
    if (rc < 0) return rc;
    tz->has_footer = true;
    return 0;
}

static int tzif_parse(pgw_tz_t *tz, const uint8_t *p, size_t len)
{
    tzif_counts_t n;
    char version;
    int rc = tzif_header(p, len, &n, &version);
    if (rc < 0) return rc;
    size_t v1 = 44 + tzif_block(&n, 4);
    if (len < v1) return PGW_EFORMAT;
    if (version == '\0') {
        if (n.leap) return PGW_ENOTSUP; /* leap-second ("right/") zones */
        return tzif_load_block(tz, p + 44, &n, 4);
    }
    p += v1, len -= v1;
    rc = tzif_header(p, len, &n, &version);
    if (rc < 0) return rc;
    size_t v2 = 44 + tzif_block(&n, 8);
    if (len < v2) return PGW_EFORMAT;
    if (n.leap) return PGW_ENOTSUP;
    rc = tzif_load_block(tz, p + 44, &n, 8);
    if (rc == 0) rc = tzif_footer(tz, p + v2, len - v2);
    return rc;
}

/* ---------------------------------------------------------------- API */

static int tz_new(pgw_tz_t **out, const pgw_allocator_t *alloc)
{
    pgw_tz_t *tz = pgw__calloc(alloc, 1, sizeof *tz);
    if (!tz) return PGW_ENOMEM;
    tz->alloc = alloc;
    *out = tz;
    return 0;
}

int pgw_tz_from_tzif(pgw_tz_t **out, const uint8_t *data, size_t len, const pgw_allocator_t *alloc)
{
    if (!out) return PGW_EINVAL;
    *out = NULL;
    if (!data && len) return PGW_EINVAL;
    pgw_tz_t *tz = NULL;
    int rc = tz_new(&tz, alloc);
    if (rc < 0) return rc;
    rc = tzif_parse(tz, data, len);
    if (rc < 0) {
        pgw_tz_free(tz);
        return rc;
    }
    *out = tz;
    return 0;
}

int pgw_tz_from_posix(pgw_tz_t **out, const char *spec, size_t len, const pgw_allocator_t *alloc)
{
    if (!out) return PGW_EINVAL;
    *out = NULL;
    if (!spec) return PGW_EINVAL;
    posix_tz_t z;
    int rc = posix_parse(spec, len, &z);
    if (rc < 0) return rc;
    pgw_tz_t *tz = NULL;
    rc = tz_new(&tz, alloc);
    if (rc < 0) return rc;
    tz->footer = z;
    tz->has_footer = true;
    *out = tz;
    return 0;
}

/* A zone name the server could have loaded from its tzdata directory: a
 * relative path without "." or ".." components. */
static int safe_zone_name(const char *name, size_t len)
{
    if (len == 0 || len > 255 || name[0] == '/') return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)name[i];
        if (ch < 0x20 || ch == 0x7f) return 0;
        if (ch == '.' && (i == 0 || name[i - 1] == '/') &&
            (i + 1 == len || name[i + 1] == '/' || name[i + 1] == '.'))
            return 0;
    }
    return 1;
}

/* The whole file at path into a new buffer (at most TZ_MAX_FILE bytes).
 * PGW_ENOTFOUND when it cannot be opened as a regular file. */
static int read_file(const char *path, const pgw_allocator_t *alloc, uint8_t **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PGW_ENOTFOUND;
    uint8_t *buf = pgw__malloc(alloc, TZ_MAX_FILE);
    if (!buf) {
        close(fd);
        return PGW_ENOMEM;
    }
    size_t n = 0;
    int rc = 0;
    while (n < TZ_MAX_FILE) {
        ssize_t r = read(fd, buf + n, TZ_MAX_FILE - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) rc = PGW_ENOTFOUND; /* a directory, or unreadable */
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (rc == 0 && n == TZ_MAX_FILE) rc = PGW_EFORMAT;
    if (rc < 0) {
        pgw__free(alloc, buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return 0;
}

int pgw_tz_load(pgw_tz_t **out, const char *name, const char *dir, const pgw_allocator_t *alloc)
{
    if (!out) return PGW_EINVAL;
    *out = NULL;
    if (!name) return PGW_EINVAL;
    size_t len = strlen(name);
    if (!dir) dir = TZ_DEFAULT_DIR;
    int rc = PGW_ENOTFOUND;
    if (safe_zone_name(name, len)) {
        size_t dl = strlen(dir);
        char *path = pgw__malloc(alloc, dl + len + 2);
        if (!path) return PGW_ENOMEM;
        memcpy(path, dir, dl);
        path[dl] = '/';
        memcpy(path + dl + 1, name, len + 1);
        uint8_t *data = NULL;
        size_t n = 0;
        rc = read_file(path, alloc, &data, &n);
        pgw__free(alloc, path);
        if (rc == 0) {
            rc = pgw_tz_from_tzif(out, data, n, alloc);
            pgw__free(alloc, data);
            return rc;
        }
        if (rc != PGW_ENOTFOUND) return rc;
    }
    /* Not a file: the server then reads the name as a POSIX TZ string. */
    rc = pgw_tz_from_posix(out, name, len, alloc);
    return rc == PGW_EFORMAT ? PGW_ENOTFOUND : rc;
}

int pgw_tz_gmtoff(const pgw_tz_t *tz, int64_t unix_sec, int32_t *gmtoff)
{
    if (!tz || !gmtoff) return PGW_EINVAL;
    /* Beyond a billion years the calendar arithmetic could overflow; the
     * offset there is the rule's anyway. */
    if (unix_sec > TZ_MAX_SECS) unix_sec = TZ_MAX_SECS;
    if (unix_sec < -TZ_MAX_SECS) unix_sec = -TZ_MAX_SECS;
    size_t n = tz->ntrans;
    if (n == 0 || unix_sec >= tz->at[n - 1]) {
        if (tz->has_footer) {
            *gmtoff = posix_offset(&tz->footer, unix_sec);
            return 0;
        }
        *gmtoff = tz->offs[n ? tz->idx[n - 1] : tz->default_type];
        return 0;
    }
    if (unix_sec < tz->at[0]) {
        *gmtoff = tz->offs[tz->default_type];
        return 0;
    }
    size_t lo = 0, hi = n - 1; /* at[lo] <= t < at[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (tz->at[mid] <= unix_sec)
            lo = mid;
        else
            hi = mid;
    }
    *gmtoff = tz->offs[tz->idx[lo]];
    return 0;
}

void pgw_tz_free(pgw_tz_t *tz)
{
    if (!tz) return;
    tz_release(tz);
    pgw__free(tz->alloc, tz);
}
