/*
 * libpgwire-pq: libpq's client API (libpq-fe.h) over libpgwire.
 *
 * This header declares libpq 15's whole API, ABI-identical to libpq's own
 * libpq-fe.h (the same enum names and values, struct layouts, typedefs and
 * prototypes), plus the libpq 16-17 additions this library implements (see
 * "libpq 16 and 17" below). A program built against libpq's header runs on
 * libpgwire-pq unchanged, and one built against this header runs on libpq.
 * src/pq/README.md lists every function with what is and is not supported.
 *
 * Ownership follows libpq: a PGconn is freed with PQfinish (even when the
 * connection failed), a PGresult with PQclear, a PGcancel with
 * PQfreeCancel, a PQconninfoOption array with PQconninfoFree, and every
 * other malloc'd value a function hands out (PGnotify, escaped strings,
 * PQgetCopyData buffers, encrypted passwords) with PQfreemem. Strings a
 * PGconn or PGresult hands out (PQdb, PQgetvalue, PQfname ...) live as
 * long as their owner and must not be freed or written to. Functions
 * tolerate a NULL PGconn or PGresult as libpq's do (PQntuples(NULL) is 0,
 * PQresultStatus(NULL) is PGRES_FATAL_ERROR, PQstatus(NULL) is
 * CONNECTION_BAD). The library never prints except through the default
 * notice processor (to stderr, as libpq), never aborts, never exits.
 */
#ifndef LIBPQ_FE_H
#define LIBPQ_FE_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdio.h>

#include "postgres_ext.h"

/* Features a program may test with #ifdef. */
#define LIBPQ_HAS_PIPELINING            1 /* PQenterPipelineMode and friends */
#define LIBPQ_HAS_TRACE_FLAGS           1 /* PQsetTraceFlags, libpq 14's trace format */
#define LIBPQ_HAS_SSL_LIBRARY_DETECTION 1 /* PQsslAttribute(NULL, "library") */

/* PQcopyResult's flags: what to copy besides the status and command tag. */
#define PG_COPYRES_ATTRS       0x01 /* the column descriptions */
#define PG_COPYRES_TUPLES      0x02 /* the rows (implies PG_COPYRES_ATTRS) */
#define PG_COPYRES_EVENTS      0x04 /* the event procedures */
#define PG_COPYRES_NOTICEHOOKS 0x08 /* the notice receiver and processor */

/* ------------------------------------------------------------------ enums
 * Values are part of the ABI: never renumbered, only appended to. */

/* PQstatus: where a connection is. Only CONNECTION_OK and CONNECTION_BAD
 * are stable; the others are PQconnectPoll's progress, for display only. */
typedef enum {
    CONNECTION_OK,                /* 0: ready for queries */
    CONNECTION_BAD,               /* 1: failed or closed */
    CONNECTION_STARTED,           /* 2: waiting for the socket to connect */
    CONNECTION_MADE,              /* 3: connected, sending the startup */
    CONNECTION_AWAITING_RESPONSE, /* 4: waiting for the server's answer */
    CONNECTION_AUTH_OK,           /* 5: authenticated, waiting for ReadyForQuery */
    CONNECTION_SETENV,            /* 6: no longer used */
    CONNECTION_SSL_STARTUP,       /* 7: negotiating TLS */
    CONNECTION_NEEDED,            /* 8: about to connect() */
    CONNECTION_CHECK_WRITABLE,    /* 9: checking target_session_attrs=read-write */
    CONNECTION_CONSUME,           /* 10: consuming leftover messages */
    CONNECTION_GSS_STARTUP,       /* 11: negotiating GSSAPI encryption */
    CONNECTION_CHECK_TARGET,      /* 12: checking target_session_attrs */
    CONNECTION_CHECK_STANDBY,     /* 13: checking whether the server is a standby */
    CONNECTION_ALLOCATED          /* 14: libpq 17: a PGcancelConn not started yet */
} ConnStatusType;

/* PQconnectPoll / PQresetPoll: what to wait for before polling again. */
typedef enum {
    PGRES_POLLING_FAILED = 0, /* the attempt failed: see PQerrorMessage */
    PGRES_POLLING_READING,    /* wait until PQsocket is readable */
    PGRES_POLLING_WRITING,    /* wait until PQsocket is writable */
    PGRES_POLLING_OK,         /* connected */
    PGRES_POLLING_ACTIVE      /* unused, kept for compatibility */
} PostgresPollingStatusType;

