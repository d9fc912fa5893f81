/*
 * PQprint in all 64 combinations of its flags (header, align, standard,
 * html3, expanded, two separators, with and without replacement names,
 * table options and caption), PQdisplayTuples and PQprintTuples, on one
 * result with numbers, text, NULL, an exponent, "E1" and an empty string;
 * compared between libpq and libpgwire-pq by run-diff.sh.
 */
#include <libpq-fe.h>
#include <stdio.h>

int main(void)
{
    PGconn *c = PQconnectdb("");
    if (PQstatus(c) != CONNECTION_OK) {
        printf("%s", PQerrorMessage(c));
        return 1;
    }
    PGresult *r = PQexec(c, "select 1 as n, 'abc'::text as t, null::text as z, 1.5e3 as f, "
                            "'E1' as e, '' as empty from generate_series(1,3) g");
    char *names[] = {"first", "", NULL};
    for (int m = 0; m < 64; m++) {
        PQprintOpt o = {0};
        o.header = m & 1;
        o.align = (m >> 1) & 1;
        o.standard = (m >> 2) & 1;
        o.html3 = (m >> 3) & 1;
        o.expanded = (m >> 4) & 1;
        o.fieldSep = (m >> 5) & 1 ? "|" : " , ";
        o.tableOpt = (m & 8) ? "border=1" : NULL;
        o.caption = (m & 16) ? "cap" : NULL;
        o.fieldName = (m & 4) ? names : NULL;
        printf("== mode %d\n", m);
        PQprint(stdout, r, &o);
    }
    PQdisplayTuples(r, stdout, 1, NULL, 1, 0);
    PQdisplayTuples(r, stdout, 0, "|", 0, 1);
    PQprintTuples(r, stdout, 1, 0, 0);
    PQprintTuples(r, stdout, 1, 1, 8);
    PQprintTuples(r, stdout, 0, 0, 3);
    PQclear(r);
    PQfinish(c);
    return 0;
}
