"""The blocking path: pgw_client_t (client.h), one call per request.

    conn = pgwire.connect("host=... dbname=...")
    conn.fetch("SELECT $1::int + 1", 41)   # [(42,)]

The client runs its own event loop inside each call; cancel() may be
called from another thread while a call is blocked.
"""
import ctypes

from . import _lib
from ._values import Notification, Params, rows
from .errors import Error, from_status


class Result:
    """What a statement returned: rows (tuples), columns (names), the
    command tag and the rows it affected."""
    __slots__ = ("rows", "columns", "command_tag", "rows_affected")

    def __init__(self, res):
        self.columns, self.rows = rows(res)
        self.command_tag = (_lib.result_command_tag(res) or b"").decode()
        self.rows_affected = _lib.result_rows_affected(res)

    def __repr__(self):
        return f"<Result {self.command_tag!r} {len(self.rows)} rows>"


def take_result(status, res_ptr, refusal=None):
    """A Result from a request's status and pgw_result_t, freeing it; the
    exception when the status is an error."""
    try:
        if status < 0:
            raise from_status(status, res_ptr, refusal)
        return Result(res_ptr)
    finally:
        _lib.result_free(res_ptr)


class Request:
    """A pgw_request_t (ffi.h) with what it points to kept alive."""
    __slots__ = ("ptr", "keep", "timeout")

    def __init__(self, kind, sql, args=(), timeout=None):
        self.ptr = _lib.request_new(kind)
        if not self.ptr:
            raise MemoryError
        self.keep = [sql.encode()]
        self.timeout = timeout
        _lib.request_set_ptr(self.ptr, b"sql", self.keep[0])
        if args:
            ps = Params(args)
            self.keep.append(ps)
            _lib.request_set_params(self.ptr, ps.ptr)
        if timeout is not None:
            _lib.request_set_uint(self.ptr, b"timeout_ms", max(1, int(timeout * 1000)))

    def set_fn(self, member, cb):
        self.keep.append(cb)
        _lib.request_set_fn(self.ptr, member, _lib.fnptr(cb))

    def __del__(self):
        if self.ptr:
            _lib.request_free(self.ptr)
            self.ptr = None


def copy_source(chunks):
    """A COPY FROM source callback feeding the bytes of an iterable."""
    it = iter(chunks)

    def source(out, room, ud):
        for chunk in it:
            if isinstance(chunk, str):
                chunk = chunk.encode()
            if _lib.buf_append(out, chunk, len(chunk)) < 0:
                return -1002
            return _lib.PGW_COPY_MORE
        return _lib.PGW_COPY_END
    return _lib.COPY_SOURCE_CB(source)


def copy_sink(write):
    """A COPY TO callback handing each CopyData payload to write(bytes)."""
    def sink(data, n, ud):
        write(ctypes.string_at(data, n))
        return 0
    return _lib.COPY_DATA_CB(sink)


class Connection:
    """A blocking connection. Use as a context manager, or close()."""

    def __init__(self, conninfo=""):
        self._c = ctypes.c_void_p()
        err = ctypes.create_string_buffer(1024)
        rc = _lib.client_connect_err(ctypes.byref(self._c), conninfo.encode(), None, err,
                                     len(err))
        if rc < 0:
            raise Error(rc, err.value.decode(errors="replace"))

    def _run(self, req):
        res = ctypes.c_void_p()
        status = _lib.client_run(self._c, req.ptr, ctypes.byref(res))
        refusal = None
        if status < 0 and not res.value:
            r = _lib.client_refusal(self._c)
            refusal = r.decode() if r else None
        return take_result(status, res.value, refusal)

    def execute(self, sql, *args, timeout=None):
        """Run one statement with parameters $1..$n (the extended protocol;
        without args and with several statements use simple()). timeout
        (seconds): the request's deadline; past it the library cancels it
        and TimeoutError is raised."""
        return self._run(Request(_lib.PGW_REQ_QUERY, sql, args, timeout))

    def fetch(self, sql, *args, timeout=None):
        return self.execute(sql, *args, timeout=timeout).rows

    def fetchval(self, sql, *args, timeout=None):
        r = self.execute(sql, *args, timeout=timeout).rows
        return r[0][0] if r else None

    def simple(self, sql, timeout=None):
        """Run a string of statements with the simple protocol (results in
        text); the last statement's Result."""
        return self._run(Request(_lib.PGW_REQ_SIMPLE, sql, (), timeout))

    def listen(self, channel):
        """LISTEN channel (used exactly as given: quoted as an identifier).
        Its notifications queue in the client (client.h: at most 4096, the
        oldest dropped and counted in the next one's missed) while any call
        runs; wait_notification() takes them."""
        rc = _lib.client_listen(self._c, channel.encode())
        if rc < 0:
            raise Error(rc, f"LISTEN {channel!r}")

    def unlisten(self, channel=None):
        """UNLISTEN channel (None: every channel)."""
        rc = _lib.client_unlisten(self._c, None if channel is None else channel.encode())
        if rc < 0:
            raise Error(rc, f"UNLISTEN {channel!r}")

    def wait_notification(self, timeout=None):
        """The oldest queued Notification, or the first to arrive within
        timeout seconds (None: no limit; 0: only what has arrived already);
        None when none did."""
        n = _lib.notification_new()
        if not n:
            raise MemoryError
        try:
            ms = -1 if timeout is None else int(timeout * 1000)
            rc = _lib.client_wait_notification(self._c, ms, n)
            if rc == _lib.PGW_ETIMEDOUT:
                return None
            if rc < 0:
                raise Error(rc, "waiting for a notification")
            length = ctypes.c_size_t()
            channel = ctypes.string_at(_lib.notification_channel(n, ctypes.byref(length)),
                                       length.value)
            payload = ctypes.string_at(_lib.notification_payload(n, ctypes.byref(length)),
                                       length.value)
            return Notification(_lib.notification_pid(n), channel.decode(errors="replace"),
                                payload.decode(errors="replace"), _lib.notification_missed(n))
        finally:
            _lib.notification_free(n)

    def copy_in(self, sql, chunks):
        """COPY ... FROM STDIN fed from an iterable of bytes or str; the
        number of rows copied."""
        req = Request(_lib.PGW_REQ_COPY, sql)
        req.set_fn(b"copy_source", copy_source(chunks))
        return self._run(req).rows_affected

    def copy_out(self, sql):
        """COPY ... TO STDOUT: all the data as bytes."""
        parts = []
        req = Request(_lib.PGW_REQ_COPY, sql)
        req.set_fn(b"on_copy_data", copy_sink(parts.append))
        self._run(req)
        return b"".join(parts)

    def cancel(self):
        """Ask the server to cancel what this connection runs (from any
        thread)."""
        rc = _lib.client_cancel(self._c)
        if rc < 0:
            raise Error(rc, "cancel")

    @property
    def backend_pid(self):
        return _lib.client_backend_pid(self._c)

    def close(self):
        if self._c:
            _lib.client_close(self._c)
            self._c = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def connect(conninfo=""):
    """A blocking Connection (libpq's connection string, environment and
    password file; TLS with sslmode=...)."""
    return Connection(conninfo)
