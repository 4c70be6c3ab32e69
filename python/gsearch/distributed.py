"""gsearch.distributed: search, find, isin, sort, merge and join over data spread across
processes, through the caller's communicator (gsearch/dist.hpp in C++). gsearch moves no bytes
itself: torch.distributed (NCCL for CUDA tensors, gloo or MPI for CPU tensors) or mpi4py does.

SPMD: every rank calls the same function, in the same order, with its own part of the data, and
gets its own part of the result. The parts are in rank order: rank r's elements follow rank
r - 1's, and indices are global (rank r's element i is ``offset_r + i``). Every result equals the
single-process function on the concatenation of the ranks' data (the results of ``sort``,
``merge`` and ``join`` as the concatenation of the ranks' results).

The communicator, `comm`:

- None (the default): torch.distributed's default group, once ``init_process_group`` ran;
- a ``torch.distributed.ProcessGroup``, or :class:`TorchComm` (NCCL: CUDA tensors; gloo, MPI:
  CPU arrays);
- an ``mpi4py.MPI.Intracomm``, or :class:`MpiComm` (CPU arrays);
- any object with ``rank``, ``size``, ``device`` (True: it moves CUDA memory),
  ``allgather(send, recv)`` and ``alltoallv(send, send_counts, recv, recv_counts)`` (the
  protocol of the adapters below: 1-D uint8 arrays over gsearch's memory, valid during the call,
  and lists of byte counts per rank).

The ranks fail together: a call first agrees on its arguments (one small allgather: an error
on any rank, such as an array that is not 1-D, a bad ``side``, a value the dtype cannot hold, is
raised on every rank), then checks that the ranks pass one dtype (after the single-process
promotion) on one kind of device (TypeError on every rank if not), and the operation itself
agrees before each of its exchanges (gsearch/dist/agreement.hpp). The rank that failed raises its
own error; the others an error of the same type naming it (``gsearch.distributed.sort: rank 0 of
2 failed: ...``). No rank is left waiting in a collective.
CUDA calls run on the current stream of the arrays' framework, which the collectives use too.
"""

from __future__ import annotations

import contextlib as _contextlib
import copy as _copy
import sys as _sys
import warnings as _warnings
from typing import Any, Optional

import numpy as _np

from . import _core
from ._arrays import (
    _BOOL,
    _INT64,
    ArrayLike,
    _Arr,
    _Scalar,
    _StreamScope,
    _adopt,
    _cast,
    _choice,
    _classify,
    _convert,
    _new_empty,
    _resolve,
    _shape,
    _where,
)
from ._docs import fill as _fill
from ._find import _ELEMENT_NAMES, _FIND_MODES, _FIND_OPS, _IN_OP, _ISIN_METHODS, _exact_value, _find_data
from ._merge import _JOIN_KINDS, _LEFT_ONLY_JOINS, _one, _pair

__all__ = [
    "MpiComm",
    "TorchComm",
    "count",
    "find",
    "isin",
    "join",
    "merge",
    "predecessor",
    "searchsorted",
    "sort",
]

_SIDES = {"left": _core.SIDES["left"], "right": _core.SIDES["right"]}
_PRED = _core.SIDES["pred"]
# find's modes: the library's first, any and count, and 'all' (find_all); 'random' is not
# distributed.
_DIST_FIND_MODES = {"first": _FIND_MODES["first"], "any": _FIND_MODES["any"], "count": _FIND_MODES["count"], "all": -1}
_KEY_CODES = {_np.dtype(n): i for i, n in enumerate(_core.KEY_DTYPES)}
_INT_MAX = 2**31 - 1  # MPI's counts and displacements are C ints
_PROTOCOL = ("rank", "size", "device", "allgather", "alltoallv")


def _public(fn: Any) -> Any:
    """Fills the shared docstring paragraphs (_docs.py) and names this module as the home."""
    fn.__doc__ = _fill(fn.__doc__)
    fn.__module__ = __name__
    return fn


# --- the adapters ---------------------------------------------------------------------------------


def _offsets(counts: list) -> list:
    """The exclusive prefix sums of counts, and the total last."""
    out = [0]
    for c in counts:
        out.append(out[-1] + int(c))
    return out


