/*
 * libpgwire protocol codec: the PostgreSQL frontend/backend protocol, 3.0
 * and 3.2, as pure functions over caller bytes.
 *
 * Sans-IO: nothing here reads a socket, takes a lock or includes an event
 * loop. Decoding frames backend messages in place and hands out views into
 * the caller's buffer; encoding appends frontend messages to a caller-owned
 * pgw_buf_t and allocates only when that buffer must grow.
 *
 * NULL handles follow common.h's convention: a NULL buffer, frame, message,
 * decoder or iterator gives PGW_EINVAL (pgw_param_desc_oid 0,
 * pgw_copy_format -1, the _init functions do nothing); pgw_msgw_begin on a
 * NULL buffer records PGW_EINVAL for pgw_msgw_end. The pgw_msgw_t itself
 * must not be NULL (it is the caller's stack object, not a handle).
 *
 * LIFETIME NOTE: every pointer or view produced by the decoding functions
 * (pgw_frame_t.body, pgw_msg_t fields, pgw_view_t, pgw_str_t, iterators)
 * points into the buffer that was passed in. It stays valid exactly as long
 * as the caller keeps those bytes in place and unchanged.
 */
#ifndef PGWIRE_PROTO_H
#define PGWIRE_PROTO_H

#include "pgwire/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Protocol versions as sent in StartupMessage (major << 16 | minor). */
#define PGW_PROTO_3_0 196608u /* 3.0 */
#define PGW_PROTO_3_2 196610u /* 3.2: variable-length cancel keys */

/* The most parameters (and parameter or result format codes) one message
 * can carry: the protocol's unsigned 16-bit counts. Every count in this API
 * is a size_t checked against it (PGW_EINVAL above it), never narrowed. */
#define PGW_MAX_PARAMS 65535u

/* The server's own limit on a message (MaxAllocSize): the default maximum. */
#define PGW_DEFAULT_MAX_MESSAGE (1024u * 1024u * 1024u - 1u)

/* Backend message types (the first byte of each backend message). */
enum pgw_backend_type {
    PGW_B_AUTH = 'R',
    PGW_B_BACKEND_KEY = 'K',
    PGW_B_BIND_COMPLETE = '2',
    PGW_B_CLOSE_COMPLETE = '3',
    PGW_B_COMMAND_COMPLETE = 'C',
    PGW_B_COPY_DATA = 'd',
    PGW_B_COPY_DONE = 'c',
    PGW_B_COPY_IN = 'G',
    PGW_B_COPY_OUT = 'H',
    PGW_B_COPY_BOTH = 'W',
    PGW_B_DATA_ROW = 'D',
    PGW_B_EMPTY_QUERY = 'I',
    PGW_B_ERROR = 'E',
    PGW_B_FUNCTION_RESULT = 'V',
    PGW_B_NEGOTIATE_VERSION = 'v',
    PGW_B_NO_DATA = 'n',
    PGW_B_NOTICE = 'N',
    PGW_B_NOTIFICATION = 'A',
    PGW_B_PARAM_DESC = 't',
    PGW_B_PARAM_STATUS = 'S',
    PGW_B_PARSE_COMPLETE = '1',
    PGW_B_PORTAL_SUSPENDED = 's',
    PGW_B_READY = 'Z',
    PGW_B_ROW_DESC = 'T'
};

/* Authentication request codes (the int32 after 'R'). */
enum pgw_auth_code {
    PGW_AUTH_OK = 0,
    PGW_AUTH_KERBEROS_V5 = 2,
    PGW_AUTH_CLEARTEXT = 3,
    PGW_AUTH_MD5 = 5,
    PGW_AUTH_GSS = 7,
    PGW_AUTH_GSS_CONTINUE = 8,
    PGW_AUTH_SSPI = 9,
    PGW_AUTH_SASL = 10,
    PGW_AUTH_SASL_CONTINUE = 11,
    PGW_AUTH_SASL_FINAL = 12
};

/* ------------------------------------------------------------------------ */
/* Framing                                                                  */
/* ------------------------------------------------------------------------ */

/* One backend message located in a buffer: 1 type byte, a 4-byte length
 * (which counts itself), then len body bytes. */
typedef struct pgw_frame {
    uint8_t type;        /* the message type byte, e.g. 'D' for DataRow */
    const uint8_t *body; /* the len bytes after the header */
    uint32_t len;        /* body length: the declared length minus 4 */
    size_t size;         /* bytes the whole frame occupies: 5 + len */
} pgw_frame_t;

