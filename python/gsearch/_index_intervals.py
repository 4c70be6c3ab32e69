"""Index intervals, IndexIntervals: a copy of an array whose order is refined only where it is
queried (gsearch::index_intervals; database cracking). select, range and sort reuse what the
earlier calls learnt."""

from __future__ import annotations

import math as _math
import operator as _operator
from typing import Any, NamedTuple, Optional

import numpy as _np

from . import _core
from ._arrays import (
    ArrayLike,
    _Scalar,
    _StreamScope,
    _classify,
    _convert,
    _cupy,
    _new_empty,
    _shape,
    _torch,
    _where,
    _widened,
)
from ._docs import public as _public

_FRAMEWORK_CODES = {"numpy": 0, "torch": 1, "cupy": 2}  # _core.IndexIntervals.view's
_ABOVE = object()  # a bound above every value of the dtype: #(x < bound) is the size


class Interval(NamedTuple):
    """A piece of an :class:`IndexIntervals` array: positions [lo, hi) of its data, holding
    exactly the elements of ranks lo to hi - 1; `settled` when they are sorted (each at its
    final position)."""

    lo: int
    hi: int
    settled: bool


def _device_index(device: Any) -> Any:
    """`device` as None (the CPU) or a CUDA device index; ValueError when it names neither."""
    if isinstance(device, str):
        if device == "cpu":
            return None
        if device == "cuda":
            return -1  # the data's CUDA device, whichever it is
        if device.startswith("cuda:") and device[5:].isdigit():
            return int(device[5:])
    elif isinstance(device, int) and not isinstance(device, bool):
        if device >= 0:
            return device
    else:
        kind = getattr(device, "type", None)  # torch.device
        if kind == "cpu":
            return None
        if kind == "cuda":
            return -1 if device.index is None else int(device.index)
        ident = getattr(device, "id", None)  # cupy.cuda.Device
        if isinstance(ident, int):
            return ident
    raise ValueError(
        f"gsearch.IndexIntervals: device must be 'cpu', 'cuda', 'cuda:N', a device index, a "
        f"torch.device or a cupy Device, not {device!r}"
    )


def _position(fn: str, what: str, p: Any, n: int) -> int:
    """p as an int in [0, n), counted from the end when negative (numpy's indexing):
    TypeError for a non-integer, IndexError out of range."""
    if isinstance(p, (bool, _np.bool_)):
        raise TypeError(f"gsearch.IndexIntervals.{fn}: {what} must be an int, not bool")
    try:
        p = _operator.index(p)
    except TypeError:
        raise TypeError(f"gsearch.IndexIntervals.{fn}: {what} must be an int, not {type(p).__name__}") from None
    if not -n <= p < n:
        raise IndexError(f"gsearch.IndexIntervals.{fn}: {what} {p} is out of bounds for size {n}")
    return p + n if p < 0 else p


def _number(fn: str, what: str, v: Any) -> Any:
    """A bound as a Python int or float (its exact value); TypeError for anything else."""
    if isinstance(v, (bool, _np.bool_)):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return float(v)
    if isinstance(v, _np.generic) and v.dtype.kind in "iuf":
        return v.item()
    if not isinstance(v, (str, bytes)) and getattr(v, "ndim", None) == 0 and hasattr(v, "item"):
        return _number(fn, what, v.item())  # a 0-d array of any framework
    raise TypeError(f"gsearch.IndexIntervals.{fn}: {what} must be a real number, not {type(v).__name__}")


def _lower_key(v: Any, kd: _np.dtype) -> Any:
    """The value of dtype kd (as a Python number) that has as many elements of kd below it as
    the number v has: the smallest kd value >= v in np.sort's order; _ABOVE when v is above
    every kd value (an integer dtype and a larger v, +inf or NaN)."""
    if kd.kind == "f":
        if isinstance(v, float) and _math.isnan(v):
            return v
        try:
            f = float(v)
        except OverflowError:  # an int beyond float64
            f = _math.inf if v > 0 else -_math.inf
        if kd.itemsize == 8:
            return _math.nextafter(f, _math.inf) if f < v else f
        with _np.errstate(over="ignore"):
            f32 = _np.float32(f)
        g = float(f32)
        return float(_np.nextafter(f32, _np.float32(_math.inf))) if g < v else g
    if isinstance(v, float):
        if _math.isnan(v) or v == _math.inf:
            return _ABOVE
        if v == -_math.inf:
            return int(_np.iinfo(kd).min)
        v = _math.ceil(v)
    info = _np.iinfo(kd)
    if v > int(info.max):
        return _ABOVE
    return max(v, int(info.min))