def _unsupported(e: Exception) -> bool:
    """A backend's refusal of a collective it lacks (gloo's all_to_all in some torch versions),
    told apart from a failure of the exchange itself."""
    msg = str(e).lower()
    return any(s in msg for s in ("not supported", "unsupported", "does not support", "not implemented"))


@_public
class TorchComm:
    """gsearch's communicator over a torch.distributed process group.

    Parameters
    ----------
    group : torch.distributed.ProcessGroup, optional
        The group (None: the default group, which must be initialized when a call runs).

    Notes
    -----
    NCCL groups move CUDA tensors: the operations then take CUDA arrays, and the collectives run
    on torch's current stream, the one the operation runs on (NCCL takes one GPU per rank).
    gloo and MPI groups move CPU tensors. A group with both (``'cpu:gloo,cuda:nccl'``) takes
    either, by the arrays of the call. all_gather_into_tensor and all_to_all_single with split
    sizes do the work; where the backend lacks them (gloo's all_to_all in some torch versions)
    all_gather and point-to-point isend / irecv do.
    """

    # The (collective, backend) pairs found unsupported: the fallback is used from then on.
    _fallbacks: set = set()

    def __init__(self, group: Any = None) -> None:
        try:
            import torch
            import torch.distributed as dist
        except ImportError as e:
            raise TypeError("gsearch.distributed.TorchComm needs torch (torch.distributed)") from e
        if not dist.is_available():
            raise TypeError("gsearch.distributed.TorchComm: this torch is built without torch.distributed")
        self._torch, self._dist, self.group = torch, dist, group
        self._cuda: Optional[int] = None  # the CUDA device of a call on device memory

    @property
    def rank(self) -> int:
        """This process's rank in the group."""
        return self._dist.get_rank(self.group)

    @property
    def size(self) -> int:
        """The number of ranks of the group."""
        return self._dist.get_world_size(self.group)

    @property
    def device(self) -> bool:
        """Whether the buffers are CUDA memory (NCCL), set for each call (see _for_device)."""
        return self._cuda is not None

    def _backend(self) -> str:
        return str(self._dist.get_backend(self.group)).lower()

    def _for_device(self, fn: str, dev: Optional[int]) -> "TorchComm":
        """This adapter for a call whose arrays are on `dev` (None: the CPU); ValueError where the
        group's backend does not move that memory."""
        backend = self._backend()
        if dev is None and not any(b in backend for b in ("gloo", "mpi", "ucc")):
            raise ValueError(
                f"gsearch.distributed.{fn}: the arrays are on the CPU but the process group's backend "
                f"is {backend!r}, which moves CUDA tensors: use a gloo (or MPI) group for CPU arrays"
            )
        if dev is not None and not any(b in backend for b in ("nccl", "ucc")):
            raise ValueError(
                f"gsearch.distributed.{fn}: the arrays are CUDA arrays (cuda:{dev}) but the process "
                f"group's backend is {backend!r}, which moves host memory: use an NCCL group for CUDA "
                "tensors, or move the arrays to the CPU"
            )
        bound = _copy.copy(self)
        bound._cuda = dev
        return bound

    def _tensor(self, x: Any) -> Any:
        """x (numpy, torch, or a CUDA array with DLPack) as a torch tensor on the same memory."""
        torch = self._torch
        if isinstance(x, torch.Tensor):
            return x
        if isinstance(x, _np.ndarray):
            with _warnings.catch_warnings():  # a send buffer is read-only; torch only reads it
                _warnings.simplefilter("ignore", UserWarning)
                return torch.from_numpy(x)
        return torch.from_dlpack(x)

    def _collective(self, name: str, fast: Any, fallback: Any) -> None:
        key = (name, self._backend())
        if key not in TorchComm._fallbacks:
            try:
                return fast()
            except RuntimeError as e:
                if not _unsupported(e):
                    raise
                TorchComm._fallbacks.add(key)
        return fallback()

    def allgather(self, send: Any, recv: Any) -> None:
        """recv (host memory) = every rank's send, in rank order. On an NCCL group the bytes go
        through the call's CUDA device (NCCL moves device memory only)."""
        s, r = self._tensor(send), self._tensor(recv)
        if self._cuda is not None:
            dev = self._torch.device("cuda", self._cuda)
            staged = self._torch.empty(r.numel(), dtype=r.dtype, device=dev)
            self._gather(s.to(dev), staged)
            r.copy_(staged.cpu())
        else:
            self._gather(s, r)

    def _gather(self, s: Any, r: Any) -> None:
        d, g = self._dist, self.group
        self._collective(
            "all_gather_into_tensor",
            lambda: d.all_gather_into_tensor(r, s, group=g),
            lambda: d.all_gather(list(r.view(self.size, -1).unbind(0)), s, group=g),
        )

    def alltoallv(self, send: Any, send_counts: list, recv: Any, recv_counts: list) -> None:
        """Byte counts per rank, in rank order: all_to_all_single with split sizes."""
        s, r = self._tensor(send), self._tensor(recv)
        d, g = self._dist, self.group
        self._collective(
            "all_to_all_single",
            lambda: d.all_to_all_single(r, s, recv_counts, send_counts, group=g),
            lambda: self._pairwise(s, send_counts, r, recv_counts),
        )

    def _pairwise(self, s: Any, send_counts: list, r: Any, recv_counts: list) -> None:
        """all_to_all_single by point-to-point messages, for backends that lack it."""
        d, g, me = self._dist, self.group, self.rank
        sd, rd = _offsets(send_counts), _offsets(recv_counts)
        requests = []
        for peer in range(self.size):
            out = s[sd[peer] : sd[peer + 1]]
            into = r[rd[peer] : rd[peer + 1]]
            if peer == me:
                into.copy_(out)
                continue
            global_peer = peer if g is None else d.get_global_rank(g, peer)
            if out.numel():
                requests.append(d.isend(out, global_peer, group=g))
            if into.numel():
                requests.append(d.irecv(into, global_peer, group=g))
        for q in requests:
            q.wait()


