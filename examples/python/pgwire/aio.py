"""The asyncio path: the sans-IO session (session.h) driven by asyncio's
own loop. asyncio owns the socket and the timers; the library's TLS engine
(tls.h, pgw_tls_t) runs TLS over those bytes with libpq's sslmode rules;
the session owns the protocol.

    conn = await pgwire.connect_async("host=... dbname=...")
    a, b = await asyncio.gather(conn.fetchval("SELECT 1"), conn.fetchval("SELECT 2"))

Requests submitted in the same loop turn go out in one write and are
answered in order (pipelining), so asyncio.gather pipelines.
"""
import asyncio
import ctypes
import errno
import os
import socket

from . import _lib
from .blocking import Request, copy_sink, copy_source, take_result
from ._values import Notification, listen_sql
from .errors import Error, ServerError, read_error_fields

class _Wire(asyncio.Protocol):
    """The transport's side: bytes in go to the session (through tls when
    the attempt runs TLS), lost connections fail it. Until the session
    takes them, bytes in are queued for the negotiation (the answer to
    SSLRequest, the handshake), b"" marking the end."""

    def __init__(self):
        self.transport = None
        self.paused = False
        self.conn = None
        self.tls = None  # the _Tls carrying the session's bytes, or None
        self.early = asyncio.Queue()
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
        else:
            self.early.put_nowait(data)

    def connection_lost(self, exc):
        if not self.lost.done():
            self.lost.set_result(exc)
        self.early.put_nowait(b"")
        if self.conn is not None:
            self.conn._lost()


class _Tls:
    """The library's TLS engine (pgw_tls_t) for one server of a parsed
    connection string: libpq's sslmode rules, the handshake and its
    certificate checks, the records. This package only moves its bytes."""

    def __init__(self, ci, i):
        t = ctypes.c_void_p()
        err = ctypes.create_string_buffer(512)
        rc = _lib.tls_new(ctypes.byref(t), ci, i, None, err, len(err))
        if rc < 0:
            raise Error(rc, err.value.decode(errors="replace"))
        self.t = t.value
        self._plain = ctypes.create_string_buffer(65536)

    def free(self):
        if self.t:
            _lib.tls_free(self.t)
            self.t = None

    def error(self, rc):
        msg = _lib.tls_errmsg(self.t)
        return Error(rc, msg.decode(errors="replace") if msg else None)

    def output(self):
        """The ciphertext to send, taken out of the engine."""
        chunks, n = [], ctypes.c_size_t()
        while True:
            p = _lib.tls_output(self.t, ctypes.byref(n))
            if not p or not n.value:
                return b"".join(chunks)
            chunks.append(ctypes.string_at(p, n.value))
            _lib.tls_output_consumed(self.t, n.value)

    def feed(self, data, deliver=None):
        """Ciphertext from the socket (b"": its end). With deliver, the
        records it completes are decrypted and handed to it."""
        if not data:
            _lib.tls_input_eof(self.t)
        used, got, off = ctypes.c_size_t(), ctypes.c_size_t(), 0
        while True:
            if off < len(data):
                rc = _lib.tls_feed(self.t, data[off:], len(data) - off, ctypes.byref(used))
                if rc < 0:
                    raise self.error(rc)
                off += used.value
            if deliver is None:
                if off < len(data) and not used.value:
                    raise Error(-1006, "TLS input buffer full during the handshake")
                if off >= len(data):
                    return
                continue
            rc = _lib.tls_read(self.t, self._plain, len(self._plain), ctypes.byref(got))
            if rc == 0:
                deliver(self._plain.raw[:got.value])
            elif rc != _lib.PGW_EAGAIN:
                raise self.error(rc)
            elif off >= len(data):
                return
            elif not used.value:
                raise Error(-1006, "TLS input buffer full without a complete record")

    def encrypt(self, p, n):
        """Encrypt n bytes at address p, as many as fit; how many."""
        w = ctypes.c_size_t()
        rc = _lib.tls_write(self.t, p, n, ctypes.byref(w))
        if rc < 0:
            raise self.error(rc)
        return w.value

    def channel_binding(self):
        p, n = ctypes.c_void_p(), ctypes.c_size_t()
        if _lib.tls_channel_binding(self.t, ctypes.byref(p), ctypes.byref(n)) < 0:
            return None
        return ctypes.string_at(p, n.value)


