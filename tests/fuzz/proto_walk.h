/*
 * Shared by the codec fuzz targets: runs every walker that applies to a
 * parsed message, touches every byte each view covers (so ASan checks it
 * lies inside the input) and traps on a broken invariant:
 *   - the DataRow walkers (array and iterator) agree field by field;
 *   - walkers over messages validated at parse time (RowDescription,
 *     Error/Notice, SASL list, NegotiateProtocolVersion) never fail and
 *     yield exactly the declared count.
 */
#ifndef PGW_FUZZ_PROTO_WALK_H
#define PGW_FUZZ_PROTO_WALK_H

#include <stdint.h>
#include <string.h>

#include "pgwire/proto.h"

#define FUZZ_CHECK(cond)               \
    do {                               \
        if (!(cond)) __builtin_trap(); \
    } while (0)

static volatile uint8_t fuzz_sink;

static void fuzz_touch(const void *p, int64_t len)
{
    const uint8_t *b = p;
    uint8_t acc = 0;
    for (int64_t i = 0; i < len; i++)
        acc ^= b[i];
    fuzz_sink ^= acc;
}

static pgw_view_t fuzz_fields[65536];

static void fuzz_walk_datarow(const pgw_msg_t *m)
{
    int n = pgw_datarow_fields(m, fuzz_fields, 65536);
    FUZZ_CHECK(n == PGW_EPROTO || n == m->u.data_row.ncols);
    pgw_row_iter_t it;
    pgw_row_iter_init(&it, m);
    pgw_view_t v;
    int i = 0, rc;
    while ((rc = pgw_row_iter_next(&it, &v)) == 1) {
        FUZZ_CHECK(v.len >= -1);
        FUZZ_CHECK((v.len == -1) == (v.p == NULL));
        fuzz_touch(v.p, v.len);
        if (n >= 0) FUZZ_CHECK(fuzz_fields[i].p == v.p && fuzz_fields[i].len == v.len);
        i++;
    }
    /* The iterator ends cleanly exactly when the array walker succeeds. */
    FUZZ_CHECK((rc == 0) == (n >= 0));
    if (rc == 0) FUZZ_CHECK(i == n);
    if (rc < 0) FUZZ_CHECK(pgw_row_iter_next(&it, &v) == PGW_EPROTO);
}

static void fuzz_walk_rowdesc(const pgw_msg_t *m)
{
    pgw_rowdesc_iter_t it;
    pgw_rowdesc_iter_init(&it, m);
    pgw_field_desc_t fd;
    int i = 0, rc;
    while ((rc = pgw_rowdesc_iter_next(&it, &fd)) == 1) {
        fuzz_touch(fd.name.p, (int64_t)fd.name.len);
        FUZZ_CHECK(fd.format == 0 || fd.format == 1);
        i++;
    }
    FUZZ_CHECK(rc == 0 && i == m->u.row_desc.nfields);
}

static void fuzz_walk_error(const pgw_msg_t *m)
{
    pgw_error_fields_t e;
    FUZZ_CHECK(pgw_error_fields_parse(m, &e) == 0);
    const pgw_view_t *all[] = {
#define FUZZ_FIELD(code, member, desc) &e.member,
        PGW_ERROR_FIELD_MAP(FUZZ_FIELD)
#undef FUZZ_FIELD
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        FUZZ_CHECK(all[i]->len >= -1);
        fuzz_touch(all[i]->p, all[i]->len);
        /* Each view is a NUL-terminated string on the wire. */
        if (all[i]->len >= 0) FUZZ_CHECK(all[i]->p[all[i]->len] == 0);
    }
}

static void fuzz_walk_sasl(const pgw_msg_t *m)
{
    size_t pos = 0;
    pgw_str_t s;
    int rc;
    while ((rc = pgw_sasl_mech_next(m, &pos, &s)) == 1) {
        FUZZ_CHECK(s.len > 0);
        fuzz_touch(s.p, (int64_t)s.len);
    }
    FUZZ_CHECK(rc == 0);
}

static void fuzz_walk_negotiate(const pgw_msg_t *m)
{
    size_t pos = 0;
    pgw_str_t s;
    uint32_t n = 0;
    int rc;
    while ((rc = pgw_negotiate_option_next(m, &pos, &s)) == 1) {
        fuzz_touch(s.p, (int64_t)s.len);
        n++;
    }
    FUZZ_CHECK(rc == 0 && n == m->u.negotiate.noptions);
}

/* Runs the walkers that apply to m, which pgw_msg_parse accepted. */
static void fuzz_walk(const pgw_msg_t *m)
{
    fuzz_touch(m->body, m->len);
    switch (m->type) {
    case 'D':
        fuzz_walk_datarow(m);
        break;
    case 'T':
        fuzz_walk_rowdesc(m);
        break;
    case 'E':
    case 'N':
        fuzz_walk_error(m);
        break;
    case 'R':
        if (m->u.auth.code == PGW_AUTH_SASL) fuzz_walk_sasl(m);
        fuzz_touch(m->u.auth.data, m->u.auth.data_len);
        break;
    case 'v':
        fuzz_walk_negotiate(m);
        break;
    case 't':
        for (uint16_t i = 0; i < m->u.param_desc.nparams; i++)
            fuzz_sink ^= (uint8_t)pgw_param_desc_oid(m, i);
        break;
    case 'G':
    case 'H':
    case 'W':
        for (uint16_t i = 0; i < m->u.copy_response.ncols; i++)
            FUZZ_CHECK(pgw_copy_format(m, i) == 0 || pgw_copy_format(m, i) == 1);
        break;
    case 'K':
        FUZZ_CHECK(m->u.backend_key.key_len >= 4 && m->u.backend_key.key_len <= 256);
        fuzz_touch(m->u.backend_key.key, m->u.backend_key.key_len);
        break;
    case 'C':
        fuzz_touch(m->u.command_complete.tag.p, (int64_t)m->u.command_complete.tag.len);
        break;
    case 'S':
        fuzz_touch(m->u.param_status.name.p, (int64_t)m->u.param_status.name.len);
        fuzz_touch(m->u.param_status.value.p, (int64_t)m->u.param_status.value.len);
        break;
    case 'A':
        fuzz_touch(m->u.notification.channel.p, (int64_t)m->u.notification.channel.len);
        fuzz_touch(m->u.notification.payload.p, (int64_t)m->u.notification.payload.len);
        break;
    case 'V':
    case 'd':
        FUZZ_CHECK(m->u.data.len >= -1);
        fuzz_touch(m->u.data.p, m->u.data.len);
        break;
    case 'Z':
        FUZZ_CHECK(m->u.ready.status == 'I' || m->u.ready.status == 'T' ||
                   m->u.ready.status == 'E');
        break;
    default:
        break;
    }
}

#endif