/*
 * Locate the first backend message in buf[0..n).
 *
 * max_size bounds the declared length (0 means PGW_DEFAULT_MAX_MESSAGE).
 * Types whose body has a fixed size (ParseComplete, BindComplete, ...,
 * ReadyForQuery) must declare exactly that size, and types that are always
 * short (CommandComplete, ParameterStatus, BackendKeyData, Authentication...)
 * may declare at most 30000 bytes, as libpq requires: a lying length is
 * caught at the header, before the caller waits for or buffers the body.
 *
 * Returns:
 *   0            f describes a complete message; f->size bytes are consumed.
 *   PGW_EAGAIN   the message is incomplete; f->size is the total number of
 *                bytes the frame needs (5 while the header is incomplete),
 *                so the caller can grow its buffer once.
 *   PGW_EPROTO   declared length below 4, or wrong for the type.
 *   PGW_ETOOBIG  declared length above max_size.
 * On error f->type is the offending type byte (0 if unknown).
 */
PGW_EXTERN int pgw_frame_parse(const uint8_t *buf, size_t n, uint32_t max_size, pgw_frame_t *f);

/* ------------------------------------------------------------------------ */
/* Message parsing                                                          */
/* ------------------------------------------------------------------------ */

/*
 * The ErrorResponse / NoticeResponse fields libpgwire names, one line each:
 * XX(code, member, description), code being the field's type byte in the
 * protocol ("Error and Notice Message Fields" in the PostgreSQL docs).
 * pgw_error_fields_t below and pgw_error_t (result.h) have one member per
 * line, in this order; the parser and the copies between them are generated
 * from this list too, so a new field is one line here. A field code not in
 * the list is skipped, as the protocol requires.
 */
#define PGW_ERROR_FIELD_MAP(XX)                                                        \
    XX('S', severity, "severity, localized")                                           \
    XX('V', severity_nonlocal,                                                         \
       "severity, never localized: ERROR, FATAL, PANIC, WARNING, NOTICE, "             \
       "DEBUG, INFO or LOG")                                                           \
    XX('C', sqlstate, "SQLSTATE code")                                                 \
    XX('M', message, "primary message")                                                \
    XX('D', detail, "secondary message with more detail")                              \
    XX('H', hint, "suggestion what to do about it")                                    \
    XX('P', position, "error position in the query, 1-based, in characters (decimal)") \
    XX('p', internal_position, "error position in internal_query (decimal)")           \
    XX('q', internal_query, "the internally generated command that failed")            \
    XX('W', where, "context: a call stack traceback, one line per level")              \
    XX('s', schema, "schema of the object the error is about")                         \
    XX('t', table, "table of the object the error is about")                           \
    XX('c', column, "column the error is about")                                       \
    XX('d', datatype, "data type the error is about")                                  \
    XX('n', constraint, "constraint the error is about")                               \
    XX('F', file, "server source file that reported it")                               \
    XX('L', line, "line in that source file (decimal)")                                \
    XX('R', routine, "server source routine that reported it")

/* ErrorResponse / NoticeResponse fields, each a view into the message
 * (p == NULL, len == -1 when the server did not send it). Every view that is
 * present is followed by its NUL on the wire, so p is also a C string. A
 * field sent twice gives its last value. One member per line of
 * PGW_ERROR_FIELD_MAP, named as there (severity, sqlstate, message, ...). */
typedef struct pgw_error_fields {
#define PGW__ERROR_FIELD_VIEW(code, member, desc) pgw_view_t member;
    PGW_ERROR_FIELD_MAP(PGW__ERROR_FIELD_VIEW)
#undef PGW__ERROR_FIELD_VIEW
} pgw_error_fields_t;

/* One field descriptor of a RowDescription. */
typedef struct pgw_field_desc {
    pgw_str_t name;     /* column name, without its NUL */
    uint32_t table_oid; /* 0 if not a table column */
    int16_t attnum;     /* 0 if not a table column */
    uint32_t type_oid;  /* the column's type */
    int16_t typlen;     /* pg_type.typlen: the size, -1 varlena, -2 C string */
    int32_t typmod;     /* the type modifier, -1 if none */
    int16_t format;     /* 0 text, 1 binary */
} pgw_field_desc_t;

/*
 * A parsed backend message. Which member of u is set depends on type;
 * messages without a body (ParseComplete, BindComplete, CloseComplete,
 * NoData, EmptyQueryResponse, PortalSuspended, CopyDone) set none.
 */
