/*
 * Connection strings: PQconninfoParse of good and bad keyword/value strings
 * and URIs (every option's keyword, envvar, compiled default, value, label,
 * dispchar, dispsize; the error texts), PQconndefaults, and PQconninfo of a
 * connection made from the environment alone (PQconnectdb("")).
 */
#include "pqdiff.h"

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
