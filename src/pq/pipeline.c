/*
 * Pipeline mode over the session's open groups: the first request after a
 * sync goes out as a batch ending with a FLUSH, which leaves its sync group
 * open; the requests after it join the group; PQpipelineSync sends the
 * group's Sync. After an error the session ends the group itself, so the
 * requests the program sends before its own sync are aborted here, as the
 * server would skip them (PGRES_PIPELINE_ABORTED).
 */
#define _GNU_SOURCE
#include "pq/conn_internal.h"

PGpipelineStatus PQpipelineStatus(const PGconn *conn)
{
    if (!conn || conn->pipeline == PQ_PIPELINE_OFF) return PQ_PIPELINE_OFF;
    return conn->shown_aborted ? PQ_PIPELINE_ABORTED : PQ_PIPELINE_ON;
}

int PQenterPipelineMode(PGconn *conn)
{
    if (!conn) return 0;
    if (conn->pipeline != PQ_PIPELINE_OFF) return 1;
    if (conn->head &&
        !(conn->head->done && conn->head->pos >= conn->head->nres && !conn->head->next)) {
        pq__conn_append_error(conn, "cannot enter pipeline mode, connection not idle\n");
        return 0;
    }
    if (conn->copy != PQ_COPY_NONE) {
        pq__conn_append_error(conn, "cannot enter pipeline mode, connection not idle\n");
        return 0;
    }
    pq__cmds_free_all(conn);
    conn->pipeline = PQ_PIPELINE_ON;
    conn->seg = 1;
    conn->aborted_seg = 0;
    conn->shown_aborted = 0;
    return 1;
}

int PQexitPipelineMode(PGconn *conn)
{
    if (!conn) return 0;
    if (conn->pipeline == PQ_PIPELINE_OFF) return 1;
    pq_cmd_t *cmd = conn->head;
    if (cmd && cmd->done && cmd->pos >= cmd->nres && !cmd->next && cmd->kind != PQ_CMD_SYNC) {
        /* only its NULL is left: libpq is idle there */
        pq__cmds_free_all(conn);
        cmd = NULL;
    }
    if (cmd) {
        if (!cmd->done && cmd->pos >= cmd->nres)
            pq__conn_append_error(conn, "cannot exit pipeline mode while busy\n");
        else
            pq__conn_append_error(conn, "cannot exit pipeline mode with uncollected results\n");
        return 0;
    }
    conn->pipeline = PQ_PIPELINE_OFF;
    conn->aborted_seg = 0;
    pq__str_reset(&conn->errmsg);
    return 1;
}

static int send_sync(PGconn *conn)
{
    if (!conn) return 0;
    if (conn->pipeline == PQ_PIPELINE_OFF) {
        pq__conn_append_error(conn, "cannot send pipeline when not in pipeline mode\n");
        return 0;
    }
    if (conn->status != CONNECTION_OK) {
        pq__conn_set_error(conn, "no connection to the server\n");
        return 0;
    }
    pq_cmd_t *cmd = pq__cmd_new(conn, PQ_CMD_SYNC);
    if (!cmd) return 0;
    pgw_request_t req = PGW_SYNC(NULL, NULL);
    int ok = pq__submit(conn, cmd, &req);
    if (ok) conn->seg++;
    return ok;
}

int PQpipelineSync(PGconn *conn)
{
    return send_sync(conn);
}

int PQsendPipelineSync(PGconn *conn)
{
    return send_sync(conn);
}

/* Every pipelined request is followed by a Flush already. */
int PQsendFlushRequest(PGconn *conn)
{
    if (!conn) return 0;
    if (conn->status != CONNECTION_OK) {
        pq__conn_set_error(conn, "no connection to the server\n");
        return 0;
    }
    return 1;
}