@_public
class MpiComm:
    """gsearch's communicator over an mpi4py intracommunicator (host memory).

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
        The communicator (``MPI.COMM_WORLD``, or one split from it).

    Notes
    -----
    Allgather and Alltoallv on bytes. MPI's counts and displacements are C ints: an exchange
    where some rank has more than `max_message` bytes (2**31 - 1) to send or to receive goes
    instead as point-to-point messages of at most `max_message` bytes each. The ranks agree on
    that choice with one Allreduce of a flag per exchange.
    """

    max_message = 2**31 - 1  # the largest message of an exchange (lowered by the tests)
    device = False

    def __init__(self, comm: Any) -> None:
        try:
            from mpi4py import MPI
        except ImportError as e:
            raise TypeError("gsearch.distributed.MpiComm needs mpi4py") from e
        if not isinstance(comm, MPI.Intracomm):
            raise TypeError(f"gsearch.distributed.MpiComm: comm must be an mpi4py.MPI.Intracomm, not {type(comm).__name__}")
        self._MPI, self.comm = MPI, comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()

    def allgather(self, send: _np.ndarray, recv: _np.ndarray) -> None:
        """recv = every rank's send, in rank order (every rank sends as many bytes)."""
        if recv.nbytes > _INT_MAX:  # counts, samples, first keys: far below it
            raise ValueError(f"gsearch.distributed.MpiComm: an allgather of {recv.nbytes} bytes exceeds MPI's int counts")
        B = self._MPI.BYTE
        self.comm.Allgather([send, B], [recv, B])

    def alltoallv(self, send: _np.ndarray, send_counts: list, recv: _np.ndarray, recv_counts: list) -> None:
        """send_counts[r] bytes of send to rank r, recv_counts[r] bytes from rank r into recv."""
        MPI, B = self._MPI, self._MPI.BYTE
        sd, rd = _offsets(send_counts), _offsets(recv_counts)
        # The totals bound every count and displacement of this rank's side of the call.
        fits = _np.array([int(max(sd[-1], rd[-1]) <= self.max_message)], dtype=_np.int32)
        self.comm.Allreduce(MPI.IN_PLACE, fits, op=MPI.MIN)
        if fits[0]:
            self.comm.Alltoallv([send, (send_counts, sd[:-1]), B], [recv, (recv_counts, rd[:-1]), B])
        else:
            self._pairwise(send, sd, recv, rd)

    def _pairwise(self, send: _np.ndarray, sd: list, recv: _np.ndarray, rd: list) -> None:
        """The exchange as messages of at most max_message bytes, tagged by their order."""
        B, step, requests = self._MPI.BYTE, self.max_message, []
        for peer in range(self.size):
            if peer == self.rank:
                recv[rd[peer] : rd[peer + 1]] = send[sd[peer] : sd[peer + 1]]
                continue
            for tag, at in enumerate(range(sd[peer], sd[peer + 1], step)):
                requests.append(self.comm.Isend([send[at : min(at + step, sd[peer + 1])], B], peer, tag))
            for tag, at in enumerate(range(rd[peer], rd[peer + 1], step)):
                requests.append(self.comm.Irecv([recv[at : min(at + step, rd[peer + 1])], B], peer, tag))
        self._MPI.Request.Waitall(requests)


