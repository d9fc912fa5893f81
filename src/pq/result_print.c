/*
 * libpq's old result printers, with its output byte for byte: PQprint
 * (aligned, "standard", expanded or HTML 3 tables), PQdisplayTuples and
 * PQprintTuples. Two differences, both in what libpq does beside the
 * table: PQprint never pipes its output through $PAGER (libpq may for a
 * terminal), and an allocation failure ends the output silently where
 * libpq writes "out of memory" to stderr (this library never prints but
 * where asked to).
 */
#define _POSIX_C_SOURCE 200809L
#include "pq/result_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What PQprint learns about the columns while it reads the values. */
typedef struct table {
    const PQprintOpt *po;
    const PGresult *res;
    FILE *out;
    int nfields, ntups, sep_len, name_max; /* longest name + separator */
    const char **names;
    unsigned char *not_num; /* column holds something other than a number */
    int *width;
    char **cells; /* aligned or HTML tables: the values, printed at the end */
} table_t;

/* libpq's test: digits, '.', 'E', 'e', ' ' and '-' only, not starting with
 * E or e, ending with a digit. */
static bool looks_numeric(const char *v, int encoding)
{
    char last = '0';
    for (const char *p = v; *p; p += PQmblenBounded(p, encoding)) {
        last = *p;
        if (!((last >= '0' && last <= '9') || last == '.' || last == 'E' || last == 'e' ||
              last == ' ' || last == '-'))
            return false;
    }
    return *v != 'E' && *v != 'e' && last >= '0' && last <= '9';
}

static void end_field(const table_t *t, int j)
{
    if (j + 1 < t->nfields)
        fputs(t->po->fieldSep, t->out);
    else
        fputc('\n', t->out);
}

/* One value: kept for the aligned table, or printed now. false when out of
 * memory. */
static bool field(table_t *t, int i, int j)
{
    const PQprintOpt *po = t->po;
    int len = PQgetlength(t->res, i, j);
    const char *v = PQgetvalue(t->res, i, j);
    if (len < 1 || !v || !*v) {
        /* An empty value: nothing, but the separator when unaligned. */
        if (!po->align && !po->expanded) end_field(t, j);
        return true;
    }
    if (po->align && !t->not_num[j] && !looks_numeric(v, t->res->client_encoding))
        t->not_num[j] = 1;
    if (!po->expanded && (po->align || po->html3)) {
        if (len > t->width[j]) t->width[j] = len;
        t->cells[i * t->nfields + j] = strdup(v);
        return t->cells[i * t->nfields + j] != NULL;
    }
    if (po->expanded && po->html3)
        fprintf(t->out, "<tr><td align=\"left\"><b>%s</b></td><td align=\"%s\">%s</td></tr>\n",
                t->names[j], t->not_num[j] ? "left" : "right", v);
    else if (po->expanded && po->align)
        fprintf(t->out, "%-*s%s %s\n", t->name_max - t->sep_len, t->names[j], po->fieldSep, v);
    else if (po->expanded)
        fprintf(t->out, "%s%s%s\n", t->names[j], po->fieldSep, v);
    else if (!po->html3) {
        fputs(v, t->out);
        end_field(t, j);
    }
    return true;
}

/* The separator as '+' characters (the border's joints). */
static char *put_joint(char *p, const char *sep)
{
    for (; *sep; sep++)
        *p++ = '+';
    return p;
}

/* The header of an aligned table; returns its border line (malloc'd), NULL
 * for HTML or when out of memory. */
static char *header(table_t *t)
{
    const PQprintOpt *po = t->po;
    char *border = NULL;
    if (po->html3) {
        fputs("<tr>", t->out);
    } else {
        size_t size = 1;
        for (int j = 0; j < t->nfields; j++)
            size += (size_t)t->width[j] + (size_t)t->sep_len + (po->standard ? 2 : 0);
        if (po->standard) size += 2 * (size_t)t->sep_len + 2;
        border = malloc(size);
        if (!border) return NULL;
        char *p = border;
        if (po->standard) p = put_joint(p, po->fieldSep);
        for (int j = 0; j < t->nfields; j++) {
            for (int n = t->width[j] + (po->standard ? 2 : 0); n > 0; n--)
                *p++ = '-';
            if (po->standard || j + 1 < t->nfields) p = put_joint(p, po->fieldSep);
        }
        *p = '\0';
        if (po->standard) fprintf(t->out, "%s\n", border);
    }
    if (po->standard) fputs(po->fieldSep, t->out);
    for (int j = 0; j < t->nfields; j++) {
        if (po->html3) {
            fprintf(t->out, "<th align=\"%s\">%s</th>", t->not_num[j] ? "left" : "right",
                    t->names[j]);
            continue;
        }
        /* libpq measures and prints the result's own name here. */
        const char *s = PQfname(t->res, j);
        int n = (int)strlen(s);
        if (n > t->width[j]) t->width[j] = n;
        if (po->standard)
            fprintf(t->out, t->not_num[j] ? " %-*s " : " %*s ", t->width[j], s);
        else
            fprintf(t->out, t->not_num[j] ? "%-*s" : "%*s", t->width[j], s);
        if (po->standard || j + 1 < t->nfields) fputs(po->fieldSep, t->out);
    }
    if (po->html3)
        fputs("</tr>\n", t->out);
    else
        fprintf(t->out, "\n%s\n", border);
    return border;
}

