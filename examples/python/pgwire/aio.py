"""The asyncio path: the sans-IO session (session.h) driven by asyncio's
own loop. asyncio owns the socket, the timers and TLS (the ssl module,
after the SSLRequest exchange); the session owns the protocol.

    conn = await pgwire.connect_async("host=... dbname=...")
    a, b = await asyncio.gather(conn.fetchval("SELECT 1"), conn.fetchval("SELECT 2"))

Requests submitted in the same loop turn go out in one write and are
answered in order (pipelining), so asyncio.gather pipelines.
"""
import asyncio
import ctypes
import hashlib
import os
import ssl

from . import _lib
from .blocking import Request, copy_sink, copy_source, take_result
from ._values import Notification, listen_sql
from .errors import Error, ServerError, read_error_fields

_SSL_YES = b"S"


class _Wire(asyncio.Protocol):
    """The transport's side: bytes in go to the session, lost connections
    fail it. Before the session starts it also answers the SSLRequest."""

    def __init__(self):
        self.transport = None
        self.paused = False
        self.conn = None
        self.first_byte = None  # a future while the SSLRequest is answered
        self.lost = asyncio.get_running_loop().create_future()

    def connection_made(self, transport):
        self.transport = transport
        self.paused = False

    # The transport's buffer passed its high-water mark: the session keeps
    # its output (and a COPY source is not pulled) until it drains.
    def pause_writing(self):
        self.paused = True

    def resume_writing(self):
        self.paused = False
        if self.conn is not None:
            self.conn._flush()

    def data_received(self, data):
        if self.conn is not None:
            self.conn._received(data)
        elif self.first_byte is not None and not self.first_byte.done():
            self.first_byte.set_result(data)

    def connection_lost(self, exc):
        if not self.lost.done():
            self.lost.set_result(exc)
        if self.first_byte is not None and not self.first_byte.done():
            self.first_byte.set_exception(ConnectionError("connection closed by the server"))
        if self.conn is not None:
            self.conn._lost()


def _ssl_context(ci, sslmode):
    def opt(name):
        v = _lib.conninfo_get(ci, name.encode())
        return v.decode() if v else ""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = sslmode == "verify-full"
    rootcert = opt("sslrootcert")
    if sslmode in ("verify-ca", "verify-full") or (sslmode == "require" and rootcert):
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(rootcert or os.path.expanduser("~/.postgresql/root.crt"))
    else:
        ctx.verify_mode = ssl.CERT_NONE
    cert, key = opt("sslcert"), opt("sslkey")
    if cert and os.path.exists(cert):
        ctx.load_cert_chain(cert, key or None)
    return ctx


def _der_items(der, pos):
    """(tag, start of content, end of content) of the DER item at pos."""
    tag, n = der[pos], der[pos + 1]
    pos += 2
    if n & 0x80:
        k = n & 0x7F
        n = int.from_bytes(der[pos:pos + k], "big")
        pos += k
    return tag, pos, pos + n


# Signature algorithms whose hash is not SHA-256 for tls-server-end-point
# (RFC 5929: MD5 and SHA-1 become SHA-256; the others keep their hash).
_SIG_HASH = {
    bytes.fromhex("2a864886f70d01010c"): "sha384", bytes.fromhex("2a864886f70d01010d"): "sha512",
    bytes.fromhex("2a8648ce3d040303"): "sha384", bytes.fromhex("2a8648ce3d040304"): "sha512",
}


def tls_server_end_point(der):
    """SCRAM-SHA-256-PLUS's channel binding data for a certificate."""
    _, pos, _ = _der_items(der, 0)           # Certificate SEQUENCE
    _, _, tbs_end = _der_items(der, pos)      # tbsCertificate
    _, alg, _ = _der_items(der, tbs_end)      # signatureAlgorithm SEQUENCE
    _, oid_start, oid_end = _der_items(der, alg)
    name = _SIG_HASH.get(bytes(der[oid_start:oid_end]), "sha256")
    return hashlib.new(name, der).digest()


