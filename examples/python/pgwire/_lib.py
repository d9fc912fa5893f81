"""Loading libpgwire.so and declaring the functions this package calls.

Only exported functions are used: every struct the library has is either
allocated and read by the library (ffi.h: parameter lists, request
descriptors, configurations, hosts, buffers, result cells) or an opaque
handle, so no struct layout is spelled out here; the callbacks this package
implements receive only pointers and integers.
"""
import ctypes
import ctypes.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("PGWIRE_LIB")
    if env:
        yield env
        return
    # examples/python/pgwire -> the source tree's root: its build/ directory.
    root = os.path.normpath(os.path.join(_HERE, "..", "..", ".."))
    yield os.path.join(root, "build", "libpgwire.so")
    found = ctypes.util.find_library("pgwire")
    if found:
        yield found
    yield "libpgwire.so"


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("cannot load libpgwire (set PGWIRE_LIB to the path of libpgwire.so):\n  "
                      + "\n  ".join(errors))


lib = _load()

c_int, c_uint32, c_int32, c_int64, c_uint64 = (ctypes.c_int, ctypes.c_uint32, ctypes.c_int32,
                                               ctypes.c_int64, ctypes.c_uint64)
c_size_t, c_char_p, c_void_p = ctypes.c_size_t, ctypes.c_char_p, ctypes.c_void_p
c_bool, c_double, c_uint16 = ctypes.c_bool, ctypes.c_double, ctypes.c_uint16
P = ctypes.POINTER


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


# Errors (common.h).
strerror = _fn("pgw_strerror", c_char_p, c_int)
PGW_ESERVER = -1007
PGW_EABORTED = -1008
PGW_ECONNLOST = -1009
PGW_ECANCELED = -1010
PGW_ETIMEDOUT = -1011
PGW_ECONGESTED = -1032

# Parameter lists (ffi.h).
params_new = _fn("pgw_params_new", c_void_p, c_size_t)
params_free = _fn("pgw_params_free", None, c_void_p)
params_set_null = _fn("pgw_params_set_null", c_int, c_void_p, c_size_t, c_uint32)
params_set_bool = _fn("pgw_params_set_bool", c_int, c_void_p, c_size_t, c_bool)
params_set_int8 = _fn("pgw_params_set_int8", c_int, c_void_p, c_size_t, c_int64)
params_set_float8 = _fn("pgw_params_set_float8", c_int, c_void_p, c_size_t, c_double)
params_set_text = _fn("pgw_params_set_text", c_int, c_void_p, c_size_t, c_char_p)
params_set_text_typed = _fn("pgw_params_set_text_typed", c_int, c_void_p, c_size_t, c_char_p,
                            c_int32, c_uint32)
params_set_bytea = _fn("pgw_params_set_bytea", c_int, c_void_p, c_size_t, c_char_p, c_int32)
params_set_numeric_str = _fn("pgw_params_set_numeric_str", c_int, c_void_p, c_size_t, c_char_p)
params_set_date = _fn("pgw_params_set_date", c_int, c_void_p, c_size_t, c_int32)
params_set_time = _fn("pgw_params_set_time", c_int, c_void_p, c_size_t, c_int64)
params_set_timestamp = _fn("pgw_params_set_timestamp", c_int, c_void_p, c_size_t, c_int64)
params_set_timestamptz = _fn("pgw_params_set_timestamptz", c_int, c_void_p, c_size_t, c_int64)

# Request descriptors (ffi.h).
PGW_REQ_QUERY, PGW_REQ_SIMPLE, PGW_REQ_COPY = 1, 2, 8
request_new = _fn("pgw_request_new", c_void_p, c_int)
request_free = _fn("pgw_request_free", None, c_void_p)
request_set_uint = _fn("pgw_request_set_uint", c_int, c_void_p, c_char_p, c_uint64)
request_set_ptr = _fn("pgw_request_set_ptr", c_int, c_void_p, c_char_p, c_void_p)
request_set_fn = _fn("pgw_request_set_fn", c_int, c_void_p, c_char_p, c_void_p)
request_set_params = _fn("pgw_request_set_params", c_int, c_void_p, c_void_p)