typedef struct pgw_msg {
    uint8_t type;        /* the message type byte (PGW_B_*) */
    const uint8_t *body; /* the body, in the buffer that was decoded */
    uint32_t len;        /* body length */
    /* The parsed body, by type (below); views into body. */
    union {
        /* 'R': code is an enum pgw_auth_code. data is the MD5 salt (4
         * bytes), the SASL mechanism list (walk it with
         * pgw_sasl_mech_next), or SASLContinue/SASLFinal data. */
        struct {
            int32_t code;
            const uint8_t *data;
            uint32_t data_len;
        } auth;
        /* 'K': key is 4 bytes in 3.0, 4..256 bytes in 3.2. */
        struct {
            int32_t pid;
            const uint8_t *key;
            uint32_t key_len;
        } backend_key;
        /* 'C': the tag, and the trailing row count when the tag has one
         * (INSERT oid rows, UPDATE/DELETE/SELECT/MOVE/FETCH/COPY/MERGE rows). */
        struct {
            pgw_str_t tag;
            uint64_t rows;
            int has_rows;
        } command_complete;
        /* 'D': ncols fields start at fields. Decode them with
         * pgw_datarow_fields or a pgw_row_iter_t, which validate every length. */
        struct {
            uint16_t ncols;
            const uint8_t *fields;
        } data_row;
        /* 'T': validated at parse time; walk with pgw_rowdesc_iter_t. */
        struct {
            uint16_t nfields;
            const uint8_t *fields;
        } row_desc;
        /* 't': nparams big-endian uint32 OIDs at oids; use pgw_param_desc_oid. */
        struct {
            uint16_t nparams;
            const uint8_t *oids;
        } param_desc;
        /* 'S' */
        struct {
            pgw_str_t name;
            pgw_str_t value;
        } param_status;
        /* 'Z': 'I' idle, 'T' in a transaction block, 'E' in a failed one. */
        struct {
            char status;
        } ready;
        /* 'A' */
        struct {
            int32_t pid;
            pgw_str_t channel;
            pgw_str_t payload;
        } notification;
        /* 'G', 'H', 'W': overall format and ncols per-column formats (uint16
         * each, big-endian) at formats; use pgw_copy_format. */
        struct {
            uint8_t format;
            uint16_t ncols;
            const uint8_t *formats;
        } copy_response;
        /* 'd': the payload. 'V': the result value (len -1 for NULL). */
        pgw_view_t data;
        /* 'E', 'N': the field list, checked at parse time; read it with
         * pgw_error_fields_parse. */
        struct {
            const uint8_t *fields;
            uint32_t len;
        } error;
        /* 'v': newest minor version the server supports, and the options it
         * did not recognise (noptions NUL-terminated strings at options;
         * walk with pgw_negotiate_option_next). Servers send the whole
         * version (3 << 16 | minor; PostgreSQL 15 sends 0x00030000), the
         * protocol documentation only the minor: both are accepted and
         * newest_minor is the minor (0..65535); a major other than 3 is
         * PGW_EPROTO. */
        struct {
            int32_t newest_minor;
            uint32_t noptions;
            const uint8_t *options;
            uint32_t options_len;
        } negotiate;
    } u;
} pgw_msg_t;

/*
 * Parse the body of a framed message into m. Every length and count inside
 * the body is checked against the frame: a message must be consumed exactly
 * by its declared length. For DataRow only the column count is read here;
 * field lengths are checked by pgw_datarow_fields / pgw_row_iter_next.
 *
 * Returns 0, or PGW_EPROTO for a malformed body or an unknown type byte.
 */
PGW_EXTERN int pgw_msg_parse(const pgw_frame_t *f, pgw_msg_t *m);

/*
 * Fill out[0..ncols) with the fields of DataRow m (len -1 for NULL).
 * n is the capacity of out. Returns the column count, PGW_EINVAL if
 * n < ncols, or PGW_EPROTO if a length is below -1 or runs past the message,
 * or the fields do not end exactly at the end of the message.
 */
PGW_EXTERN int pgw_datarow_fields(const pgw_msg_t *m, pgw_view_t *out, size_t n);

/* Zero-copy iteration over a DataRow's fields, for rows of any width. */
typedef struct pgw_row_iter {
    const uint8_t *p, *end; /* private: the unread fields */
    uint16_t left;          /* private: fields not yet returned */
} pgw_row_iter_t;

