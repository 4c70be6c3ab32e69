"""gsearch.distributed's communicators and agreement (re-exported there): the adapters of
torch.distributed and mpi4py (TorchComm, MpiComm), the communicator of a call, and the ranks'
agreement on a call's arguments (the library's protocol, gsearch/dist/agreement.hpp)."""

from __future__ import annotations

import contextlib as _contextlib
import copy as _copy
import sys as _sys
import warnings as _warnings
from typing import Any, Optional

import numpy as _np

from . import _core
from ._arrays import _where
from ._common import _KEY_CODES, _KEY_DTYPE_NAMES
from ._docs import fill as _fill

_INT_MAX = 2**31 - 1  # MPI's counts and displacements are C ints
_PROTOCOL = ("rank", "size", "device", "allgather", "alltoallv")


def _public(fn: Any) -> Any:
    """Fills the shared docstring paragraphs (_docs.py) and names gsearch.distributed as the home."""
    fn.__doc__ = _fill(fn.__doc__)
    fn.__module__ = "gsearch.distributed"
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
            f"rank {r}: {_KEY_DTYPE_NAMES[k]} on {'CUDA' if g else 'the CPU'}" for r, (k, g) in enumerate(rows)
        )
        raise TypeError(
            f"gsearch.distributed.{fn}: the ranks' arrays differ in dtype or device ({ranks}); every "
            "rank must pass arrays of one dtype (after promotion) on one kind of device"
        )
