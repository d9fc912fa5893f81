/*
 * Rows, values, column descriptions, notifications, hosts and buffers for bindings
 * (ffi.h): each member the library hands out in a struct, read through a
 * function (the layouts stay the library's).
 */
#include "pgwire/ffi.h"

#include <stdlib.h>
#include <string.h>

size_t pgw_row_ncols(const pgw_row_t *row)
{
    return row ? row->ncols : 0;
}

uint64_t pgw_row_index(const pgw_row_t *row)
{
    return row ? row->index : 0;
}

const pgw_value_t *pgw_row_value(const pgw_row_t *row, size_t col)
{
    return row && col < row->ncols ? &row->values[col] : NULL;
}

const uint8_t *pgw_value_data(const pgw_value_t *v, int32_t *len)
{
    if (len) *len = v ? v->len : -1;
    return v && v->len >= 0 ? v->p : NULL;
}

uint32_t pgw_value_oid(const pgw_value_t *v)
{
    return v ? v->oid : 0;
}

int pgw_value_format(const pgw_value_t *v)
{
    return v ? v->format : -1;
}

const pgw_field_desc_t *pgw_row_field(const pgw_row_t *row, size_t col)
{
    return row && row->fields && col < row->ncols ? &row->fields[col] : NULL;
}

const char *pgw_field_name(const pgw_field_desc_t *fd, size_t *len)
{
    if (len) *len = fd ? fd->name.len : 0;
    return fd ? fd->name.p : NULL;
}

uint32_t pgw_field_type(const pgw_field_desc_t *fd)
{
    return fd ? fd->type_oid : 0;
}

uint32_t pgw_field_table(const pgw_field_desc_t *fd)
{
    return fd ? fd->table_oid : 0;
}

int pgw_field_attnum(const pgw_field_desc_t *fd)
{
    return fd ? fd->attnum : 0;
}

int pgw_field_typlen(const pgw_field_desc_t *fd)
{
    return fd ? fd->typlen : 0;
}

int32_t pgw_field_typmod(const pgw_field_desc_t *fd)
{
    return fd ? fd->typmod : -1;
}

int pgw_field_format(const pgw_field_desc_t *fd)
{
    return fd ? fd->format : -1;
}

pgw_notification_t *pgw_notification_new(void)
{
    return calloc(1, sizeof(pgw_notification_t));
}

void pgw_notification_free(pgw_notification_t *n)
{
    free(n);
}

int32_t pgw_notification_pid(const pgw_notification_t *n)
{
    return n ? n->pid : 0;
}

const char *pgw_notification_channel(const pgw_notification_t *n, size_t *len)
{
    if (len) *len = n ? n->channel_len : 0;
    return n ? n->channel : NULL;
}

const char *pgw_notification_payload(const pgw_notification_t *n, size_t *len)
{
    if (len) *len = n ? n->payload_len : 0;
    return n ? n->payload : NULL;
}

uint64_t pgw_notification_missed(const pgw_notification_t *n)
{
    return n ? n->missed : 0;
}

const uint8_t *pgw_result_cell(const pgw_result_t *r, size_t row, size_t col, int32_t *len)
{
    pgw_value_t v;
    if (pgw_result_value(r, row, col, &v) != 0) v.len = -1;
    return pgw_value_data(&v, len);
}

/* The byte count of cell v in pgw_result_cells' buffer (0 for SQL NULL). */
static size_t cell_bytes(const pgw_value_t *v)
{
    return v->len > 0 ? (size_t)v->len : 0;
}

int pgw_result_cells(const pgw_result_t *r, size_t first, size_t n, int32_t *lens, uint8_t *buf,
                     size_t cap, size_t *needed)
{
    if (needed) *needed = 0;
    if (!r || (n && !lens)) return PGW_EINVAL;
    size_t nrows = pgw_result_nrows(r), ncols = pgw_result_ncols(r);
    if (first > nrows || n > nrows - first) return PGW_EINDEX;
    /* Column by column: a column's cells sit side by side, so a binding
     * reads a fixed-width column without NULLs in one unpack. */
    size_t total = 0;
    for (size_t c = 0; c < ncols; c++) {
        for (size_t i = 0; i < n; i++) {
            pgw_value_t v;
            pgw_result_value(r, first + i, c, &v);
            lens[c * n + i] = v.len < 0 ? -1 : v.len;
            total += cell_bytes(&v);
        }
    }
    if (needed) *needed = total;
    if (total > cap || (total && !buf)) return PGW_ERANGE;
    size_t at = 0;
    for (size_t c = 0; c < ncols; c++) {
        for (size_t i = 0; i < n; i++) {
            pgw_value_t v;
            pgw_result_value(r, first + i, c, &v);
            if (v.len > 0) memcpy(buf + at, v.p, (size_t)v.len);
            at += cell_bytes(&v);
        }
    }
    return 0;
}

pgw_host_t *pgw_host_new(void)
{
    return calloc(1, sizeof(pgw_host_t));
}

void pgw_host_free(pgw_host_t *h)
{
    free(h);
}

const char *pgw_host_name(const pgw_host_t *h)
{
    return h ? h->host : NULL;
}

const char *pgw_host_addr(const pgw_host_t *h)
{
    return h ? h->hostaddr : NULL;
}

uint16_t pgw_host_port(const pgw_host_t *h)
{
    return h ? h->port : 0;
}

const char *pgw_host_port_text(const pgw_host_t *h)
{
    return h ? h->port_text : NULL;
}

int pgw_host_is_unix(const pgw_host_t *h)
{
    return h ? h->is_unix : 0;
}

const char *pgw_host_error(const pgw_host_t *h)
{
    return h ? h->error : NULL;
}

int pgw_host_error_ends_connect(const pgw_host_t *h)
{
    return h ? h->error_ends_connect : 0;
}

pgw_buf_t *pgw_buf_new(void)
{
    pgw_buf_t *b = malloc(sizeof *b);
    if (b) pgw_buf_init(b, NULL);
    return b;
}

void pgw_buf_delete(pgw_buf_t *b)
{
    if (!b) return;
    pgw_buf_free(b);
    free(b);
}

const uint8_t *pgw_buf_data(const pgw_buf_t *b, size_t *len)
{
    if (len) *len = b ? b->len : 0;
    return b && b->len ? b->data : NULL;
}