# --- the communicator of a call -------------------------------------------------------------------


def _communicator(fn: str, comm: Any) -> Any:
    """The adapter of `comm` (see the module's docstring); TypeError for anything else."""
    torch = _sys.modules.get("torch")
    tdist = getattr(torch, "distributed", None) if torch is not None else None
    if comm is None:
        if tdist is not None and tdist.is_available() and tdist.is_initialized():
            return TorchComm()
        raise ValueError(
            f"gsearch.distributed.{fn}: no communicator: comm=None takes torch.distributed's default "
            "group, which is not initialized (init_process_group); or pass comm= a torch ProcessGroup "
            "or an mpi4py communicator"
        )
    if isinstance(comm, (TorchComm, MpiComm)):
        return comm
    if tdist is not None and tdist.is_available() and isinstance(comm, tdist.ProcessGroup):
        return TorchComm(comm)
    mpi = _sys.modules.get("mpi4py.MPI")
    if mpi is not None and isinstance(comm, mpi.Comm):
        return MpiComm(comm)
    if all(hasattr(comm, name) for name in _PROTOCOL):
        return comm
    raise TypeError(
        f"gsearch.distributed.{fn}: comm must be None (torch.distributed's default group), a torch "
        "ProcessGroup, an mpi4py communicator, TorchComm, MpiComm, or an object with rank, size, "
        f"device, allgather and alltoallv; not {type(comm).__name__}"
    )


def _bind(fn: str, comm: Any, dev: Optional[int]) -> Any:
    """The communicator of a call whose arrays are on `dev` (None: the CPU); ValueError where it
    does not move that memory."""
    c = _communicator(fn, comm)
    if isinstance(c, TorchComm):
        return c._for_device(fn, dev)
    if bool(c.device) != (dev is not None):
        what = f"CUDA arrays ({_where(dev)})" if dev is not None else "CPU arrays"
        moves = "CUDA memory" if c.device else "host memory"
        raise ValueError(
            f"gsearch.distributed.{fn}: the arrays are {what} but the communicator ({type(c).__name__}) "
            f"moves {moves}: use torch.distributed with NCCL for CUDA tensors, gloo or mpi4py for CPU arrays"
        )
    return c


# The exception types an agreement carries (its code), so that every rank raises the failed
# rank's type; 1, 2 and 4 are the library's codes too (invalid_argument, out_of_memory, error).
_ERROR_CODES = {ValueError: 1, MemoryError: 2, RuntimeError: 4, TypeError: 5, IndexError: 6, OverflowError: 7}
_CODE_ERRORS = {code: kind for kind, code in _ERROR_CODES.items()}


def _code_of(e: BaseException) -> int:
    return next((code for kind, code in _ERROR_CODES.items() if isinstance(e, kind)), 4)


def _agreement_comm(fn: str, comm: Any) -> Any:
    """The communicator of a call's agreements, known before its arrays are: the host memory of a
    gloo / MPI group, the current CUDA device of an NCCL one (the agreements' bytes go through it)."""
    c = _communicator(fn, comm)
    if isinstance(c, TorchComm):
        backend = c._backend()
        host = any(b in backend for b in ("gloo", "mpi", "ucc"))
        bound = _copy.copy(c)
        bound._cuda = None if host else c._torch.cuda.current_device()
        return bound
    return c