# Results (result.h) and the cell bytes (ffi.h).
result_free = _fn("pgw_result_free", None, c_void_p)
result_nrows = _fn("pgw_result_nrows", c_size_t, c_void_p)
result_ncols = _fn("pgw_result_ncols", c_size_t, c_void_p)
result_fname = _fn("pgw_result_fname", c_char_p, c_void_p, c_size_t)
result_ftype = _fn("pgw_result_ftype", c_uint32, c_void_p, c_size_t)
result_fformat = _fn("pgw_result_fformat", c_int, c_void_p, c_size_t)
result_cell = _fn("pgw_result_cell", c_void_p, c_void_p, c_size_t, c_size_t, P(c_int32))
result_cells = _fn("pgw_result_cells", c_int, c_void_p, c_size_t, c_size_t, c_void_p, c_void_p,
                   c_size_t, P(c_size_t))
PGW_ERANGE = -1004
result_value_cstr = _fn("pgw_result_value_cstr", c_int, c_void_p, c_size_t, c_size_t,
                        P(c_char_p), P(c_size_t))
result_command_tag = _fn("pgw_result_command_tag", c_char_p, c_void_p)
result_rows_affected = _fn("pgw_result_rows_affected", c_int64, c_void_p)
result_error = _fn("pgw_result_error", c_void_p, c_void_p)
error_field = _fn("pgw_error_field", c_char_p, c_void_p, ctypes.c_char)

# Buffers (common.h, ffi.h).
buf_new = _fn("pgw_buf_new", c_void_p)
buf_delete = _fn("pgw_buf_delete", None, c_void_p)
buf_data = _fn("pgw_buf_data", c_void_p, c_void_p, P(c_size_t))
buf_append = _fn("pgw_buf_append", c_int, c_void_p, c_char_p, c_size_t)
enc_ssl_request = _fn("pgw_enc_ssl_request", c_int, c_void_p)
enc_cancel_request = _fn("pgw_enc_cancel_request", c_int, c_void_p, c_int32, c_void_p, c_size_t)

# The blocking client (client.h).
client_connect_err = _fn("pgw_client_connect_err", c_int, P(c_void_p), c_char_p, c_void_p,
                         c_char_p, c_size_t)
client_run = _fn("pgw_client_run", c_int, c_void_p, c_void_p, P(c_void_p))
client_refusal = _fn("pgw_client_refusal", c_char_p, c_void_p)
client_cancel = _fn("pgw_client_cancel", c_int, c_void_p)
client_backend_pid = _fn("pgw_client_backend_pid", c_int32, c_void_p)
client_close = _fn("pgw_client_close", None, c_void_p)
client_listen = _fn("pgw_client_listen", c_int, c_void_p, c_char_p)
client_unlisten = _fn("pgw_client_unlisten", c_int, c_void_p, c_char_p)
client_wait_notification = _fn("pgw_client_wait_notification", c_int, c_void_p, ctypes.c_int,
                               c_void_p)

# Notifications (client.h, listen.h) and their members (ffi.h).
notification_new = _fn("pgw_notification_new", c_void_p)
notification_free = _fn("pgw_notification_free", None, c_void_p)
notification_pid = _fn("pgw_notification_pid", c_int32, c_void_p)
notification_channel = _fn("pgw_notification_channel", c_void_p, c_void_p, P(c_size_t))
notification_payload = _fn("pgw_notification_payload", c_void_p, c_void_p, P(c_size_t))
notification_missed = _fn("pgw_notification_missed", c_uint64, c_void_p)
listen_sql = _fn("pgw_listen_sql", c_int, c_void_p, c_char_p, c_int, P(c_void_p))
escape_free = _fn("pgw_escape_free", None, c_void_p, c_void_p)

# Connection strings (conninfo.h) and hosts (ffi.h).
conninfo_parse = _fn("pgw_conninfo_parse", c_int, P(c_void_p), c_char_p, c_void_p, c_char_p,
                     c_size_t)
