"""Python values to parameters, and result cells to Python values.

Parameters go through the pgw_params_set_* functions (ffi.h). Result cells
arrive in the binary format for the types the library reads in binary
(pgw_result_cells gives every cell's bytes in one call) and are turned into Python objects
here; a type without a decoder below is read as the server's text with
pgw_result_value_cstr.
"""
import array
import collections
import ctypes
import datetime
import decimal
import struct
import sys
import uuid

from . import _lib
from .errors import Error

PG_EPOCH = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
PG_EPOCH_NAIVE = datetime.datetime(2000, 1, 1)
PG_EPOCH_DATE = datetime.date(2000, 1, 1).toordinal()
UTC = datetime.timezone.utc
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_INFINITY = {_I64_MAX: "infinity", _I64_MIN: "-infinity"}

OID_BOOL, OID_BYTEA, OID_INT8, OID_INT2, OID_INT4, OID_TEXT = 16, 17, 20, 21, 23, 25
OID_FLOAT4, OID_FLOAT8, OID_NUMERIC = 700, 701, 1700
OID_DATE, OID_TIME, OID_TIMESTAMP, OID_TIMESTAMPTZ, OID_TIMETZ = 1082, 1083, 1114, 1184, 1266
OID_UUID, OID_JSON, OID_JSONB, OID_VARCHAR, OID_BPCHAR, OID_NAME = 2950, 114, 3802, 1043, 1042, 19
OID_OID, OID_INTERVAL, OID_VOID = 26, 1186, 2278

class Notification(collections.namedtuple("Notification", "pid channel payload missed")):
    """A NOTIFY: the sending backend's pid, the channel and payload (str),
    and how many notifications were dropped just before this one (the
    blocking client's queue was full; always 0 on the asyncio path)."""
    __slots__ = ()


def listen_sql(channel, unlisten=False):
    """LISTEN "channel" / UNLISTEN "channel" (None: UNLISTEN *), quoted by
    the library (pgw_listen_sql)."""
    out = ctypes.c_void_p()
    rc = _lib.listen_sql(None, None if channel is None else channel.encode(), int(unlisten),
                         ctypes.byref(out))
    if rc < 0:
        raise Error(rc, f"channel {channel!r}")
    try:
        return ctypes.string_at(out).decode()
    finally:
        _lib.escape_free(None, out)


# ------------------------------------------------------------ parameters


def _usec(td):
    return (td.days * 86400 + td.seconds) * 1000000 + td.microseconds


def _array_literal(items):
    def one(v):
        if v is None:
            return "NULL"
        if isinstance(v, (list, tuple)):
            return _array_literal(v)
        if isinstance(v, bool):
            return "t" if v else "f"
        if isinstance(v, bytes):
            v = "\\x" + v.hex()
        s = str(v)
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return "{" + ",".join(one(v) for v in items) + "}"


def set_param(ps, i, v):
    """Parameter i of the list ps from the Python value v."""
    if v is None:
        rc = _lib.params_set_null(ps, i, 0)
    elif isinstance(v, bool):
        rc = _lib.params_set_bool(ps, i, v)
    elif isinstance(v, int):
        if _I64_MIN <= v <= _I64_MAX:
            rc = _lib.params_set_int8(ps, i, v)
        else:
            rc = _lib.params_set_numeric_str(ps, i, str(v).encode())
    elif isinstance(v, float):
        rc = _lib.params_set_float8(ps, i, v)
    elif isinstance(v, decimal.Decimal):
        rc = _lib.params_set_numeric_str(ps, i, str(v).encode())
    elif isinstance(v, str):
        rc = _lib.params_set_text(ps, i, v.encode())
    elif isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)
        rc = _lib.params_set_bytea(ps, i, b, len(b))
    elif isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            rc = _lib.params_set_timestamptz(ps, i, _usec(v - PG_EPOCH))
        else:
            rc = _lib.params_set_timestamp(ps, i, _usec(v - PG_EPOCH_NAIVE))
    elif isinstance(v, datetime.date):
        rc = _lib.params_set_date(ps, i, v.toordinal() - PG_EPOCH_DATE)
    elif isinstance(v, datetime.time):
        if v.tzinfo is not None:
            rc = _lib.params_set_text_typed(ps, i, v.isoformat().encode(), -1, OID_TIMETZ)
        else:
            rc = _lib.params_set_time(ps, i, ((v.hour * 60 + v.minute) * 60 + v.second)
                                      * 1000000 + v.microsecond)
    elif isinstance(v, datetime.timedelta):
        rc = _lib.params_set_text_typed(ps, i, f"{_usec(v)} microseconds".encode(), -1,
                                        OID_INTERVAL)
    elif isinstance(v, uuid.UUID):
        rc = _lib.params_set_text_typed(ps, i, str(v).encode(), -1, OID_UUID)
    elif isinstance(v, (list, tuple)):
        # An array literal of unknown type: the statement says which ($1::int[]).
        rc = _lib.params_set_text(ps, i, _array_literal(v).encode())
    else:
        raise TypeError(f"parameter {i + 1}: cannot send a {type(v).__name__}")
    if rc < 0:
        raise Error(rc, f"parameter {i + 1}")


