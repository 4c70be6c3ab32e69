"""Client: searches sent to a gsearch server in another process (``gsearch serve``, or
``gsearch.Server.listen``) over a Unix-domain socket or 127.0.0.1, in gsearch's socket protocol
(docs/design.md, "The socket protocol"). Pure Python over socket, struct and numpy; the queries
are made ready as gsearch.Server.search makes them (_server._prepare: what searchsorted takes).
It asks for no shared-memory ring (the C++ socket_client's; "The connection's ring"): every
request goes over the socket."""

from __future__ import annotations

import errno as _errno
import os as _os
import re as _re
import socket as _socket
import struct as _struct
import threading as _threading
import time as _time
from typing import Any, Optional, Union

import numpy as _np

from ._arrays import _Arr, _Scalar, _classify, _convert, _widened
from ._common import _KEY_DTYPE_NAMES, _SIDES
from ._docs import public as _public
from ._server import _prepare

# The protocol (server_protocol.hpp): little-endian headers; the dtype and side codes are those of
# _common's tables (_KEY_DTYPE_NAMES: a dtype's code is its index; _SIDES).
_REQUEST = _struct.Struct("<4sHHBBHQ")  # magic, version, op, dtype, side, reserved, count
_HEAD = _struct.Struct("<4sI")  # magic, status
_VERSION, _OP_SEARCH = 1, 1
_STATUS = {1: "malformed", 2: "wrong dtype", 3: "too large", 4: "shut down", 5: "failed", 6: "busy"}
_BUSY = 6
_KEYS_DTYPE = _re.compile(r"for keys of dtype (\w+)$")  # the end of a status 2 message
_SMALL = 1 << 16  # requests up to this many bytes go in one send
_DEFAULT_TIMEOUT = 60.0  # `gsearch client --timeout`'s default
_INT64, _FLOAT64 = _np.dtype(_np.int64), _np.dtype(_np.float64)


class _Closed(Exception):
    """The server closed the connection before answering (nothing of an answer was read)."""


class _WrongDtype(Exception):
    """A status 2 answer: the message, and the keys' dtype it names (None if it names none)."""

    def __init__(self, message: str, keys: Optional[_np.dtype]) -> None:
        super().__init__(message)
        self.keys = keys


def _host(fn: str, a: Union[_Arr, _Scalar]) -> Union[_Arr, _Scalar]:
    """Queries in host memory as numpy (a CPU torch tensor's data; bfloat16 as float32)."""
    if not isinstance(a, _Arr) or a.fw == "numpy":
        return a
    if a.dev is not None:
        raise ValueError(f"{fn}: queries on cuda:{a.dev}: a Client sends host memory (copy them to the host)")
    x = _convert(a, a.dtype).numpy()
    return _Arr(x, "numpy", None, x.dtype)


def _guess(a: Union[_Arr, _Scalar]) -> _np.dtype:
    """The keys' dtype to try before the server has told it: the queries' own (widened to a
    protocol dtype), int64 or float64 for a Python number. The server answers it, or refuses it
    naming its own (status 2)."""
    if isinstance(a, _Scalar) and a.dtype is None:
        return _FLOAT64 if isinstance(a.value, float) else _INT64
    d = a.dtype
    return _widened(d) if d.kind in "biuf" and d.itemsize <= 8 else _INT64


