/*
 * requirepeer, as libpq implements it (fe-connect.c, CONNECTION_MADE): the
 * peer's uid from the kernel, its user name from the password database,
 * compared with the option. Without this check a requirepeer the user set
 * would be a silent downgrade: a process that took over the socket path
 * could impersonate the server.
 */
#define _GNU_SOURCE /* struct ucred, SO_PEERCRED */
#include "conn/peercred.h"
#include "pgwire/common.h"
#include "util/internal.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

/* The peer's uid, or -1 with errno set. */
static int peer_uid(int fd, uid_t *uid)
{
#ifdef SO_PEERCRED
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    if (len != sizeof cred) {
        errno = EIO;
        return -1;
    }
    *uid = cred.uid;
    return 0;
#else
    (void)fd;
    (void)uid;
    errno = ENOSYS;
    return -1;
#endif
}

/* The socket's address family, or -1 with errno set. */
static int socket_family(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    memset(&ss, 0, sizeof ss);
    return getsockname(fd, (struct sockaddr *)&ss, &len) == 0 ? ss.ss_family : -1;
}

int pgw__peercred_check(int fd, const char *requirepeer, char *errbuf, size_t errlen)
{
    if (errbuf && errlen) errbuf[0] = '\0';
    if (fd < 0) return PGW_EINVAL;
    if (!requirepeer || !*requirepeer) return 0;
    char msg[256];
    uid_t uid;
    errno = 0;
    /* fail closed: only a socket known not to be Unix-domain is exempt */
    int family = socket_family(fd);
    if (family >= 0 && family != AF_UNIX) return 0;
    if (family < 0 || peer_uid(fd, &uid) != 0) {
        if (errno == ENOSYS)
            return pgw__fail_msg(errbuf, errlen, PGW_EAUTHPOLICY,
                                 "requirepeer parameter is not supported on this platform");
        int e = errno;
        return pgw__fail_msg(errbuf, errlen, PGW_EAUTHPOLICY, "could not get peer credentials: %s",
                             strerror(e));
    }
    char pwbuf[4096];
    struct passwd pwd, *pw = NULL;
    int rc = getpwuid_r(uid, &pwd, pwbuf, sizeof pwbuf, &pw);
    if (!pw) {
        if (rc != 0) {
            snprintf(msg, sizeof msg, "%s", strerror(rc));
            return pgw__fail_msg(errbuf, errlen, PGW_EAUTHPOLICY,
                                 "could not look up local user ID %d: %s", (int)uid, msg);
        }
        return pgw__fail_msg(errbuf, errlen, PGW_EAUTHPOLICY,
                             "local user with ID %d does not exist", (int)uid);
    }
    if (strcmp(pw->pw_name, requirepeer) != 0)
        return pgw__fail_msg(errbuf, errlen, PGW_EAUTHPOLICY,
                             "requirepeer specifies \"%s\", but actual peer user name is \"%s\"",
                             requirepeer, pw->pw_name);
    return 0;
}