conninfo_free = _fn("pgw_conninfo_free", None, c_void_p)
conninfo_get = _fn("pgw_conninfo_get", c_char_p, c_void_p, c_char_p)
conninfo_nhosts = _fn("pgw_conninfo_nhosts", c_size_t, c_void_p)
conninfo_host = _fn("pgw_conninfo_host", c_int, c_void_p, c_size_t, c_void_p)
conninfo_password = _fn("pgw_conninfo_password", c_char_p, c_void_p, c_void_p)
conninfo_startup_params = _fn("pgw_conninfo_startup_params", c_int, c_void_p, P(c_void_p),
                              c_size_t)
host_new = _fn("pgw_host_new", c_void_p)
host_free = _fn("pgw_host_free", None, c_void_p)
host_name = _fn("pgw_host_name", c_char_p, c_void_p)
host_addr = _fn("pgw_host_addr", c_char_p, c_void_p)
host_port = _fn("pgw_host_port", c_uint16, c_void_p)
host_is_unix = _fn("pgw_host_is_unix", c_int, c_void_p)
host_error = _fn("pgw_host_error", c_char_p, c_void_p)
host_socket_path = _fn("pgw_host_socket_path", c_int, c_void_p, c_char_p, c_size_t)
host_error_ends_connect = _fn("pgw_host_error_ends_connect", c_int, c_void_p)

# The multi-host plan (hostplan.h): which host next, what a failure means,
# target_session_attrs.
hostplan_new = _fn("pgw_hostplan_new", c_int, P(c_void_p), c_void_p, c_void_p)
hostplan_free = _fn("pgw_hostplan_free", None, c_void_p)
hostplan_next = _fn("pgw_hostplan_next", c_int, c_void_p, c_void_p)
hostplan_index = _fn("pgw_hostplan_index", c_size_t, c_void_p)
hostplan_failed = _fn("pgw_hostplan_failed", c_int, c_void_p, c_int, c_void_p)
hostplan_check = _fn("pgw_hostplan_check", c_int, c_void_p, c_void_p)
hostplan_probe_sql = _fn("pgw_hostplan_probe_sql", c_char_p, c_void_p)
hostplan_probe_answer = _fn("pgw_hostplan_probe_answer", c_int, c_void_p, c_char_p, c_size_t)
hostplan_reason = _fn("pgw_hostplan_reason", c_char_p, c_void_p)
(PGW_HOSTPLAN_ACCEPT, PGW_HOSTPLAN_NEXT_ADDRESS, PGW_HOSTPLAN_NEXT_HOST, PGW_HOSTPLAN_PROBE,
 PGW_HOSTPLAN_END) = range(5)

# The sans-IO TLS engine (tls.h, SANS-IO TLS).
tls_new = _fn("pgw_tls_new", c_int, P(c_void_p), c_void_p, c_size_t, c_void_p, c_char_p,
              c_size_t)
tls_free = _fn("pgw_tls_free", None, c_void_p)
tls_start = _fn("pgw_tls_start", c_int, c_void_p)
tls_next_method = _fn("pgw_tls_next_method", c_int, c_void_p, c_int)
tls_answer = _fn("pgw_tls_answer", c_int, c_void_p, c_char_p, c_size_t)
tls_handshake = _fn("pgw_tls_handshake", c_int, c_void_p)
tls_feed = _fn("pgw_tls_feed", c_int, c_void_p, c_char_p, c_size_t, P(c_size_t))
tls_input_eof = _fn("pgw_tls_input_eof", None, c_void_p)
tls_output = _fn("pgw_tls_output", c_void_p, c_void_p, P(c_size_t))
tls_output_consumed = _fn("pgw_tls_output_consumed", None, c_void_p, c_size_t)
tls_read = _fn("pgw_tls_read", c_int, c_void_p, c_void_p, c_size_t, P(c_size_t))
tls_write = _fn("pgw_tls_write", c_int, c_void_p, c_void_p, c_size_t, P(c_size_t))
tls_channel_binding = _fn("pgw_tls_channel_binding", c_int, c_void_p, P(c_void_p), P(c_size_t))
tls_check_certificate = _fn("pgw_tls_check_certificate", c_int, c_void_p)
tls_errmsg = _fn("pgw_tls_errmsg", c_char_p, c_void_p)
PGW_EAGAIN = -1001
PGW_TLS_START_NONE, PGW_TLS_START_PLAIN, PGW_TLS_START_REQUEST, PGW_TLS_START_DIRECT = 0, 1, 2, 3
PGW_TLS_HANDSHAKE, PGW_TLS_PLAINTEXT = 1, 2