class _Host:
    """One host of a parsed connection string, as the plan gives it (a
    pgw_host_t read through ffi.h's getters)."""

    def __init__(self, ci, h):
        err = _lib.host_error(h)
        self.error = err.decode() if err else None
        self.error_ends_connect = bool(_lib.host_error_ends_connect(h))
        self.name = (_lib.host_name(h) or b"").decode()
        addr = _lib.host_addr(h)
        self.addr = addr.decode() if addr else None
        self.port = _lib.host_port(h)
        self.path = None
        if _lib.host_is_unix(h) and not self.error:
            buf = ctypes.create_string_buffer(256)
            if _lib.host_socket_path(h, buf, len(buf)) > 0:
                self.path = buf.value.decode()
                if self.path.startswith("@"):
                    self.path = "\0" + self.path[1:]
        self.password = _lib.conninfo_password(ci, h)

    async def addresses(self):
        """The addresses to try in turn: the socket path, hostaddr, or what
        the name resolves to (in the resolver's order)."""
        if self.path:
            return [self.path]
        if self.addr:
            return [self.addr]
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(self.name, self.port, type=socket.SOCK_STREAM)
        return [info[4][0] for info in infos if info[0] in (socket.AF_INET, socket.AF_INET6)]

    def where(self, address):
        """libpq's words for one attempt's server, before "failed: ..."."""
        if self.path:
            return f'connection to server on socket "{self.path}"'
        if self.name and self.name != address:
            return f'connection to server at "{self.name}" ({address}), port {self.port}'
        return f'connection to server at "{address}", port {self.port}'


async def _open(host, address, tls, method):
    """A connected _Wire to one address of host for one attempt with method
    (the TLS engine's: plaintext, SSLRequest, direct TLS); wire.tls is set
    when the attempt runs TLS."""
    loop = asyncio.get_running_loop()
    wire = _Wire()
    if host.path:
        await loop.create_unix_connection(lambda: wire, host.path)
        return wire
    await loop.create_connection(lambda: wire, address, host.port)
    try:
        if method == _lib.PGW_TLS_START_PLAIN:
            return wire
        if method == _lib.PGW_TLS_START_REQUEST:
            buf = _lib.buf_new()
            try:
                _lib.enc_ssl_request(buf)
                wire.transport.write(_lib.buf_bytes(buf))
            finally:
                _lib.buf_delete(buf)
            answer = await wire.early.get()
            if not answer:
                raise Error(_lib.PGW_ECONNLOST, "server closed the connection unexpectedly")
            rc = _lib.tls_answer(tls.t, answer, len(answer))
            if rc == _lib.PGW_TLS_PLAINTEXT:
                return wire
            if rc != _lib.PGW_TLS_HANDSHAKE:
                e = tls.error(rc)
                e.ends_connect = True  # libpq tries no other host after it
                raise e
        while True:
            rc = _lib.tls_handshake(tls.t)
            out = tls.output()
            if out:
                wire.transport.write(out)
            if rc == 0:
                break
            if rc != _lib.PGW_EAGAIN:
                raise tls.error(rc)
            tls.feed(await wire.early.get())
        wire.tls = tls
        return wire
    except BaseException:
        wire.transport.close()
        raise


