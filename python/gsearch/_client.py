"""Client: searches sent to a gsearch server in another process (``gsearch serve``, or
``gsearch.Server.listen``) over a Unix-domain socket or 127.0.0.1, in gsearch's socket protocol
(docs/design.md, "The socket protocol"). Pure Python: socket, struct and numpy."""

from __future__ import annotations

import os as _os
import re as _re
import socket as _socket
import struct as _struct
import threading as _threading
from typing import Any, Optional, Union

import numpy as _np

from ._docs import public as _public

# The protocol (server_protocol.hpp): little-endian headers, dtype and side codes.
_REQUEST = _struct.Struct("<4sHHBBHQ")  # magic, version, op, dtype, side, reserved, count
_HEAD = _struct.Struct("<4sI")  # magic, status
_VERSION, _OP_SEARCH = 1, 1
_DTYPES = ("int32", "uint32", "int64", "uint64", "float32", "float64")  # gsearch::dtype's codes
_SIDES = {"left": 0, "right": 1, "pred": 2}
_STATUS = {1: "malformed", 2: "wrong dtype", 3: "too large", 4: "shut down", 5: "failed"}
_KEYS_DTYPE = _re.compile(r"for keys of dtype (\w+)$")  # the end of a status 2 message
_SMALL = 1 << 16  # requests up to this many bytes go in one send


class _Closed(Exception):
    """The server closed the connection before answering (nothing of an answer was read)."""