/* PQresultStatus: what a result holds. */
typedef enum {
    PGRES_EMPTY_QUERY = 0,  /* the query string was empty */
    PGRES_COMMAND_OK,       /* a command without rows succeeded */
    PGRES_TUPLES_OK,        /* a query returned rows (maybe zero) */
    PGRES_COPY_OUT,         /* COPY TO STDOUT started: PQgetCopyData */
    PGRES_COPY_IN,          /* COPY FROM STDIN started: PQputCopyData */
    PGRES_BAD_RESPONSE,     /* the server's answer was not understood */
    PGRES_NONFATAL_ERROR,   /* a notice or warning (notice receivers only) */
    PGRES_FATAL_ERROR,      /* the command failed */
    PGRES_COPY_BOTH,        /* COPY BOTH (replication) started */
    PGRES_SINGLE_TUPLE,     /* one row of a query in single-row mode */
    PGRES_PIPELINE_SYNC,    /* a pipeline's synchronization point */
    PGRES_PIPELINE_ABORTED, /* skipped: an earlier command of the pipeline failed */
    PGRES_TUPLES_CHUNK      /* libpq 17: rows of a query in chunked mode */
} ExecStatusType;

/* PQtransactionStatus. */
typedef enum {
    PQTRANS_IDLE,    /* idle, outside a transaction block */
    PQTRANS_ACTIVE,  /* a command is in progress */
    PQTRANS_INTRANS, /* idle, inside a transaction block */
    PQTRANS_INERROR, /* idle, inside a failed transaction block */
    PQTRANS_UNKNOWN  /* the connection is bad */
} PGTransactionStatusType;

/* PQsetErrorVerbosity: how much of a server error the messages show. */
typedef enum {
    PQERRORS_TERSE,   /* severity, primary message, position */
    PQERRORS_DEFAULT, /* plus detail, hint, query line, context */
    PQERRORS_VERBOSE, /* plus SQLSTATE, every field and the source location */
    PQERRORS_SQLSTATE /* severity and SQLSTATE only */
} PGVerbosity;

/* PQsetErrorContextVisibility: when the CONTEXT field is shown. */
typedef enum {
    PQSHOW_CONTEXT_NEVER,  /* never */
    PQSHOW_CONTEXT_ERRORS, /* for errors, not notices (the default) */
    PQSHOW_CONTEXT_ALWAYS  /* always */
} PGContextVisibility;

/* PQping / PQpingParams (pg_isready prints these values). */
typedef enum {
    PQPING_OK,          /* the server accepts connections */
    PQPING_REJECT,      /* the server is up but refuses connections */
    PQPING_NO_RESPONSE, /* no server could be reached */
    PQPING_NO_ATTEMPT   /* not tried: the parameters are invalid */
} PGPing;

/* PQpipelineStatus. */
typedef enum {
    PQ_PIPELINE_OFF,    /* not in pipeline mode */
    PQ_PIPELINE_ON,     /* in pipeline mode */
    PQ_PIPELINE_ABORTED /* in pipeline mode, an error aborted it until the next sync */
} PGpipelineStatus;

/* ---------------------------------------------------------------- objects */

/* A connection (opaque). */
typedef struct pg_conn PGconn;
/* The result of one SQL command (opaque). */
typedef struct pg_result PGresult;
/* What PQcancel needs to cancel a connection's query (opaque). */
typedef struct pg_cancel PGcancel;

/* A NOTIFY received (PQnotifies; free with PQfreemem, which frees the
 * strings too: they live in the same block). */
typedef struct pgNotify {
    char *relname;         /* the channel name */
    int be_pid;            /* the notifying server process */
    char *extra;           /* the payload ("" when none) */
    struct pgNotify *next; /* private to the library */
} PGnotify;

/* Notice callbacks (PQsetNoticeReceiver, PQsetNoticeProcessor). The
 * receiver gets the notice as a PGRES_NONFATAL_ERROR result, valid during
 * the call; the default receiver hands PQresultErrorMessage to the
 * processor; the default processor writes it to stderr. */
typedef void (*PQnoticeReceiver)(void *arg, const PGresult *res);
typedef void (*PQnoticeProcessor)(void *arg, const char *message);

/* PQprint's options. */
typedef char pqbool;

typedef struct _PQprintOpt {
    pqbool header;    /* print the column headings and the row count */
    pqbool align;     /* pad the fields to align them */
    pqbool standard;  /* the old format */
    pqbool html3;     /* an HTML table */
    pqbool expanded;  /* one line per field */
    pqbool pager;     /* pipe through $PAGER when long */
    char *fieldSep;   /* the field separator */
    char *tableOpt;   /* attributes of the HTML <table> */
    char *caption;    /* the HTML <caption> */
    char **fieldName; /* NULL-terminated replacement column names */
} PQprintOpt;

/* One connection option (PQconndefaults, PQconninfoParse, PQconninfo hand
 * out arrays of them ending with keyword NULL; free with PQconninfoFree).
 * Every member but val points at static text; val is NULL or malloc'd and
 * freed by PQconninfoFree. */
typedef struct _PQconninfoOption {
    char *keyword;  /* the option's name */
    char *envvar;   /* the environment variable giving its default, or NULL */
    char *compiled; /* its built-in default, or NULL */
    char *val;      /* its value, or NULL */
    char *label;    /* a label for a connect dialog */
    char *dispchar; /* "" show, "*" a password: hide, "D" a debug option */
    int dispsize;   /* the field's size in a dialog */
} PQconninfoOption;