def _agreed(fn: str, comm: Any, prepare: Any) -> Any:
    """prepare() (a call's argument checks) on this rank, then one agreement of every rank: its
    value where all succeeded; else every rank raises: this rank its own error, the others the
    lowest failed rank's, as the same type, naming it."""
    c = _agreement_comm(fn, comm)
    mine: Optional[BaseException] = None
    try:
        value = prepare()
    except Exception as e:  # noqa: BLE001 (agreed, then raised again below)
        mine, value = e, None
    report = _core.dist_agree(c, 0 if mine is None else _code_of(mine), "" if mine is None else str(mine))
    if report is None:
        return value
    if mine is not None:
        raise mine
    rank, code, what, _ = report
    raise _CODE_ERRORS.get(code & 0xFF, RuntimeError)(
        f"gsearch.distributed.{fn}: rank {rank} of {int(c.size)} failed: {what}"
    )


@_contextlib.contextmanager
def _together(c: Any):
    """A call's own work between its agreements and the library's operation (conversions, the
    output's allocation): an error here meets the operation's first agreement on the other ranks
    (the library's protocol), so that they raise too; then this rank raises its own."""
    try:
        yield
    except Exception as e:
        with _contextlib.suppress(Exception):
            _core.dist_agree(c, _code_of(e), str(e))
        raise


def _agree(c: Any, fn: str, d: _np.dtype, dev: Optional[int]) -> None:
    """TypeError on every rank unless all compute in dtype d on the same kind of device: a rank
    of another dtype would send elements of another size and the exchange would mix them up."""
    size = int(c.size)
    mine = _np.array([_KEY_CODES[d], dev is not None], dtype=_np.int64)
    everyone = _np.empty(2 * size, dtype=_np.int64)
    c.allgather(mine.view(_np.uint8), everyone.view(_np.uint8))
    rows = everyone.reshape(size, 2)
    if (rows != rows[0]).any():
        ranks = ", ".join(
            f"rank {r}: {_core.KEY_DTYPES[k]} on {'CUDA' if g else 'the CPU'}" for r, (k, g) in enumerate(rows)
        )
        raise TypeError(
            f"gsearch.distributed.{fn}: the ranks' arrays differ in dtype or device ({ranks}); every "
            "rank must pass arrays of one dtype (after promotion) on one kind of device"
        )


def _array(x: Any, what: str) -> _Arr:
    """x as an array (any shape; a sequence as np.asarray takes it, a scalar 0-d)."""
    X = _classify(x, what)
    if isinstance(X, _Scalar):
        arr = _np.asarray(X.value)
        X = _Arr(arr, "numpy", None, arr.dtype)
    return X


def _one_device(fn: str, A: _Arr, B: _Arr, names: tuple) -> None:
    if A.dev != B.dev:
        raise ValueError(
            f"gsearch.distributed.{fn}: {names[0]} on {_where(A.dev)} but {names[1]} on {_where(B.dev)}: "
            "move them to one device"
        )


# --- search ---------------------------------------------------------------------------------------


def _search(fn: str, a: Any, v: Any, side: Any, comm: Any, sharded: bool) -> Any:
    def prepare() -> tuple:
        side_code = side() if callable(side) else side
        A = _array(a, "a")
        if len(_shape(A)) != 1:
            raise ValueError(f"gsearch.distributed.{fn}: a must be 1-D, not of shape {_shape(A)}")
        V = _array(v, "v")
        A, V = _adopt(A, V), _adopt(V, A)
        _one_device(fn, A, V, ("a", "v"))
        return A, V, _resolve(A.dtype, V.dtype), side_code, _bind(fn, comm, A.dev)

    A, V, kd, side_code, c = _agreed(fn, comm, prepare)
    _agree(c, fn, kd, A.dev)
    fw, dev, shape = A.fw, A.dev, _shape(V)
    with _StreamScope(fw, dev, None) as scope:
        with _together(c):
            out = _new_empty(fw, dev, shape, _INT64)
            queries = _convert(V, kd).reshape(-1)
            keys = _convert(A, kd)
        _core.dist_search(c, fw, keys, queries, out.reshape(-1), side_code, not sharded, scope.handle)
    return out[()] if fw == "numpy" and not shape else out