/* Start at the first field of m, a DataRow (m must outlive the iteration;
 * anything else, or NULL, makes the first next return PGW_EPROTO). */
PGW_EXTERN void pgw_row_iter_init(pgw_row_iter_t *it, const pgw_msg_t *m);
/* Returns 1 and sets *out, 0 at the end (only when the row was consumed
 * exactly), or PGW_EPROTO. */
PGW_EXTERN int pgw_row_iter_next(pgw_row_iter_t *it, pgw_view_t *out);

/* Iteration over a RowDescription's field descriptors. */
typedef struct pgw_rowdesc_iter {
    const uint8_t *p, *end; /* private: the unread descriptors */
    uint16_t left;          /* private: descriptors not yet returned */
} pgw_rowdesc_iter_t;

/* Start at the first descriptor of m, a RowDescription (m must outlive the
 * iteration; anything else, or NULL, makes the first next return
 * PGW_EPROTO). */
PGW_EXTERN void pgw_rowdesc_iter_init(pgw_rowdesc_iter_t *it, const pgw_msg_t *m);
/* Returns 1 and fills *out, 0 at the end, or PGW_EPROTO. */
PGW_EXTERN int pgw_rowdesc_iter_next(pgw_rowdesc_iter_t *it, pgw_field_desc_t *out);

/* The i-th parameter type OID of ParameterDescription m; 0 when i >= nparams
 * or m is NULL or another message. */
PGW_EXTERN uint32_t pgw_param_desc_oid(const pgw_msg_t *m, size_t i);
/* The i-th column format of a CopyIn/Out/BothResponse m; -1 when i >= ncols
 * or m is NULL or another message. */
PGW_EXTERN int16_t pgw_copy_format(const pgw_msg_t *m, size_t i);

/*
 * Fill *out with the fields of ErrorResponse/NoticeResponse m: one walk over
 * the field list, which pgw_msg_parse already checked with the same walker
 * (so for a message it parsed this returns 0). Unknown field codes are
 * skipped, as the protocol requires. The views point into m's body (see the
 * LIFETIME NOTE above).
 *
 * Returns 0 or one of the following negative error codes, with every view
 * of out absent (when out is not NULL):
 *   PGW_EINVAL  m or out is NULL, or m is not an ErrorResponse or
 *               NoticeResponse;
 *   PGW_EPROTO  a field without its NUL, no terminating zero byte, or bytes
 *               after it (only a hand-made m can have them).
 */
PGW_EXTERN int pgw_error_fields_parse(const pgw_msg_t *m, pgw_error_fields_t *out);

/*
 * The SQLSTATE codes the library acts on (the server's errcodes.txt), and
 * the classifications it makes of errors, each in one place.
 */
#define PGW_SQLSTATE_QUERY_CANCELED             "57014"
#define PGW_SQLSTATE_ADMIN_SHUTDOWN             "57P01"
#define PGW_SQLSTATE_CRASH_SHUTDOWN             "57P02"
#define PGW_SQLSTATE_CANNOT_CONNECT_NOW         "57P03"
#define PGW_SQLSTATE_INVALID_SQL_STATEMENT_NAME "26000"
#define PGW_SQLSTATE_FEATURE_NOT_SUPPORTED      "0A000"
#define PGW_SQLSTATE_UNDEFINED_FUNCTION         "42883"
#define PGW_SQLSTATE_DIVISION_BY_ZERO           "22012"
/* 1 if the sqlstate view (n bytes) is code (one of the above), else 0. */
PGW_EXTERN int pgw_sqlstate_is(const char *sqlstate, size_t n, const char *code);
/* 1 if an error of this severity (its 'V' field, else its 'S'; n bytes)
 * ends the connection: FATAL or PANIC. */
PGW_EXTERN int pgw_severity_ends_connection(const char *severity, size_t n);
/* 1 if the sqlstate (NUL-terminated, may be NULL) says the server is going
 * away or not taking connections through no fault of the request:
 * administrator or crash shutdown, or cannot connect now (57P01 to
 * 57P03). */
PGW_EXTERN int pgw_sqlstate_server_going_away(const char *sqlstate);

/* Walk a SASL mechanism list (m->u.auth with code PGW_AUTH_SASL).
 * *pos starts at 0. Returns 1 and sets *mech, 0 at the end, or PGW_EPROTO. */
PGW_EXTERN int pgw_sasl_mech_next(const pgw_msg_t *m, size_t *pos, pgw_str_t *mech);

