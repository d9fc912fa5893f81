/*
 * Connection strings: PQconninfoParse of good and bad keyword/value strings
 * and URIs (every option's keyword, envvar, compiled default, value, label,
 * dispchar, dispsize; the error texts), PQconndefaults, and PQconninfo of a
 * connection made from the environment alone (PQconnectdb("")). Then
 * random strings built from the pieces both syntaxes are made of, quoting,
 * escapes and percent-encoding included (PQDIFF_CONNINFO_SEED, default
 * 20261204): the cases nobody named.
 */
#include "pqdiff.h"

#define RANDOM_CASES 1500

#define PICK(a) (a)[pqd_next(sizeof(a) / sizeof *(a))]

/* A random keyword/value string or URI. */
static void random_conninfo(char *out, size_t cap)
{
    static const char *const keywords[] = {"host",
                                           "hostaddr",
                                           "port",
                                           "dbname",
                                           "user",
                                           "password",
                                           "options",
                                           "application_name",
                                           "sslmode",
                                           "bogus",
                                           "service",
                                           "connect_timeout",
                                           "target_session_attrs",
                                           "replication",
                                           ""};
    static const char *const values[] = {"a",   "b c",    "1", "",   "%41", "%",       "::1",
                                         "x,y", "-c x=y", "'", "\\", "=",   "require", "/tmp"};
    static const char *const noise[] = {"=",  " ",  "'",  "\\", "\\'", ",",
                                        "\t", "\n", "\"", "=",  "''",  "\\ "};
    static const char *const prefixes[] = {"postgresql://", "postgres://",   "postgresql:/",
                                           "postgresql:",   "postgres://u@", "postgresql://["};
    static const char *const uri[] = {"@",       ":",     "/",       "?",   "&",   "[",    "]",
                                      "=",       "%2",    "%zz",     "%20", "%41", "u",    "p",
                                      "h",       "5432",  "99999",   ",",   "::1", "host", "dbname",
                                      "sslmode", "bogus", "require", "%2F", "%",   "a b"};
    size_t n = 0;
    out[0] = '\0';
#define ADD(str)                         \
    do {                                 \
        const char *a_ = (str);          \
        size_t l_ = strlen(a_);          \
        if (n + l_ < cap) {              \
            memcpy(out + n, a_, l_ + 1); \
            n += l_;                     \
        }                                \
    } while (0)
    if (pqd_next(2)) {
        int pairs = 1 + (int)pqd_next(5);
        for (int i = 0; i < pairs; i++) {
            if (pqd_next(7) == 0) ADD(PICK(noise));
            ADD(PICK(keywords));
            if (pqd_next(8)) ADD(pqd_next(4) ? "=" : " = ");
            int quoted = pqd_next(3) == 0;
            if (quoted) ADD("'");
            ADD(PICK(values));
            if (quoted && pqd_next(6)) ADD("'");
            ADD(pqd_next(6) ? " " : PICK(noise));
        }
    } else {
        ADD(PICK(prefixes));
        int pieces = (int)pqd_next(11);
        for (int i = 0; i < pieces; i++)
            ADD(PICK(uri));
    }
#undef ADD
}

static void print_options(const PQconninfoOption *o, int all)
{
    for (; o && o->keyword; o++) {
        if (!all && !o->val) continue;
        printf("  %s env=%s compiled=%s val=%s label=[%s] disp=[%s] size=%d\n", o->keyword,
               o->envvar ? o->envvar : "(null)", o->compiled ? o->compiled : "(null)",
               o->val ? o->val : "(null)", o->label ? o->label : "(null)",
               o->dispchar ? o->dispchar : "(null)", o->dispsize);
    }
}

static void parse(const char *s)
{
    char *err = (char *)"untouched";
    printf("== parse ");
    pqd_print_str("s", s);
    PQconninfoOption *o = PQconninfoParse(s, &err);
    if (!o) {
        pqd_print_str("  error", err);
        PQfreemem(err);
        return;
    }
    printf("  error %s\n", err ? "set" : "NULL");
    int n = 0;
    for (PQconninfoOption *p = o; p->keyword; p++)
        n++;
    printf("  %d options\n", n);
    print_options(o, 0);
    PQconninfoFree(o);
}

int main(void)
{
    pqd_init();
    const char *good[] = {
        "",
        "host=localhost port=5432 dbname=db user=u password=secret",
        "host = 'with space' application_name='it\\'s' options='-c geqo=off'",
        "hostaddr=127.0.0.1 connect_timeout=10 sslmode=verify-full sslrootcert=/x/ca.crt",
        "host=a,b,/tmp port=1,2,3 target_session_attrs=read-write load_balance_hosts=",
        "postgresql://",
        "postgres://u:p%40ss@h:5433/db?sslmode=require&application_name=app",
        "postgresql://[::1]:5432,h2:5,/db?connect_timeout=3",
        "postgresql:///db?host=/var/run/postgresql&port=5432",
        "postgresql://h/%64b?options=-c%20x%3Dy",
        "keepalives=1 keepalives_idle=30 tcp_user_timeout=100 replication=database",
        "service=nonexistent_service_is_not_read_by_parse",
        "dbname=postgresql://inner/d",
        "gssencmode=disable channel_binding=prefer krbsrvname=k requirepeer=pg",
    };
    const char *bad[] = {
        "host",
        "host=a bogus=1",
        "host='unterminated",
        "=value",
        "host=a port",
        "postgresql://h:99999999999999999999/",
        "postgresql://h/d?bad=1",
        "postgresql://h/d?sslmode",
        "postgresql://%zz/",
        "postgresql://[::1/d",
        "postgresql://h/d?host=%",
        "mysql://h/d",
        "host=a\\",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        parse(good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        parse(bad[i]);
    printf("parse with NULL errmsg: %s\n", PQconninfoParse("host", NULL) ? "options" : "NULL");
    pqd_seed("PQDIFF_CONNINFO_SEED", "20261204");
    for (int i = 0; i < RANDOM_CASES; i++) {
        char s[512];
        random_conninfo(s, sizeof s);
        parse(s);
    }

    printf("== conndefaults\n");
    PQconninfoOption *d = PQconndefaults();
    print_options(d, 1);
    PQconninfoFree(d);

    printf("== conninfo of PQconnectdb(\"\")\n");
    PGconn *conn = PQconnectdb("");
    printf("status=%s\n", pqd_connstatus(PQstatus(conn)));
    PQconninfoOption *ci = PQconninfo(conn);
    print_options(ci, 0);
    PQconninfoFree(ci);
    PQfinish(conn);
    printf("conninfo(NULL): %s\n", PQconninfo(NULL) ? "options" : "NULL");
    return 0;
}