# The sans-IO session (session.h) and its configuration (ffi.h).
session_config_new = _fn("pgw_session_config_new", c_void_p)
session_config_free = _fn("pgw_session_config_free", None, c_void_p)
session_config_set_uint = _fn("pgw_session_config_set_uint", c_int, c_void_p, c_char_p, c_uint64)
session_config_set_ptr = _fn("pgw_session_config_set_ptr", c_int, c_void_p, c_char_p, c_void_p)
session_config_set_fn = _fn("pgw_session_config_set_fn", c_int, c_void_p, c_char_p, c_void_p)
session_new = _fn("pgw_session_new", c_int, P(c_void_p), c_void_p)
session_free = _fn("pgw_session_free", None, c_void_p)
session_start = _fn("pgw_session_start", c_int, c_void_p)
session_submit = _fn("pgw_session_submit", c_int, c_void_p, c_void_p)
session_recv = _fn("pgw_session_recv", c_int, c_void_p, c_char_p, c_size_t)
session_fail = _fn("pgw_session_fail", None, c_void_p, c_int)
session_pending_output = _fn("pgw_session_pending_output", c_void_p, c_void_p, P(c_size_t))
session_consumed_output = _fn("pgw_session_consumed_output", None, c_void_p, c_size_t)
session_copy_pump = _fn("pgw_session_copy_pump", c_int, c_void_p)
session_copy_resume = _fn("pgw_session_copy_resume", c_int, c_void_p)
session_expire = _fn("pgw_session_expire", c_int, c_void_p, c_uint64, ctypes.c_uint)
session_terminate = _fn("pgw_session_terminate", c_int, c_void_p)
session_backend_key = _fn("pgw_session_backend_key", c_int, c_void_p, P(c_int32), P(c_void_p),
                          P(c_size_t))
session_backend_pid = _fn("pgw_session_backend_pid", c_int32, c_void_p)

# Callback prototypes, as the headers declare them.
RESULT_CB = ctypes.CFUNCTYPE(None, c_int, c_void_p, c_void_p)
COPY_SOURCE_CB = ctypes.CFUNCTYPE(c_int, c_void_p, c_size_t, c_void_p)
COPY_DATA_CB = ctypes.CFUNCTYPE(c_int, c_void_p, c_size_t, c_void_p)
STARTUP_CB = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_void_p, c_void_p)
WANT_WRITE_CB = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)
BROKEN_CB = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_void_p)
DEADLINE_CB = ctypes.CFUNCTYPE(None, c_void_p, c_uint64, c_uint32, c_void_p)
CHANNEL_BINDING_CB = ctypes.CFUNCTYPE(c_int, c_void_p, P(c_void_p), P(c_size_t), c_void_p)


class Str(ctypes.Structure):
    """pgw_str_t (common.h: a pointer and a byte count), the one struct
    this package spells out: session.h's on_notification takes two by
    value, which no function of ffi.h can stand in for."""
    _fields_ = [("p", c_void_p), ("len", c_size_t)]

    def bytes(self):
        return ctypes.string_at(self.p, self.len) if self.len else b""


NOTIFICATION_CB = ctypes.CFUNCTYPE(None, c_void_p, c_int32, Str, Str, c_void_p)
PGW_COPY_MORE, PGW_COPY_END = 0, 1


def fnptr(cb):
    """A callback object as the void * the *_set_fn functions take."""
    return ctypes.cast(cb, c_void_p)


def buf_bytes(buf):
    n = c_size_t()
    p = buf_data(buf, ctypes.byref(n))
    return ctypes.string_at(p, n.value) if p else b""