class _Host:
    """One host of a parsed connection string (pgw_conninfo_host through
    pgw_host_new and its getters)."""

    def __init__(self, ci, i):
        h = _lib.host_new()
        try:
            _lib.conninfo_host(ci, i, h)
            err = _lib.host_error(h)
            self.error = err.decode() if err else None
            self.name = (_lib.host_name(h) or b"").decode()
            addr = _lib.host_addr(h)
            self.addr = addr.decode() if addr else None
            self.port = _lib.host_port(h)
            self.path = None
            if _lib.host_is_unix(h):
                buf = ctypes.create_string_buffer(256)
                if _lib.host_socket_path(h, buf, len(buf)) > 0:
                    self.path = buf.value.decode()
                    if self.path.startswith("@"):
                        self.path = "\0" + self.path[1:]
            password = _lib.conninfo_password(ci, h)
            self.password = password
        finally:
            _lib.host_free(h)


async def _open(host, ci, sslmode):
    """A connected _Wire to host, TLS negotiated as sslmode says; whether
    it is TLS."""
    loop = asyncio.get_running_loop()
    wire = _Wire()
    if host.path:
        await loop.create_unix_connection(lambda: wire, host.path)
        return wire, False
    await loop.create_connection(lambda: wire, host.addr or host.name, host.port)
    if sslmode in ("disable", "allow"):
        return wire, False
    buf = _lib.buf_new()
    try:
        _lib.enc_ssl_request(buf)
        request = _lib.buf_bytes(buf)
    finally:
        _lib.buf_delete(buf)
    wire.first_byte = loop.create_future()
    wire.transport.write(request)
    answer = await wire.first_byte
    wire.first_byte = None
    if answer[:1] == _SSL_YES and len(answer) == 1:
        wire.transport = await loop.start_tls(
            wire.transport, wire, _ssl_context(ci, sslmode),
            server_hostname=host.name if host.name and not host.path else None)
        return wire, True
    if answer[:1] != b"N" or len(answer) != 1:
        wire.transport.close()
        raise Error(-1006, "bad answer to SSLRequest")
    if sslmode != "prefer":
        wire.transport.close()
        raise Error(-1022, "server does not support SSL, but SSL was required")
    return wire, False


