/*
 * The external definitions of every function the public headers define
 * inline (PGW_INLINE, common.h): with `extern` in their declarations here,
 * C99 makes this translation unit emit each one, so the shared and static
 * libraries export them under their own names for FFIs and dlsym.
 */
#define PGW_INLINE PGW_EXTERN extern inline
#include "pgwire.h"