/* An argument of PQfn. */
typedef struct {
    int len;   /* the argument's length in bytes */
    int isint; /* 1: u.integer holds it; 0: u.ptr points at len bytes */
    union {
        int *ptr;
        int integer;
    } u;
} PQArgBlock;

/* A column description for PQsetResultAttrs. */
typedef struct pgresAttDesc {
    char *name;    /* the column name */
    Oid tableid;   /* the source table's OID, or 0 */
    int columnid;  /* the source column's number, or 0 */
    int format;    /* 0 text, 1 binary */
    Oid typid;     /* the type's OID */
    int typlen;    /* the type's size, negative when variable */
    int atttypmod; /* the type modifier, -1 when none */
} PGresAttDesc;

/* ------------------------------------------------------------ connections */

/* Starts a connection without blocking (drive it with PQconnectPoll).
 * NULL only when out of memory; otherwise free it with PQfinish. */
extern PGconn *PQconnectStart(const char *conninfo);
extern PGconn *PQconnectStartParams(const char *const *keywords, const char *const *values,
                                    int expand_dbname);
/* Advances a connection started by PQconnectStart(Params). */
extern PostgresPollingStatusType PQconnectPoll(PGconn *conn);

/* Connects, blocking until done; check PQstatus. Free with PQfinish.
 * keywords/values end with a NULL keyword; expand_dbname: dbname may be a
 * conninfo string or URI. */
extern PGconn *PQconnectdb(const char *conninfo);
extern PGconn *PQconnectdbParams(const char *const *keywords, const char *const *values,
                                 int expand_dbname);
/* The old form of PQconnectdb: NULL arguments take their defaults. */
extern PGconn *PQsetdbLogin(const char *pghost, const char *pgport, const char *pgoptions,
                            const char *pgtty, const char *dbName, const char *login,
                            const char *pwd);

#define PQsetdb(M_PGHOST, M_PGPORT, M_PGOPT, M_PGTTY, M_DBNAME) \
    PQsetdbLogin(M_PGHOST, M_PGPORT, M_PGOPT, M_PGTTY, M_DBNAME, NULL, NULL)

/* Closes the connection (sending Terminate) and frees conn. */
extern void PQfinish(PGconn *conn);

/* Every connection option with its default (from the environment, the
 * service file, the built-in value). Free with PQconninfoFree; NULL when
 * out of memory. */
extern PQconninfoOption *PQconndefaults(void);
/* Parses a conninfo string or URI into options (val set only for what the
 * string gives; no defaults). NULL on error: *errmsg (when errmsg is not
 * NULL) is then a malloc'd message, freed with PQfreemem, or NULL when out
 * of memory. */
extern PQconninfoOption *PQconninfoParse(const char *conninfo, char **errmsg);
/* The options a connection uses. Free with PQconninfoFree. */
extern PQconninfoOption *PQconninfo(PGconn *conn);
/* Frees an option array and its values; NULL is ignored. */
extern void PQconninfoFree(PQconninfoOption *connOptions);

/* Closes the connection and connects again with the same options:
 * without blocking (PQresetStart returns 1 when started, then drive it
 * with PQresetPoll), or blocking (PQreset). */
extern int PQresetStart(PGconn *conn);
extern PostgresPollingStatusType PQresetPoll(PGconn *conn);
extern void PQreset(PGconn *conn);

/* A cancel object for conn's current and future queries (NULL when conn
 * is not connected); free with PQfreeCancel. Usable from another thread
 * or a signal handler. */
extern PGcancel *PQgetCancel(PGconn *conn);
extern void PQfreeCancel(PGcancel *cancel);
/* Sends a cancel request. 1 when sent; 0 otherwise, with the reason in
 * errbuf (errbufsize bytes, NUL-terminated). Async-signal-safe. */
extern int PQcancel(PGcancel *cancel, char *errbuf, int errbufsize);
/* PQcancel on conn itself, the reason in PQerrorMessage (not thread-safe). */
extern int PQrequestCancel(PGconn *conn);

/* The connection's parameters and state. Strings live as long as conn
 * (until PQfinish or PQreset). */
extern char *PQdb(const PGconn *conn);
extern char *PQuser(const PGconn *conn);
extern char *PQpass(const PGconn *conn);
extern char *PQhost(const PGconn *conn);
extern char *PQhostaddr(const PGconn *conn);
extern char *PQport(const PGconn *conn);
extern char *PQtty(const PGconn *conn);
extern char *PQoptions(const PGconn *conn);
extern ConnStatusType PQstatus(const PGconn *conn);
extern PGTransactionStatusType PQtransactionStatus(const PGconn *conn);
/* A parameter the server reported (server_version, client_encoding,
 * standard_conforming_strings ...), NULL when unknown. */