@_public
class Client:
    """A connection to a gsearch server in another process: ``gsearch serve`` or
    :meth:`gsearch.Server.listen`.

    ``Client(address).search(q, side)`` equals ``numpy.searchsorted(keys, q, side)`` on the
    server's keys (int64, q's shape).

    Parameters
    ----------
    address : str, os.PathLike or int
        The server's Unix-domain socket path, or its port on 127.0.0.1.
    timeout : float, optional
        Seconds to wait for a connection and for each answer (None: no limit).
    dtype : numpy dtype, optional
        The server's keys' dtype, when known. Otherwise the client learns it from the server's
        first refusal of another dtype, and then casts queries to it when numpy casts them
        safely (as :meth:`gsearch.Server.search` does).

    The connection opens on the first search and again after an error; a connection the
    server closed while it was idle is reopened once and the search sent again (a search is
    idempotent). Several threads may share a client (their requests take turns); a client per
    thread lets the server batch them. Use it as a context manager, or call :meth:`close`.

    Raises (from :meth:`search`): ConnectionError (no server there, or the connection
    closed), TimeoutError, TypeError (queries of a dtype the server's keys cannot take:
    status 2), ValueError (a request the server refuses: too many queries, status 3; malformed,
    1), RuntimeError (the server is shut down, 4, or failed, 5); each names the server's message.
    """

    def __init__(self, address: Union[str, "_os.PathLike[str]", int], *, timeout: Optional[float] = None,
                 dtype: Any = None) -> None:
        if isinstance(address, bool) or not isinstance(address, (str, bytes, int, _os.PathLike)):
            raise TypeError(f"gsearch.Client: address must be a socket path or a port (got {address!r})")
        if isinstance(address, int):
            if not 1 <= address <= 65535:
                raise ValueError(f"gsearch.Client: port {address} is not 1 to 65535")
            self._family, self._address, self._name = _socket.AF_INET, ("127.0.0.1", address), f"127.0.0.1:{address}"
        else:
            path = _os.fsdecode(_os.fspath(address))
            self._family, self._address, self._name = _socket.AF_UNIX, path, path
        self._timeout = timeout
        self._dtype = None if dtype is None else _np.dtype(dtype)
        if self._dtype is not None and self._dtype.name not in _DTYPES:
            raise TypeError(f"gsearch.Client: unsupported dtype {self._dtype} ({', '.join(_DTYPES)})")
        self._sock: Optional[_socket.socket] = None
        self._lock = _threading.Lock()

    @property
    def address(self) -> str:
        """The server's socket path, or "127.0.0.1:port"."""
        return self._name

    @property
    def dtype(self) -> Optional[_np.dtype]:
        """The server's keys' dtype, once known (given, or learnt from a refusal); else None."""
        return self._dtype

    def search(self, q: Any, side: str = "left") -> _np.ndarray:
        """``numpy.searchsorted(keys, q, side)`` on the server's keys: int64, q's shape.

        ``side``: ``"left"`` or ``"right"`` (numpy's), or ``"pred"`` (the largest i with
        ``keys[i] <= q``, else -1). The queries go in one request."""
        if side not in _SIDES:
            raise ValueError(f"gsearch.Client.search: side must be 'left', 'right' or 'pred' (got {side!r})")
        a = _np.asarray(q)
        with self._lock:
            for _ in range(2):
                flat = self._queries(a)
                try:
                    out = self._request(flat, _SIDES[side])
                except TypeError as e:
                    learnt = _KEYS_DTYPE.search(str(e))
                    if self._dtype is not None or learnt is None:
                        raise
                    self._dtype = _np.dtype(learnt.group(1))
                    if not _np.can_cast(a.dtype, self._dtype, casting="safe"):
                        raise
                    continue  # cast safely, and sent again
                return out.reshape(a.shape)
            raise AssertionError("unreachable")

    def _queries(self, a: _np.ndarray) -> _np.ndarray:
        """`a` as the contiguous little-endian 1-D array that is sent."""
        want = self._dtype if self._dtype is not None else a.dtype
        if a.dtype != want:
            if self._dtype is not None and not _np.can_cast(a.dtype, want, casting="safe"):
                raise TypeError(f"gsearch.Client.search: queries of dtype {a.dtype} for the server's {want} keys "
                                "(numpy does not cast them safely)")
            a = a.astype(want)
        if a.dtype.name not in _DTYPES:
            raise TypeError(f"gsearch.Client.search: unsupported dtype {a.dtype} ({', '.join(_DTYPES)})")
        return _np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).reshape(-1)

    def _request(self, flat: _np.ndarray, side: int) -> _np.ndarray:
        head = _REQUEST.pack(b"GSRQ", _VERSION, _OP_SEARCH, _DTYPES.index(flat.dtype.name), side, 0, flat.size)
        for attempt in range(2):
            fresh = self._sock is None
            if fresh:
                self._connect()
            try:
                return self._exchange(head, flat)
            except _Closed:
                self.close()
                if fresh or attempt:
                    raise ConnectionError(f"gsearch.Client: the gsearch server at {self._name} closed the "
                                          "connection without answering") from None
                # The server had closed this idle connection: once more on a new one.
            except BaseException:
                self.close()
                raise
        raise AssertionError("unreachable")

    def _connect(self) -> None:
        s = _socket.socket(self._family, _socket.SOCK_STREAM)
        s.settimeout(self._timeout)
        try:
            s.connect(self._address)
        except OSError as e:
            s.close()
            raise ConnectionError(f"gsearch.Client: cannot connect to the gsearch server at {self._name}: "
                                  f"{e.strerror or e} (is `gsearch serve` running there?)") from e
        if self._family == _socket.AF_INET:
            s.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        self._sock = s

    def _exchange(self, head: bytes, flat: _np.ndarray) -> _np.ndarray:
        sock = self._sock
        body = memoryview(flat).cast("B")
        try:
            if len(body) <= _SMALL:
                sock.sendall(head + body.tobytes())
            else:
                sock.sendall(head)
                sock.sendall(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # an answer may be waiting all the same (a request refused from its header)
        except _socket.timeout:
            raise TimeoutError(f"gsearch.Client: the gsearch server at {self._name} did not take the request "
                               "in time") from None
        magic_status = self._recv(_HEAD.size, first=True)  # _Closed: no answer (sent_error or not)
        magic, status = _HEAD.unpack(magic_status)
        if magic != b"GSRS":
            raise ConnectionError(f"gsearch.Client: the server at {self._name} does not speak gsearch's protocol")
        if status == 0:
            (count,) = _struct.unpack("<Q", self._recv(8))
            if count != flat.size:
                raise ConnectionError(f"gsearch.Client: the server answered {count} results for {flat.size} queries")
            out = _np.empty(flat.size, _np.dtype("<i8"))
            self._recv_into(memoryview(out).cast("B"))
            return out.astype(_np.int64, copy=False)
        (length,) = _struct.unpack("<I", self._recv(4))
        message = self._recv(min(length, 1 << 20)).decode("utf-8", "replace")
        self.close()  # a new connection for the next request, whatever the server does with this one
        what = f"gsearch.Client: the gsearch server at {self._name} answered {_STATUS.get(status, status)}: {message}"
        if status == 2:
            raise TypeError(what)
        if status in (1, 3):
            raise ValueError(what)
        raise RuntimeError(what)

    def _recv(self, n: int, first: bool = False) -> bytes:
        buf = bytearray(n)
        self._recv_into(memoryview(buf), first)
        return bytes(buf)

    def _recv_into(self, view: memoryview, first: bool = False) -> None:
        got = 0
        while got < len(view):
            try:
                r = self._sock.recv_into(view[got:])
            except _socket.timeout:
                raise TimeoutError(f"gsearch.Client: the gsearch server at {self._name} did not answer in "
                                   f"{self._timeout} s") from None
            except ConnectionResetError:
                r = 0
            if r == 0:
                if first and got == 0:
                    raise _Closed()
                raise ConnectionError(f"gsearch.Client: the gsearch server at {self._name} closed the connection "
                                      "mid-answer")
            got += r

    def close(self) -> None:
        """Closes the connection (idempotent; a later search opens a new one)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __del__(self) -> None:
        if getattr(self, "_sock", None) is not None:
            self._sock.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"gsearch.Client({self._name!r}, dtype={None if self._dtype is None else str(self._dtype)!r})"
