"""Extensible sparse functional arrays, FunctionalArrays: a machine of cells holding many
persistent arrays (sparse maps from int64 indices to values) at once, every operation one pass
over the cells whatever history made the arrays (gsearch::functional_arrays; seed 004 §4.3)."""

from __future__ import annotations

import re as _re
from typing import Any, NamedTuple, Optional, Tuple, Union

import numpy as _np

from . import _arrays, _core
from ._docs import public as _public


@_public
class FunctionalArray(NamedTuple):
    """A handle to one array of a :class:`FunctionalArrays` machine, valid on that machine until
    released. Another machine (of any dtype) refuses it, and so does its own once it is released
    (even when its slot holds a newer array): ``ValueError`` saying which."""

    slot: int  #: its version slot
    generation: int  #: the slot's generation when the array was made
    machine: int  #: the id of the machine that made it (unique in the process, never reused)


_CUDA_DEVICE = _re.compile(r"cuda(:[0-9]{1,4})?\Z")


def _shown(v: int) -> str:
    """An int for a message, its middle digits elided when long."""
    t = str(v)
    return t if len(t) <= 40 else f"{t[:18]}...{t[-18:]} ({len(t.lstrip('-'))} digits)"


def _device_id(device: Any) -> int:
    """-1 for "cpu", the CUDA device's number for "cuda" (the current one) or "cuda:N"."""
    if not isinstance(device, str) and type(device).__name__ == "device" and hasattr(device, "type"):
        device = str(device)  # a torch.device
    if not isinstance(device, str) or not (device == "cpu" or _CUDA_DEVICE.match(device)):
        raise ValueError(f"gsearch.FunctionalArrays: device must be 'cpu' or 'cuda' (or 'cuda:N'), not {device!r}")
    if device == "cpu":
        return -1
    if not _core.built_with_cuda():
        raise ValueError(f"gsearch.FunctionalArrays: device={device!r}: gsearch was built without CUDA")
    return int(device[5:]) if ":" in device else _core.cuda_current_device()


def _index(fn: str, i: Any) -> int:
    if isinstance(i, (bool, _np.bool_)) or not isinstance(i, (int, _np.integer)):
        raise TypeError(f"gsearch.FunctionalArrays.{fn}: an index is an int (got {type(i).__name__})")
    if not -(1 << 63) <= int(i) < (1 << 63):
        raise OverflowError(f"gsearch.FunctionalArrays.{fn}: index {int(i)} is outside int64")
    return int(i)


