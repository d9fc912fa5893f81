/*
 * The files libpq reads options from: the connection service file
 * (pg_service.conf) and the password file (~/.pgpass), with its rules for
 * where they are and who may read them.
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conninfo_internal.h"

#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- files ---- */

/* Read a whole small file. Returns 0 (with *out NUL-terminated, owned),
 * 1 if it does not exist or cannot be read, or PGW_ENOMEM. */
static int read_file(const pgw_allocator_t *a, const char *path, char **out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 1;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return 1;
    }
    /* Sized from the file, capped: a larger file is read up to the cap. */
    size_t cap = st.st_size > MAX_FILE_SIZE ? MAX_FILE_SIZE : (size_t)st.st_size;
    char *text = pgw__malloc(a, cap + 1);
    if (!text) {
        fclose(f);
        return PGW_ENOMEM;
    }
    size_t n = cap ? fread(text, 1, cap, f) : 0;
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad) {
        pgw__free(a, text);
        return 1;
    }
    text[n] = '\0';
    *out = text;
    return 0;
}

/* The next line of *pp (NUL-terminated in place, trailing CR/LF removed).
 * *raw_len (if not NULL) receives its length with the newline. */
static char *next_line(char **pp, size_t *raw_len)
{
    char *line = *pp;
    if (*line == '\0') return NULL;
    char *nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        *pp = nl + 1;
    } else {
        *pp = line + strlen(line);
    }
    if (raw_len) *raw_len = (size_t)(*pp - line);
    size_t n = strlen(line);
    while (n && line[n - 1] == '\r')
        line[--n] = '\0';
    return line;
}

static const char *home_dir(void)
{
    const char *home = getenv("HOME");
    if (home && *home) return home;
    struct passwd *pw = getpwuid(geteuid());
    return pw ? pw->pw_dir : NULL;
}

/* ---- the service file ---- */

/* libpq reads a service file line into 1024 bytes and refuses a line that
 * fills them. */
#define SERVICE_LINE_MAX 1022

/* Apply the lines of section [service] in text to unset options. Returns 1
 * if the section was found, 0 if not, or an error. */
static int apply_service_text(pgw_conninfo_t *ci, char *text, const char *path, const char *service,
                              err_out_t *e)
{
    bool in_group = false, found = false;
    size_t service_len = strlen(service);
    char *cursor = text, *line;
    size_t raw;
    for (int lineno = 1; (line = next_line(&cursor, &raw)) != NULL; lineno++) {
        if (raw > SERVICE_LINE_MAX)
            return FAIL(e, "line %d too long in service file \"%s\"", lineno, path);
        size_t n = strlen(line);
        while (n && pgw__ci_is_blank(line[n - 1]))
            line[--n] = '\0';
        while (pgw__ci_is_blank(*line))
            line++;
        if (*line == '\0' || *line == '#') continue;
        if (*line == '[') {
            if (found) break; /* the section ended */
            in_group = strncmp(line + 1, service, service_len) == 0 && line[service_len + 1] == ']';
            found = in_group;
            continue;
        }
        if (!in_group) continue;
        char *eq = strchr(line, '=');
        if (!eq) return FAIL(e, "syntax error in service file \"%s\", line %d", path, lineno);
        *eq = '\0';
        if (strcmp(line, "service") == 0 || strcmp(line, "servicefile") == 0)
            return FAIL(e,
                        "nested \"%s\" specifications not supported in service file \"%s\", "
                        "line %d",
                        line, path, lineno);
        int i = pgw__ci_option_index(line);
        if (i < 0) return FAIL(e, "syntax error in service file \"%s\", line %d", path, lineno);
        int rc = pgw__ci_store(ci, i, eq + 1, false);
        if (rc != 0) return rc;
    }
    return found ? 1 : 0;
}

/* Returns 1 if the section was found, 0 if not, or an error; a file that
 * cannot be read is an error (libpq's "service file ... not found"). */