static void row(const table_t *t, int i, const char *border)
{
    const PQprintOpt *po = t->po;
    if (po->html3)
        fputs("<tr>", t->out);
    else if (po->standard)
        fputs(po->fieldSep, t->out);
    for (int j = 0; j < t->nfields; j++) {
        const char *v = t->cells[i * t->nfields + j];
        if (!v) v = "";
        if (po->html3) {
            fprintf(t->out, "<td align=\"%s\">%s</td>", t->not_num[j] ? "left" : "right", v);
            continue;
        }
        const char *fmt =
            t->not_num[j] ? (po->standard ? " %-*s " : "%-*s") : (po->standard ? " %*s " : "%*s");
        fprintf(t->out, fmt, t->width[j], v);
        if (po->standard || j + 1 < t->nfields) fputs(po->fieldSep, t->out);
    }
    if (po->html3)
        fputs("</tr>", t->out);
    else if (po->standard)
        /* Without a header there is no border: glibc prints libpq's NULL
         * as "(null)", and so does this. */
        fprintf(t->out, "\n%s", border ? border : "(null)");
    fputc('\n', t->out);
}

/* The column names (po->fieldName's where given) and their widths. */
static int line_length(table_t *t)
{
    const PQprintOpt *po = t->po;
    int given = 0, total = 0;
    while (po->fieldName && po->fieldName[given])
        given++;
    for (int j = 0; j < t->nfields; j++) {
        const char *s = j < given && po->fieldName[j][0] ? po->fieldName[j] : PQfname(t->res, j);
        t->names[j] = s;
        int len = s ? (int)strlen(s) : 0;
        t->width[j] = len;
        len += t->sep_len;
        if (len > t->name_max) t->name_max = len;
        total += len;
    }
    return total;
}

static void plain_header(table_t *t)
{
    const PQprintOpt *po = t->po;
    if (po->expanded) {
        if (po->align)
            fprintf(t->out, "%-*s%s Value\n", t->name_max - t->sep_len, "Field", po->fieldSep);
        else
            fprintf(t->out, "%s%sValue\n", "Field", po->fieldSep);
        return;
    }
    int len = 0;
    for (int j = 0; j < t->nfields; j++) {
        fputs(t->names[j], t->out);
        len += (int)strlen(t->names[j]) + t->sep_len;
        if (j + 1 < t->nfields) fputs(po->fieldSep, t->out);
    }
    fputc('\n', t->out);
    for (len -= t->sep_len; len > 0; len--)
        fputc('-', t->out);
    fputc('\n', t->out);
}

static void print_table(table_t *t)
{
    const PQprintOpt *po = t->po;
    bool aligned = !po->expanded && (po->align || po->html3);
    if (aligned) {
        t->cells = calloc((size_t)t->ntups + 1, (size_t)t->nfields * sizeof(char *));
        if (!t->cells) return;
    } else if (po->header && !po->html3) {
        plain_header(t);
    }
    if (po->expanded && po->html3) {
        if (po->caption)
            fprintf(t->out, "<center><h2>%s</h2></center>\n", po->caption);
        else
            fprintf(t->out, "<center><h2>Query retrieved %d rows * %d fields</h2></center>\n",
                    t->ntups, t->nfields);
    }
    for (int i = 0; i < t->ntups; i++) {
        if (po->expanded && po->html3)
            fprintf(t->out, "<table %s><caption align=\"top\">%d</caption>\n",
                    po->tableOpt ? po->tableOpt : "", i);
        else if (po->expanded)
            fprintf(t->out, "-- RECORD %d --\n", i);
        for (int j = 0; j < t->nfields; j++)
            if (!field(t, i, j)) return;
        if (po->html3 && po->expanded) fputs("</table>\n", t->out);
    }
    if (aligned) {
        const char *opt = po->tableOpt ? po->tableOpt : "";
        if (po->html3 && po->header && po->caption)
            fprintf(t->out, "<table %s><caption align=\"top\">%s</caption>\n", opt, po->caption);
        else if (po->html3 && po->header)
            fprintf(t->out,
                    "<table %s><caption align=\"top\">Retrieved %d rows * %d fields</caption>\n",
                    opt, t->ntups, t->nfields);
        else if (po->html3)
            fprintf(t->out, "<table %s>", opt);
        char *border = po->header ? header(t) : NULL;
        for (int i = 0; i < t->ntups; i++)
            row(t, i, border);
        free(border);
    }
    if (po->header && !po->html3)
        fprintf(t->out, "(%d row%s)\n\n", t->ntups, t->ntups == 1 ? "" : "s");
    if (po->html3 && !po->expanded) fputs("</table>\n", t->out);
}