@_public
class FunctionalArrays:
    """A machine of ``cells`` cells holding persistent arrays of ``dtype`` values.

    ``update(a, i, v)`` returns a new array equal to ``a`` except ``a[i] == v``; ``a`` stays as it
    was. Arrays are sparse (any int64 index) and extensible::

        fa = gsearch.FunctionalArrays(cells=4096, dtype=np.int64)
        a0 = fa.empty()
        a1 = fa.update(a0, 7, 70)
        fa.lookup(a1, 7), fa.lookup(a0, 7)        # 70, None
        a2 = fa.remove(a1, 7)
        fa.size(a1), fa.next(a1, 0)               # 1, 7
        fa.release(a0)                            # its cells may be reused

    Every operation is one pass over the cells (a compare and an increment in each) and, for the
    queries, a fold: its cost does not depend on how the arrays were built. An update takes at
    most 2 cells, a remove 1; when they run out the machine frees the cells only released arrays
    saw, and if that is not enough raises ``MemoryError`` having changed nothing. A handle is
    its machine's: a released array's handle, or another machine's (of any dtype), raises
    ``ValueError`` and changes nothing.

    ``dtype``: int32, uint32, int64, uint64, float32 or float64. ``device``: ``"cpu"``, or
    ``"cuda"`` / ``"cuda:N"``: a persistent kernel on that GPU whose blocks hold the cells in
    shared memory (an update returns at once, a query waits for its answer; the machine holds
    its blocks' SMs, one per 1,024 cells up to all but two, until it is garbage-collected;
    ``persistent=False`` or a machine that would not fit beside the process's others runs a
    kernel per operation instead). Indices, values and the batch forms' arrays are host (numpy)
    arrays on both devices. ``version_slots``: arrays alive at once at most (0: max(2 x cells,
    64)); every update moves each slot's position, so on the GPU fewer slots make it faster.
    ``threads``: of each pass on large CPU machines (0: all). ``blocks``: the persistent
    kernel's (0: by the cells).

    Beside a CUDA machine's kernel, as beside a CUDA :class:`Server`'s, run once before making
    the machine the torch / cupy kernels you will use while it lives (a framework kernel first
    launched beside a persistent kernel may wait for it), and do not synchronize the whole device.
    """

    def __init__(self, cells: int, dtype: Any = _np.int64, *, device: Any = "cpu", version_slots: int = 0,
                 threads: int = 0, persistent: bool = True, blocks: int = 0) -> None:
        dev = _device_id(device)
        self._dtype = _np.dtype(dtype)
        self._core = _core.FunctionalArrays(int(cells), _np.empty(0, self._dtype), int(version_slots), int(threads),
                                            dev, bool(persistent), int(blocks))

    @property
    def device(self) -> str:
        """``"cpu"`` or ``"cuda:N"``."""
        return "cpu" if self._core.device < 0 else f"cuda:{self._core.device}"

    @property
    def dtype(self) -> _np.dtype:
        return self._dtype

    def _value(self, fn: str, v: Any) -> _np.ndarray:
        """v as a 1-element array of the dtype, converted as numpy's assignment converts it
        (``np.float32(0.1)`` on a float32 machine: rounded); OverflowError for a value the dtype
        cannot hold (an integer out of its range, a finite float past its largest: numpy would
        give inf with a RuntimeWarning), TypeError for a non-integral float on an integer
        machine or something that is not a number."""
        dt = self._dtype
        where = f"gsearch.FunctionalArrays.{fn}"
        if isinstance(v, (int, _np.integer)) and not isinstance(v, (bool, _np.bool_)):
            iv = int(v)
            if dt.kind in "iu":
                info = _np.iinfo(dt)
                if not info.min <= iv <= info.max:
                    raise OverflowError(f"{where}: {_shown(iv)} is out of range for {dt} ([{info.min}, {info.max}])")
                return _np.array([iv], dt)
            try:
                v = float(iv)  # as numpy converts a Python int to a float
            except OverflowError:
                raise OverflowError(f"{where}: {_shown(iv)} is out of range for {dt}") from None
        a = _np.asarray(v)
        if a.ndim != 0 or a.dtype.kind not in "biuf":
            raise TypeError(f"{where}: a value is a number (got {v!r})")
        with _np.errstate(over="ignore", invalid="ignore"):  # numpy's cast warnings: the checks below say it
            out = _np.asarray(a, dtype=dt).reshape(1)
        if dt.kind == "f":
            if _np.isinf(out[0]) and _np.isfinite(a):
                raise OverflowError(
                    f"{where}: {v!r} is out of range for {dt} (its largest finite value is {_np.finfo(dt).max})"
                )
            return out
        if a.dtype.kind == "f" and not (_np.isfinite(a) and a == _np.floor(a)):
            raise TypeError(f"{where}: {v!r} is not an integer (the machine holds {dt})")
        if out[0] != a:
            raise OverflowError(f"{where}: {v!r} is out of range for {dt}")
        return out

    def empty(self) -> FunctionalArray:
        """A new empty array."""
        return FunctionalArray(*self._core.empty())

    def update(self, a: FunctionalArray, i: Any, v: Any) -> FunctionalArray:
        """``a`` with ``a[i] = v``; with arrays of indices and values, each in turn (the last wins for
        a repeated index; the arrays in between are not kept).

        A single value is converted as numpy's assignment converts it: ``0.1`` on a float32
        machine is ``np.float32(0.1)``; an integral float on an integer machine its integer.
        OverflowError names a value the dtype cannot hold (``1e40`` on float32, ``2**64`` on
        int64: "out of range for int64"), TypeError a non-integral float on an integer machine
        or a value that is not a number. Arrays of values must cast safely to the dtype."""
        if _np.ndim(i) == 0:
            idx = _np.array([_index("update", i)], _np.int64)
            vals = self._value("update", v)
        else:
            idx = _np.ascontiguousarray(_np.asarray(i), dtype=_np.int64)
            vals = _np.asarray(v)
            if vals.shape != idx.shape or idx.ndim != 1:
                raise ValueError("gsearch.FunctionalArrays.update: indices and values must be 1-D and of one length")
            if not _np.can_cast(vals.dtype, self._dtype, casting="safe"):
                raise TypeError(f"gsearch.FunctionalArrays.update: values of dtype {vals.dtype} for a {self._dtype} "
                                "machine")
            vals = _np.ascontiguousarray(vals, dtype=self._dtype)
        return FunctionalArray(*self._core.update(tuple(a), idx, vals))

    def remove(self, a: FunctionalArray, i: Any) -> FunctionalArray:
        """``a`` without index ``i`` (a new array, equal to ``a`` when ``i`` is not defined there)."""
        return FunctionalArray(*self._core.remove(tuple(a), _index("remove", i)))

    def lookup(self, a: FunctionalArray, i: Any) -> Union[Any, None, Tuple[_np.ndarray, _np.ndarray]]:
        """``a[i]`` (a Python number), or None when ``i`` is not defined in ``a``. With an array of
        indices: ``(values, found)`` (values 0 where not found, found bool): numpy arrays, or, for
        torch / cupy indices on a CUDA machine's device, arrays of theirs on it (searched there,
        no copy). On the GPU a batch is one pass to find the array's pieces, a sort and a binary
        search per index."""
        arr = _arrays._classify(i, "indices")
        if isinstance(arr, _arrays._Scalar):
            return self._core.lookup(tuple(a), _index("lookup", i))
        if arr.dev is not None:  # torch / cupy on a CUDA device: the machine's, searched in place
            if arr.dev != self._core.device:
                raise ValueError(f"gsearch.FunctionalArrays.lookup: indices on cuda:{arr.dev}, the machine on "
                                 f"{self.device} (host arrays, or the machine's device)")
            if arr.dtype.kind not in "iu":
                raise TypeError(f"gsearch.FunctionalArrays.lookup: indices of dtype {arr.dtype}")
            idx = _arrays._convert(arr, _np.dtype(_np.int64))
            if len(idx.shape) != 1:
                raise ValueError("gsearch.FunctionalArrays.lookup: indices must be 1-D")
            values = _arrays._new_empty(arr.fw, arr.dev, tuple(idx.shape), self._dtype)
            found = _arrays._new_empty(arr.fw, arr.dev, tuple(idx.shape), _np.dtype(_np.uint8))
            # The machine's stream does not follow the framework's: its work so far, first.
            (_arrays._torch().cuda if arr.fw == "torch" else _arrays._cupy().cuda).current_stream().synchronize()
            self._core.lookup_many(tuple(a), idx, values, found)
            return values, (found.bool() if arr.fw == "torch" else found.astype(bool))
        idx = _np.ascontiguousarray(_np.asarray(i), dtype=_np.int64)
        if idx.ndim != 1:
            raise ValueError("gsearch.FunctionalArrays.lookup: indices must be 1-D")
        values = _np.empty(idx.shape, self._dtype)
        found = _np.empty(idx.shape, _np.uint8)
        self._core.lookup_many(tuple(a), idx, values, found)
        return values, found.astype(bool)

    def size(self, a: FunctionalArray) -> int:
        """The number of defined indices."""
        return self._core.size(tuple(a))

    def next(self, a: FunctionalArray, i: Any) -> Optional[int]:
        """The least index above ``i`` defined in ``a``, or None."""
        return self._core.next(tuple(a), _index("next", i))

    def items(self, a: FunctionalArray) -> Tuple[_np.ndarray, _np.ndarray]:
        """``(indices, values)`` of ``a``: numpy arrays in increasing index order."""
        return self._core.items(tuple(a))

    def release(self, a: FunctionalArray) -> None:
        """Forgets ``a``: cells that only released arrays saw become free; ``a`` (and any copy of
        it) is refused from now on."""
        self._core.release(tuple(a))

    def live(self, a: FunctionalArray) -> bool:
        """Whether ``a`` is a live array of this machine."""
        return self._core.live(tuple(a))

    def stats(self) -> dict:
        """``cells``, ``free_cells``, ``live_arrays``, ``version_slots``, ``collections`` (sweeps),
        ``collection_seconds`` (their time together), ``persistent_blocks`` (the GPU's persistent kernel's blocks; 0 on the CPU and for a kernel
        per operation)."""
        return self._core.stats()

    def check(self) -> str:
        """The machine's invariants: "" when they hold (for tests)."""
        return self._core.check()

    def __repr__(self) -> str:
        s = self.stats()
        return (f"gsearch.FunctionalArrays(cells={s['cells']}, dtype={self._dtype}, live_arrays={s['live_arrays']}, "
                f"free_cells={s['free_cells']})")