static int apply_service_file(pgw_conninfo_t *ci, const char *path, const char *service,
                              err_out_t *e)
{
    char *text = NULL;
    int rc = read_file(ci->alloc, path, &text);
    if (rc == 1) return FAIL(e, "service file \"%s\" not found", path);
    if (rc != 0) return rc;
    rc = apply_service_text(ci, text, path, service, e);
    pgw__free(ci->alloc, text);
    return rc;
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* libpq's parseServiceInfo: an explicit service file must exist; the
 * per-user and system files are read when they exist. An empty service name
 * is a name (section "[]"). */
int pgw__ci_apply_service(pgw_conninfo_t *ci, err_out_t *e)
{
    const char *service = VAL(ci, "service") ? VAL(ci, "service") : getenv("PGSERVICE");
    if (!service) return 0;
    char path[4096];
    const char *file = VAL(ci, "servicefile") ? VAL(ci, "servicefile") : getenv("PGSERVICEFILE");
    const char *home = file ? NULL : home_dir();
    int rc = 0;
    if (file)
        snprintf(path, sizeof path, "%s", file);
    else if (home)
        snprintf(path, sizeof path, "%s/.pg_service.conf", home);
    if (file || (home && file_exists(path))) rc = apply_service_file(ci, path, service, e);
    if (rc != 0) return rc < 0 ? rc : 0;
    const char *sysconf = getenv("PGSYSCONFDIR");
    snprintf(path, sizeof path, "%s/pg_service.conf", sysconf ? sysconf : DEFAULT_SYSCONFDIR);
    if (file_exists(path)) rc = apply_service_file(ci, path, service, e);
    if (rc < 0) return rc;
    if (rc == 0) return FAIL(e, "definition of service \"%s\" not found", service);
    return 0;
}

/* ---- the password file ---- */

/* Cut one field at *pp up to an unescaped ':', unescaping in place. Returns
 * NULL if the line ends first. *wild is set if the field is exactly "*". */
static char *cut_field(char **pp, bool *wild)
{
    char *start = *pp, *r = start, *w = start;
    *wild = r[0] == '*' && r[1] == ':';
    while (*r && *r != ':') {
        if (*r == '\\' && r[1]) r++;
        *w++ = *r++;
    }
    if (*r != ':') return NULL;
    *w = '\0';
    *pp = r + 1;
    return start;
}

/* The password field: up to the first unescaped ':' (libpq's rule). */
static void unescape_password(char *s)
{
    char *w = s;
    for (char *r = s; *r && *r != ':'; r++) {
        if (*r == '\\' && r[1]) r++;
        *w++ = *r;
    }
    *w = '\0';
}

static int parse_pgpass(pgw_conninfo_t *ci, char *text)
{
    size_t lines = 1;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    ci->pgpass = pgw__calloc(ci->alloc, lines, sizeof *ci->pgpass);
    if (!ci->pgpass) return PGW_ENOMEM;
    char *cursor = text, *line;
    while ((line = next_line(&cursor, NULL)) != NULL) {
        if (*line == '\0' || *line == '#') continue;
        pgpass_entry_t *en = &ci->pgpass[ci->npgpass];
        char *p = line;
        bool ok = true;
        for (int f = 0; f < 4 && ok; f++) {
            bool wild;
            char *field = cut_field(&p, &wild);
            ok = field != NULL;
            en->field[f] = wild ? NULL : field;
        }
        if (!ok) continue;
        unescape_password(p);
        en->password = p;
        ci->npgpass++;
    }
    return 0;
}

static int set_warning(pgw_conninfo_t *ci, const char *fmt, const char *path)
{
    char msg[4200];
    snprintf(msg, sizeof msg, fmt, path);
    ci->passfile_warning = pgw__strdup(ci->alloc, msg);
    return ci->passfile_warning ? 0 : PGW_ENOMEM;
}

int pgw__ci_load_pgpass(pgw_conninfo_t *ci)
{
    const char *pw = VAL(ci, "password");
    if (pw && *pw) return 0;
    char path[4096];
    const char *file = VAL(ci, "passfile");
    if (file && *file) {
        snprintf(path, sizeof path, "%s", file);
    } else {
        const char *home = home_dir();
        if (!home) return 0;
        snprintf(path, sizeof path, "%s/.pgpass", home);
    }
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    if (!S_ISREG(st.st_mode))
        return set_warning(ci, "password file \"%s\" is not a plain file", path);
    if (st.st_mode & (S_IRWXG | S_IRWXO))
        return set_warning(ci,
                           "password file \"%s\" has group or world access; permissions should "
                           "be u=rw (0600) or less",
                           path);
    int rc = read_file(ci->alloc, path, &ci->pgpass_text);
    if (rc != 0) return rc == 1 ? 0 : rc;
    return parse_pgpass(ci, ci->pgpass_text);
}