class AsyncConnection:
    """A connection whose requests are coroutines (see connect_async)."""

    def __init__(self):
        self._s = None
        self._wire = None
        self._ci = None         # the parsed connection string, for cancels
        self._host_index = 0
        self._address = None
        self._plan = None       # the multi-host plan, while connecting
        self._step = None       # the plan's step for a failed startup
        self._tls_engine = None
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
        """The library's multi-host plan (hostplan.h) decides which host
        and address come next, what a failure means for the others, and
        whether a server matches target_session_attrs; this does the I/O."""
        ci = ctypes.c_void_p()
        err = ctypes.create_string_buffer(512)
        rc = _lib.conninfo_parse(ctypes.byref(ci), conninfo.encode(), None, err, len(err))
        if rc < 0:
            raise Error(rc, err.value.decode(errors="replace"))
        plan, h = ctypes.c_void_p(), _lib.host_new()
        try:
            rc = _lib.hostplan_new(ctypes.byref(plan), ci, None)
            if rc < 0:
                raise Error(rc, "target_session_attrs or load_balance_hosts")
            self._plan = plan
            # connect_timeout bounds each attempt, as libpq's does (0, unset: none).
            timeout = int((_lib.conninfo_get(ci, b"connect_timeout") or b"0").decode() or 0)
            timeout = max(timeout, 2) if timeout > 0 else None
            failures = []
            while _lib.hostplan_next(plan, h) == 1:
                host = _Host(ci, h)
                if host.error:
                    failures.append(host.error)
                    if host.error_ends_connect:
                        break
                    continue
                if await self._try_host(ci, host, timeout, failures):
                    self._ci, ci = ci, None  # a cancel's TLS engine is made from it
                    return self
            raise Error(-1021, "\n".join(failures))
        finally:
            self._plan = None
            _lib.hostplan_free(plan)
            _lib.host_free(h)
            if ci:
                _lib.conninfo_free(ci)

    async def _try_host(self, ci, host, timeout, failures):
        """Each address of the plan's current host until one is accepted
        (True), or the plan moves on to the next host (False); a failure
        that ends the connect is raised."""
        plan, i = self._plan, _lib.hostplan_index(self._plan)
        try:
            addresses = await host.addresses()
        except OSError as e:
            failures.append(f'could not translate host name "{host.name}" to address: '
                            f"{e.strerror or e}")
            return False
        for address in addresses:
            try:
                await asyncio.wait_for(self._attempts(ci, i, host, address), timeout)
            except (OSError, Error, asyncio.TimeoutError) as e:
                if getattr(e, "ends_connect", False):
                    raise  # a refused SSLRequest (tls.h): libpq tries no other host
                step = self._step
                if step is None:
                    code = (_lib.PGW_ETIMEDOUT if isinstance(e, asyncio.TimeoutError) else
                            -(e.errno or errno.EIO) if isinstance(e, OSError) else e.code)
                    step = _lib.hostplan_failed(plan, code, None)
                if step == _lib.PGW_HOSTPLAN_END:
                    raise  # e.g. the server refused the login: no other host is tried
                text = ("timeout expired" if isinstance(e, asyncio.TimeoutError) else
                        os.strerror(e.errno) if isinstance(e, OSError) and e.errno else e)
                failures.append(f"{host.where(address)} failed: {text}")
                if step == _lib.PGW_HOSTPLAN_NEXT_HOST:
                    return False
                continue
            step = _lib.hostplan_check(plan, self._s)
            if step == _lib.PGW_HOSTPLAN_PROBE:
                step = await self._probe(plan)
            if step == _lib.PGW_HOSTPLAN_ACCEPT:
                self._host, self._host_index, self._address = host, i, address
                return True
            reason = _lib.hostplan_reason(plan)
            reason = reason.decode() if reason else "could not check target_session_attrs"
            failures.append(f"{host.where(address)} failed: {reason}")
            await self._leave()
            return False
        return False

    async def _probe(self, plan):
        """Ask an older server what target_session_attrs needs to know."""
        try:
            v = await self._fetchval_text(_lib.hostplan_probe_sql(plan).decode())
        except (OSError, Error):
            v = None
        data = v.encode() if v is not None else None
        return _lib.hostplan_probe_answer(plan, data, len(data) if data else 0)

    async def _fetchval_text(self, sql):
        """The first value of a simple query's result, as the server's text
        (None for NULL or no row)."""
        v = await self._submit(Request(_lib.PGW_REQ_SIMPLE, sql, (), None))
        rows = v.rows if v is not None else None
        if not rows:
            return None
        v = rows[0][0]
        if isinstance(v, bool):
            return "t" if v else "f"
        return None if v is None else str(v)

    async def _leave(self):
        """Close a server the plan rejected, and what the attempt holds."""
        if self._s:
            _lib.session_terminate(self._s)
            self._flush()
        wire = self._wire
        self._close_now()
        if wire:
            await wire.lost
        if self._tls_engine:
            self._tls_engine.free()
            self._tls_engine = None

    async def _attempts(self, ci, i, host, address):
        """Log in to one server as libpq does: each method the TLS engine
        names (sslmode's order: prefer goes on in plaintext after a refused
        TLS login, allow tries TLS after a refused plaintext one), each on a
        new socket."""
        tls = _Tls(ci, i)
        method = _lib.tls_start(tls.t)
        try:
            while True:
                try:
                    await self._attempt(ci, host, address, tls, method)
                    self._tls_engine, tls = tls, None
                    return
                except (OSError, Error):
                    self._close_now()
                    method = _lib.tls_next_method(tls.t, method)
                    if method == _lib.PGW_TLS_START_NONE:
                        raise
        finally:
            if tls:
                tls.free()

    async def _attempt(self, ci, host, address, tls, method):
        self._step = None
        self._wire = await _open(host, address, tls, method)
        self._cb_data = tls.channel_binding() if self._wire.tls else None
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
            if self._wire.tls:  # sslcertmode=require, once logged in (libpq)
                rc = _lib.tls_check_certificate(tls.t)
                if rc < 0:
                    raise tls.error(rc)
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
            if self._plan:  # what the failure means for the other hosts
                self._step = _lib.hostplan_failed(self._plan, status, err)
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
        tls = self._wire.tls
        if tls is None:
            self._deliver(data)
        else:
            try:
                tls.feed(data, self._deliver)
            except Error as e:
                if self._s:
                    _lib.session_fail(self._s, e.code)
        self._flush()

    def _deliver(self, data):
        if not self._s:
            return
        rc = _lib.session_recv(self._s, data, len(data))
        if rc < 0 and self._s:
            _lib.session_fail(self._s, rc)

    def _lost(self):
        if self._s:
            _lib.session_fail(self._s, _lib.PGW_ECONNLOST)

    def _flush(self):
        """Write what the session has for the server; let a COPY FROM's
        source fill the room, and write again."""
        self._flush_scheduled = False
        wire = self._wire
        s, transport = self._s, wire.transport if wire else None
        tls = wire.tls if wire else None
        n = ctypes.c_size_t()
        while s and transport and not transport.is_closing() and not wire.paused:
            if tls is not None:  # what reading left (a key update's answer), then ours
                out = tls.output()
                if out:
                    transport.write(out)  # may pause_writing
                    continue
            p = _lib.session_pending_output(s, ctypes.byref(n))
            if not n.value:
                if _lib.session_copy_pump(s) <= 0:
                    p = _lib.session_pending_output(s, ctypes.byref(n))
                    if not n.value:
                        return
                else:
                    continue
            if tls is None:
                transport.write(ctypes.string_at(p, n.value))  # may pause_writing
                _lib.session_consumed_output(s, n.value)
                continue
            try:
                _lib.session_consumed_output(s, tls.encrypt(p, n.value))
            except Error as e:
                _lib.session_fail(s, e.code)
                return

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
        tls, method = None, _lib.PGW_TLS_START_PLAIN
        if self._wire and self._wire.tls:
            # Over TLS as the connection is: its method of the engine
            # (allow's comes second, after plaintext).
            tls = _Tls(self._ci, self._host_index)
            method = _lib.tls_start(tls.t)
            if method == _lib.PGW_TLS_START_PLAIN:
                method = _lib.tls_next_method(tls.t, method)
        try:
            wire = await _open(self._host, self._address, tls, method)
            if tls is not None and wire.tls is None:
                wire.transport.close()
                raise Error(-1022, "cancel: the server refused TLS")
            if wire.tls is None:
                wire.transport.write(message)
            else:
                buf = ctypes.create_string_buffer(message, len(message))
                done = 0
                while done < len(message):
                    done += tls.encrypt(ctypes.addressof(buf) + done, len(message) - done)
                    wire.transport.write(tls.output())
            await wire.lost
        finally:
            if tls is not None:
                tls.free()

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

    def _release(self):
        """The TLS engine and the parsed connection string, once closed."""
        if self._tls_engine:
            self._tls_engine.free()
            self._tls_engine = None
        if self._ci:
            _lib.conninfo_free(self._ci)
            self._ci = None

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
        self._release()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()


def _timeout_of(req):
    return req.timeout or 0


async def connect_async(conninfo=""):
    """An AsyncConnection: the connection string as libpq reads it (and the
    environment, the password file), its hosts tried as libpq tries them
    (hostplan.h: load_balance_hosts, target_session_attrs); TLS as
    sslmode says, by the library's TLS engine (pgw_tls_t) over asyncio's
    socket."""
    conn = AsyncConnection()
    return await conn._connect(conninfo)
