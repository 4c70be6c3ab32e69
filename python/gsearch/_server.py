"""The search server, Server: a sorted key set kept resident and searched from many threads at
once (gsearch::server; seed 004's persistent search server, issue 22). Requests that arrive
together are served together: on the CPU by a loop thread, on a CUDA device by a persistent
kernel. numpy, torch and cupy arrays; the result in the queries' framework and device."""

from __future__ import annotations

import math as _math
import operator as _operator
import os as _os
import re as _re
from typing import Any, NamedTuple as _NamedTuple, Optional, Union

import numpy as _np

from . import _core
from ._arrays import (_ABOVE, _BELOW, _Arr, _Scalar, _StreamScope, _adopt, _cast, _classify, _convert, _cupy,
                      _is_bfloat16, _new_empty, _resolve, _torch, _weak_query, _xp)
from ._common import _KEY_DTYPE_NAMES, _KEY_DTYPES, _LEFT_I, _PRED_I, _RIGHT_I, _SIDES
from ._docs import public as _public

_INT64 = _np.dtype(_np.int64)
_CUDA_DEVICE = _re.compile(r"cuda(:[0-9]{1,4})?\Z")


# --- options -------------------------------------------------------------------------------------


def _count(fn: str, name: str, value: Any, lo: int, hi: int) -> int:
    """`value` as an int in [lo, hi]: TypeError (not an integer) or ValueError naming the option."""
    if isinstance(value, bool):
        raise TypeError(f"{fn}: {name} must be an integer, not {value!r}")
    try:
        v = _operator.index(value)
    except TypeError:
        raise TypeError(f"{fn}: {name} must be an integer, not {value!r}") from None
    if not lo <= v <= hi:
        raise ValueError(f"{fn}: {name} must be {lo} to {hi} (got {v})")
    return int(v)