extern const char *PQparameterStatus(const PGconn *conn, const char *paramName);
/* 3 when connected, 0 when not. */
extern int PQprotocolVersion(const PGconn *conn);
/* The server's version as a number (150004 for 15.4), 0 when unknown. */
extern int PQserverVersion(const PGconn *conn);
/* The last error on conn, "" when none; ends with a newline. */
extern char *PQerrorMessage(const PGconn *conn);
/* The connection's socket, -1 when none. */
extern int PQsocket(const PGconn *conn);
/* The server process's PID. */
extern int PQbackendPID(const PGconn *conn);
extern PGpipelineStatus PQpipelineStatus(const PGconn *conn);
/* 1 when the server asked for a password and none was given. */
extern int PQconnectionNeedsPassword(const PGconn *conn);
/* 1 when the server asked for a password and got one. */
extern int PQconnectionUsedPassword(const PGconn *conn);
/* The client encoding's id (pg_encoding_to_char names it). */
extern int PQclientEncoding(const PGconn *conn);
/* Sets client_encoding (a SET command); 0 on success, -1 on failure. */
extern int PQsetClientEncoding(PGconn *conn, const char *encoding);

/* TLS: 1 when the connection is encrypted with TLS. */
extern int PQsslInUse(PGconn *conn);
/* The TLS library's object named struct_name: always NULL here, as libpq
 * built without OpenSSL (libpgwire's TLS object is not libpq's). */
extern void *PQsslStruct(PGconn *conn, const char *struct_name);
/* A TLS attribute ("library", "protocol", "cipher", "key_bits",
 * "compression"), NULL when unknown or not encrypted; conn NULL: only
 * "library". The string lives as long as conn. */
extern const char *PQsslAttribute(PGconn *conn, const char *attribute_name);
/* The attribute names PQsslAttribute knows, NULL-terminated, static. */
extern const char *const *PQsslAttributeNames(PGconn *conn);
/* The connection's OpenSSL SSL *: always NULL here, as PQsslStruct. */
extern void *PQgetssl(PGconn *conn);
/* Whether the library should initialise OpenSSL: nothing to do (OpenSSL
 * initialises itself), kept for compatibility. */
extern void PQinitSSL(int do_init);
extern void PQinitOpenSSL(int do_ssl, int do_crypto);
/* 1 when the connection is encrypted with GSSAPI (libpgwire built with
 * GSSAPI). */
extern int PQgssEncInUse(PGconn *conn);
/* The GSSAPI context: NULL here. */
extern void *PQgetgssctx(PGconn *conn);

/* Sets how error messages of later results (and PQerrorMessage) are
 * worded; returns the previous setting. */
extern PGVerbosity PQsetErrorVerbosity(PGconn *conn, PGVerbosity verbosity);
extern PGContextVisibility PQsetErrorContextVisibility(PGconn *conn,
                                                       PGContextVisibility show_context);

/* Sets the notice receiver / processor (proc NULL: only returns the
 * current one); returns the previous one. */
extern PQnoticeReceiver PQsetNoticeReceiver(PGconn *conn, PQnoticeReceiver proc, void *arg);
extern PQnoticeProcessor PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg);

/* A lock callback for libpq's Kerberos code: kept for compatibility. */
typedef void (*pgthreadlock_t)(int acquire);
extern pgthreadlock_t PQregisterThreadLock(pgthreadlock_t newhandler);

/* ------------------------------------------------------------------ trace */

/* Writes every protocol message of conn to debug_port, one line each in
 * libpq 15's format (a timestamp, F or B, the length, the message's name and
 * fields), until PQuntrace or PQfinish; what libpq 15 leaves out is left out
 * (SSLRequest, the server's messages up to AuthenticationOk, the server's
 * CopyData). The stream stays the caller's and must outlive the trace; it
 * is written with stdio and flushed by PQuntrace. PQtrace ends a trace
 * already on, resets the flags to 0, and with debug_port NULL only ends. */
extern void PQtrace(PGconn *conn, FILE *debug_port);
/* Ends the trace (flushing its stream) and resets the flags. */
extern void PQuntrace(PGconn *conn);

#define PQTRACE_SUPPRESS_TIMESTAMPS (1 << 0) /* no timestamps */
#define PQTRACE_REGRESS_MODE        (1 << 1) /* redact varying values, for tests */
/* Sets the flags of the trace that is on (ignored when none is). */
extern void PQsetTraceFlags(PGconn *conn, int flags);

/* --------------------------------------------------------------- commands */

/* Runs query (one or more commands, simple protocol) and waits: the last
 * command's result. Free with PQclear; NULL only when out of memory or
 * conn is NULL. */
extern PGresult *PQexec(PGconn *conn, const char *query);
/* Runs one command with parameters (extended protocol) and waits.
 * paramTypes NULL or 0 entries: the server infers the type;
 * paramValues[i] NULL: SQL NULL; paramLengths is read for binary
 * parameters only; paramFormats NULL: all text; resultFormat 0 text, 1
 * binary. */