class Params:
    """A pgw_params_t made from a sequence of Python values; freed with the
    object (it must live until the submit that uses it returns)."""
    __slots__ = ("ptr",)

    def __init__(self, values):
        self.ptr = None
        if not values:
            return
        self.ptr = _lib.params_new(len(values))
        if not self.ptr:
            raise MemoryError
        for i, v in enumerate(values):
            set_param(self.ptr, i, v)

    def __del__(self):
        if self.ptr:
            _lib.params_free(self.ptr)
            self.ptr = None


# ---------------------------------------------------------------- results

_unpack_h, _unpack_i, _unpack_q = struct.Struct("!h").unpack, struct.Struct("!i").unpack, \
    struct.Struct("!q").unpack
_unpack_f, _unpack_d = struct.Struct("!f").unpack, struct.Struct("!d").unpack


def _numeric(b):
    ndigits, weight, sign, dscale = struct.unpack_from("!hhHH", b)
    if sign == 0xC000:
        return decimal.Decimal("NaN")
    if sign == 0xD000:
        return decimal.Decimal("Infinity")
    if sign == 0xF000:
        return decimal.Decimal("-Infinity")
    digits = struct.unpack_from(f"!{ndigits}H", b, 8)
    text = "".join(f"{d:04d}" for d in digits) or "0"
    # digits are base 10000, the first one at 10000**weight.
    exp = (weight - ndigits + 1) * 4
    value = decimal.Decimal((1 if sign == 0x4000 else 0, tuple(map(int, text)), exp))
    ctx = decimal.Context(prec=4 * (ndigits + abs(weight) + 2) + dscale)
    return value.quantize(decimal.Decimal((0, (1,), -dscale)), context=ctx)


def _timestamptz(b):
    v = _unpack_q(b)[0]
    if v in _INFINITY:
        return _INFINITY[v]
    return PG_EPOCH + datetime.timedelta(microseconds=v)


def _timestamp(b):
    v = _unpack_q(b)[0]
    if v in _INFINITY:
        return _INFINITY[v]
    return PG_EPOCH_NAIVE + datetime.timedelta(microseconds=v)


def _date(b):
    v = _unpack_i(b)[0]
    if v in (0x7FFFFFFF, -0x80000000):
        return "infinity" if v > 0 else "-infinity"
    return datetime.date.fromordinal(v + PG_EPOCH_DATE)