@_public
def searchsorted(a: ArrayLike, v: ArrayLike, side: str = "left", *, comm: Any = None, sharded: bool = True) -> Any:
    """numpy.searchsorted over keys spread across the ranks: global insertion indices.

    Parameters
    ----------
    a : array_like, 1-D
        This rank's keys, sorted (NaN last, -0.0 equal to 0.0). With `sharded` (the default), one
        range of the global sorted order: the keys of all ranks, concatenated in rank order, are
        sorted (as :func:`sort` leaves them; empty parts are fine). Without, every rank holds all
        the keys (replicated: nothing is exchanged).
    v : array_like
        This rank's queries, any shape and order.
    side : {'left', 'right'}, optional
        As in numpy.
    comm : communicator, optional
        See the module's docstring (None: torch.distributed's default group).
    sharded : bool, optional
        Whether `a` is this rank's part of the keys (True) or all of them (False).

    Returns
    -------
    indices : int64 array of `v`'s shape
        Indices into the concatenation of all ranks' keys: ``np.searchsorted(all_keys, v,
        side)``. numpy for numpy input (a numpy integer for a scalar `v`), else `a`'s framework
        and device.

    Raises
    ------
    ValueError
        A bad `side`, `a` not 1-D, the arrays on two devices, a communicator that does not move
        their memory (CUDA arrays need NCCL), or no communicator.
    TypeError
        Dtypes whose promotion would round, ranks of different dtypes, a `comm` of another type.

    Notes
    -----
    Sharded keys: every rank's key count and first key are gathered, each query goes to the
    rank whose range holds its answer and its answer comes back (an all-to-all each way).
    """
    return _search("searchsorted", a, v, lambda: _choice("distributed.searchsorted", "side", side, _SIDES), comm, sharded)


@_public
def predecessor(a: ArrayLike, v: ArrayLike, *, comm: Any = None, sharded: bool = True) -> Any:
    """gsearch.predecessor over keys spread across the ranks: the global index of the largest
    key <= each query, or -1 (``searchsorted(a, v, 'right') - 1``).

    Parameters
    ----------
    a, v, comm, sharded
        As in :func:`searchsorted`.

    Returns
    -------
    indices : int64 array of `v`'s shape
        As in :func:`searchsorted`.

    Raises
    ------
    ValueError, TypeError
        As in :func:`searchsorted`.
    """
    return _search("predecessor", a, v, _PRED, comm, sharded)


# --- find, isin -----------------------------------------------------------------------------------


@_public
def find(a: ArrayLike, value: Any, mode: str = "first", op: str = "==", *, hi: Any = None, comm: Any = None) -> Any:
    """gsearch.find over a 1-D array sharded across the ranks (rank r's elements follow rank
    r - 1's): global indices.

    Parameters
    ----------
    a : array_like, 1-D
        This rank's part of the data, any order.
    value, op, hi
        As in gsearch.find: ``a op value`` elementwise ('in': ``value <= a < hi``), `value`
        exactly a value of `a`'s dtype.
    mode : {'first', 'any', 'count', 'all'}, optional
        'first': the lowest global index of a match, or -1; 'any': some match's global index
        (the first among the ranks that have one), or -1; 'count': the number of matches; these
        three are the same on every rank. 'all': this rank's matches, as ascending global
        indices. ('random' is not distributed.)
    comm : communicator, optional
        See the module's docstring.

    Returns
    -------
    int or array
        A Python int ('first', 'any', 'count'), or an int64 array of `a`'s framework and device
        ('all').

    Raises
    ------
    ValueError
        `a` not 1-D; `value` / `hi` not representable in `a`'s dtype; a bad `mode` or `op`; the
        communicator's errors (see :func:`searchsorted`).
    TypeError
        Unsupported dtypes, ranks of different dtypes.
    """
    fn = "distributed.find"

    def prepare() -> tuple:
        mode_code = _choice(fn, "mode", mode, _DIST_FIND_MODES)
        op_code = _choice(fn, "op", op, _FIND_OPS)
        A, kd = _find_data(fn, a)
        v = _exact_value(fn, "value", value, A)
        h = v
        if op_code == _IN_OP:
            if hi is None:
                raise ValueError("gsearch.distributed.find: op='in' needs hi (it matches value <= x < hi)")
            h = _exact_value(fn, "hi", hi, A)
        elif hi is not None:
            raise ValueError(f"gsearch.distributed.find: hi applies to op='in' only, not to op={op!r}")
        bounds = _np.array([v, h], dtype=kd)  # exact: kd holds every value of a's dtype
        return mode_code, op_code, A, kd, bounds, _bind("find", comm, A.dev)

    mode_code, op_code, A, kd, bounds, c = _agreed("find", comm, prepare)
    _agree(c, "find", kd, A.dev)
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, None) as scope:
        with _together(c):
            data = _convert(A, kd)
        if mode_code < 0:
            alloc = lambda n: _new_empty(fw, dev, (n,), _INT64)  # noqa: E731
            return _core.dist_find_all(c, fw, data, op_code, bounds, alloc, scope.handle)
        return _core.dist_find(c, fw, data, mode_code, op_code, bounds, scope.handle)


