/*
 * SASLprep (RFC 4013), the stringprep (RFC 3454) profile SCRAM applies to
 * passwords: map non-ASCII spaces to SPACE and "commonly mapped to nothing"
 * characters to nothing, normalise to NFKC, reject prohibited characters
 * (including code points unassigned in Unicode 3.2) and check the bidi rule.
 * The tables come from gen_saslprep_tables.py.
 *
 * The server stores a SCRAM secret from the password it was given through
 * its own SASLprep, and libpq prepares what it sends the same way; a
 * password prepared differently here does not log in. So this follows
 * PostgreSQL's pg_saslprep where it departs from the RFCs: the prohibited
 * and bidi checks look at the mapped input, not at the normalised output
 * (U+FB1D alone is prepared; "a" U+0340 is refused, and so used as given),
 * and a password of any length is prepared.
 */
#include "auth/auth.h"
#include "auth/saslprep_tables.h"
#include "util/internal.h"

#include <stdbool.h>

#define HANGUL_S_BASE  0xAC00
#define HANGUL_L_BASE  0x1100
#define HANGUL_V_BASE  0x1161
#define HANGUL_T_BASE  0x11A7
#define HANGUL_L_COUNT 19
#define HANGUL_V_COUNT 21
#define HANGUL_T_COUNT 28
#define HANGUL_N_COUNT (HANGUL_V_COUNT * HANGUL_T_COUNT)
#define HANGUL_S_COUNT (HANGUL_L_COUNT * HANGUL_N_COUNT)

/* The longest full decomposition of one code point (U+FDFA has 18). */
#define MAX_DECOMP_LEN 32

#define IN_TABLE(t, cp) pgw__in_ranges((t), PGW__ARRAY_LEN(t), (cp))

static uint8_t combining_class(uint32_t cp)
{
    size_t lo = 0, hi = PGW__ARRAY_LEN(saslprep_ccc_lo);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t first = saslprep_ccc_lo[mid] >> 8;
        if (cp < first)
            hi = mid;
        else if (cp > saslprep_ccc_hi[mid])
            lo = mid + 1;
        else
            return (uint8_t)(saslprep_ccc_lo[mid] & 0xFF);
    }
    return 0;
}

size_t pgw__utf8_decode(const unsigned char *s, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        n = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0; /* also stops at the NUL */
        v = v << 6 | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return n;
}

size_t pgw__utf8_encode(uint32_t cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    } else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The full compatibility decomposition of cp into out (at most
 * MAX_DECOMP_LEN code points); returns the count (1 if cp is unchanged). */
static size_t decompose(uint32_t cp, uint32_t *out)
{
    if (cp >= HANGUL_S_BASE && cp < HANGUL_S_BASE + HANGUL_S_COUNT) {
        uint32_t s = cp - HANGUL_S_BASE;
        out[0] = HANGUL_L_BASE + s / HANGUL_N_COUNT;
        out[1] = HANGUL_V_BASE + (s % HANGUL_N_COUNT) / HANGUL_T_COUNT;
        if (s % HANGUL_T_COUNT == 0) return 2;
        out[2] = HANGUL_T_BASE + s % HANGUL_T_COUNT;
        return 3;
    }
    size_t lo = 0, hi = PGW__ARRAY_LEN(saslprep_decomp_index) / 2;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t key = saslprep_decomp_index[2 * mid];
        if (cp < key >> 8) {
            hi = mid;
        } else if (cp > key >> 8) {
            lo = mid + 1;
        } else {
            size_t len = key & 0xFF, off = saslprep_decomp_index[2 * mid + 1];
            if (len > MAX_DECOMP_LEN) len = MAX_DECOMP_LEN; /* never: the generator bounds it */
            memcpy(out, saslprep_decomp_pool + off, len * sizeof *out);
            return len;
        }
    }
    out[0] = cp;
    return 1;
}

/* The primary composite of a + b, or 0 if there is none. */
static uint32_t compose_pair(uint32_t a, uint32_t b)
{
    if (a >= HANGUL_L_BASE && a < HANGUL_L_BASE + HANGUL_L_COUNT && b >= HANGUL_V_BASE &&
        b < HANGUL_V_BASE + HANGUL_V_COUNT)
        return HANGUL_S_BASE +
               ((a - HANGUL_L_BASE) * HANGUL_V_COUNT + (b - HANGUL_V_BASE)) * HANGUL_T_COUNT;
    if (a >= HANGUL_S_BASE && a < HANGUL_S_BASE + HANGUL_S_COUNT &&
        (a - HANGUL_S_BASE) % HANGUL_T_COUNT == 0 && b > HANGUL_T_BASE &&
        b < HANGUL_T_BASE + HANGUL_T_COUNT)
        return a + (b - HANGUL_T_BASE);
    size_t lo = 0, hi = PGW__ARRAY_LEN(saslprep_compose) / 3;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const uint32_t *e = saslprep_compose + 3 * mid;
        if (a < e[0] || (a == e[0] && b < e[1]))
            hi = mid;
        else if (a > e[0] || b > e[1])
            lo = mid + 1;
        else
            return e[2];
    }
    return 0;
}

/* Canonical ordering: a stable sort of each run of non-starters by class.
 * Runs are short, so insertion sort is the right tool. */
static void canonical_order(uint32_t *cps, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint8_t c = combining_class(cps[i]);
        if (c == 0) continue;
        uint32_t cp = cps[i];
        size_t j = i;
        while (j > 0) {
            uint8_t prev = combining_class(cps[j - 1]);
            if (prev == 0 || prev <= c) break;
            cps[j] = cps[j - 1];
            j--;
        }
        cps[j] = cp;
    }
}