def _time_of(usec):
    s, us = divmod(usec, 1000000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return h, m, s, us


def _time(b):
    h, m, s, us = _time_of(_unpack_q(b)[0])
    return datetime.time(h % 24, m, s, us)


def _timetz(b):
    usec, zone = struct.unpack("!qi", b)
    h, m, s, us = _time_of(usec)
    # The protocol's zone is seconds WEST of UTC.
    return datetime.time(h % 24, m, s, us,
                         tzinfo=datetime.timezone(datetime.timedelta(seconds=-zone)))


def _interval(b):
    usec, days, months = struct.unpack("!qii", b)
    if months:
        return None  # not a timedelta: read as text
    return datetime.timedelta(days=days, microseconds=usec)


def _text(b):
    return str(b, "utf-8")


BINARY = {
    OID_BOOL: lambda b: b == b"\x01",
    OID_INT2: lambda b: _unpack_h(b)[0],
    OID_INT4: lambda b: _unpack_i(b)[0],
    OID_INT8: lambda b: _unpack_q(b)[0],
    OID_OID: lambda b: struct.unpack("!I", b)[0],
    OID_FLOAT4: lambda b: _unpack_f(b)[0],
    OID_FLOAT8: lambda b: _unpack_d(b)[0],
    OID_NUMERIC: _numeric,
    OID_BYTEA: bytes,
    OID_TEXT: _text, OID_VARCHAR: _text, OID_BPCHAR: _text, OID_NAME: _text, OID_JSON: _text,
    OID_JSONB: lambda b: str(b[1:], "utf-8"),
    OID_DATE: _date,
    OID_TIME: _time,
    OID_TIMETZ: _timetz,
    OID_TIMESTAMP: _timestamp,
    OID_TIMESTAMPTZ: _timestamptz,
    OID_INTERVAL: _interval,
    OID_UUID: lambda b: uuid.UUID(bytes=bytes(b)),
}


def _array(b):
    """A binary array (any dimensions) as nested lists, or None when an
    element type has no decoder here."""
    ndim, _flags, elem = struct.unpack_from("!iiI", b)
    dec = BINARY.get(elem)
    if dec is None:
        return None
    if ndim == 0:
        return []
    dims = [struct.unpack_from("!ii", b, 12 + 8 * d)[0] for d in range(ndim)]
    pos = 12 + 8 * ndim
    count = _product(dims)
    width = _FIXED.get(elem)
    if width and len(b) - pos == count * (4 + width[0]):
        # No NULL element: (length, value) pairs read in one call; pairs of
        # 4-byte halves as one array (no format string of 2 * count codes).
        if width[0] == 4:
            pairs = array.array(width[1])
            pairs.frombytes(b[pos:])
            if _LITTLE:
                pairs.byteswap()
            flat = pairs[1::2].tolist()
        else:
            flat = list(struct.unpack_from("!" + ("i" + width[1]) * count, b, pos)[1::2])
        for d in reversed(dims[1:]):
            flat = [flat[i:i + d] for i in range(0, len(flat), d)]
        return flat
    flat = []
    for _ in range(count):
        n = _unpack_i(b[pos:pos + 4])[0]
        pos += 4
        if n < 0:
            flat.append(None)
        else:
            flat.append(dec(b[pos:pos + n]))
            pos += n
    for d in reversed(dims[1:]):
        flat = [flat[i:i + d] for i in range(0, len(flat), d)]
    return flat


_LITTLE = sys.byteorder == "little"
# Element types of fixed width read by struct directly: (bytes, struct code).
_FIXED = {OID_INT2: (2, "h"), OID_INT4: (4, "i"), OID_INT8: (8, "q"), OID_FLOAT4: (4, "f"),
          OID_FLOAT8: (8, "d")}


def _product(dims):
    n = 1
    for d in dims:
        n *= d
    return n


# Array types whose elements the decoders above read (not interval[]: an
# interval with months is no timedelta), through _array.
ARRAYS = {1000, 1005, 1007, 1016, 1021, 1022, 1231, 1001, 1009, 1015, 1014, 1182,
          1183, 1115, 1185, 1270, 2951, 199, 3807, 1028}


def _tstz_of(v):
    return _INFINITY.get(v) or PG_EPOCH + datetime.timedelta(microseconds=v)


def _ts_of(v):
    return _INFINITY.get(v) or PG_EPOCH_NAIVE + datetime.timedelta(microseconds=v)


def _date_of(v):
    if v in (0x7FFFFFFF, -0x80000000):
        return "infinity" if v > 0 else "-infinity"
    return datetime.date.fromordinal(v + PG_EPOCH_DATE)


def _time_from(usec):
    h, m, s, us = _time_of(usec)
    return datetime.time(h % 24, m, s, us)


# Binary types of fixed width: (struct code, the value from what it unpacks
# or None when that is the value). A column of one of them without NULLs is
# one struct.unpack_from over its cells.
_FIXED_COLUMN = {
    OID_BOOL: ("?", None), OID_INT2: ("h", None), OID_INT4: ("i", None), OID_INT8: ("q", None),
    OID_OID: ("I", None), OID_FLOAT4: ("f", None), OID_FLOAT8: ("d", None),
    OID_DATE: ("i", _date_of), OID_TIME: ("q", _time_from), OID_TIMESTAMP: ("q", _ts_of),
    OID_TIMESTAMPTZ: ("q", _tstz_of),
}


def _void(b):
    """A void column (SELECT pg_notify(...)): None, as asyncpg reads it;
    it has no text to fall back to."""


class Columns:
    """How each column of a result is read: its name, its decoder (None:
    the server's text) and, for a fixed-width binary type, its
    _FIXED_COLUMN entry and width. Chosen once per result."""
    __slots__ = ("names", "decoders", "fixed")

    def __init__(self, res):
        n = _lib.result_ncols(res)
        self.names = [_lib.result_fname(res, c).decode() for c in range(n)]
        self.decoders, self.fixed = [], []
        for c in range(n):
            oid, fmt = _lib.result_ftype(res, c), _lib.result_fformat(res, c)
            dec = fixed = None
            if fmt == 1 and oid == OID_VOID:
                dec = _void
            elif fmt == 1:
                dec = BINARY.get(oid) or (_array if oid in ARRAYS else None)
                if oid in _FIXED_COLUMN:
                    code, post = _FIXED_COLUMN[oid]
                    fixed = (code, post, struct.calcsize("!" + code))
            self.decoders.append(dec)
            self.fixed.append(fixed)


def _as_text(res, r, c):
    s, n = ctypes.c_char_p(), ctypes.c_size_t()
    rc = _lib.result_value_cstr(res, r, c, ctypes.byref(s), ctypes.byref(n))
    if rc < 0:
        raise Error(rc, f"row {r} column {c}")
    return ctypes.string_at(s, n.value).decode()


# From this many bytes per cell on average the cells are copied one by one
# (pgw_result_cell), each straight into the bytes its decoder reads: for
# large values one more copy costs more than the ctypes calls it saves.
_LARGE_CELLS = 4096


def _lengths(res, nrows, ncols):
    """The lengths of every cell of a result (pgw_result_cells: column by
    column, -1 for NULL) and the bytes they take."""
    lens = array.array("i", bytes(4 * nrows * ncols))
    needed = ctypes.c_size_t()
    rc = _lib.result_cells(res, 0, nrows, lens.buffer_info()[0], None, 0, ctypes.byref(needed))
    if rc not in (0, _lib.PGW_ERANGE):
        raise Error(rc, "reading the result's cells")
    return lens, needed.value


def _cell_bytes(res, nrows, lens, needed):
    """Every cell's bytes in one pgw_result_cells call, side by side in the
    order of lens. The bytes stay in the one buffer: each cell is a
    memoryview of it, so only a decoder that keeps bytes (bytea) copies."""
    if not needed:
        return memoryview(b"")
    buf = bytearray(needed)
    rc = _lib.result_cells(res, 0, nrows, lens.buffer_info()[0],
                           ctypes.addressof(ctypes.c_char.from_buffer(buf)), needed, None)
    if rc < 0:
        raise Error(rc, "reading the result's cells")
    return memoryview(buf)


def _large_column(res, c, lens, dec):
    """Column c cell by cell, each copied on its own (see _LARGE_CELLS)."""
    out = []
    for r, k in enumerate(lens):
        if k < 0 or dec is _void:
            out.append(None)
            continue
        v = dec(ctypes.string_at(_lib.result_cell(res, r, c, None), k)) if dec else None
        out.append(v if v is not None else _as_text(res, r, c))
    return out


def _column(res, c, lens, raw, pos, dec, fixed):
    """Column c's values from its cells' lengths and raw[pos:]."""
    n = len(lens)
    if dec is _void:
        return [None] * n
    if fixed and lens.count(fixed[2]) == n:
        values = struct.unpack_from(f"!{n}{fixed[0]}", raw, pos)
        return list(map(fixed[1], values)) if fixed[1] else values
    if lens.count(-1) == n:
        return [None] * n
    out = []
    append = out.append
    for r, k in enumerate(lens):
        if k < 0:
            append(None)
            continue
        v = dec(raw[pos:pos + k]) if dec else None
        pos += k
        append(v if v is not None else _as_text(res, r, c))
    return out


def rows(res):
    """The column names and every row of a result, as tuples of Python
    objects: the cells come in one call, and each column is decoded by
    its own decoder, a fixed-width one in one unpack."""
    cols = Columns(res)
    nrows, ncols = _lib.result_nrows(res), len(cols.names)
    if not nrows:
        return cols.names, []
    if not ncols:
        return cols.names, [()] * nrows
    lens, needed = _lengths(res, nrows, ncols)
    if needed > _LARGE_CELLS * nrows * ncols:
        return cols.names, list(zip(*(
            _large_column(res, c, lens[c * nrows:(c + 1) * nrows], cols.decoders[c])
            for c in range(ncols))))
    raw = _cell_bytes(res, nrows, lens, needed)
    columns, pos = [], 0
    for c in range(ncols):
        col_lens = lens[c * nrows:(c + 1) * nrows]
        columns.append(_column(res, c, col_lens, raw, pos, cols.decoders[c], cols.fixed[c]))
        pos += sum(col_lens) + col_lens.count(-1)
    return cols.names, list(zip(*columns))