def _seconds(fn: str, name: str, value: Any, hi: float, what: str = "") -> float:
    """`value` as a finite number of seconds in [0, hi] (TypeError or ValueError naming the option)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, _np.integer, _np.floating)):
        raise TypeError(f"{fn}: {name} must be a number of seconds, not {value!r}")
    v = float(value)
    if not (0.0 <= v <= hi):  # NaN too
        raise ValueError(f"{fn}: {name} must be a number of seconds from 0 to {hi:g}{what} (got {value!r})")
    return v


def _ms(seconds: float) -> int:
    """Seconds as the milliseconds of a timeout whose 0 means none: a positive time stays positive."""
    return 0 if seconds == 0 else max(1, round(seconds * 1000))


# --- queries: what searchsorted accepts, searched in the keys' dtype exactly ------------------------


class _Queries(_NamedTuple):
    """A search's queries made ready for a server of the keys' dtype: `flat` (1-D, contiguous, the
    keys' dtype, in the queries' framework and device), the side to search them on (`side`; an
    exact rewrite of the caller's), the results that are a constant instead (`fixed`: a boolean
    array over flat, or None) and that constant; the result's framework, device and shape, and
    whether it is a scalar (a numpy integer, as searchsorted returns for a scalar query)."""

    flat: Any
    side: int
    fixed: Any
    fixed_value: int
    fw: str
    dev: Optional[int]
    shape: tuple
    scalar: bool

    def finish(self, out: Any) -> Any:
        """The search's result (`out`: flat's results, int64) as the caller gets it."""
        if self.fixed is not None:
            out[self.fixed] = self.fixed_value
        if self.scalar:
            return out.reshape(())[()]
        return out.reshape(self.shape)


def _fill(fw: str, like: Any, value: Any) -> Any:
    if fw == "torch":
        return _torch().full_like(like, value)
    return _xp(fw).full_like(like, value)


def _into_keys_dtype(fw: str, x: Any, kd: _np.dtype, keys: _np.dtype, side: int) -> tuple:
    """Queries `x` (1-D, dtype kd: the dtype searchsorted compares them in, wider than the keys')
    as queries of the keys' dtype that find the same answers: (queries, side, fixed or None,
    fixed value). Each query v becomes the keys-dtype value next to it on the side's side: left
    finds the keys < v, and so does the smallest keys-dtype value >= v; right (and pred) the keys
    <= v, as the largest value <= v does. Integer keys search on the right the largest value < v
    (so that a v above every keys-dtype value, or NaN, finds all the keys), and where there is no
    such value (v at or below the dtype's least) the answer is a constant: 0, pred -1."""
    xp = _xp(fw)
    if keys.kind == "f":  # float32 keys, float64 queries (never out of range: +-inf exist)
        with _np.errstate(over="ignore"):  # (numpy's warnings: beyond float32's largest, +-inf)
            f = _cast(x, fw, keys)  # the nearest
            back = _cast(f, fw, kd)
            if side == _LEFT_I:
                move, toward = back < x, _math.inf
            else:
                move, toward = back > x, -_math.inf
            return xp.where(move, xp.nextafter(f, _fill(fw, f, toward)), f), side, None, 0
    info = _np.iinfo(keys)  # int32 / uint32 keys; int64 or float64 queries
    lo, hi = int(info.min), int(info.max)
    if side == _LEFT_I:
        below = x <= lo
        v = xp.ceil(x) - 1 if kd.kind == "f" else x - 1  # the largest integer < x (wraps only where below)
    else:
        below = x < lo
        v = xp.floor(x) if kd.kind == "f" else x
    q = xp.where(below, _fill(fw, v, lo), xp.clip(v, lo, hi))
    if kd.kind == "f":
        q = xp.where(xp.isnan(x), _fill(fw, q, hi), q)  # NaN: after every key
    fixed = below if bool(below.any()) else None
    return _cast(q, fw, keys), (_RIGHT_I if side == _LEFT_I else side), fixed, (-1 if side == _PRED_I else 0)


def _prepare(fn: str, a: Union[_Arr, _Scalar], keys: _np.dtype, side: int) -> _Queries:
    """Queries as gsearch.searchsorted takes them (a classified argument), for a server of keys of
    dtype `keys` (native) on side `side`: compared as searchsorted compares them (a Python int or
    float exactly; an array in numpy's promotion with the keys' dtype, TypeError where that would
    round, except int64 and uint64 queries of float64 keys, which numpy casts "safely" and
    numpy.searchsorted searches so; an empty Python sequence in the keys' dtype), each made the
    keys-dtype query with the same answer (_into_keys_dtype)."""
    if isinstance(a, _Scalar) and a.dtype is None:  # a Python int / float / bool: exact, as searchsorted
        try:
            q, to_right, const = _weak_query(a.value, keys, keys)
        except TypeError as e:
            raise TypeError(f"{fn}: {str(e).removeprefix('gsearch: ')}") from None
        fixed = None
        if const == _ABOVE:  # an integer beyond the keys' dtype, or NaN (integer keys): all the keys
            q, to_right = keys.type(_np.iinfo(keys).max), True
        elif const == _BELOW:
            q, fixed = keys.type(0), _np.ones(1, bool)
        if to_right and side == _LEFT_I:
            side = _RIGHT_I
        return _Queries(_np.full(1, q, keys), side, fixed, -1 if side == _PRED_I else 0, "numpy", None, (), True)
    if isinstance(a, _Scalar):  # a numpy scalar: a 0-d array of its dtype
        v = _np.asarray(a.value)
        a = _Arr(v, "numpy", None, v.dtype)
    a = _adopt(a, keys)  # an empty Python sequence: the keys' dtype
    try:
        kd = _resolve(keys, a.dtype)
    except TypeError as e:
        # A pair searchsorted refuses as lossy that numpy casts "safely" (int64 or uint64 queries,
        # float64 keys: a list of Python ints among them) is cast as numpy.searchsorted casts it.
        if a.dtype.kind not in "biu" or not _np.can_cast(a.dtype, keys, casting="safe"):
            raise TypeError(f"{fn}: {str(e).removeprefix('gsearch: ')}") from None
        kd = keys
    shape = tuple(a.x.shape)
    x = _convert(a, kd).reshape(-1)
    fixed, value = None, 0
    if kd != keys:
        x, side, fixed, value = _into_keys_dtype(a.fw, x, kd, keys, side)
    return _Queries(x, side, fixed, value, a.fw, a.dev, shape, a.fw == "numpy" and not shape)


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
        raise TypeError(f"{fn}: unsupported dtype {a.x.dtype} of {name} ({', '.join(_KEY_DTYPE_NAMES)})")
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
        CPU: threads of each batch's searches, 0 to 2**16 (0: all).
    blocks : int
        CUDA: the persistent kernel's blocks, one an SM: its share of the GPU, 0 to 2**20 (0:
        half the SMs).
    staging_queries : int
        CUDA: queries per request slot staged through page-locked memory when the queries or
        the result are in pageable host memory (numpy arrays); a larger request is served in
        pieces of this many.
    idle_sleep : float
        CUDA: the idle kernel's longest sleep between polls of the ring, in seconds (0 to 1).
    idle_release : float
        CUDA: idle this long (seconds, 0 to 3600; no sooner than 0.2 ms), the kernel leaves the
        GPU, and the next request launches it again (some microseconds more for that request);
        0: it never leaves.

    Each option is checked before the server starts: TypeError for a value that is not an
    integer (a number for the times), ValueError naming the option for one out of range
    (``ring_slots`` 1 to 2**20, the other counts >= 1 or >= 0 as their meaning allows,
    ``max_delay`` 0 to 2**40 microseconds; NaN and infinities are out of range).

    On a CUDA server, search takes queries in host memory or on the server's device (a CUDA
    array on another device: ValueError) and answers in the queries' framework and device.
    The server kernel reads and writes CUDA arrays unordered with torch's or cupy's streams:
    search waits for the current stream first (a stream synchronize), and its result is
    complete when it returns.

    .. warning:: While a CUDA server's kernel runs, calls that wait for the whole device wait
       for it to leave the GPU, which it does once it has been idle for ``idle_release`` (2 ms
       by default): ``torch.cuda.synchronize()``, ``cupy.cuda.Device().synchronize()``,
       ``cudaDeviceSynchronize`` and ``cudaFree`` (``torch.cuda.empty_cache()``, cupy's
       ``free_all_blocks()``) among them, and the first launch of any CUDA kernel under CUDA's
       lazy module loading (the default; torch's and cupy's kernels load so). Beside a server
       that is busy without a pause they wait as long; synchronize streams instead. With
       ``idle_release=0`` the kernel never leaves, and they wait for the server to close, i.e.
       forever from the thread that would close it: then set ``CUDA_MODULE_LOADING=EAGER``
       before CUDA starts and run the framework work you will need beside the server once
       before starting it.

    Use it as a context manager, or call :meth:`close`: afterwards a search (or :meth:`listen`)
    raises ValueError.

    A server belongs to the process that made it: its loop thread (its kernel) does not cross
    ``fork()``. In a child made by fork (``multiprocessing``'s default start method on Linux),
    every method raises RuntimeError naming the fork instead of blocking for ever, and dropping
    the child's copy leaves the parent's server (and its :meth:`listen` socket) serving. Make
    the server in the child, or use the ``"spawn"`` or ``"forkserver"`` start method.
    """

    def __init__(self, keys: Any, *, device: str = "cpu", ring_slots: int = 256, max_batch_requests: int = 256,
                 max_batch_queries: int = 1 << 22, preferred_batch_queries: int = 0, max_delay: float = 0.0,
                 threads: int = 0, blocks: int = 0, staging_queries: int = 4096, idle_sleep: float = 1e-6,
                 idle_release: float = 2e-3) -> None:
        if not isinstance(device, str) and type(device).__name__ == "device" and hasattr(device, "type"):
            device = str(device)  # a torch.device
        if not isinstance(device, str) or not (device == "cpu" or _CUDA_DEVICE.match(device)):
            raise ValueError(f"gsearch.Server: device must be 'cpu' or 'cuda' (or 'cuda:N'), not {device!r}")
        fn, big = "gsearch.Server", 2**62
        ring_slots = _count(fn, "ring_slots", ring_slots, 1, 1 << 20)
        max_batch_requests = _count(fn, "max_batch_requests", max_batch_requests, 1, big)
        max_batch_queries = _count(fn, "max_batch_queries", max_batch_queries, 1, big)
        preferred_batch_queries = _count(fn, "preferred_batch_queries", preferred_batch_queries, 0, big)
        max_delay_us = round(_seconds(fn, "max_delay", max_delay, 2**40 / 1e6) * 1e6)
        threads = _count(fn, "threads", threads, 0, 1 << 16)
        blocks = _count(fn, "blocks", blocks, 0, 1 << 20)
        staging_queries = _count(fn, "staging_queries", staging_queries, 1, big)
        idle_sleep_ns = round(_seconds(fn, "idle_sleep", idle_sleep, 1.0) * 1e9)
        idle_release_ns = round(_seconds(fn, "idle_release", idle_release, 3600.0) * 1e9)
        k, _, self._dtype = _vector(fn, "keys", keys, device != "cpu")
        self._core = _core.Server(k, device, ring_slots, max_batch_requests, max_batch_queries,
                                  preferred_batch_queries, max_delay_us, threads, blocks, staging_queries,
                                  idle_sleep_ns, idle_release_ns)
        dev = self._core.device
        self._dev: Optional[int] = None if dev == "cpu" else int(dev.split(":")[1])

    @property
    def dtype(self) -> _np.dtype:
        """The keys' dtype (the dtype searched in: queries of others are compared as
        :func:`gsearch.searchsorted` compares them, see :meth:`search`)."""
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
        ``keys[i] <= q``, else -1). The queries are what :func:`gsearch.searchsorted` takes,
        compared as it compares them: Python ints and floats exactly (an int beyond the keys'
        dtype is above or below every key), sequences as numpy makes them arrays (``[]``: the
        keys' dtype), arrays of another dtype in numpy's promotion with the keys' dtype
        (TypeError where that promotion would round, as in searchsorted: int64 keys and float
        queries, uint64 keys and signed ones; but int64 and uint64 queries of float64 keys are
        cast to float64, as numpy casts them); each query is then searched as the value of the
        keys' dtype that finds the same keys. The result is in q's framework and on its
        device: numpy (also for Python sequences), torch (CPU, or CUDA on the server's device)
        or cupy; a numpy integer for a scalar query (a 0-d tensor for a 0-d tensor). A CPU
        server takes host arrays only. CUDA queries: search first waits for the current torch
        / cupy stream of their device (the server kernel is not ordered with it); the result is
        complete when search returns."""
        fn = "gsearch.Server.search"
        code = _SIDES.get(side) if isinstance(side, str) else None
        if code is None:
            raise ValueError(f"{fn}: side must be 'left', 'right' or 'pred' (got {side!r})")
        if type(q) is _np.ndarray and q.dtype == self._dtype:  # the common case, in short
            one_d = q.ndim == 1 and q.flags.c_contiguous  # (a vector as it is: no view made)
            flat = q if one_d else _np.ascontiguousarray(q).reshape(-1)
            out = _np.empty(flat.shape[0], _INT64)
            self._core.search(flat, code, out)
            return out if one_d else out.reshape(q.shape) if q.ndim else out[0]
        a = _classify(q, "queries")
        if isinstance(a, _Arr) and a.dev is not None and a.dev != self._dev:
            if self._dev is None:
                raise ValueError(f"{fn}: queries on cuda:{a.dev}: a CPU server takes host arrays "
                                 "(device='cuda' serves CUDA arrays)")
            raise ValueError(f"{fn}: queries on cuda:{a.dev}, the server on cuda:{self._dev} "
                             "(host memory or the server's device)")
        fw, dev = (a.fw, a.dev) if isinstance(a, _Arr) else ("numpy", None)
        with _StreamScope(fw, dev, None):
            p = _prepare(fn, a, self._dtype, code)
            out = _new_empty(fw, dev, (int(p.flat.shape[0]),), _INT64)
            _sync_stream(fw, dev)  # the queries, their conversion, out's previous users
            self._core.search(p.flat, p.side, out)
            return p.finish(out)

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
        ``latency_us_log2[i]``: requests answered in 2^i to 2^(i+1) - 1 microseconds); where
        the requests' time went, sums in ns: ``host_submit_ns`` (the call to the request's
        publication), ``host_wait_ns`` (to its answer seen), ``host_finish_ns`` (to the call's
        return); on the GPU, the kernel's part of batches of one request, in its SM's cycles
        (``kernel_clock_khz`` converts): ``kernel_timed_batches``, ``kernel_take_cycles`` (the
        poll that read the request to its search begun), ``kernel_serve_cycles`` (to the answer
        stored), ``kernel_launches`` (1, and one more each time a request found the kernel gone
        from an idle GPU: ``idle_release``), ``kernel_relaunch_ns`` (the host's time in those later
        launches). Requests from other processes (:meth:`listen`) count too. ``socket``: while the server listens,
        its socket front end's counts since :meth:`listen` (``connections`` accepted,
        ``requests`` answered, ``errors`` answered or cut short, ``busy`` answers, connections
        ``open`` now, ``bytes_in_flight`` held now and their ``peak_bytes_in_flight``), else
        None."""
        d = dict(self._core.stats())
        d["socket"] = self._core.socket_stats()
        return d

    def listen(self, path: Optional[Union[str, "os.PathLike[str]"]] = None, *, port: Optional[int] = None,
               socket_mode: int = 0o600, group: Optional[str] = None, max_queries: int = 1 << 22,
               max_bytes_in_flight: int = 1 << 30, max_connections: int = 1024, max_connections_per_peer: int = 0,
               workers: int = 0, request_timeout: float = 30.0,
               idle_timeout: float = 60.0) -> Union[str, int, tuple]:
        """Serves this server to other processes too: :class:`gsearch.Client` and ``gsearch
        client`` connect to a Unix-domain socket at ``path`` (``~`` expanded) and / or to
        127.0.0.1:``port`` (``port=0``: any free port) and speak gsearch's socket protocol
        (docs/design.md). Their requests are batched with this process's. A stale socket file
        at ``path`` is replaced; a path where a server answers (or whose lock file another
        server holds), or a file that is not a socket, is refused (ValueError).

        Who can connect: the Unix-domain socket is created with ``socket_mode`` (0o600, the
        default: this user only); with ``group`` (a group's name) and a mode that lets the group
        write (``socket_mode=0o660``), that group's members too. Over TCP every local user can
        connect. A client that can connect can learn the whole key set by searching it.

        Returns the address a Client takes: ``path`` (expanded) when only a path was given, the
        port bound (an int, the free port chosen for ``port=0``) when only a port was, and
        ``(path, port)`` when both were. :meth:`stop_listening` and :meth:`close` stop it and
        remove the socket file; listen after :meth:`close` raises ValueError, and so does a
        second listen before :meth:`stop_listening`.

        Options (keyword-only; the defaults are gsearch::socket_options', ValueError naming an
        option out of range):

        socket_mode : int
            The socket file's permission bits, 0 to 0o777 (0o600).
        group : str, optional
            The socket file's group, by name (None: the process's). Needs a ``socket_mode``
            that gives the group write permission (0o660): connecting takes it.
        max_queries : int
            The most queries a request may hold, 1 to 2**32 (2**22): a larger one is refused from
            its header, unread (ValueError "too large" at the client).
        max_bytes_in_flight : int
            The memory budget: bytes of requests and responses held at once, every connection
            together (2**30). Beyond it requests wait; one that needs more than all of it is
            refused ("too large").
        max_connections : int
            Connections open at once, idle ones included (1024); beyond it a new connection is
            answered "busy" (:class:`gsearch.Client.Busy` at the client) and closed.
        max_connections_per_peer : int
            ... of one user on the Unix-domain socket (TCP peers are not known), 0 to
            ``max_connections`` (0: half of it), so that no user can lock the others out.
        workers : int
            Threads that take whole requests to the server: the most requests searched at once
            (0: 64).
        request_timeout : float
            Seconds for a request's bytes to arrive, from its first (30; 0: no limit); a
            connection that takes longer is closed.
        idle_timeout : float
            Seconds a connection may stay idle between requests before it is closed (60; 0:
            never). A :class:`gsearch.Client` reopens a connection closed while idle."""
        fn = "gsearch.Server.listen"
        if path is None and port is None:
            raise ValueError(f"{fn}: give a socket path, a port (0: any free port), or both")
        p = ""
        if path is not None:
            if not isinstance(path, (str, bytes, _os.PathLike)):
                raise TypeError(f"{fn}: path must be a socket path (str or os.PathLike), not {path!r}")
            p = _os.fsdecode(_os.path.expanduser(_os.fspath(path)))
            if not p:
                raise ValueError(f"{fn}: the socket path is empty")
        tcp = -1 if port is None else _count(fn, "port", port, 0, 65535)
        mode = _count(fn, "socket_mode", socket_mode, 0, 0o777)
        if group is not None:
            if not isinstance(group, str) or not group:
                raise TypeError(f"{fn}: group must be a group's name (a non-empty str), not {group!r}")
            if path is None:
                raise ValueError(f"{fn}: group={group!r} applies to the Unix-domain socket: give a path too "
                                 "(over a port every local user can connect)")
            if not mode & 0o020:
                raise ValueError(f"{fn}: group={group!r} with socket_mode={mode:#o}, which does not let the group "
                                 "write to the socket (connecting needs it): socket_mode=0o660")
        connections = _count(fn, "max_connections", max_connections, 1, 1 << 20)
        bound = self._core.listen(
            p, tcp, mode, "" if group is None else group,
            _count(fn, "max_queries", max_queries, 1, int(_core.SOCKET_DEFAULTS["max_queries_limit"])),
            _count(fn, "max_bytes_in_flight", max_bytes_in_flight, 1, 2**63 - 1), connections,
            _count(fn, "max_connections_per_peer", max_connections_per_peer, 0, connections),
            _count(fn, "workers", workers, 0, 1 << 12),
            _ms(_seconds(fn, "request_timeout", request_timeout, 2**30, " (0: no limit)")),
            _ms(_seconds(fn, "idle_timeout", idle_timeout, 2**30, " (0: never)")))
        if path is None:
            return int(bound)
        return p if port is None else (p, int(bound))

    def stop_listening(self) -> None:
        """Stops serving other processes: answers the requests they began, closes their
        connections, removes the socket file (idempotent; a concurrent call, or a
        :meth:`listen`, waits for this one to finish). This process's searches go on."""
        self._core.stop_listening()

    def close(self) -> None:
        """Stops listening (:meth:`stop_listening`), refuses new searches, answers those in flight,
        stops the server. Idempotent, and safe from several threads at once (a second close waits
        for the first). Afterwards :meth:`search` and :meth:`listen` raise ValueError."""
        self._core.shutdown()

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"gsearch.Server({self.size} {self._dtype} keys, device='{self.device}')"