class AsyncConnection:
    """A connection whose requests are coroutines (see connect_async)."""

    def __init__(self):
        self._s = None
        self._wire = None
        self._tls = False
        self._pending = {}      # ud -> [future, keep-alive objects, timer]
        self._next_ud = 1
        self._flush_scheduled = False
        self._deadline_ticket = None
        self._startup = None
        self._host = None
        self._ci_for_cancel = None
        self._cb_data = None
        self._cancels = set()
        loop = asyncio.get_running_loop()
        self._loop = loop
        # One callback object of each kind per connection, kept alive here.
        self._on_result = _lib.RESULT_CB(self._result_cb)
        self._on_startup = _lib.STARTUP_CB(self._startup_cb)
        self._on_want_write = _lib.WANT_WRITE_CB(self._want_write_cb)
        self._on_broken = _lib.BROKEN_CB(self._broken_cb)
        self._on_deadline = _lib.DEADLINE_CB(self._deadline_cb)
        self._channel_binding = _lib.CHANNEL_BINDING_CB(self._channel_binding_cb)
        self._on_notification = _lib.NOTIFICATION_CB(self._notification_cb)
        self._notifications = asyncio.Queue()

    # ------------------------------------------------------------ connect

    async def _connect(self, conninfo):
        ci = ctypes.c_void_p()
        err = ctypes.create_string_buffer(512)
        rc = _lib.conninfo_parse(ctypes.byref(ci), conninfo.encode(), None, err, len(err))
        if rc < 0:
            raise Error(rc, err.value.decode(errors="replace"))
        try:
            sslmode = (_lib.conninfo_get(ci, b"sslmode") or b"prefer").decode()
            # connect_timeout bounds each attempt, as libpq's does (0, unset: none).
            timeout = int((_lib.conninfo_get(ci, b"connect_timeout") or b"0").decode() or 0)
            timeout = max(timeout, 2) if timeout > 0 else None
            failures = []
            for i in range(_lib.conninfo_nhosts(ci)):
                host = _Host(ci, i)
                if host.error:
                    failures.append(host.error)
                    continue
                try:
                    await asyncio.wait_for(self._attempt(ci, host, sslmode), timeout)
                    self._host, self._sslmode = host, sslmode
                    self._ssl_ctx = _ssl_context(ci, sslmode) if self._tls else None
                    return self
                except ServerError:
                    raise  # the server said no: as libpq, no other host is tried
                except (OSError, Error, asyncio.TimeoutError) as e:
                    if isinstance(e, asyncio.TimeoutError):
                        e = "timeout expired"
                    where = host.path or f"{host.addr or host.name}, port {host.port}"
                    failures.append(f'connection to server at "{where}" failed: {e}')
            raise Error(-1021, "\n".join(failures))
        finally:
            _lib.conninfo_free(ci)

    async def _attempt(self, ci, host, sslmode):
        self._wire, self._tls = await _open(host, ci, sslmode)
        if self._tls:
            der = self._wire.transport.get_extra_info("ssl_object").getpeercert(True)
            self._cb_data = tls_server_end_point(der) if der else None
        pairs = (ctypes.c_void_p * 32)()
        n = _lib.conninfo_startup_params(ci, pairs, 16)
        if n < 0:
            raise Error(n, "startup parameters")
        cfg = _lib.session_config_new()
        try:
            _lib.session_config_set_ptr(cfg, b"startup_params", pairs)
            _lib.session_config_set_uint(cfg, b"nstartup_params", n)
            _lib.session_config_set_ptr(cfg, b"password", host.password)
            keep = []  # what the config points to, until pgw_session_new copies it
            for opt in (b"require_auth", b"channel_binding"):
                keep.append(_lib.conninfo_get(ci, opt))
                _lib.session_config_set_ptr(cfg, opt, keep[-1])
            for member, cb in ((b"cb.on_startup", self._on_startup),
                               (b"cb.on_want_write", self._on_want_write),
                               (b"cb.on_broken", self._on_broken),
                               (b"cb.on_deadline", self._on_deadline),
                               (b"cb.channel_binding", self._channel_binding),
                               (b"cb.on_notification", self._on_notification)):
                _lib.session_config_set_fn(cfg, member, _lib.fnptr(cb))
            s = ctypes.c_void_p()
            rc = _lib.session_new(ctypes.byref(s), cfg)
        finally:
            _lib.session_config_free(cfg)
        if rc < 0:
            self._wire.transport.close()
            raise Error(rc, "session")
        self._s = s.value
        self._startup = self._loop.create_future()
        self._wire.conn = self
        _lib.session_start(self._s)
        self._flush()
        try:
            await self._startup
        except BaseException:
            self._close_now()
            raise

    # ---------------------------------------------- callbacks from the session

    def _startup_cb(self, s, status, err, ud):
        if self._startup.done():
            return
        if status < 0:
            exc = (ServerError(status, read_error_fields(err)) if err and
                   _lib.error_field(err, b"C") else
                   Error(status, _lib.error_field(err, b"M").decode() if err and
                         _lib.error_field(err, b"M") else None))
            self._startup.set_exception(exc)
        else:
            self._startup.set_result(None)

    def _want_write_cb(self, s, ud):
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)

    def _broken_cb(self, s, err, ud):
        if self._startup is not None and not self._startup.done():
            self._startup.set_exception(Error(err))
        if self._wire and self._wire.transport:
            self._wire.transport.close()

    def _deadline_cb(self, s, ticket, timeout_ms, ud):
        self._deadline_ticket = ticket

    def _channel_binding_cb(self, s, data, length, ud):
        if not self._cb_data:
            return -1
        data[0] = ctypes.cast(ctypes.c_char_p(self._cb_data), ctypes.c_void_p)
        length[0] = len(self._cb_data)
        return 0

    def _notification_cb(self, s, pid, channel, payload, ud):
        self._notifications.put_nowait(Notification(
            pid, channel.bytes().decode(errors="replace"),
            payload.bytes().decode(errors="replace"), 0))

    def _result_cb(self, status, res, ud):
        entry = self._pending.pop(ud, None)
        if entry is None:
            _lib.result_free(res)
            return
        fut, _keep, timer = entry
        if timer is not None:
            timer.cancel()
        if fut.done():
            _lib.result_free(res)
            return
        try:
            fut.set_result(take_result(status, res))
        except Exception as e:  # noqa: the request's failure, for its awaiter
            fut.set_exception(e)

    # ------------------------------------------------------------ the wire

    def _received(self, data):
        if not self._s:
            return
        rc = _lib.session_recv(self._s, data, len(data))
        if rc < 0 and self._s:
            _lib.session_fail(self._s, rc)
        self._flush()

    def _lost(self):
        if self._s:
            _lib.session_fail(self._s, _lib.PGW_ECONNLOST)

    def _flush(self):
        """Write what the session has for the server; let a COPY FROM's
        source fill the room, and write again."""
        self._flush_scheduled = False
        wire = self._wire
        s, transport = self._s, wire.transport if wire else None
        n = ctypes.c_size_t()
        while s and transport and not transport.is_closing() and not wire.paused:
            p = _lib.session_pending_output(s, ctypes.byref(n))
            if not n.value:
                if _lib.session_copy_pump(s) <= 0:
                    p = _lib.session_pending_output(s, ctypes.byref(n))
                    if not n.value:
                        return
                else:
                    continue
            transport.write(ctypes.string_at(p, n.value))  # may pause_writing
            _lib.session_consumed_output(s, n.value)

    # ------------------------------------------------------------- requests

    def _submit(self, req, keep=()):
        if not self._s:
            raise Error(-1019)
        ud = self._next_ud
        self._next_ud += 1
        _lib.request_set_fn(req.ptr, b"on_result", _lib.fnptr(self._on_result))
        _lib.request_set_ptr(req.ptr, b"ud", ud)
        fut = self._loop.create_future()
        entry = [fut, (req, keep), None]
        self._pending[ud] = entry
        self._deadline_ticket = None
        rc = _lib.session_submit(self._s, req.ptr)
        if rc < 0:
            self._pending.pop(ud, None)
            raise Error(rc, "submit")
        if self._deadline_ticket is not None and ud in self._pending:
            entry[2] = self._loop.call_later(_timeout_of(req), self._expire,
                                             self._deadline_ticket)
        return fut

    def _expire(self, ticket):
        if self._s and _lib.session_expire(self._s, ticket, 0) == 1:
            self._spawn_cancel()
        self._flush()

    async def execute(self, sql, *args, timeout=None):
        """Run one statement with parameters $1..$n; its Result. timeout
        (seconds): the deadline, past which the request is cancelled and
        TimeoutError raised."""
        req = Request(_lib.PGW_REQ_QUERY, sql, args, timeout)
        return await self._submit(req)

    async def fetch(self, sql, *args, timeout=None):
        return (await self.execute(sql, *args, timeout=timeout)).rows

    async def fetchval(self, sql, *args, timeout=None):
        rows = (await self.execute(sql, *args, timeout=timeout)).rows
        return rows[0][0] if rows else None

    async def simple(self, sql, timeout=None):
        req = Request(_lib.PGW_REQ_SIMPLE, sql, (), timeout)
        return await self._submit(req)

    async def copy_in(self, sql, chunks):
        """COPY ... FROM STDIN from an iterable of bytes or str; the rows
        copied."""
        req = Request(_lib.PGW_REQ_COPY, sql)
        req.set_fn(b"copy_source", copy_source(chunks))
        fut = self._submit(req)
        self._flush()
        return (await fut).rows_affected

    async def copy_out(self, sql):
        """COPY ... TO STDOUT: the data as bytes."""
        parts = []
        req = Request(_lib.PGW_REQ_COPY, sql)
        req.set_fn(b"on_copy_data", copy_sink(parts.append))
        await self._submit(req)
        return b"".join(parts)

    # --------------------------------------------------------- LISTEN/NOTIFY

    async def listen(self, channel):
        """LISTEN channel (used exactly as given: quoted as an identifier).
        From then on its notifications queue in the connection until
        notification() takes them (the queue has no bound: unlisten() a
        channel nobody reads)."""
        await self.simple(listen_sql(channel))

    async def unlisten(self, channel=None):
        """UNLISTEN channel (None: every channel)."""
        await self.simple(listen_sql(channel, unlisten=True))

    async def notification(self, timeout=None):
        """The oldest queued Notification, waiting up to timeout seconds
        (None: no limit; 0: only what has arrived) for one; None when none
        arrived in time."""
        if not self._notifications.empty() or (timeout is not None and timeout <= 0):
            try:
                return self._notifications.get_nowait()
            except asyncio.QueueEmpty:
                return None
        try:
            return await asyncio.wait_for(self._notifications.get(), timeout)
        except asyncio.TimeoutError:
            return None

    # --------------------------------------------------------------- cancel

    def _cancel_bytes(self):
        pid, key, klen = ctypes.c_int32(), ctypes.c_void_p(), ctypes.c_size_t()
        rc = _lib.session_backend_key(self._s, ctypes.byref(pid), ctypes.byref(key),
                                      ctypes.byref(klen))
        if rc < 0:
            raise Error(rc, "no backend key")
        buf = _lib.buf_new()
        try:
            _lib.enc_cancel_request(buf, pid.value, key, klen.value)
            return _lib.buf_bytes(buf)
        finally:
            _lib.buf_delete(buf)

    async def cancel(self):
        """Ask the server to cancel what this connection runs, on a new
        connection to the same server (over TLS when this one is), and wait
        until the server has closed it."""
        message = self._cancel_bytes()
        loop = asyncio.get_running_loop()
        wire = _Wire()
        host = self._host
        if host.path:
            await loop.create_unix_connection(lambda: wire, host.path)
        else:
            await loop.create_connection(lambda: wire, host.addr or host.name, host.port)
            if self._tls:
                buf = _lib.buf_new()
                _lib.enc_ssl_request(buf)
                request = _lib.buf_bytes(buf)
                _lib.buf_delete(buf)
                wire.first_byte = loop.create_future()
                wire.transport.write(request)
                if (await wire.first_byte)[:1] != _SSL_YES:
                    wire.transport.close()
                    raise Error(-1022, "cancel: the server refused TLS")
                wire.first_byte = None
                wire.transport = await loop.start_tls(
                    wire.transport, wire, self._ssl_ctx,
                    server_hostname=host.name or None)
        wire.transport.write(message)
        await wire.lost

    def _spawn_cancel(self):
        task = self._loop.create_task(self.cancel())
        self._cancels.add(task)
        task.add_done_callback(self._cancels.discard)

    # ---------------------------------------------------------------- close

    @property
    def backend_pid(self):
        return _lib.session_backend_pid(self._s)

    def _close_now(self):
        s, self._s = self._s, None
        if s:
            _lib.session_free(s)  # pending requests complete with PGW_ECANCELED
        if self._wire and self._wire.transport:
            self._wire.transport.close()

    async def close(self):
        """Send Terminate, close the socket, free the session."""
        if self._s:
            _lib.session_terminate(self._s)
            self._flush()
        self._close_now()
        if self._wire:
            await self._wire.lost
        if self._cancels:
            await asyncio.gather(*self._cancels, return_exceptions=True)

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()


def _timeout_of(req):
    return req.timeout or 0


async def connect_async(conninfo=""):
    """An AsyncConnection: the connection string as libpq reads it (and the
    environment, the password file), its hosts tried in order; TLS with
    sslmode, done by asyncio's ssl support."""
    conn = AsyncConnection()
    return await conn._connect(conninfo)