/* Walk the unrecognised options of a NegotiateProtocolVersion. Same contract
 * as pgw_sasl_mech_next. */
PGW_EXTERN int pgw_negotiate_option_next(const pgw_msg_t *m, size_t *pos, pgw_str_t *opt);

/*
 * A streaming decoder with sticky, positioned errors. Zero-initialise it
 * (or call pgw_decoder_init) before use.
 */
typedef struct pgw_decoder {
    uint32_t max_size;   /* 0: PGW_DEFAULT_MAX_MESSAGE */
    int err;             /* sticky: once set, every call returns it */
    uint64_t offset;     /* stream offset of the next unread byte */
    uint64_t err_offset; /* stream offset of the message that failed */
} pgw_decoder_t;

/* Zero *d and set its max_size (NULL d: nothing). */
PGW_EXTERN void pgw_decoder_init(pgw_decoder_t *d, uint32_t max_size);
/*
 * Frame and parse the next message of buf[0..n) (the bytes at d->offset of
 * the stream). Returns the number of bytes consumed (> 0) with m filled;
 * PGW_EAGAIN with *need set to the bytes the next frame needs (when need is
 * not NULL); or a sticky PGW_EPROTO / PGW_ETOOBIG.
 */
PGW_EXTERN int64_t pgw_decoder_next(pgw_decoder_t *d, const uint8_t *buf, size_t n, pgw_msg_t *m,
                                    size_t *need);

/* ------------------------------------------------------------------------ */
/* Encoding                                                                 */
/* ------------------------------------------------------------------------ */

/*
 * Every encoder appends one complete frontend message to b, or nothing at
 * all: on any error b is left exactly as it was. A message whose length
 * would exceed INT32_MAX, or the limit max_msg of the encoder functions that
 * take one (0: no limit below INT32_MAX), is rejected with PGW_ETOOBIG
 * before a byte is written. Strings that the protocol NUL-terminates must
 * not contain NUL (PGW_EINVAL).
 *
 * Unless stated otherwise, each returns 0, PGW_ENOMEM, PGW_ETOOBIG or
 * PGW_EINVAL.
 */

/* StartupMessage. version is PGW_PROTO_3_0 or PGW_PROTO_3_2. params is a
 * list of nparams (name, value) pairs: params[2i] is a name, params[2i+1]
 * its value ("user" is required by servers; "_pq_." names are protocol
 * options). */
PGW_EXTERN int pgw_enc_startup(pgw_buf_t *b, uint32_t version, const char *const *params,
                               size_t nparams);
/* SSLRequest, GSSENCRequest: the requests sent before a StartupMessage to
 * negotiate TLS or GSS encryption. */
PGW_EXTERN int pgw_enc_ssl_request(pgw_buf_t *b);
PGW_EXTERN int pgw_enc_gssenc_request(pgw_buf_t *b);
/* CancelRequest: key_len is 4 for protocol 3.0, up to 256 in 3.2. */
PGW_EXTERN int pgw_enc_cancel_request(pgw_buf_t *b, int32_t pid, const uint8_t *key,
                                      size_t key_len);
/* PasswordMessage with a NUL-terminated password (cleartext or MD5 hash). */
PGW_EXTERN int pgw_enc_password(pgw_buf_t *b, const char *password);
/* SASLInitialResponse. data may be NULL with data_len -1 (no initial response). */
PGW_EXTERN int pgw_enc_sasl_initial(pgw_buf_t *b, const char *mechanism, const uint8_t *data,
                                    int32_t data_len);
PGW_EXTERN int pgw_enc_sasl_response(pgw_buf_t *b, const uint8_t *data, size_t len);
/* Query: sql need not be NUL-terminated; len bytes are sent. */
PGW_EXTERN int pgw_enc_query(pgw_buf_t *b, const char *sql, size_t len, uint32_t max_msg);
/* Parse: name "" is the unnamed statement. param_oids may be NULL when
 * nparams is 0; an OID of 0 lets the server infer the type. nparams above
 * PGW_MAX_PARAMS: PGW_EINVAL. */
PGW_EXTERN int pgw_enc_parse(pgw_buf_t *b, const char *name, const char *sql, size_t sql_len,
                             const uint32_t *param_oids, size_t nparams, uint32_t max_msg);

/*
 * Bind from parameter views. param_formats has nparam_formats entries (0:
 * all text, 1: one format for all, else one per parameter). params[i].len -1
 * sends NULL. result_formats likewise (0, 1 or one per result column).
 * The total is computed before anything is written: oversized input is
 * rejected without reading the parameter bytes. Any count above
 * PGW_MAX_PARAMS: PGW_EINVAL.
 */
