"""The search server, Server: a sorted key set kept resident and searched from many threads at
once (gsearch::server; seed 004's persistent search server, issue 22). Requests that arrive
together are served together: on the CPU by a loop thread, on a CUDA device by a persistent
kernel. numpy, torch and cupy arrays; the result in the queries' framework and device."""

from __future__ import annotations

import os as _os
import re as _re
from typing import Any, Optional, Union

import numpy as _np

from . import _core
from ._arrays import _Arr, _Scalar, _StreamScope, _adopt, _classify, _convert, _cupy, _is_bfloat16, _new_empty, _torch
from ._docs import public as _public

_SIDES: dict[str, int] = dict(_core.SIDES)
_KEY_DTYPES = tuple(_np.dtype(t) for t in (_np.int32, _np.uint32, _np.int64, _np.uint64, _np.float32, _np.float64))
_INT64 = _np.dtype(_np.int64)
_CUDA_DEVICE = _re.compile(r"cuda(:[0-9]{1,4})?\Z")


def _sync_stream(fw: str, dev: Optional[int]) -> None:
    """Waits for the work queued so far on the framework's current stream of CUDA device `dev`
    (the stream that produced the caller's arrays, and their conversions): the server kernel
    reads and writes CUDA arrays unordered with any stream. A stream's wait, never the device's
    (cudaDeviceSynchronize would wait for the server kernel itself)."""
    if dev is None:
        return
    if fw == "torch":
        _torch().cuda.current_stream(dev).synchronize()
    else:
        cp = _cupy()
        with cp.cuda.Device(dev):
            cp.cuda.get_current_stream().synchronize()


def _vector(fn: str, name: str, x: Any, cuda: bool, dtype: Optional[_np.dtype] = None) -> tuple:
    """(`x` as a contiguous 1-D array of its framework, its CUDA device or None, its dtype);
    a copy only when it is not one already (a numpy array in another byte order). Host memory
    only unless `cuda`; `dtype`: the one it must have (TypeError otherwise)."""
    a = _classify(x, name)
    if isinstance(a, _Scalar):
        raise ValueError(f"{fn}: {name} must be 1-D (have 0 dimensions)")
    if a.dev is not None and not cuda:
        raise ValueError(f"{fn}: {name} on cuda:{a.dev}: a CPU server takes host arrays (device='cuda' serves "
                         "CUDA arrays)")
    if a.x.ndim != 1:
        raise ValueError(f"{fn}: {name} must be 1-D (have {a.x.ndim} dimensions)")
    d = a.dtype.newbyteorder("=") if a.dtype.kind in "iuf" else a.dtype
    if d not in _KEY_DTYPES or _is_bfloat16(a):
        raise TypeError(f"{fn}: unsupported dtype {a.x.dtype} of {name} (int32, uint32, int64, uint64, float32, float64)")
    if dtype is not None and d != dtype:
        raise TypeError(f"{fn}: {name} of dtype {d} for a {dtype} server")
    with _StreamScope(a.fw, a.dev, None):
        k = _convert(a, d)
        _sync_stream(a.fw, a.dev)
    return k, a.dev, d


