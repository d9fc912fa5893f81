"""libpgwire from Python with ctypes: a blocking path (pgwire.connect, over
the client API) and an asyncio path (pgwire.connect_async, the sans-IO
session driven by asyncio's own loop)."""
from .blocking import Connection, Result, connect
from .errors import Error, ServerError, TimeoutError
from .aio import AsyncConnection, connect_async
from ._values import Notification

__all__ = ["connect", "connect_async", "Connection", "AsyncConnection", "Result", "Notification", "Error",
           "ServerError", "TimeoutError"]
