/*
 * Shortest round-trip text of a double, as PostgreSQL's float8out writes it
 * (extra_float_digits > 0, the default since PostgreSQL 12): the fewest
 * significant digits that read back (strtod) to the same double, the
 * closest to the exact value among those, ties to an even last digit.
 */
#ifndef PGW_TYPES_FLOAT_FMT_H
#define PGW_TYPES_FLOAT_FMT_H

#include <stddef.h>

/* The longest text pgw__fmt_float8 writes ("-2.2250738585072014e-308"). */
#define PGW__FLOAT8_TEXT_MAX 24

/*
 * Write v's text into dst (room for PGW__FLOAT8_TEXT_MAX bytes, no NUL
 * written) and return its length. Decimal notation when the decimal
 * exponent X of the first digit is -4 <= X < 15 ("0.0001", "123.5",
 * "100000000000000"), otherwise scientific with a sign and at least two
 * exponent digits ("1e+15", "1.5e-05", "5e-324"); "0" and "-0"; "NaN",
 * "Infinity", "-Infinity". No locale is involved.
 */
size_t pgw__fmt_float8(char *dst, double v);
/* The same for a float (float4out): at most PGW__FLOAT8_TEXT_MAX bytes
 * too, scientific notation from an exponent of 6 on ("1e+06"). */
size_t pgw__fmt_float4(char *dst, float v);

#endif
