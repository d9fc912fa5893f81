/*
 * Screen width of Unicode characters: lookups in the generated
 * wcwidth_table.h (see wcwidth.h).
 */
#include "session/wcwidth.h"
#include "session/wcwidth_table.h"
#include "util/internal.h"

bool pgw__unicode_wide(uint32_t cp)
{
    return pgw__in_ranges(pgw__wide_ranges, PGW__ARRAY_LEN(pgw__wide_ranges), cp);
}

bool pgw__unicode_combining(uint32_t cp)
{
    return pgw__in_ranges(pgw__combining_ranges, PGW__ARRAY_LEN(pgw__combining_ranges), cp);
}