PGW_EXTERN int pgw_enc_bind(pgw_buf_t *b, const char *portal, const char *stmt,
                            const int16_t *param_formats, size_t nparam_formats,
                            const pgw_view_t *params, size_t nparams, const int16_t *result_formats,
                            size_t nresult_formats, uint32_t max_msg);

/* Describe / Close: what is 'S' (statement) or 'P' (portal). */
PGW_EXTERN int pgw_enc_describe(pgw_buf_t *b, char what, const char *name);
PGW_EXTERN int pgw_enc_close(pgw_buf_t *b, char what, const char *name);
/* Execute: max_rows 0 means all rows. */
PGW_EXTERN int pgw_enc_execute(pgw_buf_t *b, const char *portal, int32_t max_rows);
/* Sync, Flush, CopyData (len bytes of data), CopyDone, CopyFail (reason
 * NUL-terminated), Terminate. */
PGW_EXTERN int pgw_enc_sync(pgw_buf_t *b);
PGW_EXTERN int pgw_enc_flush(pgw_buf_t *b);
PGW_EXTERN int pgw_enc_copy_data(pgw_buf_t *b, const void *data, size_t len, uint32_t max_msg);
PGW_EXTERN int pgw_enc_copy_done(pgw_buf_t *b);
PGW_EXTERN int pgw_enc_copy_fail(pgw_buf_t *b, const char *reason);
PGW_EXTERN int pgw_enc_terminate(pgw_buf_t *b);

/*
 * Incremental message building, for encoders that write a message's parts
 * straight into the buffer (the types layer writes Bind parameters and COPY
 * rows this way, with no intermediate copy).
 *
 *   pgw_msgw_t w;
 *   pgw_msgw_begin(b, 'B', &w);            writes the type and a length slot
 *   pgw_msgw_cstr(&w, "") ...              append parts; the first failure is
 *                                          remembered and later calls do nothing
 *   rc = pgw_msgw_end(&w, max_msg);        patches the length, or on failure
 *                                          truncates b back to where it began
 *
 * type 0 writes a message without a type byte (StartupMessage family).
 */
typedef struct pgw_msgw {
    pgw_buf_t *b;  /* the buffer the message is written into */
    size_t start;  /* offset of the message in b */
    size_t len_at; /* offset of the length slot */
    int err;       /* the first failure (0: none) */
} pgw_msgw_t;

/* Start a message of type in b (type 0: no type byte): writes the type and
 * a length slot, and sets up *w. */
PGW_EXTERN void pgw_msgw_begin(pgw_buf_t *b, uint8_t type, pgw_msgw_t *w);
/* Append a byte, a big-endian int16 or int32, or n bytes (nothing after a
 * failure: the first one is kept for pgw_msgw_end). */
PGW_EXTERN void pgw_msgw_u8(pgw_msgw_t *w, uint8_t v);
PGW_EXTERN void pgw_msgw_i16(pgw_msgw_t *w, int16_t v);
PGW_EXTERN void pgw_msgw_i32(pgw_msgw_t *w, int32_t v);
PGW_EXTERN void pgw_msgw_bytes(pgw_msgw_t *w, const void *p, size_t n);
/* A string and its NUL; a string containing NUL within n sets PGW_EINVAL. */
PGW_EXTERN void pgw_msgw_cstr(pgw_msgw_t *w, const char *s);
/* Reserve n bytes and return where to write them (NULL after a failure). The
 * pointer is valid until the next call on w or b. */
PGW_EXTERN uint8_t *pgw_msgw_reserve(pgw_msgw_t *w, size_t n);
/* Offset (in b) of the next byte to be written: lets a caller come back and
 * patch a length slot with pgw_msgw_patch32. */
PGW_EXTERN size_t pgw_msgw_tell(const pgw_msgw_t *w);
PGW_EXTERN void pgw_msgw_patch32(pgw_msgw_t *w, size_t at, int32_t v);
/* Record a failure (e.g. from a value encoder); pgw_msgw_end will return it. */
PGW_EXTERN void pgw_msgw_fail(pgw_msgw_t *w, int err);
/* Finish: returns 0, or the first error (the message is then removed). */
PGW_EXTERN int pgw_msgw_end(pgw_msgw_t *w, uint32_t max_msg);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_PROTO_H */