@_public
def count(a: ArrayLike, value: Any, op: str = "==", *, hi: Any = None, comm: Any = None) -> int:
    """The number of matches over all ranks: ``find(a, value, 'count', op, hi=hi, comm=comm)``.

    Parameters
    ----------
    a, value, op, hi, comm
        As in :func:`find`.

    Returns
    -------
    int
        The global count, the same on every rank.

    Raises
    ------
    ValueError, TypeError
        As in :func:`find`.
    """
    return find(a, value, "count", op, hi=hi, comm=comm)


@_public
def isin(
    element: ArrayLike,
    test_elements: ArrayLike,
    *,
    invert: bool = False,
    method: str = "auto",
    comm: Any = None,
    sharded: bool = True,
) -> Any:
    """numpy.isin of this rank's elements against test elements spread across the ranks.

    Parameters
    ----------
    element : array_like
        This rank's elements, any shape.
    test_elements : array_like
        With `sharded` (the default), this rank's part of the test elements (the set is the
        union of all ranks' parts, each rank's sent to every rank); without, all of them.
    invert : bool, optional
        ``element not in test_elements``.
    method : {'auto', 'sorted', 'hash'}, optional
        As in gsearch.isin.
    comm : communicator, optional
        See the module's docstring.
    sharded : bool, optional
        Whether `test_elements` is this rank's part (True) or the whole set (False).

    Returns
    -------
    isin : bool array of `element`'s shape
        `element`'s framework and device. NaN is never a member; -0.0 == 0.0.

    Raises
    ------
    ValueError, TypeError
        As in :func:`searchsorted`.
    """
    fn = "isin"

    def prepare() -> tuple:
        method_code = _choice("distributed.isin", "method", method, _ISIN_METHODS)
        E = _array(element, "element")
        T = _array(test_elements, "test_elements")
        E, T = _adopt(E, T), _adopt(T, E)
        _one_device(fn, E, T, ("element", "test_elements"))
        return method_code, E, T, _resolve(E.dtype, T.dtype, _ELEMENT_NAMES), _bind(fn, comm, E.dev)

    method_code, E, T, d, c = _agreed(fn, comm, prepare)
    _agree(c, fn, d, E.dev)
    fw, dev, shape = E.fw, E.dev, _shape(E)
    with _StreamScope(fw, dev, None) as scope:
        with _together(c):
            out = _new_empty(fw, dev, shape, _BOOL)
            elements = _convert(E, d).reshape(-1)
            tests = _convert(T, d).reshape(-1)
        _core.dist_isin(c, fw, elements, tests, out.reshape(-1), bool(invert), method_code, not sharded, scope.handle)
    return out


# --- sort, merge, join ----------------------------------------------------------------------------