@_public
class Client:
    """A connection to a gsearch server in another process: ``gsearch serve`` or
    :meth:`gsearch.Server.listen`.

    ``Client(address).search(q, side)`` equals ``numpy.searchsorted(keys, q, side)`` on the
    server's keys (int64, q's shape), and takes the queries :meth:`gsearch.Server.search` takes
    (host memory).

    Parameters
    ----------
    address : str, os.PathLike or int
        The server's Unix-domain socket path (``~`` expanded), or its port on 127.0.0.1.
    timeout : float or None
        Seconds a whole search may take: one deadline from the call to the last byte of the
        answer, waiting for the connection (connect included) and for this client's other
        threads' requests included (60, as ``gsearch client --timeout``; None: no limit).
        TimeoutError beyond it.
    dtype : numpy dtype, optional
        The server's keys' dtype, when known. Otherwise the client learns it from the server's
        first answer: a search in the queries' own dtype is answered, or refused naming the
        keys' dtype (then the queries are made ready for it, as :meth:`gsearch.Server.search`
        does, and sent again).

    The connection opens on the first search and again after an error; a request that finds
    the connection closed before any byte of its answer (the server closed it while it was
    idle) is sent once more on a new one (a search is idempotent); one that timed out is never
    sent again. Several threads may share a client (their requests take turns); a client per
    thread lets the server batch them. Use it as a context manager, or call :meth:`close`.

    Raises (from :meth:`search`): ConnectionError (no server there, permission denied, or the
    connection closed), TimeoutError, TypeError (queries of a dtype the server's keys cannot
    take: status 2; a pair whose promotion would round), ValueError (a request the server
    refuses: too many queries or bytes, status 3; malformed, 1), :class:`Client.Busy` (status
    6: the server cannot take the connection or the request now; it is healthy, try again
    later), RuntimeError (the server is shut down, 4, or failed, 5: restart it); each names the
    server's message.
    """

    class Busy(RuntimeError):
        """A gsearch server answered busy (status 6): it has no room for this connection or this
        request now (too many connections, or no memory for it). The server is healthy: try
        again later. A RuntimeError."""

    def __init__(self, address: Union[str, "_os.PathLike[str]", int], *, timeout: Optional[float] = _DEFAULT_TIMEOUT,
                 dtype: Any = None) -> None:
        if isinstance(address, bool) or not isinstance(address, (str, bytes, int, _os.PathLike)):
            raise TypeError(f"gsearch.Client: address must be a socket path or a port (got {address!r})")
        if isinstance(address, int):
            if not 1 <= address <= 65535:
                raise ValueError(f"gsearch.Client: port {address} is not 1 to 65535")
            self._family, self._address, self._name = _socket.AF_INET, ("127.0.0.1", address), f"127.0.0.1:{address}"
        else:
            path = _os.fsdecode(_os.path.expanduser(_os.fspath(address)))
            if not path:
                raise ValueError("gsearch.Client: the socket path is empty")
            self._family, self._address, self._name = _socket.AF_UNIX, path, path
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float, _np.integer, _np.floating)):
                raise TypeError(f"gsearch.Client: timeout must be a number of seconds or None, not {timeout!r}")
            if not 0 < float(timeout) < float("inf"):
                raise ValueError(f"gsearch.Client: timeout must be a positive number of seconds, or None for no "
                                 f"limit (got {timeout!r})")
            timeout = float(timeout)
        self._timeout = timeout
        self._dtype = None if dtype is None else _np.dtype(dtype)
        if self._dtype is not None and self._dtype.name not in _KEY_DTYPE_NAMES:
            raise TypeError(f"gsearch.Client: unsupported dtype {self._dtype} ({', '.join(_KEY_DTYPE_NAMES)})")
        self._sock: Optional[_socket.socket] = None
        self._lock = _threading.Lock()

    @property
    def address(self) -> str:
        """The server's socket path, or "127.0.0.1:port"."""
        return self._name

    @property
    def timeout(self) -> Optional[float]:
        """Seconds a whole search may take (None: no limit)."""
        return self._timeout

    @property
    def dtype(self) -> Optional[_np.dtype]:
        """The server's keys' dtype, once known (given, or learnt from the first answer); else None."""
        return self._dtype

    def search(self, q: Any, side: str = "left") -> Any:
        """``numpy.searchsorted(keys, q, side)`` on the server's keys: int64, q's shape (a numpy
        integer for a scalar query).

        ``side``: ``"left"`` or ``"right"`` (numpy's), or ``"pred"`` (the largest i with
        ``keys[i] <= q``, else -1). ``q``: what :func:`gsearch.searchsorted` takes in host
        memory (numpy arrays, CPU torch tensors, Python sequences and scalars), compared as it
        compares them (:meth:`gsearch.Server.search`). The queries go in one request, within
        the client's timeout."""
        fn = "gsearch.Client.search"
        if not isinstance(side, str) or side not in _SIDES:
            raise ValueError(f"{fn}: side must be 'left', 'right' or 'pred' (got {side!r})")
        deadline = None if self._timeout is None else _time.monotonic() + self._timeout
        a = _host(fn, _classify(q, "queries"))
        if not self._lock.acquire(timeout=-1 if deadline is None else max(0.0, deadline - _time.monotonic())):
            raise TimeoutError(f"gsearch.Client: the timeout ({self._timeout:g} s) passed while this client's other "
                               "threads' requests were answered")
        try:
            for _ in range(2):
                known = self._dtype
                p = _prepare(fn, a, known if known is not None else _guess(a), _SIDES[side])
                try:
                    out = self._request(p.flat, p.side, deadline)
                except _WrongDtype as e:
                    if known is not None or e.keys is None:
                        raise TypeError(str(e)) from None
                    self._dtype = e.keys
                    continue  # made ready for the keys' dtype, and sent again
                if known is None:
                    self._dtype = _np.dtype(p.flat.dtype.name)  # answered: the keys' dtype
                return p.finish(out)
            raise AssertionError("unreachable")
        finally:
            self._lock.release()

    def _request(self, flat: _np.ndarray, side: int, deadline: Optional[float]) -> _np.ndarray:
        flat = _np.ascontiguousarray(flat, dtype=flat.dtype.newbyteorder("<"))
        head = _REQUEST.pack(b"GSRQ", _VERSION, _OP_SEARCH, _KEY_DTYPE_NAMES.index(flat.dtype.name), side, 0, flat.size)
        for attempt in range(2):
            fresh = self._sock is None
            if fresh:
                self._connect(deadline)
            try:
                return self._exchange(head, flat, deadline)
            except _Closed:
                self.close()
                if fresh or attempt:
                    raise ConnectionError(f"gsearch.Client: the gsearch server at {self._name} closed the "
                                          "connection without answering") from None
                # The server had closed this idle connection before any byte of an answer: once
                # more on a new one. (Never after a timeout: that request may be in the server.)
            except BaseException:
                self.close()
                raise
        raise AssertionError("unreachable")

    def _late(self, what: str) -> TimeoutError:
        return TimeoutError(f"gsearch.Client: the gsearch server at {self._name} {what} within the timeout "
                            f"({self._timeout:g} s for the whole request, connect included)")

    def _arm(self, sock: _socket.socket, deadline: Optional[float], what: str) -> None:
        """Gives sock's next call the time left until the deadline (TimeoutError if none is left)."""
        if deadline is None:
            return
        left = deadline - _time.monotonic()
        if left <= 0:
            raise self._late(what)
        sock.settimeout(left)

    def _connect(self, deadline: Optional[float]) -> None:
        pause = 0.001
        while True:
            s = _socket.socket(self._family, _socket.SOCK_STREAM)
            try:
                s.settimeout(None)
                self._arm(s, deadline, "did not take the connection")
                s.connect(self._address)
                break
            except BlockingIOError:
                # A Unix-domain socket's full listen backlog (EAGAIN: a connect with a timeout does
                # not wait there): tried again until the deadline.
                s.close()
                left = deadline - _time.monotonic() if deadline is not None else pause
                if left <= 0:
                    raise self._late("did not take the connection (its listen backlog is full)") from None
                _time.sleep(min(pause, left))
                pause = min(2 * pause, 0.05)
            except _socket.timeout:
                s.close()
                raise self._late("did not take the connection") from None
            except TimeoutError:
                s.close()
                raise
            except OSError as e:
                s.close()
                if e.errno in (_errno.EACCES, _errno.EPERM):
                    hint = ("this user may not connect to that socket: a gsearch server's socket is its own "
                            "user's only (mode 0600) unless the server gives a group access with "
                            "Server.listen(socket_mode=0o660, group=...) or gsearch serve --socket-group")
                elif e.errno in (_errno.ENOENT, _errno.ECONNREFUSED):
                    hint = "is `gsearch serve` running there?"
                else:
                    hint = ""
                raise ConnectionError(f"gsearch.Client: cannot connect to the gsearch server at {self._name}: "
                                      f"{e.strerror or e}" + (f" ({hint})" if hint else "")) from e
        if self._family == _socket.AF_INET:
            s.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        self._sock = s

    def _exchange(self, head: bytes, flat: _np.ndarray, deadline: Optional[float]) -> _np.ndarray:
        sock = self._sock
        body = memoryview(flat).cast("B")
        try:
            self._arm(sock, deadline, "did not take the request")
            if len(body) <= _SMALL:
                sock.sendall(head + body.tobytes())
            else:
                sock.sendall(head)
                self._arm(sock, deadline, "did not take the request")
                sock.sendall(body)  # (sendall's timeout bounds the whole call)
        except (BrokenPipeError, ConnectionResetError):
            pass  # an answer may be waiting all the same (a request refused from its header)
        except _socket.timeout:
            raise self._late("did not take the request") from None
        magic_status = self._recv(_HEAD.size, deadline, first=True)  # _Closed: no answer (sent_error or not)
        magic, status = _HEAD.unpack(magic_status)
        if magic != b"GSRS":
            raise ConnectionError(f"gsearch.Client: the server at {self._name} does not speak gsearch's protocol")
        if status == 0:
            (count,) = _struct.unpack("<Q", self._recv(8, deadline))
            if count != flat.size:
                raise ConnectionError(f"gsearch.Client: the server answered {count} results for {flat.size} queries")
            out = _np.empty(flat.size, _np.dtype("<i8"))
            self._recv_into(memoryview(out).cast("B"), deadline)
            return out.astype(_np.int64, copy=False)
        (length,) = _struct.unpack("<I", self._recv(4, deadline))
        message = self._recv(min(length, 1 << 20), deadline).decode("utf-8", "replace")
        self.close()  # a new connection for the next request, whatever the server does with this one
        what = f"gsearch.Client: the gsearch server at {self._name} answered {_STATUS.get(status, status)}: "
        if status == 2:
            learnt = _KEYS_DTYPE.search(message)
            known = learnt is not None and learnt.group(1) in _KEY_DTYPE_NAMES
            raise _WrongDtype(what + message, _np.dtype(learnt.group(1)) if known else None)
        if status in (1, 3):
            raise ValueError(what + message)
        if status == _BUSY:
            hint = "" if "try again later" in message else " (the server is healthy: try again later)"
            raise Client.Busy(what + message + hint)
        raise RuntimeError(what + message)

    def _recv(self, n: int, deadline: Optional[float], first: bool = False) -> bytes:
        buf = bytearray(n)
        self._recv_into(memoryview(buf), deadline, first)
        return bytes(buf)

    def _recv_into(self, view: memoryview, deadline: Optional[float], first: bool = False) -> None:
        got = 0
        while got < len(view):
            try:
                self._arm(self._sock, deadline, "did not answer")
                r = self._sock.recv_into(view[got:])
            except _socket.timeout:
                raise self._late("did not answer") from None
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


Client.Busy.__module__ = "gsearch"  # gsearch.Client.Busy, where it is documented (and pickled from)
