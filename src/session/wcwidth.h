/*
 * Screen width of Unicode characters, from wcwidth_table.h (generated,
 * Unicode 14.0.0 as libpq 15). Internal: error_format.c places the caret
 * with it, libpgwire-pq's PQdsplen (src/pq/encoding.c) measures with it.
 */
#ifndef PGW_SESSION_WCWIDTH_H
#define PGW_SESSION_WCWIDTH_H

#include <stdbool.h>
#include <stdint.h>

/* True when code point cp takes two screen columns (East Asian wide or
 * full-width). */
bool pgw__unicode_wide(uint32_t cp);

/* True when code point cp takes no screen column: a combining character
 * (libpq 15's ucs_wcwidth gives it 0). */
bool pgw__unicode_combining(uint32_t cp);

#endif
