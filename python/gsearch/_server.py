"""The search server, Server: a sorted key set kept resident and searched from many threads at
once (gsearch::server; seed 004's persistent search server, issue 22). Requests that arrive
together are served together. The CPU form so far: numpy arrays."""

from __future__ import annotations

import os as _os
from typing import Any, Optional, Union

import numpy as _np

from . import _core
from ._docs import public as _public

_SIDES: dict[str, int] = dict(_core.SIDES)
_KEY_DTYPES = tuple(_np.dtype(t) for t in (_np.int32, _np.uint32, _np.int64, _np.uint64, _np.float32, _np.float64))


def _host_vector(name: str, a: Any) -> _np.ndarray:
    """`a` as a contiguous 1-D numpy array (a copy only when it is not one already)."""
    if not isinstance(a, _np.ndarray):
        if hasattr(a, "__cuda_array_interface__") or getattr(getattr(a, "device", None), "type", "cpu") != "cpu":
            raise ValueError(f"gsearch.Server: {name} must be in host memory (the server runs on the CPU so far)")
        a = _np.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"gsearch.Server: {name} must be 1-D (have {a.ndim} dimensions)")
    if a.dtype not in _KEY_DTYPES:
        raise TypeError(f"gsearch.Server: unsupported dtype {a.dtype} of {name} (int32, uint32, int64, uint64, "
                        "float32, float64)")
    return _np.ascontiguousarray(a)


@_public
class Server:
    """A search server: a copy of sorted 1-D keys, searched from many threads at once.

    ``Server(keys).search(q, side)`` equals ``numpy.searchsorted(keys, q, side)`` (int64, q's
    shape). Calls from several Python threads run at once (the GIL is released while a request
    waits), and the server's loop serves requests that arrive together as one batch.

    Parameters
    ----------
    keys : numpy.ndarray
        Sorted (numpy's order: NaN last), 1-D; int32, uint32, int64, uint64, float32 or float64.
        The server keeps a copy.
    device : str
        ``"cpu"``, the only one so far (the GPU's persistent loop is the next part of issue 22).
    ring_slots, max_batch_requests, max_batch_queries : int
        Requests in flight at most (submitters wait beyond: backpressure); requests and queries
        served together at most.
    preferred_batch_queries : int, max_delay : float
        The dynamic batcher (Triton's knobs): wait up to ``max_delay`` seconds for this many
        queries before serving a smaller batch (0: serve at once).
    threads : int
        CPU threads of each batch's searches (0: all).

    Use it as a context manager, or call :meth:`close`: afterwards a search raises ValueError.
    """

    def __init__(self, keys: Any, *, device: str = "cpu", ring_slots: int = 256, max_batch_requests: int = 256,
                 max_batch_queries: int = 1 << 22, preferred_batch_queries: int = 0, max_delay: float = 0.0,
                 threads: int = 0) -> None:
        if device != "cpu":
            raise ValueError(f"gsearch.Server: device={device!r}: the server runs on the CPU so far")
        k = _host_vector("keys", keys)
        if max_delay < 0:
            raise ValueError(f"gsearch.Server: max_delay must be >= 0 (got {max_delay!r})")
        self._dtype = k.dtype
        self._core = _core.Server(k, int(ring_slots), int(max_batch_requests), int(max_batch_queries),
                                  int(preferred_batch_queries), int(round(max_delay * 1e6)), int(threads))

    @property
    def dtype(self) -> _np.dtype:
        """The keys' dtype (queries must have it, or convert to it exactly)."""
        return self._dtype

    @property
    def size(self) -> int:
        """The current key set's length."""
        return int(self._core.size)

    def search(self, q: Any, side: str = "left") -> _np.ndarray:
        """``numpy.searchsorted(keys, q, side)`` on the current keys: int64, q's shape.

        ``side``: ``"left"`` or ``"right"`` (numpy's), or ``"pred"`` (the largest i with
        ``keys[i] <= q``, else -1). Queries of another dtype are converted when numpy casts them
        safely, else TypeError."""
        if side not in ("left", "right", "pred"):
            raise ValueError(f"gsearch.Server.search: side must be 'left', 'right' or 'pred' (got {side!r})")
        a = _np.asarray(q)
        if a.dtype != self._dtype:
            if not _np.can_cast(a.dtype, self._dtype, casting="safe"):
                raise TypeError(f"gsearch.Server.search: queries of dtype {a.dtype} for {self._dtype} keys")
            a = a.astype(self._dtype)
        flat = _np.ascontiguousarray(a).reshape(-1)
        out = _np.empty(flat.shape, _np.int64)
        self._core.search(flat, _SIDES[side], out)
        return out.reshape(a.shape)

    def replace_keys(self, keys: Any) -> None:
        """Serves later searches from a copy of ``keys`` (sorted, the server's dtype); returns once
        the server has switched. No search sees a mix of the two key sets."""
        k = _host_vector("keys", keys)
        if k.dtype != self._dtype:
            raise TypeError(f"gsearch.Server.replace_keys: keys of dtype {k.dtype} for a {self._dtype} server")
        self._core.replace_keys(k)

    def stats(self) -> dict:
        """Counts since the start: ``requests``, ``queries``, ``batches``, and histograms by powers
        of two (``batch_requests_log2[i]``: batches of 2^i to 2^(i+1) - 1 requests;
        ``latency_us_log2[i]``: requests answered in 2^i to 2^(i+1) - 1 microseconds)."""
        return dict(self._core.stats())

    def listen(self, path: Optional[Union[str, "os.PathLike[str]"]] = None, *, port: Optional[int] = None,
               max_queries: int = 1 << 24, max_connections: int = 128, request_timeout: float = 30.0,
               idle_timeout: float = 0.0) -> Union[str, int]:
        """Serves this server to other processes too: :class:`gsearch.Client` and ``gsearch
        client`` connect to a Unix-domain socket at ``path`` and / or to 127.0.0.1:``port``
        (``port=0``: any free port) and speak gsearch's socket protocol (docs/design.md). Their
        requests are batched with this process's. A stale socket file at ``path`` is replaced; a
        path where a server answers, or a file that is not a socket, is refused (ValueError).

        ``max_queries``: the most queries a request may hold (larger ones are refused unread);
        ``max_connections``: connections served at once; ``request_timeout``: seconds for a
        request's bytes to arrive; ``idle_timeout``: seconds before an idle connection is closed
        (0: never). Returns the address a Client takes: ``path`` if given, else the port bound.
        :meth:`stop_listening` and :meth:`close` stop it and remove the socket file."""
        if path is None and port is None:
            raise ValueError("gsearch.Server.listen: give a socket path, a port (0: any free port), or both")
        if request_timeout < 0 or idle_timeout < 0:
            raise ValueError("gsearch.Server.listen: the timeouts must be >= 0")
        p = "" if path is None else _os.fspath(path)
        bound = self._core.listen(p, -1 if port is None else int(port), int(max_queries), int(max_connections),
                                  int(round(request_timeout * 1000)), int(round(idle_timeout * 1000)))
        return p if path is not None else int(bound)

    def stop_listening(self) -> None:
        """Stops serving other processes: answers the requests they began, closes their
        connections, removes the socket file (idempotent). This process's searches go on."""
        self._core.stop_listening()

    def close(self) -> None:
        """Refuses new searches, answers those in flight, stops the server (idempotent)."""
        self._core.shutdown()

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"gsearch.Server({self.size} {self._dtype} keys, device='cpu')"
