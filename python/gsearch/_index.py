"""The static search index, Index: sorted keys built once into an S+ tree (gsearch::static_index),
searched many times with the semantics of searchsorted."""

from __future__ import annotations

import math as _math
from typing import Any, Optional

import numpy as _np

from . import _core
from ._arrays import (
    _ABOVE,
    _INT32,
    _INT64,
    ArrayLike,
    _Arr,
    _Scalar,
    _StreamScope,
    _adopt,
    _cast,
    _check_out,
    _check_supported,
    _classify,
    _contiguous,
    _convert,
    _cupy,
    _empty,
    _full0d,
    _ndarray,
    _new_empty,
    _resolve,
    _shape,
    _torch,
    _weak_query,
    _where,
    _widened,
    _xp,
)
from ._common import _LEFT, _LEFT_I, _NUMPY_SIDES, _PRED_I, _RIGHT_I, Side, _side_code
from ._docs import public as _public


def _fill_where(fw: str, res: Any, mask: Any, value: int) -> None:
    """res[mask] = value in place, without a synchronizing boolean index on a GPU."""
    if fw == "torch":
        res.masked_fill_(mask, value)
    else:
        _xp(fw).putmask(res, mask, value)


def _index_queries(fw: str, dev: Optional[int], x: Any, p: _np.dtype, kd: _np.dtype, side: int) -> tuple:
    """Queries x of dtype p (numpy's exact promotion of the index's dtype kd and theirs, wider
    than kd) as kd queries that give the same answers on `side`, and the masks of those below
    (answer 0) and above (answer K) every kd value (None where there are none). kd float32, p
    float64: x rounded up (side left: the keys < x are those < the smallest float32 >= x) or down
    (right: the keys <= x are those <= the largest float32 <= x). kd an integer type, p a wider
    integer: x clamped to kd's range; p float64: ceil(x) (left: the integers < x are those <
    ceil(x)) or floor(x) (right), clamped, NaN above every key."""
    xp = _xp(fw)
    if kd.kind == "f":
        with _np.errstate(over="ignore"):
            f = _cast(x, fw, kd)
        back = _cast(f, fw, p)
        if side == _LEFT_I:
            step = xp.nextafter(f, _full0d(fw, dev, _math.inf, kd))
            f = xp.where(back < x, step, f)
        else:
            step = xp.nextafter(f, _full0d(fw, dev, -_math.inf, kd))
            f = xp.where(back > x, step, f)
        return _contiguous(fw, _cast(f, fw, kd)), None, None
    info = _np.iinfo(kd)
    lo, hi = int(info.min), int(info.max)
    if p.kind == "f":
        y = xp.ceil(x) if side == _LEFT_I else xp.floor(x)
        nan = xp.isnan(y)
        above = (y > hi) | nan
        below = y < lo
        y = xp.where(nan, _full0d(fw, dev, lo, p), xp.clip(y, lo, hi))
    else:
        above = x > hi
        below = None if p.kind == "u" else x < lo  # unsigned queries are never below
        y = xp.clip(x, lo, hi)
    return _contiguous(fw, _cast(y, fw, kd)), below, above


