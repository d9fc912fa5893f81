/*
 * PQdsplen and PQmblen in UTF8 on every code point U+0000 to U+1FFFFF
 * (surrogates and the ones past U+10FFFF too, as UTF-8 would spell them),
 * and on every lone lead byte. Printed as runs of code points that share
 * their width and length, so that the output stays short: libpq's
 * combining and East Asian wide tables (Unicode 14.0.0) must be ours on
 * every code point. No server needed.
 */
#include "pqdiff.h"

#define UTF8 6 /* pg_enc's PG_UTF8 */

/* cp as UTF-8 at out (NUL-terminated); 1 to 4 bytes. */
static void utf8_encode(unsigned cp, char *out)
{
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        *o++ = (unsigned char)cp;
    } else if (cp < 0x800) {
        *o++ = (unsigned char)(0xc0 | cp >> 6);
        *o++ = (unsigned char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *o++ = (unsigned char)(0xe0 | cp >> 12);
        *o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        *o++ = (unsigned char)(0x80 | (cp & 0x3f));
    } else {
        *o++ = (unsigned char)(0xf0 | cp >> 18);
        *o++ = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
        *o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        *o++ = (unsigned char)(0x80 | (cp & 0x3f));
    }
    *o = '\0';
}

int main(void)
{
    pqd_init();
    unsigned first = 0;
    int run_dsp = 0, run_mb = 0;
    for (unsigned cp = 0; cp <= 0x200000; cp++) {
        int dsp = -2, mb = -2; /* past the end: closes the last run */
        if (cp < 0x200000) {
            char s[5];
            utf8_encode(cp, s);
            dsp = PQdsplen(s, UTF8);
            mb = PQmblen(s, UTF8);
        }
        if (cp > 0 && (dsp != run_dsp || mb != run_mb)) {
            printf("U+%04X..U+%04X dsplen %d mblen %d\n", first, cp - 1, run_dsp, run_mb);
            first = cp;
        }
        run_dsp = dsp;
        run_mb = mb;
    }
    for (int b = 0x80; b <= 0xff; b++) {
        char s[5] = {(char)b}; /* both libraries read up to 4 bytes */
        printf("lone 0x%02X dsplen %d mblen %d\n", b, PQdsplen(s, UTF8), PQmblen(s, UTF8));
    }
    return 0;
}