/* Canonical composition (UAX #15) in place; returns the new length. A
 * character composes with the last starter unless a character of the same or
 * higher class (or a starter) stands between them. */
static size_t canonical_compose(uint32_t *cps, size_t n)
{
    if (n == 0) return 0;
    size_t starter = 0, out = 1;
    int last_class = combining_class(cps[0]) ? 256 : 0; /* a leading non-starter blocks */
    for (size_t i = 1; i < n; i++) {
        uint32_t cp = cps[i];
        int cls = combining_class(cp);
        if (last_class < cls || last_class == 0) {
            uint32_t composite = compose_pair(cps[starter], cp);
            if (composite) {
                cps[starter] = composite;
                continue;
            }
        }
        if (cls == 0) starter = out;
        last_class = cls;
        cps[out++] = cp;
    }
    return out;
}

static bool is_ascii(const char *s, size_t *len)
{
    size_t i = 0;
    bool ascii = true;
    for (; s[i]; i++)
        if ((unsigned char)s[i] >= 0x80) ascii = false;
    *len = i;
    return ascii;
}

/* ASCII is unchanged by SASLprep except that control characters (C.2.1) are
 * prohibited; SPACE is allowed. */
static int saslprep_ascii(const pgw_allocator_t *alloc, const char *in, size_t len, char **out)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)in[i] < 0x20 || in[i] == 0x7F) return PGW_EINVAL;
    *out = pgw__strndup(alloc, in, len);
    return *out ? 0 : PGW_ENOMEM;
}

/* Step 1: decode and map into mapped[] (at most one code point per input
 * byte). Returns 0 or PGW_EENCODING. */
static int map_input(const char *in, uint32_t *mapped, size_t *count)
{
    const unsigned char *p = (const unsigned char *)in;
    size_t n = 0;
    while (*p) {
        uint32_t cp;
        size_t len = pgw__utf8_decode(p, &cp);
        if (len == 0) return PGW_EENCODING;
        p += len;
        /* U+200B is in both tables; the server maps it to SPACE: the
         * space table is looked at first. */
        if (IN_TABLE(saslprep_non_ascii_space, cp))
            cp = ' ';
        else if (IN_TABLE(saslprep_map_to_nothing, cp))
            continue;
        mapped[n++] = cp;
    }
    *count = n;
    return 0;
}

/* Steps 3 and 4, prohibited characters and the bidi rule (RFC 3454 6), over
 * the mapped code points, as the server checks them. */
static int check_mapped(const uint32_t *cps, size_t n)
{
    bool has_randal = false, has_l = false;
    for (size_t i = 0; i < n; i++) {
        if (IN_TABLE(saslprep_prohibited, cps[i])) return PGW_EINVAL;
        if (IN_TABLE(saslprep_randalcat, cps[i])) has_randal = true;
        if (IN_TABLE(saslprep_lcat, cps[i])) has_l = true;
    }
    if (has_randal) {
        if (has_l) return PGW_EINVAL;
        if (!IN_TABLE(saslprep_randalcat, cps[0]) || !IN_TABLE(saslprep_randalcat, cps[n - 1]))
            return PGW_EINVAL;
    }
    return 0;
}

/* Step 2, NFKC of mapped[0..m) into a new array *out (of *cap entries) of
 * *count code points. */
static int normalize(const pgw_allocator_t *alloc, const uint32_t *mapped, size_t m, uint32_t **out,
                     size_t *cap, size_t *count)
{
    uint32_t d[MAX_DECOMP_LEN];
    size_t total = 0;
    for (size_t i = 0; i < m; i++)
        total += decompose(mapped[i], d);
    uint32_t *cps = pgw__calloc(alloc, total, sizeof *cps);
    if (!cps) return PGW_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < m; i++)
        n += decompose(mapped[i], cps + n);
    canonical_order(cps, n);
    *count = canonical_compose(cps, n);
    *out = cps;
    *cap = total;
    return 0;
}

/* Zeroes and frees an array of n code points of a password. */
static void wipe(const pgw_allocator_t *alloc, uint32_t *cps, size_t n)
{
    if (!cps) return;
    memset(cps, 0, n * sizeof *cps);
    pgw__free(alloc, cps);
}

static int encode_utf8(const pgw_allocator_t *alloc, const uint32_t *cps, size_t n, char **out)
{
    char *s = pgw__malloc(alloc, n * 4 + 1);
    if (!s) return PGW_ENOMEM;
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += pgw__utf8_encode(cps[i], s + len);
    s[len] = '\0';
    *out = s;
    return 0;
}

int pgw__saslprep(const pgw_allocator_t *alloc, const char *in, char **out)
{
    size_t len;
    *out = NULL;
    if (is_ascii(in, &len)) return saslprep_ascii(alloc, in, len, out);

    uint32_t *mapped = pgw__calloc(alloc, len, sizeof *mapped), *cps = NULL;
    if (!mapped) return PGW_ENOMEM;
    size_t m = 0, n = 0, cap = 0;
    int rc = map_input(in, mapped, &m);
    /* Nothing left once mapped: as for libpq and the server, an empty
     * password is prohibited (and so used as given). */
    if (rc == 0 && m == 0) rc = PGW_EINVAL;
    if (rc == 0) rc = check_mapped(mapped, m);
    if (rc == 0) rc = normalize(alloc, mapped, m, &cps, &cap, &n);
    if (rc == 0) rc = encode_utf8(alloc, cps, n, out);
    /* The code points are the password. */
    wipe(alloc, mapped, len);
    wipe(alloc, cps, cap);
    return rc;
}