def _sort_or_merge(fn: str, a: Any, comm: Any, merge_check: Optional[bool]) -> Any:
    def prepare() -> tuple:
        A, p, kd = _one(f"distributed.{fn}", a)
        return A, p, kd, _bind(fn, comm, A.dev)

    A, p, kd, c = _agreed(fn, comm, prepare)
    _agree(c, fn, kd, A.dev)
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, None) as scope:
        with _together(c):
            data = _convert(A, kd)
        alloc = lambda n: _new_empty(fw, dev, (n,), kd)  # noqa: E731
        if merge_check is None:
            out = _core.dist_sort(c, fw, data, alloc, scope.handle)
        else:
            out = _core.dist_merge(c, fw, data, alloc, merge_check, scope.handle)
    return _cast(out, fw, p)


@_public
def sort(a: ArrayLike, *, comm: Any = None) -> Any:
    """A stable sort of the data of all ranks (sample sort): this rank's range of the result.

    Parameters
    ----------
    a : array_like, 1-D
        This rank's part of the data, any order.
    comm : communicator, optional
        See the module's docstring.

    Returns
    -------
    sorted : array, 1-D
        Rank r's range of ``np.sort(all_data, kind='stable')`` (the ranks' results concatenated
        in rank order are that array), about ``len(all_data) / size`` elements whatever the keys
        (equal keys may span ranks); `a`'s dtype, framework and device.

    Raises
    ------
    ValueError, TypeError
        As in :func:`searchsorted`.

    Notes
    -----
    Each rank sorts its part, splitters are sampled from the sorted parts, one all-to-all
    moves every element to its rank, and each rank merges what it received.
    """
    return _sort_or_merge("sort", a, comm, None)


@_public
def merge(a: ArrayLike, *, check: bool = True, comm: Any = None) -> Any:
    """:func:`sort` for parts that are each sorted already: a global merge (no local sort).

    Parameters
    ----------
    a : array_like, 1-D
        This rank's part, sorted (NaN last).
    check : bool, optional
        Check that every rank's part is sorted first (ValueError on every rank, naming the
        rank, if one is not).
    comm : communicator, optional
        See the module's docstring.

    Returns
    -------
    merged : array, 1-D
        As in :func:`sort`.

    Raises
    ------
    ValueError, TypeError
        As in :func:`searchsorted`; an unsorted part (with `check`).
    """
    return _sort_or_merge("merge", a, comm, bool(check))


@_public
def join(left: ArrayLike, right: ArrayLike, how: str = "inner", *, comm: Any = None) -> tuple:
    """gsearch.join of two tables sharded across the ranks, rows in any order: this rank's rows
    of the join, as global row numbers.

    Parameters
    ----------
    left, right : array_like, 1-D
        This rank's keys of each table, any order (the rows of rank r follow rank r - 1's: its
        row i is global row ``offset_r + i``).
    how : {'inner', 'left', 'right', 'full', 'semi', 'anti'}, optional
        As in gsearch.join.
    comm : communicator, optional
        See the module's docstring.

    Returns
    -------
    (left_index, right_index) : tuple of int64 arrays
        This rank's rows: the rows of all keys in one range (all rows of a key on one rank), in
        gsearch.join's order (by key, then left row, then right row); the ranks' rows in rank
        order are ``gsearch.join`` of the sorted tables, mapped to the original row numbers.
        -1 marks a missing side; `right_index` is None for 'semi' and 'anti'.

    Raises
    ------
    ValueError, TypeError
        As in :func:`searchsorted`; a bad `how`.
    """
    fn = "join"

    def prepare() -> tuple:
        kind = _choice("distributed.join", "how", how, _JOIN_KINDS)
        A, B, _, kd = _pair("distributed.join", left, right, ("left", "right"))
        return kind, A, B, kd, _bind(fn, comm, A.dev)

    kind, A, B, kd, c = _agreed(fn, comm, prepare)
    _agree(c, fn, kd, A.dev)
    left_only = how in _LEFT_ONLY_JOINS
    fw, dev = A.fw, A.dev

    def allocate(rows: int) -> tuple:
        li = _new_empty(fw, dev, (rows,), _INT64)
        return li, (None if left_only else _new_empty(fw, dev, (rows,), _INT64))

    with _StreamScope(fw, dev, None) as scope:
        with _together(c):
            lk, rk = _convert(A, kd), _convert(B, kd)
        li, ri = _core.dist_join(c, fw, lk, rk, kind, allocate, scope.handle)
    return li, ri