void PQprint(FILE *fout, const PGresult *res, const PQprintOpt *po)
{
    int nfields = PQnfields(res);
    if (nfields <= 0 || !po) return;
    table_t t = {.po = po,
                 .res = res,
                 .out = fout ? fout : stdout,
                 .nfields = nfields,
                 .ntups = PQntuples(res),
                 .sep_len = (int)strlen(po->fieldSep)};
    t.names = calloc((size_t)nfields, sizeof *t.names);
    t.not_num = calloc((size_t)nfields, 1);
    t.width = calloc((size_t)nfields, sizeof *t.width);
    if (t.names && t.not_num && t.width) {
        line_length(&t);
        print_table(&t);
    }
    if (t.cells)
        for (size_t k = 0; k < ((size_t)t.ntups + 1) * (size_t)nfields; k++)
            free(t.cells[k]);
    free(t.cells);
    free(t.names);
    free(t.not_num);
    free(t.width);
}

/* max - length + 1 filler characters (libpq's fill: one more than the gap). */
static void fill(int length, int max, char filler, FILE *fp)
{
    for (int n = max - length; n >= 0; n--)
        putc(filler, fp);
}

void PQdisplayTuples(const PGresult *res, FILE *fp, int fillAlign, const char *fieldSep,
                     int printHeader, int quiet)
{
    int nfields = PQnfields(res), ntups = PQntuples(res);
    int *width = NULL;
    if (!fieldSep) fieldSep = " ";
    if (!fp) fp = stdout;
    if (fillAlign) {
        width = malloc((size_t)(nfields > 0 ? nfields : 1) * sizeof *width);
        if (!width) return;
        for (int j = 0; j < nfields; j++) {
            width[j] = (int)strlen(PQfname(res, j));
            for (int i = 0; i < ntups; i++)
                if (PQgetlength(res, i, j) > width[j]) width[j] = PQgetlength(res, i, j);
        }
    }
    if (printHeader) {
        for (int j = 0; j < nfields; j++) {
            fputs(PQfname(res, j), fp);
            if (fillAlign) fill((int)strlen(PQfname(res, j)), width[j], ' ', fp);
            fputs(fieldSep, fp);
        }
        fprintf(fp, "\n");
        for (int j = 0; j < nfields; j++) {
            if (fillAlign) fill(0, width[j], '-', fp);
            fputs(fieldSep, fp);
        }
        fprintf(fp, "\n");
    }
    for (int i = 0; i < ntups; i++) {
        for (int j = 0; j < nfields; j++) {
            fprintf(fp, "%s", PQgetvalue(res, i, j));
            if (fillAlign) fill((int)strlen(PQgetvalue(res, i, j)), width[j], ' ', fp);
            fputs(fieldSep, fp);
        }
        fprintf(fp, "\n");
    }
    if (!quiet) fprintf(fp, "\nQuery returned %d row%s.\n", ntups, ntups == 1 ? "" : "s");
    fflush(fp);
    free(width);
}

void PQprintTuples(const PGresult *res, FILE *fout, int PrintAttNames, int TerseOutput,
                   int colWidth)
{
    int nfields = PQnfields(res), ntups = PQntuples(res);
    if (nfields <= 0) return;
    char *border = NULL;
    if (!TerseOutput) {
        size_t width = (size_t)nfields * 14;
        border = malloc(width + 1);
        if (!border) return;
        memset(border, '-', width);
        border[width] = '\0';
        fprintf(fout, "%s\n", border);
    }
    const char *bar = TerseOutput ? "" : "|";
    if (PrintAttNames) {
        for (int j = 0; j < nfields; j++)
            if (colWidth > 0)
                fprintf(fout, "%s %-*s", bar, colWidth, PQfname(res, j));
            else
                fprintf(fout, "%s %s", bar, PQfname(res, j));
        if (TerseOutput)
            fprintf(fout, "\n");
        else
            fprintf(fout, "|\n%s\n", border);
    }
    for (int i = 0; i < ntups; i++) {
        for (int j = 0; j < nfields; j++) {
            const char *v = PQgetvalue(res, i, j);
            if (colWidth > 0)
                fprintf(fout, "%s %-*s", bar, colWidth, v ? v : "");
            else
                fprintf(fout, "%s %s", bar, v ? v : "");
        }
        if (TerseOutput)
            fprintf(fout, "\n");
        else
            fprintf(fout, "|\n%s\n", border);
    }
    free(border);
}