extern PGresult *PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                              const char *const *paramValues, const int *paramLengths,
                              const int *paramFormats, int resultFormat);
/* Prepares query as statement stmtName ("" the unnamed one) and waits. */
extern PGresult *PQprepare(PGconn *conn, const char *stmtName, const char *query, int nParams,
                           const Oid *paramTypes);
/* Runs a prepared statement and waits. */
extern PGresult *PQexecPrepared(PGconn *conn, const char *stmtName, int nParams,
                                const char *const *paramValues, const int *paramLengths,
                                const int *paramFormats, int resultFormat);

/* The most parameters a command may have. */
#define PQ_QUERY_PARAM_MAX_LIMIT 65535

/* The same, without waiting: 1 when sent (collect the results with
 * PQgetResult until it returns NULL), 0 on error (PQerrorMessage). */
extern int PQsendQuery(PGconn *conn, const char *query);
extern int PQsendQueryParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                             const char *const *paramValues, const int *paramLengths,
                             const int *paramFormats, int resultFormat);
extern int PQsendPrepare(PGconn *conn, const char *stmtName, const char *query, int nParams,
                         const Oid *paramTypes);
extern int PQsendQueryPrepared(PGconn *conn, const char *stmtName, int nParams,
                               const char *const *paramValues, const int *paramLengths,
                               const int *paramFormats, int resultFormat);
/* Makes the query just sent return its rows one PGRES_SINGLE_TUPLE result
 * at a time, handed out as they arrive, then a PGRES_TUPLES_OK without
 * rows; 1 on success, 0 when not allowed now. In pipeline mode, or when
 * called after rows came, a statement's rows are handed out one at a time
 * once the statement ended (held until then). */
extern int PQsetSingleRowMode(PGconn *conn);
/* The next result of the commands sent, waiting for it; NULL when they
 * are all done (in a pipeline: between commands). Free with PQclear. */
extern PGresult *PQgetResult(PGconn *conn);

/* 1 when PQgetResult would block. */
extern int PQisBusy(PGconn *conn);
/* Reads what the socket holds without blocking; 1 on success, 0 on error. */
extern int PQconsumeInput(PGconn *conn);

/* Pipeline mode: 1 on success, 0 when not allowed now. */
extern int PQenterPipelineMode(PGconn *conn);
extern int PQexitPipelineMode(PGconn *conn);
/* Ends a pipeline segment (Sync); its result is PGRES_PIPELINE_SYNC. */
extern int PQpipelineSync(PGconn *conn);
/* Asks the server to send what it has (Flush) without a sync point. */
extern int PQsendFlushRequest(PGconn *conn);

/* The next notification received, NULL when none; free with PQfreemem. */
extern PGnotify *PQnotifies(PGconn *conn);

/* COPY FROM STDIN: sends nbytes of data; 1 sent (or queued), 0 would
 * block (non-blocking only), -1 error. */
extern int PQputCopyData(PGconn *conn, const char *buffer, int nbytes);
/* Ends COPY FROM STDIN, failing it with errormsg when not NULL; 1, 0, -1
 * as PQputCopyData. */
extern int PQputCopyEnd(PGconn *conn, const char *errormsg);
/* COPY TO STDOUT: the next row in *buffer (malloc'd, NUL-terminated; free
 * with PQfreemem) and its length; 0 none yet (async only), -1 done, -2
 * error. */
extern int PQgetCopyData(PGconn *conn, char **buffer, int async);

/* The old COPY functions. */
extern int PQgetline(PGconn *conn, char *string, int length);
extern int PQputline(PGconn *conn, const char *string);
extern int PQgetlineAsync(PGconn *conn, char *buffer, int bufsize);
extern int PQputnbytes(PGconn *conn, const char *buffer, int nbytes);
extern int PQendcopy(PGconn *conn);

/* Non-blocking sends: 0 on success, -1 on error. */
extern int PQsetnonblocking(PGconn *conn, int arg);
extern int PQisnonblocking(const PGconn *conn);
/* 1: the library is thread-safe (one thread per PGconn at a time). */
extern int PQisthreadsafe(void);
/* Whether a server accepts connections, without authenticating. */
extern PGPing PQping(const char *conninfo);
extern PGPing PQpingParams(const char *const *keywords, const char *const *values,
                           int expand_dbname);

/* Sends what is queued: 0 all sent, 1 some remain (non-blocking), -1 error. */
extern int PQflush(PGconn *conn);

/* The fast-path function call interface. */
extern PGresult *PQfn(PGconn *conn, int fnid, int *result_buf, int *result_len, int result_is_int,
                      const PQArgBlock *args, int nargs);

/* ---------------------------------------------------------------- results
 * Column and row numbers start at 0; out of range gives NULL, 0 or -1 as
 * noted (and a notice for PQgetvalue and friends, as libpq). */

