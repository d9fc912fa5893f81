"""Exceptions: library failures by code, server errors with every field."""
from . import _lib

# The server's error fields (protocol codes), as attributes of ServerError.
FIELDS = {
    "S": "severity_local", "V": "severity", "C": "sqlstate", "M": "message",
    "D": "detail", "H": "hint", "P": "position", "p": "internal_position",
    "q": "internal_query", "W": "where", "s": "schema_name", "t": "table_name",
    "c": "column_name", "d": "data_type_name", "n": "constraint_name",
    "F": "file", "L": "line", "R": "routine",
}


class Error(Exception):
    """A failure the library reports by code (pgwire's PGW_E* values)."""

    def __init__(self, code, message=None):
        self.code = code
        text = _lib.strerror(code).decode()
        super().__init__(f"{message}: {text}" if message else text)


class ServerError(Error):
    """The server answered with an error: every field it sent is an
    attribute (None when not sent); fields is the whole dict by code."""

    def __init__(self, code, fields):
        self.code = code
        self.fields = fields
        for key, name in FIELDS.items():
            setattr(self, name, fields.get(key))
        Exception.__init__(self, f"{self.severity or 'ERROR'}: {self.message} "
                                 f"(SQLSTATE {self.sqlstate})")


class TimeoutError(Error):
    """The request's deadline passed (PGW_ETIMEDOUT); when the server was
    running it, the cancel's answer (SQLSTATE 57014) is the ServerError
    this exception's __cause__ carries."""


def read_error_fields(err):
    """Every field of a pgw_error_t pointer, read with pgw_error_field."""
    fields = {}
    for key in FIELDS:
        v = _lib.error_field(err, key.encode())
        if v is not None:
            fields[key] = v.decode(errors="replace")
    return fields


def from_status(status, res=None, refusal=None):
    """The exception for a request's status (res: its result, if any)."""
    err = _lib.result_error(res) if res else None
    server = ServerError(status, read_error_fields(err)) if err else None
    if status == _lib.PGW_ETIMEDOUT:
        exc = TimeoutError(status)
        exc.__cause__ = server
        return exc
    return server or Error(status, refusal)
