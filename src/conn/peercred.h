/*
 * requirepeer: check who serves a Unix-domain socket (internal).
 */
#ifndef PGW_CONN_PEERCRED_H
#define PGW_CONN_PEERCRED_H

#include <stddef.h>

/*
 * libpq's requirepeer check: when requirepeer is set (not NULL, not "") and
 * fd is a connected Unix-domain socket, the user name of the process at the
 * other end (SO_PEERCRED) must equal requirepeer. The connect code calls it
 * right after a Unix socket connects, before anything is sent; a failure
 * ends the connect (libpq does not try the remaining hosts). Over TCP (a
 * socket whose address family is not AF_UNIX), or with requirepeer unset,
 * it checks nothing and returns 0, as libpq does; an fd whose family cannot
 * be read fails ("could not get peer credentials").
 * errbuf (if not NULL) receives a NUL-terminated message in libpq's words:
 *   'requirepeer specifies "X", but actual peer user name is "Y"',
 *   'could not get peer credentials: <strerror>',
 *   'requirepeer parameter is not supported on this platform',
 *   'could not look up local user ID N: <strerror>',
 *   'local user with ID N does not exist';
 * it is empty on success.
 * Returns 0 (check passed or not applicable), or:
 *   PGW_EAUTHPOLICY  the peer is not requirepeer, or could not be
 *                    identified (any message above);
 *   PGW_EINVAL       fd is negative.
 * Touches only fd's socket options; thread-safe (getpwuid_r).
 */
int pgw__peercred_check(int fd, const char *requirepeer, char *errbuf, size_t errlen);

#endif /* PGW_CONN_PEERCRED_H */