extern ExecStatusType PQresultStatus(const PGresult *res);
/* The status's name ("PGRES_TUPLES_OK"), static. */
extern char *PQresStatus(ExecStatusType status);
/* The result's error message ("" when none), worded when it was made. */
extern char *PQresultErrorMessage(const PGresult *res);
/* The error worded with the given verbosity; malloc'd, free with
 * PQfreemem; NULL when out of memory. */
extern char *PQresultVerboseErrorMessage(const PGresult *res, PGVerbosity verbosity,
                                         PGContextVisibility show_context);
/* One field of the error (fieldcode a PG_DIAG_* code), NULL when absent. */
extern char *PQresultErrorField(const PGresult *res, int fieldcode);
/* Rows and columns. */
extern int PQntuples(const PGresult *res);
extern int PQnfields(const PGresult *res);
/* 1 when every column is binary. */
extern int PQbinaryTuples(const PGresult *res);
/* Column field_num's name, NULL when out of range. */
extern char *PQfname(const PGresult *res, int field_num);
/* The number of the column named field_name (case-folded unless in
 * double quotes, as SQL), -1 when none. */
extern int PQfnumber(const PGresult *res, const char *field_name);
/* A column's source table OID and column number (0 when not a column). */
extern Oid PQftable(const PGresult *res, int field_num);
extern int PQftablecol(const PGresult *res, int field_num);
/* A column's format (0 text, 1 binary), type OID, size, type modifier. */
extern int PQfformat(const PGresult *res, int field_num);
extern Oid PQftype(const PGresult *res, int field_num);
extern int PQfsize(const PGresult *res, int field_num);
extern int PQfmod(const PGresult *res, int field_num);
/* The command tag ("INSERT 0 1"). */
extern char *PQcmdStatus(PGresult *res);
/* The OID an INSERT of one row reports, as text ("" when none). */
extern char *PQoidStatus(const PGresult *res);
/* The same as an Oid (InvalidOid when none). */
extern Oid PQoidValue(const PGresult *res);
/* The row count of INSERT, UPDATE, DELETE, MERGE, SELECT, MOVE, FETCH,
 * COPY as text, "" for other commands. */
extern char *PQcmdTuples(PGresult *res);
/* A value: NUL-terminated text, or binary bytes followed by a NUL; "" for
 * NULL. Lives as long as res. */
extern char *PQgetvalue(const PGresult *res, int tup_num, int field_num);
/* Its length in bytes (0 for NULL). */
extern int PQgetlength(const PGresult *res, int tup_num, int field_num);
/* 1 when the value is NULL. */
extern int PQgetisnull(const PGresult *res, int tup_num, int field_num);
/* A described statement's parameter count and types. */
extern int PQnparams(const PGresult *res);
extern Oid PQparamtype(const PGresult *res, int param_num);

/* Describes a prepared statement or a portal ("" the unnamed one):
 * waiting (a PGRES_COMMAND_OK result with the columns and parameters),
 * or without waiting (1 sent, 0 error). */
extern PGresult *PQdescribePrepared(PGconn *conn, const char *stmt);
extern PGresult *PQdescribePortal(PGconn *conn, const char *portal);
extern int PQsendDescribePrepared(PGconn *conn, const char *stmt);
extern int PQsendDescribePortal(PGconn *conn, const char *portal);

/* Frees a result and everything it holds; NULL is ignored. */
extern void PQclear(PGresult *res);
/* Frees memory the library handed out (PGnotify, escaped strings ...). */
extern void PQfreemem(void *ptr);

#define PQfreeNotify(ptr) PQfreemem(ptr)

/* The error of a connection that needed a password (deprecated: use
 * PQconnectionNeedsPassword). */
#define PQnoPasswordSupplied "fe_sendauth: no password supplied\n"

/* A result of the given status with no rows, columns or message; conn
 * non-NULL: its notice hooks and error message (for an error status) are
 * copied. Free with PQclear; NULL when out of memory. */
extern PGresult *PQmakeEmptyPGresult(PGconn *conn, ExecStatusType status);
/* A copy of src (status, command tag, and what flags ask). NULL when out of
 * memory. */
extern PGresult *PQcopyResult(const PGresult *src, int flags);
/* Sets the columns of a result that has none; 1 on success, 0 on error.
 * The descriptions are copied. */
extern int PQsetResultAttrs(PGresult *res, int numAttributes, PGresAttDesc *attDescs);
/* nBytes of memory freed with res; NULL when out of memory. */
extern void *PQresultAlloc(PGresult *res, size_t nBytes);
/* The bytes res takes. */
extern size_t PQresultMemorySize(const PGresult *res);
/* Sets a value (copied; value NULL or len -1: SQL NULL); tup_num may be
 * PQntuples(res) to add a row. 1 on success, 0 on error. */
extern int PQsetvalue(PGresult *res, int tup_num, int field_num, char *value, int len);

/* ------------------------------------------------------------- escaping */

/* Escapes length bytes of from (stopping at a NUL) into to, which must
 * hold 2*length+1 bytes, for use inside '...'; returns the length written.
 * *error (when error is not NULL) is 1 on invalid multibyte input (the
 * message in PQerrorMessage), 0 otherwise. */