@_public
class Index:
    """A static search index over sorted keys: built once, searched many times.

    ``Index(keys)`` copies the sorted 1-D `keys` into an S+ tree (a B-ary search tree laid out
    level by level, gsearch::static_index in C++): the keys in nodes of B (one 64-byte cache line
    on the CPU, 16 bytes on the GPU: one vector load), and above them levels of separators, each node
    with B + 1 children. A search reads one node per level, log_{B+1}(K) nodes, where a binary
    search reads log2(K) keys scattered over as many cache lines. The answers are those of
    :func:`searchsorted` on the keys (numpy's order: NaN last, -0.0 equal to 0.0).

    Memory: the keys plus about 1/B of them, rounded up to whole nodes (`nbytes`), in host
    memory for CPU keys (numpy arrays, CPU tensors) and in the keys' device memory for CUDA keys
    (torch tensors, cupy arrays, DLPack objects), built there (on the GPU, by a kernel, on
    `stream`, waited for). The index keeps its own copy: the caller's keys can be freed or
    changed once it is built.

    When to use it: many searches of the same large key set (from about 2**16 keys: a binary
    search of keys beyond the caches, or beyond a GPU's shared memory, misses on nearly every
    step; the index misses about once per level). For a single batch ``searchsorted(a, v,
    algo='index')`` builds a temporary index for the call (and 'auto' does when it pays).

    Parameters
    ----------
    keys : array_like, shape (K,)
        Sorted keys (ascending; NaN last, -0.0 equal to 0.0), 1-D: numpy arrays or sequences
        (an index on the CPU), torch tensors, cupy arrays or DLPack objects (on their device;
        read in place, no copy). int32, uint32, int64, uint64, float32, float64; bool, 8- and
        16-bit integers and float16 (bfloat16) are widened exactly to int32 (float32).
    check_sorted : bool, optional
        Check that the keys are sorted (the default: one O(K) pass beside the build's own;
        ValueError if not). False skips it: unsorted keys then give unspecified (in-range)
        results.
    {stream_param}
        For CUDA keys: the stream to build on (as in :func:`searchsorted`); the constructor
        waits for the build, so the index can be searched on any stream afterwards.

    Raises
    ------
    ValueError
        Keys that are not 1-D, unsorted keys (unless ``check_sorted=False``), `stream` with CPU
        keys.
    TypeError
        A dtype gsearch cannot search (complex, object, strings, ...).
    {gpu_errors}

    Notes
    -----
    Queries are searched on the index's device only (ValueError otherwise, naming both), with
    the dtype rules of :func:`searchsorted`: queries whose dtype converts exactly to the index's
    are converted; queries of a wider dtype that numpy's promotion holds exactly (int64 queries
    of an int32 index, float64 queries of a float32 or a 32-bit integer index) are mapped
    exactly to the index's dtype (rounded or clamped as the side needs) and give numpy's
    answers; pairs whose promotion would round (int64 keys and float queries, ...) are a
    TypeError. Python scalars compare exactly. On a GPU the search is enqueued on the
    queries' framework's current stream (or `stream`) and returns at once.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> index = gsearch.Index(np.array([10, 20, 20, 30]))
    >>> index.searchsorted([5, 20, 25])
    array([0, 1, 3])
    >>> index.searchsorted(20, side='right')
    np.int64(3)
    >>> index.predecessor(np.array([[5, 30], [20, 99]]))
    array([[-1,  3],
           [ 2,  3]])
    >>> len(index), index.dtype, index.device
    (4, dtype('int64'), 'cpu')
    """

    __slots__ = ("_ix", "_fw", "_dev", "_dtype", "_k", "__weakref__")

    def __init__(self, keys: ArrayLike, *, check_sorted: bool = True, stream: Any = None) -> None:
        if not isinstance(check_sorted, (bool, _np.bool_)):
            raise TypeError(f"gsearch.Index: check_sorted must be a bool, not {type(check_sorted).__name__}")
        K = _classify(keys, "keys")
        if isinstance(K, _Scalar):
            raise ValueError("gsearch.Index: keys must be a 1-D array, not a scalar")
        shape = _shape(K)
        if len(shape) != 1:
            raise ValueError(f"gsearch.Index: keys must be 1-D, not of shape {shape}")
        _check_supported(K.dtype, "key")
        kd = _widened(K.dtype)
        with _StreamScope(K.fw, K.dev, stream) as scope:
            x = _convert(K, kd)
            if check_sorted and not _core.is_sorted(x, scope.handle):
                raise ValueError(
                    "gsearch.Index: the keys are not sorted (ascending, NaN last, -0.0 == 0.0); "
                    "check_sorted=False skips this check"
                )
            self._ix = _core.Index(x, False, scope.handle)
        self._fw, self._dev, self._dtype, self._k = K.fw, K.dev, kd, int(self._ix.size)

    # -- searches --

    def searchsorted(
        self,
        v: ArrayLike,
        side: Side = _LEFT,
        *,
        out: Optional[Any] = None,
        out_int32: bool = False,
        right: Optional[bool] = None,
        stream: Any = None,
    ) -> Any:
        """Find the indices where elements of `v` should be inserted into the keys to keep
        them sorted: ``numpy.searchsorted(keys, v, side)`` on the index.

        Parameters
        ----------
        v : array_like
            Queries: a scalar, a sequence or an array of any shape, on the index's device.
        side : {'left', 'right'}, optional
            'left' (the default): the keys < v, ``keys[i-1] < v <= keys[i]``; 'right': the keys
            <= v, ``keys[i-1] <= v < keys[i]``.
        out : array, optional
            Where to write the result: an array of the queries' kind on their device, of `v`'s
            shape, int64 (int32 with `out_int32`), C-contiguous. It is returned.
        out_int32 : bool, optional
            int32 indices (ValueError if K does not fit).
        right : bool, optional
            torch's flag: True is side='right' (as in :func:`searchsorted`).
        {stream_param}
            For a CUDA index: the stream to search on (default: the current stream of the
            queries' framework), as in :func:`searchsorted`.

        Returns
        -------
        indices : int or array of ints
            `v`'s shape, in [0, K], int64 (int32 with `out_int32`); a numpy integer for a
            scalar `v` of a CPU index over numpy arrays; a tensor / array of the queries' kind
            on the index's device otherwise.

        Raises
        ------
        ValueError
            Queries on another device than the index, a bad `side`, an `out` of the wrong shape,
            `stream` for a CPU index.
        TypeError
            A query dtype gsearch cannot search, or whose promotion with the keys' would round;
            an `out` of the wrong dtype.

        Examples
        --------
        >>> import numpy as np, gsearch
        >>> gsearch.Index(np.array([1.0, 2.0, 2.0, np.nan])).searchsorted([2.0, np.nan, 9.0])
        array([1, 3, 3])
        """
        if (
            type(v) is _ndarray
            and out is None
            and right is None
            and stream is None
            and out_int32 is False
            and self._dev is None
            and v.dtype == self._dtype
            and v.flags.c_contiguous
        ):
            s = _LEFT_I if side is _LEFT else (_NUMPY_SIDES.get(side) if type(side) is str else None)
            if s is not None:
                res = _empty(v.shape, _INT64)
                self._ix.search(v, res, s, 0)
                return res if v.ndim else res[()]
        return self._search(v, _side_code(side, right), out, out_int32, stream)

    def lower_bound(self, v: ArrayLike, *, out: Optional[Any] = None, out_int32: bool = False, stream: Any = None) -> Any:
        """The number of keys < each of `v`: ``searchsorted(v, side='left')`` (arguments and
        result as there)."""
        return self._search(v, _LEFT_I, out, out_int32, stream)

    def upper_bound(self, v: ArrayLike, *, out: Optional[Any] = None, out_int32: bool = False, stream: Any = None) -> Any:
        """The number of keys <= each of `v`: ``searchsorted(v, side='right')`` (arguments
        and result as there)."""
        return self._search(v, _RIGHT_I, out, out_int32, stream)

    def predecessor(self, v: ArrayLike, *, out: Optional[Any] = None, out_int32: bool = False, stream: Any = None) -> Any:
        """The index of the largest key <= each of `v`, or -1: ``searchsorted(v, side='right')
        - 1``, in [-1, K) (arguments and result as in :meth:`searchsorted`)."""
        return self._search(v, _PRED_I, out, out_int32, stream)

    def _search(self, v: Any, side: int, out: Any, out_int32: Any, stream: Any) -> Any:
        if not isinstance(out_int32, (bool, _np.bool_)):
            raise TypeError(f"gsearch: out_int32 must be a bool, not {type(out_int32).__name__}")
        kd, k = self._dtype, self._k
        V = _adopt(_classify(v, "queries"), kd)
        if isinstance(V, _Arr):
            if V.dev != self._dev:
                raise ValueError(
                    f"gsearch.Index: the index is on {_where(self._dev)} but the queries on "
                    f"{_where(V.dev)}: search queries on the index's device"
                )
            fw, dev, vshape = V.fw, V.dev, _shape(V)
        else:
            fw, dev, vshape = self._fw, self._dev, ()
        od = _INT32 if out_int32 else _INT64
        target = _check_out(out, fw, dev, vshape, od) if out is not None else None
        with _StreamScope(fw, dev, stream) as scope:
            const = below = above = None
            s = side
            if isinstance(V, _Scalar):
                value = V.value
                if V.dtype is not None:  # a numpy scalar: its dtype's rules, then its exact value
                    _resolve(kd, V.dtype)
                    value = value.item()
                q, to_right, const = _weak_query(value, kd, kd)
                if to_right and s == _LEFT_I:
                    s = _RIGHT_I
                if const is not None:
                    q = kd.type(0)
                queries = _full0d(fw, dev, q if fw == "numpy" else q.item(), kd)
            else:
                p = _resolve(kd, V.dtype)
                if p == kd:
                    queries = _convert(V, kd)
                else:
                    queries, below, above = _index_queries(fw, dev, _convert(V, p), p, kd, s)
            res = target if target is not None else _new_empty(fw, dev, vshape, od)
            self._ix.search(queries, res, s, scope.handle)
            if const is not None:
                res[...] = _core.rank_outside(side, k, const == _ABOVE)
            if below is not None:
                _fill_where(fw, res, below, _core.rank_outside(side, k, False))
            if above is not None:
                _fill_where(fw, res, above, _core.rank_outside(side, k, True))
        if out is not None:
            return out
        if fw == "numpy" and not vshape:
            return res[()]
        return res

    # -- properties --

    @property
    def size(self) -> int:
        """The number of keys indexed (K)."""
        return self._k

    def __len__(self) -> int:
        return self._k

    @property
    def dtype(self) -> _np.dtype:
        """The dtype of the keys as the index holds them (narrow dtypes widened: int8 keys give
        an int32 index)."""
        return self._dtype

    @property
    def device(self) -> Any:
        """Where the index lives, in the keys' framework: 'cpu' (numpy),
        torch.device('cpu') / torch.device('cuda', i) (torch), cupy.cuda.Device(i) (cupy)."""
        if self._fw == "torch":
            torch = _torch()
            return torch.device("cpu") if self._dev is None else torch.device("cuda", self._dev)
        if self._dev is None:
            return "cpu"
        return _cupy().cuda.Device(self._dev)

    @property
    def nbytes(self) -> int:
        """Bytes of the index's memory: the keys, padded to whole nodes, and the separators
        (about K * itemsize * (1 + 1/B))."""
        return int(self._ix.memory_bytes)

    @property
    def levels(self) -> int:
        """Levels of the tree, the leaves included (a search reads one node per level)."""
        return int(self._ix.levels)

    @property
    def node_keys(self) -> int:
        """Keys per node (B): a 64-byte cache line on the CPU, 16 bytes on the GPU."""
        return int(self._ix.node_keys)

    def __repr__(self) -> str:
        where = "cpu" if self._dev is None else f"cuda:{self._dev}"
        return (
            f"gsearch.Index(size={self._k}, dtype={self._dtype.name}, device='{where}', "
            f"levels={self.levels}, node_keys={self.node_keys}, nbytes={self.nbytes})"
        )