@_public
class IndexIntervals:
    """An array whose order is refined only where it is queried: index intervals.

    ``IndexIntervals(a)`` copies the 1-D array `a` into a structure that keeps it as pieces
    (intervals): the members of a piece are the elements whose ranks in the sorted order are
    [lo, hi), and they sit at exactly those positions of its copy (:attr:`data`). At first the
    whole array is one piece. An *improve* step partitions one piece around a splitter chosen
    among its members (a stable three-way partition: < s, == s, > s) and replaces it by its up
    to three parts; the equal part is *settled* (its members are at their final positions).
    :meth:`select` improves only the pieces that hold the rank it asks for, :meth:`range` only
    the pieces at its two bounds, and what they learn stays: a later query starts from the
    pieces the earlier ones left (database cracking). :meth:`sort` settles every piece.
    :attr:`intervals`, :attr:`unplaced` and :attr:`improves` show the order being refined
    (gsearch::index_intervals in C++).

    Memory: one copy of the data, in host memory for CPU data (numpy arrays, CPU tensors) and in
    the data's device memory for CUDA data (torch tensors, cupy arrays, DLPack objects), which
    is read in place (no other copy of the input) and copied on `stream`; an improve of a piece
    of m elements takes m elements of scratch memory while it runs.

    Parameters
    ----------
    a : array_like, shape (N,)
        The data, in any order, 1-D: a numpy array or a sequence (on the CPU), a torch tensor or
        cupy array (on its device). int32, uint32, int64, uint64, float32, float64; bool, 8- and
        16-bit integers and float16 (bfloat16) are held widened exactly to int32 (float32), and
        the results come back in `a`'s dtype.
    device : str, int or device object, optional
        Where the structure lives: that of `a` (None, the default). Given, it must name `a`'s
        device ('cpu', 'cuda', 'cuda:N', N, a torch.device or a cupy Device): gsearch does not
        move data between devices (ValueError otherwise).
    {stream_param}
        For CUDA data: the stream to copy on (default: the current stream of `a`'s framework);
        every later call runs on it, and the constructor waits for the copy (`a` can be freed
        or changed once it returns).

    Raises
    ------
    ValueError
        `a` not 1-D (a scalar, 0-d or 2-D), `device` not `a`'s, `stream` with CPU data.
    TypeError
        A dtype that is not real numbers (complex, object, strings, ...).
    {gpu_errors}

    Notes
    -----
    The order is np.sort's: -inf < finite < +inf < NaN, and -0.0 equals 0.0 (either may come
    first). Results are new arrays of `a`'s kind on its device (numpy for numpy input, torch /
    cupy on the GPU); the structure keeps its own copy. On a GPU every call waits for its work
    (an improve is one or a few kernels and one small copy back), and the results are copied
    out on the structure's stream (`stream`, or the current stream at construction), ordered
    before its next call: a consumer on another stream orders itself after it. Calls on one
    structure from several threads are serialized.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> ii = gsearch.IndexIntervals(np.array([7, 1, 9, 4, 4, 0, 3, 8, 2, 6]))
    >>> ii.select(5)                      # np.sort(a)[5], refining only what rank 5 needs
    np.int64(4)
    >>> ii.intervals, ii.unplaced, ii.improves
    (3, 8, 1)
    >>> ii.select(4), ii.improves         # the same piece: settled, nothing more to learn
    (np.int64(4), 1)
    >>> np.sort(ii.range(2, 8))           # the values 2 <= x < 8, in any order
    array([2, 3, 4, 4, 6, 7])
    >>> ii.sort()
    array([0, 1, 2, 3, 4, 4, 6, 7, 8, 9])
    >>> ii.intervals, ii.unplaced, ii.check()
    (1, 0, '')
    """

    __slots__ = ("_ii", "_fw", "_dev", "_kd", "_own", "_n", "_stream", "_handle", "_view", "__weakref__")

    def __init__(self, a: ArrayLike, *, device: Any = None, stream: Any = None) -> None:
        A = _classify(a, "a")
        if isinstance(A, _Scalar):
            raise ValueError("gsearch.IndexIntervals: a must be a 1-D array, not a scalar")
        if A.dtype.kind not in "biuf" or A.dtype.itemsize > 8:
            raise TypeError(f"gsearch.IndexIntervals: a must be an array of real numbers, not of dtype {A.dtype}")
        shape = _shape(A)
        if len(shape) != 1:
            raise ValueError(f"gsearch.IndexIntervals: a must be 1-D, not of shape {shape}")
        if device is not None:
            want = _device_index(device)
            if (want is None) != (A.dev is None) or (want is not None and want >= 0 and want != A.dev):
                raise ValueError(
                    f"gsearch.IndexIntervals: a is on {_where(A.dev)} but device={device!r}: move the data "
                    "to the device first (gsearch does not copy between devices)"
                )
        kd = _widened(A.dtype)
        with _StreamScope(A.fw, A.dev, stream) as scope:
            self._ii = _core.IndexIntervals(_convert(A, kd), scope.handle)
            self._handle = scope.handle
        self._fw, self._dev, self._kd, self._n = A.fw, A.dev, kd, int(self._ii.size)
        # The dtype of the results: a's own (torch's as a torch dtype: bfloat16 included).
        self._own = A.x.dtype if A.fw == "torch" else A.dtype.newbyteorder("=")
        self._stream = stream  # the caller's, or None: the framework's current one at construction
        self._view = None

    # -- queries --

    def select(self, k: int) -> Any:
        """The element of rank `k` in the sorted order: ``np.sort(a)[k]``, refining only the
        pieces that hold rank k.

        Parameters
        ----------
        k : int
            The rank, from 0 (the smallest); negative counts from the end (-1: the largest).

        Returns
        -------
        value : scalar
            A numpy scalar of `a`'s dtype for numpy data (as numpy's indexing); a 0-d tensor /
            array on `a`'s device for torch / cupy data (as their indexing).

        Raises
        ------
        IndexError
            k out of [-N, N), also any k of empty data.
        TypeError
            k not an integer.

        Examples
        --------
        >>> import numpy as np, gsearch
        >>> ii = gsearch.IndexIntervals(np.array([2.5, np.nan, -1.0, 0.0]))
        >>> ii.select(0), ii.select(-1)
        (np.float64(-1.0), np.float64(nan))
        """
        k = _position("select", "k", k, self._n)
        value = self._ii.select(k)
        if self._fw == "numpy":
            return self._own.type(value)
        with self._scope():
            return self._copy_out(self._data_view()[k])

    def range(self, lo: Any, hi: Any) -> Any:
        """The elements x with ``lo <= x < hi``, in any order, refining at most the piece at
        each bound.

        Parameters
        ----------
        lo, hi : int or float
            The bounds: Python or numpy numbers, or 0-d arrays, compared exactly with the data
            (an int bound of float data, a float bound of integer data, and values beyond the
            dtype's range included). The order is np.sort's: NaN is after +inf, so ``hi=nan``
            takes every value >= lo but NaN, and no range holds a NaN.

        Returns
        -------
        values : array
            A new 1-D array (a copy of the positions of :attr:`data` that hold them, which are
            contiguous), of `a`'s kind and dtype on its device; empty when `hi` is not after
            `lo`.

        Raises
        ------
        TypeError
            A bound that is not a real number.

        Examples
        --------
        >>> import numpy as np, gsearch
        >>> ii = gsearch.IndexIntervals(np.array([5, -3, 8, 0, 5, 12]))
        >>> np.sort(ii.range(0, 8.5))
        array([0, 5, 5, 8])
        >>> ii.range(2**70, 2**80).size, np.sort(ii.range(5, 2**70))
        (0, array([ 5,  5,  8, 12]))
        """
        lo_k = _lower_key(_number("range", "lo", lo), self._kd)
        hi_k = _lower_key(_number("range", "hi", hi), self._kd)
        b = e = 0
        if lo_k is not _ABOVE and self._n:
            if hi_k is not _ABOVE:
                b, e = self._ii.range(lo_k, hi_k)
            else:  # an integer dtype, hi above its maximum m: every x >= lo
                m = int(_np.iinfo(self._kd).max)
                b = self._ii.range(lo_k, m)[0] if lo_k < m else self._ii.range(m - 1, m)[1]
                e = self._n
        with self._scope():
            return self._copy(b, e)

    def sort(self) -> Any:
        """Sorts the data (every piece settled): ``np.sort(a)``.

        Returns
        -------
        sorted : array
            A new array (a copy of the sorted :attr:`data`), of `a`'s kind and dtype on its
            device. Later queries find every piece settled and refine nothing.

        Examples
        --------
        >>> import numpy as np, gsearch
        >>> gsearch.IndexIntervals(np.array([3.0, -0.0, np.nan, -np.inf, 1.0])).sort()
        array([-inf, -0.,  1.,  3.,  nan])
        """
        with self._scope():
            self._ii.sort()
            return self._copy(0, self._n)

    def improve(self, position: int) -> Interval:
        """One improve step on the piece that holds `position`; nothing when it is settled.

        Parameters
        ----------
        position : int
            A position of :attr:`data` (a rank), in [-N, N) (negative from the end).

        Returns
        -------
        Interval
            The piece that holds `position` afterwards: ``(lo, hi, settled)``.

        Raises
        ------
        IndexError
            `position` out of range (also any position of empty data).
        TypeError
            `position` not an integer.

        Examples
        --------
        >>> import numpy as np, gsearch
        >>> ii = gsearch.IndexIntervals(np.array([4, 4, 4, 4]))
        >>> ii.improve(0)                    # all equal: one step settles them
        Interval(lo=0, hi=4, settled=True)
        """
        p = _position("improve", "position", position, self._n)
        return Interval(*self._ii.improve(p))

    def interval(self, position: int) -> Interval:
        """The piece that holds `position` (in [-N, N)), without refining anything."""
        return Interval(*self._ii.interval(_position("interval", "position", position, self._n)))

    def intervals_list(self) -> list:
        """Every piece, in order of position: a list of :class:`Interval` ``(lo, hi,
        settled)`` (the library's record, where adjacent settled pieces may stay separate)."""
        return [Interval(*t) for t in self._ii.interval_list()]

    def check(self) -> str:
        """The invariants of the pieces (they cover the data in order, each one's members after
        every member of those before it, settled pieces sorted), checked on a host copy of the
        data: '' when they hold, else a description of the first broken. O(N); for tests."""
        with self._scope():
            return str(self._ii.check())

    # -- statistics and the data --

    @property
    def intervals(self) -> int:
        """How many pieces there are (adjacent settled pieces count as one: their union is
        sorted): 1 at first and once sorted."""
        return int(self._ii.intervals)

    @property
    def unplaced(self) -> int:
        """How many elements are in unsettled pieces: those whose position is not known yet
        (N at first, 0 once sorted)."""
        return int(self._ii.unplaced)

    @property
    def improves(self) -> int:
        """Improve steps taken so far, by :meth:`improve`, :meth:`select` and :meth:`range`
        (:meth:`sort` adds none). A repeated query adds none: its pieces are settled."""
        return int(self._ii.improves)

    @property
    def size(self) -> int:
        """The number of elements (N)."""
        return self._n

    def __len__(self) -> int:
        return self._n

    @property
    def data(self) -> Any:
        """The structure's copy in its current order (a new array, of `a`'s kind and dtype):
        each piece's members at its positions; sorted after :meth:`sort`."""
        with self._scope():
            return self._copy(0, self._n)

    @property
    def dtype(self) -> Any:
        """The dtype of the results: `a`'s (a numpy dtype; a torch dtype for torch data)."""
        return self._own

    @property
    def device(self) -> Any:
        """Where the structure lives, in `a`'s framework: 'cpu' (numpy),
        torch.device('cpu') / torch.device('cuda', i) (torch), cupy.cuda.Device(i) (cupy)."""
        if self._fw == "torch":
            torch = _torch()
            return torch.device("cpu") if self._dev is None else torch.device("cuda", self._dev)
        if self._dev is None:
            return "cpu"
        return _cupy().cuda.Device(self._dev)

    def __repr__(self) -> str:
        where = "cpu" if self._dev is None else f"cuda:{self._dev}"
        dtype = str(self._own).rsplit(".", 1)[-1]
        return (
            f"gsearch.IndexIntervals(size={self._n}, dtype={dtype}, device='{where}', "
            f"intervals={self.intervals}, unplaced={self.unplaced}, improves={self.improves})"
        )

    # -- helpers --

    def _scope(self) -> _StreamScope:
        """The structure's stream entered for the framework's work (the copies out of the data),
        so that they are ordered before the structure's next call on it."""
        if self._dev is None:
            return _StreamScope(self._fw, None, None)
        if self._stream is None:
            current = _StreamScope(self._fw, self._dev, None)
            if current.handle == self._handle:
                return current
            return _StreamScope(self._fw, self._dev, self._handle)
        return _StreamScope(self._fw, self._dev, self._stream)

    def _data_view(self) -> Any:
        """The structure's copy in place (memory later calls permute: read it, keep copies)."""
        if self._view is None:
            v = self._ii.view(_FRAMEWORK_CODES[self._fw])
            # numpy: the dtype object of the data's own ('l' for int64 on Linux, not DLPack's 'q')
            self._view = v.view(self._kd) if self._fw == "numpy" else v
        return self._view

    def _copy_out(self, x: Any) -> Any:
        """A new array of x (a piece of the view) in `a`'s dtype."""
        if self._fw == "numpy":
            return _np.array(x, dtype=self._own)
        if self._fw == "torch":
            return x.to(self._own, copy=True)
        return x.astype(self._own, copy=True)

    def _copy(self, b: int, e: int) -> Any:
        """data[b:e] as a new array of `a`'s kind and dtype."""
        if e <= b:
            x = _new_empty(self._fw, self._dev, (0,), self._kd)
            return self._copy_out(x)
        return self._copy_out(self._data_view()[b:e])