extern size_t PQescapeStringConn(PGconn *conn, char *to, const char *from, size_t length,
                                 int *error);
/* str as an SQL literal ('...', or E'...' when it holds backslashes), or
 * as a double-quoted identifier. malloc'd, free with PQfreemem; NULL on
 * error (PQerrorMessage). */
extern char *PQescapeLiteral(PGconn *conn, const char *str, size_t len);
extern char *PQescapeIdentifier(PGconn *conn, const char *str, size_t len);
/* from as bytea text (hex format for servers since 9.0); *to_length gets
 * its size with the NUL. malloc'd, free with PQfreemem; NULL when out of
 * memory. */
extern unsigned char *PQescapeByteaConn(PGconn *conn, const unsigned char *from, size_t from_length,
                                        size_t *to_length);
/* Decodes bytea text (hex or escape format); *retbuflen gets its length.
 * malloc'd, free with PQfreemem; NULL when out of memory. */
extern unsigned char *PQunescapeBytea(const unsigned char *strtext, size_t *retbuflen);

/* Deprecated forms, using the settings of the last connection made. */
extern size_t PQescapeString(char *to, const char *from, size_t length);
extern unsigned char *PQescapeBytea(const unsigned char *from, size_t from_length,
                                    size_t *to_length);

/* ---------------------------------------------------------------- printing */

/* Prints a result as a table to fout, per the options. */
extern void PQprint(FILE *fout, const PGresult *res, const PQprintOpt *ps);
/* Older forms of PQprint. */
extern void PQdisplayTuples(const PGresult *res, FILE *fp, int fillAlign, const char *fieldSep,
                            int printHeader, int quiet);
extern void PQprintTuples(const PGresult *res, FILE *fout, int PrintAttNames, int TerseOutput,
                          int colWidth);

/* ----------------------------------------------------------- large objects
 * Over the server's lo_* functions; each must run inside a transaction.
 * Errors: -1 (or InvalidOid), the message in PQerrorMessage. */

extern int lo_open(PGconn *conn, Oid lobjId, int mode);
extern int lo_close(PGconn *conn, int fd);
extern int lo_read(PGconn *conn, int fd, char *buf, size_t len);
extern int lo_write(PGconn *conn, int fd, const char *buf, size_t len);
extern int lo_lseek(PGconn *conn, int fd, int offset, int whence);
extern pg_int64 lo_lseek64(PGconn *conn, int fd, pg_int64 offset, int whence);
extern Oid lo_creat(PGconn *conn, int mode);
extern Oid lo_create(PGconn *conn, Oid lobjId);
extern int lo_tell(PGconn *conn, int fd);
extern pg_int64 lo_tell64(PGconn *conn, int fd);
extern int lo_truncate(PGconn *conn, int fd, size_t len);
extern int lo_truncate64(PGconn *conn, int fd, pg_int64 len);
extern int lo_unlink(PGconn *conn, Oid lobjId);
/* Copies a client file into a new large object (or lobjId); its OID, or
 * InvalidOid on error. */
extern Oid lo_import(PGconn *conn, const char *filename);
extern Oid lo_import_with_oid(PGconn *conn, const char *filename, Oid lobjId);
/* Copies a large object into a client file; 1 on success, -1 on error. */
extern int lo_export(PGconn *conn, Oid lobjId, const char *filename);

/* ------------------------------------------------------------- encodings */

/* The library's version, as PQserverVersion numbers it. */
extern int PQlibVersion(void);
/* The length of the character at s in the encoding (1 for a bad byte). */
extern int PQmblen(const char *s, int encoding);
/* The same, but never past the NUL that ends s. */
extern int PQmblenBounded(const char *s, int encoding);
/* The display width of the character at s (-1 control, 0 combining). */
extern int PQdsplen(const char *s, int encoding);
/* The encoding named by PGCLIENTENCODING, SQL_ASCII when unset or unknown. */
extern int PQenv2encoding(void);

/* ------------------------------------------------------------- passwords */

/* The md5 verifier of passwd for user; malloc'd (PQfreemem), NULL on error. */
extern char *PQencryptPassword(const char *passwd, const char *user);
/* The verifier for ALTER ROLE ... PASSWORD, per algorithm ("md5",
 * "scram-sha-256", NULL: the server's password_encryption). malloc'd
 * (PQfreemem); NULL on error (PQerrorMessage). */
extern char *PQencryptPasswordConn(PGconn *conn, const char *passwd, const char *user,
                                   const char *algorithm);

/* An encoding's id from its name (-1 when unknown), its name from its id
 * ("" when unknown, static), whether it may be a server encoding (id, or 1
 * when valid, 0 not). */
extern int pg_char_to_encoding(const char *name);
extern const char *pg_encoding_to_char(int encoding);
extern int pg_valid_server_encoding_id(int encoding);