@_public
class Server:
    """A search server: a copy of sorted 1-D keys, searched from many threads at once.

    ``Server(keys).search(q, side)`` equals ``numpy.searchsorted(keys, q, side)`` (int64, q's
    shape). Calls from several Python threads run at once (the GIL is released while a request
    waits), and the server serves requests that arrive together as one batch: on the CPU a loop
    thread, with ``device="cuda"`` a persistent kernel on the GPU that polls a ring of requests
    in mapped host memory (no kernel launch per request).

    Parameters
    ----------
    keys : numpy.ndarray, torch.Tensor or cupy.ndarray
        Sorted (numpy's order: NaN last), 1-D; int32, uint32, int64, uint64, float32 or float64.
        The server keeps a copy. In host memory for ``device="cpu"``; on the host or on a CUDA
        device for ``device="cuda"`` (the server then runs on the keys' device).
    device : str
        ``"cpu"`` (the default) or ``"cuda"``: the current CUDA device, or the CUDA keys' own
        (``"cuda:N"``: device N).
    ring_slots, max_batch_requests, max_batch_queries : int
        Requests in flight at most (submitters wait beyond: backpressure); requests and queries
        served together at most.
    preferred_batch_queries : int, max_delay : float
        The dynamic batcher (Triton's knobs): wait up to ``max_delay`` seconds for this many
        queries before serving a smaller batch (0: serve at once).
    threads : int
        CPU: threads of each batch's searches (0: all).
    blocks : int
        CUDA: the persistent kernel's blocks, one an SM: its share of the GPU (0: half the SMs).
    staging_queries : int
        CUDA: queries per request slot staged through page-locked memory when the queries or
        the result are in pageable host memory (numpy arrays); a larger request is served in
        pieces of this many.
    idle_sleep : float
        CUDA: the idle kernel's longest sleep between polls of the ring, in seconds.

    On a CUDA server, search takes queries in host memory or on the server's device (a CUDA
    array on another device: ValueError) and answers in the queries' framework and device.
    The server kernel reads and writes CUDA arrays unordered with torch's or cupy's streams:
    search waits for the current stream first (a stream synchronize), and its result is
    complete when it returns.

    .. warning:: While a CUDA server runs, its kernel never ends: calls that wait for the whole
       device wait for the server to close, i.e. forever from the thread that would close it.
       ``torch.cuda.synchronize()``, ``cupy.cuda.Device().synchronize()``,
       ``cudaDeviceSynchronize`` and ``cudaFree`` (``torch.cuda.empty_cache()``, cupy's
       ``free_all_blocks()``) among them. Synchronize streams instead, or close the server
       first. So does the first launch of any CUDA kernel under CUDA's lazy module loading
       (the default): set ``CUDA_MODULE_LOADING=EAGER`` in the environment before CUDA starts
       (before torch or cupy first touches the GPU) to run other GPU work beside a server.
       Even then some kernels' first launch waited for the server on an H100 (torch 2.11's
       ``all()`` of a bool tensor, as in ``torch.equal``; cupy's kernels, compiled and loaded
       at their first use): run the framework work you will need beside a server once before
       starting it (search's own conversions of other dtypes or strided queries included).

    Use it as a context manager, or call :meth:`close`: afterwards a search raises ValueError.

    A server belongs to the process that made it: its loop thread (its kernel) does not cross
    ``fork()``. In a child made by fork (``multiprocessing``'s default start method on Linux),
    every method raises RuntimeError naming the fork instead of blocking for ever, and dropping
    the child's copy leaves the parent's server (and its :meth:`listen` socket) serving. Make
    the server in the child, or use the ``"spawn"`` or ``"forkserver"`` start method.
    """

    def __init__(self, keys: Any, *, device: str = "cpu", ring_slots: int = 256, max_batch_requests: int = 256,
                 max_batch_queries: int = 1 << 22, preferred_batch_queries: int = 0, max_delay: float = 0.0,
                 threads: int = 0, blocks: int = 0, staging_queries: int = 4096, idle_sleep: float = 1e-6) -> None:
        if not isinstance(device, str) and type(device).__name__ == "device" and hasattr(device, "type"):
            device = str(device)  # a torch.device
        if not isinstance(device, str) or not (device == "cpu" or _CUDA_DEVICE.match(device)):
            raise ValueError(f"gsearch.Server: device must be 'cpu' or 'cuda' (or 'cuda:N'), not {device!r}")
        if max_delay < 0:
            raise ValueError(f"gsearch.Server: max_delay must be >= 0 (got {max_delay!r})")
        if idle_sleep < 0:
            raise ValueError(f"gsearch.Server: idle_sleep must be >= 0 (got {idle_sleep!r})")
        k, _, self._dtype = _vector("gsearch.Server", "keys", keys, device != "cpu")
        self._core = _core.Server(k, device, int(ring_slots), int(max_batch_requests), int(max_batch_queries),
                                  int(preferred_batch_queries), int(round(max_delay * 1e6)), int(threads),
                                  int(blocks), int(staging_queries), int(round(idle_sleep * 1e9)))
        dev = self._core.device
        self._dev: Optional[int] = None if dev == "cpu" else int(dev.split(":")[1])

    @property
    def dtype(self) -> _np.dtype:
        """The keys' dtype (queries must have it, or convert to it exactly)."""
        return self._dtype

    @property
    def size(self) -> int:
        """The current key set's length."""
        return int(self._core.size)

    @property
    def device(self) -> str:
        """Where the server runs: ``"cpu"`` or ``"cuda:N"``."""
        return str(self._core.device)

    @property
    def on_device(self) -> bool:
        """True for the CUDA server (a persistent kernel on :attr:`device`)."""
        return bool(self._core.on_device)

    def search(self, q: Any, side: str = "left") -> Any:
        """``numpy.searchsorted(keys, q, side)`` on the current keys: int64, q's shape.

        ``side``: ``"left"`` or ``"right"`` (numpy's), or ``"pred"`` (the largest i with
        ``keys[i] <= q``, else -1). Queries of another dtype are converted when numpy casts them
        safely, else TypeError. The result is in q's framework and on its device: numpy (also
        for Python sequences and scalars), torch (CPU, or CUDA on the server's device) or cupy.
        A CPU server takes host arrays only. CUDA queries: search first waits for the current
        torch / cupy stream of their device (the server kernel is not ordered with it); the
        result is complete when search returns."""
        code = _SIDES.get(side) if isinstance(side, str) and side in ("left", "right", "pred") else None
        if code is None:
            raise ValueError(f"gsearch.Server.search: side must be 'left', 'right' or 'pred' (got {side!r})")
        a = _classify(q, "queries")
        if isinstance(a, _Scalar):
            v = _np.asarray(a.value)
            a = _Arr(v, "numpy", None, v.dtype)
        a = _adopt(a, self._dtype)  # an empty Python sequence: the keys' dtype
        if a.dev is not None and a.dev != self._dev:
            if self._dev is None:
                raise ValueError(f"gsearch.Server.search: queries on cuda:{a.dev}: a CPU server takes host arrays "
                                 "(device='cuda' serves CUDA arrays)")
            raise ValueError(f"gsearch.Server.search: queries on cuda:{a.dev}, the server on cuda:{self._dev} "
                             "(host memory or the server's device)")
        d = self._dtype
        if a.dtype != d:
            if a.dtype.kind not in "biuf" or not _np.can_cast(a.dtype, d, casting="safe"):
                raise TypeError(f"gsearch.Server.search: queries of dtype {a.x.dtype} for {d} keys")
        shape = tuple(a.x.shape)
        with _StreamScope(a.fw, a.dev, None):
            flat = _convert(a, d).reshape(-1)
            out = _new_empty(a.fw, a.dev, (int(flat.shape[0]),), _INT64)
            _sync_stream(a.fw, a.dev)  # the queries, their conversion, out's previous users
            self._core.search(flat, code, out)
        return out.reshape(shape)

    def replace_keys(self, keys: Any) -> None:
        """Serves later searches from a copy of ``keys`` (sorted, the server's dtype; a CUDA
        server also takes them on its device); returns once the server has switched. No search
        sees a mix of the two key sets."""
        k, dev, _ = _vector("gsearch.Server.replace_keys", "keys", keys, self._dev is not None, self._dtype)
        if dev is not None and dev != self._dev:
            raise ValueError(f"gsearch.Server.replace_keys: keys on cuda:{dev}, the server on cuda:{self._dev}")
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
        return f"gsearch.Server({self.size} {self._dtype} keys, device='{self.device}')"
