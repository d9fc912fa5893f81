/*
 * Portals: the requests that open one (a QUERY or EXECUTE bound into a
 * named portal, or run with a row limit), FETCH, CLOSE_PORTAL and
 * DESCRIBE_PORTAL, and what
 * a batch of a portal says about the rows left.
 *
 * A portal lives in a transaction, and a Sync ends the implicit one: so a
 * request that opens a portal is sent with a Flush instead of its own Sync,
 * and the sync group stays open until the portal is closed (requests.c
 * keeps that state per submit; session.h, "Portals and open groups", says
 * what it means for the requests submitted meanwhile).
 *
 * FETCH asks a Describe of the portal with every Execute: the batch's result
 * carries its columns (formats as the portal was bound) without the session
 * keeping a table of portals, for one small message per batch.
 */
#include "session_internal.h"

const char *pgw__portal_name(const pgw_request_t *rq)
{
    return rq->portal ? rq->portal : "";
}

bool pgw__opens_portal(const pgw_request_t *rq)
{
    if (rq->kind != PGW_REQ_QUERY && rq->kind != PGW_REQ_EXECUTE) return false;
    return (rq->portal && rq->portal[0]) || rq->max_rows > 0;
}

int32_t pgw__portal_max_rows(const pgw_request_t *rq)
{
    return rq->max_rows > INT32_MAX ? INT32_MAX : (int32_t)rq->max_rows;
}

static void expect(pgw__req_t *r, const uint8_t *exp, uint8_t n)
{
    memcpy(r->exp, exp, n);
    r->nexp = n;
}

int pgw__enc_fetch(pgw_session_t *s, pgw_buf_t *b, pgw__req_t *r, const pgw_request_t *rq)
{
    static const uint8_t exp[] = {PGW__EXP_RDESC, PGW__EXP_ROWS};
    (void)s;
    expect(r, exp, sizeof exp);
    const char *name = pgw__portal_name(rq);
    int rc = pgw_enc_describe(b, 'P', name);
    if (rc == 0) rc = pgw_enc_execute(b, name, pgw__portal_max_rows(rq));
    return rc;
}

int pgw__enc_close_portal(pgw_session_t *s, pgw_buf_t *b, pgw__req_t *r, const pgw_request_t *rq)
{
    static const uint8_t exp[] = {PGW__EXP_CLOSE};
    (void)s;
    expect(r, exp, sizeof exp);
    return pgw_enc_close(b, 'P', pgw__portal_name(rq));
}

int pgw__enc_describe_portal(pgw_buf_t *b, pgw__req_t *r, const pgw_request_t *rq)
{
    static const uint8_t exp[] = {PGW__EXP_RDESC};
    expect(r, exp, sizeof exp);
    return pgw_enc_describe(b, 'P', pgw__portal_name(rq));
}

PGW_EXTERN int pgw_result_suspended(const pgw_result_t *res)
{
    return res && res->suspended;
}