/* ------------------------------------------------------------------- TLS */

/* The callback asked for the passphrase of an encrypted client key. */
typedef int (*PQsslKeyPassHook_OpenSSL_type)(char *buf, int size, PGconn *conn);
extern PQsslKeyPassHook_OpenSSL_type PQgetSSLKeyPassHook_OpenSSL(void);
extern void PQsetSSLKeyPassHook_OpenSSL(PQsslKeyPassHook_OpenSSL_type hook);
extern int PQdefaultSSLKeyPassHook_OpenSSL(char *buf, int size, PGconn *conn);

/* ---------------------------------------------------- libpq 16, 17 and 18
 * Additions of later libpq versions that this library implements. */

/* libpq 16: closes a prepared statement or portal ("" the unnamed one):
 * waiting (a PGRES_COMMAND_OK result), or without waiting (1 sent, 0
 * error). */
#define LIBPQ_HAS_CLOSE_PREPARED 1
extern PGresult *PQclosePrepared(PGconn *conn, const char *stmt);
extern PGresult *PQclosePortal(PGconn *conn, const char *portal);
extern int PQsendClosePrepared(PGconn *conn, const char *stmt);
extern int PQsendClosePortal(PGconn *conn, const char *portal);

/* libpq 16: 1 when GSSAPI authenticated the connection. */
extern int PQconnectionUsedGSSAPI(const PGconn *conn);

/* libpq 17: PQpipelineSync without flushing: the Sync is queued, PQflush
 * sends it. 1 on success, 0 on error. */
#define LIBPQ_HAS_SEND_PIPELINE_SYNC 1
extern int PQsendPipelineSync(PGconn *conn);

/* libpq 17: the rows of the query just sent in PGRES_TUPLES_CHUNK results
 * of up to chunkSize rows, as PQsetSingleRowMode hands out single rows (a
 * chunk an error cuts short is dropped); 1 on success, 0 when not allowed
 * now (chunkSize < 1, nothing sent). */
#define LIBPQ_HAS_CHUNK_MODE 1
extern int PQsetChunkedRowsMode(PGconn *conn, int chunkSize);

/* libpq 17: microseconds since the epoch, and a poll of sock until
 * end_time (-1: forever, 0: no wait): >0 ready, 0 timeout, -1 error. */
#define LIBPQ_HAS_SOCKET_POLL 1
typedef pg_int64 pg_usec_time_t;
extern pg_usec_time_t PQgetCurrentTimeUSec(void);
extern int PQsocketPoll(int sock, int forRead, int forWrite, pg_usec_time_t end_time);

/* libpq 17: runs ALTER USER user PASSWORD with a verifier of passwd made
 * on the client (PQencryptPasswordConn with the server's
 * password_encryption), so the password never reaches the server's logs.
 * The ALTER's result (PQclear it), or NULL when it failed before sending
 * it (PQerrorMessage says why). */
#define LIBPQ_HAS_CHANGE_PASSWORD 1
extern PGresult *PQchangePassword(PGconn *conn, const char *user, const char *passwd);

/* libpq 18: the protocol version as 30000 + minor (30000 for 3.0). */
#define LIBPQ_HAS_FULL_PROTOCOL_VERSION 1
extern int PQfullProtocolVersion(const PGconn *conn);

/* libpq 17: a cancel request as a connection of its own, encrypted and
 * authenticated as conn's, blocking or polled like PQconnectPoll. */
#define LIBPQ_HAS_ASYNC_CANCEL 1
typedef struct pg_cancel_conn PGcancelConn;
/* A cancel connection for conn (check PQcancelStatus); free with
 * PQcancelFinish. NULL only when out of memory. */
extern PGcancelConn *PQcancelCreate(PGconn *conn);
/* Sends the cancel request: 1 sent, 0 error (PQcancelErrorMessage).
 * Unlike libpq's, it blocks until the request is sent (the connect, a TLS
 * handshake when conn's was encrypted, the write), so PQcancelPoll then
 * reports the outcome at once and PQcancelSocket is -1. */
extern int PQcancelStart(PGcancelConn *cancelConn);
/* Sends the cancel and waits for the outcome; 1 on success, 0 on error
 * (PQcancelErrorMessage). */
extern int PQcancelBlocking(PGcancelConn *cancelConn);
extern PostgresPollingStatusType PQcancelPoll(PGcancelConn *cancelConn);
extern ConnStatusType PQcancelStatus(const PGcancelConn *cancelConn);
extern int PQcancelSocket(const PGcancelConn *cancelConn);
/* The last error, "" when none; lives until the next call on cancelConn. */
extern char *PQcancelErrorMessage(const PGcancelConn *cancelConn);
/* Makes it reusable for another cancel of the same connection. */
extern void PQcancelReset(PGcancelConn *cancelConn);
/* Closes and frees it; NULL is ignored. */
extern void PQcancelFinish(PGcancelConn *cancelConn);

#ifdef __cplusplus
}
#endif

#endif
