"""Search of sorted keys: searchsorted (numpy's, and torch's row-batched form), predecessor,
bucketize (torch's) and equal_range, all through _search (and the fast paths of searchsorted
for numpy and torch arrays)."""

from __future__ import annotations

import math as _math
from typing import Any, Literal, Optional

import numpy as _np

from . import _arrays, _core
from ._arrays import (
    _ABOVE,
    _INT32,
    _INT64,
    _NATIVE,
    _PY_EXACT,
    _WIDEN,
    ArrayLike,
    _Arr,
    _Scalar,
    _StreamScope,
    _adopt,
    _check_out,
    _check_supported,
    _classify,
    _convert,
    _cupy,
    _empty,
    _full0d,
    _ndarray,
    _new_empty,
    _resolve,
    _shape,
    _size,
    _torch,
    _weak_query,
    _where,
)
from ._common import _LEFT, _LEFT_I, _NUMPY_SIDES, _PRED_I, _RIGHT_I, Side, _side_code
from ._docs import public as _public

Algo = Literal["auto", "pbs", "pbs-cf", "pbs-cl", "binary", "index", "partitioned", "pary", "merge"]

_ALGOS: dict[str, int] = dict(_core.ALGORITHMS)
_ORDER_ANY, _ORDER_SORTED, _ORDER_DETECT = (_core.QUERIES_ORDERS[o] for o in ("any", "sorted", "detect"))
_search_fast = _core.search_fast
_asarray = _np.asarray


# --- the general path --------------------------------------------------------------------------


def _algo_code(algo: Any) -> int:
    code = _ALGOS.get(algo) if isinstance(algo, str) else None
    if code is None:
        raise ValueError(f"gsearch: algo must be one of {', '.join(map(repr, _ALGOS))}, not {algo!r}")
    return code


def _checked_sorter(a: _Arr, sorter: Any) -> _Arr:
    """sorter (numpy's and torch's) classified and checked against the keys a: integers, on a's
    device, of a's shape (numpy's words for 1-D a). Its indices' range is checked where they are
    used (the library for 1-D keys, _apply_sorter for N-D)."""
    s = _classify(sorter, "sorter")
    if isinstance(s, _Scalar):
        s = _Arr(_np.asarray(s.value), "numpy", None, _np.asarray(s.value).dtype)
    if s.dtype.kind not in "iu":
        raise TypeError("sorter must only contain integers")
    if s.dev != a.dev:
        raise ValueError(f"gsearch: sorter on {_where(s.dev)} but the keys on {_where(a.dev)}")
    ashape, sshape = _shape(a), _shape(s)
    if len(ashape) == 1:
        if len(sshape) != 1:
            raise TypeError("could not parse sorter argument: sorter must be 1-D like a")
        if sshape != ashape:
            raise ValueError("sorter.size must equal a.size")
    elif sshape != ashape:
        raise ValueError(f"gsearch: sorter of shape {sshape} for keys of shape {ashape}: they must match")
    return s


def _apply_sorter(a: _Arr, s: _Arr) -> _Arr:
    """take_along_axis(a, s, -1) for N-D keys (torch's row-batched sorter; 1-D keys go to the
    library with their sorter, which gathers and checks it), the indices checked first."""
    ashape = _shape(a)
    k = ashape[-1]
    x = s.x
    if s.fw == "numpy":
        bad = x.size and (int(x.min()) < 0 or int(x.max()) >= k)
    else:
        bad = x.numel() if s.fw == "torch" else x.size
        bad = bool(bad) and bool(((x < 0) | (x >= k)).any())  # synchronizes on the GPU
    if bad:
        raise ValueError("Sorter index out of range.")
    if a.fw == "numpy":
        xs = (x if s.fw == "numpy" else _np.asarray(x)).astype(_np.intp, copy=False)
        g = _np.take(a.x, xs) if len(ashape) == 1 else _np.take_along_axis(a.x, xs, -1)
    elif a.fw == "torch":
        torch = _torch()
        idx = x if s.fw == "torch" else torch.as_tensor(x, device=a.x.device)
        g = torch.gather(a.x, -1, idx.to(torch.int64))
    else:
        cp = _cupy()
        g = cp.take_along_axis(a.x, cp.asarray(x).astype(cp.int64), -1)
    return _Arr(g, a.fw, a.dev, a.dtype)


def _search(
    a: Any,
    v: Any,
    side: int,
    sorter: Any,
    out: Any,
    algo: Any,
    check_sorted: Optional[bool],
    out_int32: bool,
    stream: Any,
    batched: bool = True,
    sorted_queries: Optional[bool] = False,
    max_temp_bytes: Optional[int] = None,
    equal: bool = False,
) -> Any:
    """The search of every function of the searchsorted family. check_sorted: True checks the
    keys (and, with sorted_queries, the queries: the library does both); None checks the
    queries when sorted_queries is True, and nothing else (the rule of docs/semantics.md, "What
    is checked sorted"); False checks nothing. equal (side left, no out): equal_range, both
    bounds in one call of the library, returned as (lower, upper)."""
    algo_code = _algo_code(algo)
    if sorted_queries is not None and not isinstance(sorted_queries, (bool, _np.bool_)):
        raise TypeError(f"gsearch: sorted_queries must be True, False or None, not {sorted_queries!r}")
    if check_sorted is not None and not isinstance(check_sorted, (bool, _np.bool_)):
        raise TypeError(f"gsearch: check_sorted must be True, False or None, not {check_sorted!r}")
    A = _classify(a, "keys")
    if isinstance(A, _Scalar):
        raise ValueError("gsearch: the keys must have at least one dimension (a is a scalar)")
    V = _classify(v, "queries")
    A = _adopt(A, V)
    V = _adopt(V, A)
    ashape = _shape(A)
    if len(ashape) == 0:
        raise ValueError("gsearch: the keys must have at least one dimension (a is 0-d)")
    if not batched and len(ashape) != 1:
        raise ValueError(f"gsearch: boundaries must be 1-D, not of shape {ashape}")

    # Where it runs and what it returns: the queries' framework (the keys' for a scalar query).
    if isinstance(V, _Arr):
        if V.dev != A.dev:
            raise ValueError(
                f"gsearch: keys on {_where(A.dev)} but queries on {_where(V.dev)}: "
                "move them to one device"
            )
        fw, dev, vshape = V.fw, V.dev, _shape(V)
    else:
        fw, dev, vshape = A.fw, A.dev, ()
    rows = -1
    if len(ashape) > 1:
        if len(vshape) != len(ashape) or vshape[:-1] != ashape[:-1]:
            raise ValueError(
                f"gsearch: keys of shape {ashape} (row-batched) need queries of shape "
                f"{ashape[:-1] + ('M',)}, not {vshape}"
            )
        rows = _math.prod(ashape[:-1])
        if sorted_queries:
            raise ValueError(
                "gsearch: sorted_queries=True applies to 1-D keys (one search of all the queries), "
                f"not to keys of shape {ashape}"
            )
    od = _INT32 if out_int32 else _INT64
    target = _check_out(out, fw, dev, vshape, od) if out is not None else None

    with _StreamScope(fw, dev, stream) as scope:
        order = None  # 1-D keys: the sorter as the library takes it, int64 and C-contiguous
        if sorter is not None:
            S = _checked_sorter(A, sorter)
            if len(ashape) == 1:
                order = _convert(S, _INT64)
            else:
                A = _apply_sorter(A, S)
        const = None
        if isinstance(V, _Scalar) and V.dtype is None:  # a Python int / float / bool
            _check_supported(A.dtype, "key")
            kd = _WIDEN.get(A.dtype.newbyteorder("="), A.dtype.newbyteorder("="))
            q, to_right, const = _weak_query(V.value, kd, A.dtype)
            if to_right and side == _LEFT_I:
                side = _RIGHT_I
            if const is not None:
                q = kd.type(0)
            queries = _full0d(fw, dev, q if fw == "numpy" else q.item(), kd)
        else:
            vd = V.dtype
            kd = _resolve(A.dtype, vd)
            if isinstance(V, _Scalar):
                queries = _full0d(fw, dev, V.value if fw == "numpy" else V.value.item(), kd)
            else:
                queries = _convert(V, kd)
        keys = _convert(A, kd)
        res = target if target is not None else _new_empty(fw, dev, vshape, od)
        upper = _new_empty(fw, dev, vshape, od) if equal else None
        # What the queries' order is known to be: the library decides for None (QUERIES_ORDERS).
        qs = _ORDER_SORTED if sorted_queries else _ORDER_ANY
        if sorted_queries is None and rows < 0 and const is None:
            qs = _ORDER_DETECT
        elif qs == _ORDER_SORTED and check_sorted is None and _size(queries) > 1 and not _core.is_sorted(queries.reshape(-1), scope.handle):
            raise ValueError(
                "gsearch: sorted_queries=True, but the queries are not sorted (ascending in flat "
                "order, NaN last): pass sorted_queries=None (or False) for queries in any order; "
                "check_sorted=False skips this check"
            )
        if upper is None:
            _core.search(keys, queries, res, side, algo_code, bool(check_sorted), rows, scope.handle, qs, max_temp_bytes,
                         order)
        else:
            _core.equal_range(keys, queries, res, upper, algo_code, bool(check_sorted), rows, scope.handle, qs,
                              max_temp_bytes, order)
        if const is not None:
            k = ashape[-1]
            res[...] = _core.rank_outside(side, k, const == _ABOVE)
        if upper is not None and (const is not None or side != _LEFT_I):
            # A Python number no key equals (beyond every key, or between two keys' values,
            # searched on the right): the range is empty, lower = upper.
            if const is not None:
                upper[...] = res
            else:
                res[...] = upper
    if out is not None:
        return out
    if upper is not None:
        return (res[()], upper[()]) if fw == "numpy" and not vshape else (res, upper)
    if fw == "numpy" and not vshape:
        return res[()]
    return res


def _temp_cap(cap: Any) -> Optional[int]:
    """max_temp_bytes checked: None or an int >= 0."""
    if cap is None:
        return None
    if isinstance(cap, (bool, _np.bool_)) or not isinstance(cap, (int, _np.integer)):
        raise TypeError(f"gsearch: max_temp_bytes must be None or an int, not {type(cap).__name__}")
    if cap < 0:
        raise ValueError(f"gsearch: max_temp_bytes must be None or >= 0, not {cap}")
    return int(cap)


# --- the functions ----------------------------------------------------------------------------


@_public
def searchsorted(
    a: ArrayLike,
    v: ArrayLike,
    side: Side = _LEFT,
    sorter: Optional[ArrayLike] = None,
    *,
    out: Optional[Any] = None,
    algo: Algo = "auto",
    check_sorted: Optional[bool] = None,
    right: Optional[bool] = None,
    out_int32: bool = False,
    stream: Any = None,
    sorted_queries: Optional[bool] = None,
    max_temp_bytes: Optional[int] = None,
) -> Any:
    """Find the indices where elements should be inserted to maintain order.

    Find the indices into a sorted array `a` such that, if the corresponding elements in `v`
    were inserted before the indices, the order of `a` would be preserved: numpy.searchsorted
    for a 1-D `a`, and torch.searchsorted's row-batched form for an N-D `a`.

    ================  ====================================
    `side`            returned index `i` satisfies
    ================  ====================================
    left              ``a[i-1] < v <= a[i]``
    right             ``a[i-1] <= v < a[i]``
    ================  ====================================

    Parameters
    ----------
    a : array_like, shape (K,) or (..., K)
        Sorted keys (ascending; NaN last, -0.0 equal to 0.0). 1-D: numpy's semantics, `v` of any
        shape. N-D: torch's, one sorted row per leading index, `v` of shape (..., M) with the
        same leading dimensions, row r of `v` searching row r of `a` only.
    v : array_like
        Values to insert into `a`: a scalar, a sequence or an array of any shape (1-D `a`).
    side : {'left', 'right'}, optional
        'left' (the default): the first suitable index; 'right': the last one.
    sorter : array_like of ints, optional
        Indices that sort `a` along its last axis (e.g. from argsort): `a[sorter]` (1-D) or
        ``take_along_axis(a, sorter, -1)`` (N-D) is searched, and the indices returned are
        positions in that order (numpy's and torch's sorter). Any integer dtype (int64 is taken
        as it is, with no copy, on the CPU and the GPU alike; others are converted once), on `a`'s
        device, of `a`'s shape ("sorter.size must equal a.size"), the indices read in [0, K)
        ("Sorter index out of range"): ValueError otherwise. It need not be a permutation
        (numpy does not check that either). 1-D `a` on the CPU with few queries (M ceil(log2(K
        + 1)) <= 2K, `check_sorted` off): searched through the sorter in place, numpy's way,
        about 2 log2 K reads a query, the indices read checked (one out of range that no search
        reads is not looked at, as in numpy). Otherwise (more queries, or a GPU) the library
        gathers the keys in sorter's order once into temporary memory (K elements, counted
        against `max_temp_bytes`), checking every index (naming the first out of range), and
        searches the copy; on a GPU the call waits for the check before it enqueues the search.
        To search the same keys again, gather them once (``a[sorter]``). With no queries nothing
        is read but the size (numpy's answer). N-D `a`: gathered by the array's framework
        (``take_along_axis``), the indices checked first. `check_sorted` checks the keys in
        sorter's order.
    out : array, optional
        Where to write the result: an array of the result's kind (numpy, torch, cupy) on its
        device, of `v`'s shape, int64 (int32 with `out_int32`), C-contiguous. It is returned
        (also for a scalar `v`).
    algo : {'auto', 'pbs', 'pbs-cf', 'pbs-cl', 'binary', 'index', 'partitioned', 'pary', 'merge'}, optional
        The search algorithm (all give the same indices; they differ in speed). 'auto' picks by
        backend, key count, dtype and query count. 'index' builds a static index of the keys
        for the call (an S+ tree, as :class:`Index`: O(K) to build, about a copy of the keys
        in memory, then one 64-byte node per level on the CPU, one 16-byte node on the GPU)
        and searches it: it pays for large key sets searched by many queries, and 'auto' takes
        it there (by the backends' tuning: today on the CPU from 2**16 keys with at least K/4
        queries, on a GPU beyond shared memory with at least K/2 queries, K/4 from 2**22 keys and
        K/16 from 2**25, where 'partitioned' is not taken). To search the same keys more than
        once, build an :class:`Index` once instead. 'partitioned' groups the queries by bucket of keys
        (192 KB of keys a bucket on a GPU, 256 KB on the CPU), searches each bucket's keys for
        all its queries (in shared memory on a GPU) and writes the results back in query
        order: meant for many queries in key sets beyond shared memory ('auto' takes it on a
        GPU for at least 2**20 queries and K/16 of them from 2**22 keys, and for 4-byte keys
        8K from 2**20 keys); it takes temporary memory of 8-20 bytes a query of a window
        (2**22 queries). 'pary' is P-ary
        search: on a GPU a warp of 32 threads per query, each step cutting the range into 33
        parts (log33 K steps), for the response time of one or a few queries ('auto' takes it
        on a GPU for at most 32 queries in keys beyond shared memory); on the CPU it runs the
        same arithmetic and is slower than 'binary'. 'merge' puts the queries in key order
        by bucket of keys (a radix sort of one or two passes on a GPU), searches each among its
        bucket's keys (every key read about once, whatever K) and writes the answers back in
        query order: its cost is one or two radix passes over the queries, for many queries in the
        largest key sets ('auto' takes it on a GPU for integer keys: 4-byte keys from 2**27
        keys with at least 2**24 queries and from 2**26 with 2**26, 8-byte keys from 2**25
        with 2**26 and from 2**24 with 2**27); it takes temporary memory of about 3 copies of the queries and 32 bytes
        a query. N-D `a`
        (one key list per row) runs 'index', 'partitioned', 'pary' and 'merge' as 'binary'
        where rows outgrow shared memory.
    check_sorted : bool or None, optional
        True: check first that `a` (each row of it) is sorted, and with `sorted_queries=True`
        that `v` is; ValueError if not. O(K); on a GPU it waits for the check. None (the
        default): `a` is not checked (numpy's and torch's contract: unsorted keys give
        unspecified, in-range results), `v` is when `sorted_queries=True`. False: nothing is
        checked.
    right : bool, optional
        torch's flag: True is side='right'. An explicit side='left' with right=True is a
        ValueError; an explicit side wins over right=False.
    out_int32 : bool, optional
        Return int32 indices (torch's option; faster on GPUs). ValueError if K does not fit.
    {stream} (a cudaStream_t as an int, a torch.cuda.Stream,
        a cupy Stream, or any object with ``.cuda_stream`` or ``.ptr``). Default: the current
        stream of the result's framework on the arrays' device. The conversions and the
        allocation of the result are ordered on the same stream.
    sorted_queries : bool or None, optional
        Whether `v` (taken flat) is sorted too, which a 1-D `a` can use: the sorted queries are
        searched by Merge Path ("vectorized sorted search"), O(K + M) work with keys and
        queries each read once, instead of a binary search per query. True: take that path,
        after an O(M) check that `v` is sorted (ValueError naming the queries if not; on a
        GPU the check waits for its answer); ``check_sorted=False`` skips the check, and then
        unsorted queries give unspecified, in-range results; ValueError for N-D `a`. False:
        never. None (the default): decide
        cheaply: on a GPU, when the keys are too large for shared memory (where 'auto' would
        run a global-memory search: the binary, index or partitioned search), `v` has at least
        2**20 elements and at least a quarter as many as `a`, a check of `v`'s order on the
        device picks the sorted path if it is sorted, without waiting (both searches are
        enqueued, each gated on the check's answer; unsorted queries are read only until a
        pair out of order turns up); on the CPU, and otherwise, never. `algo` is ignored on
        the sorted path.
    max_temp_bytes : int or None, optional
        The most temporary memory the search may allocate (None: no cap). 'auto' then picks
        only algorithms that fit (0: those that read the keys in place); an explicit 'index'
        or 'partitioned' that needs more raises ValueError naming both numbers.
        docs/semantics.md, "Temporary memory", says what each algorithm takes.

    Returns
    -------
    indices : int or array of ints
        Array of insertion points with the same shape as `v` (int64, or int32 with
        `out_int32`), or a numpy integer if `v` is a scalar or 0-d and numpy arrays are
        searched. For torch or cupy inputs, a tensor / array of the same kind on the same
        device (0-d for a scalar `v`).

    Raises
    ------
    ValueError
        Bad `side`, `algo`; shapes that do not match (N-D `a` and `v`, `sorter`, `out`); a 0-d
        `a`; side and right in conflict; unsorted keys with `check_sorted`; unsorted queries
        with `sorted_queries=True` (unless ``check_sorted=False``); keys and queries on
        different devices; a sorter index out of range.
    TypeError
        A dtype gsearch cannot search (complex, object, strings, ...), or a key and query dtype
        pair whose promotion would round (int64 or uint64 with a float, uint64 with a signed
        integer, and the like): convert explicitly. An `out` of the wrong dtype.
    {gpu_errors}

    Notes
    -----
    Binary search variants from Karsin, Casanova and Sitchinava (PBS, PBS-CF, PBS-CL) on the
    GPU, a branch-free binary search on the CPU (all cores from 16K queries per thread; small
    calls take a short path with the GIL held, large ones release the GIL), and for large key
    sets with many queries a static index built for the call ('index', see `algo`).

    Dtypes: keys and queries are compared in numpy's promoted dtype of the pair (``np.result_type``)
    when every value of both converts to it exactly; bool, 8- and 16-bit integers, float16 and
    bfloat16 are widened exactly to a 32-bit type. Python int and float scalars are compared
    exactly, as Python compares numbers: a query outside the keys' range is below or above every
    key, a float between two integer keys falls between them, an int too large for float32 keys
    compares as the integer it is (this is numpy's answer wherever numpy's own conversion is
    exact). A Python float with int64 / uint64 keys is a TypeError, as above. Lists are taken as
    numpy takes them (``np.asarray``), except that an empty one takes the other operand's dtype.

    Copies: contiguous inputs of the compared dtype are searched in place (numpy, torch and cupy
    alike: DLPack, no copy). Non-contiguous inputs are copied once, and inputs of another dtype
    are converted once, with their own framework (on the GPU, on the call's stream). CUDA arrays
    are searched on their own device (made current for the call and restored after) and the
    call returns once the search is enqueued, except with `check_sorted`, `sorter` (its range
    check) or the check of ``sorted_queries=True``, which wait (``sorted_queries=None`` decides on the device). Keys and queries of two frameworks on one device are accepted; the result is of the
    queries' framework. CPU torch tensors are accepted and give CPU torch tensors.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.searchsorted(np.array([1, 2, 3, 4, 5]), 3)
    np.int64(2)
    >>> gsearch.searchsorted(np.array([1, 2, 3, 4, 5]), 3, side='right')
    np.int64(3)
    >>> gsearch.searchsorted(np.array([1, 2, 3, 4, 5]), [-10, 10, 2, 3])
    array([0, 5, 1, 2])
    >>> gsearch.searchsorted(np.array([[1, 3, 5], [2, 4, 6]]), np.array([[3], [3]]))
    array([[1],
           [1]])
    >>> gsearch.searchsorted(np.array([30, 10, 20]), [15, 25], sorter=[1, 2, 0])
    array([1, 2])
    """
    # Fast paths: numpy keys, 1-D, of a supported dtype, default options; queries a numpy array
    # of the same dtype, or a Python int / float that the keys' dtype holds exactly.
    if (
        type(a) is _ndarray
        and sorter is None
        and out is None
        and right is None
        and stream is None
        and out_int32 is False
        and (check_sorted is None or check_sorted is False)
        and algo == "auto"
        and not sorted_queries
        and max_temp_bytes is None
    ):
        s = _LEFT_I if side is _LEFT else (_NUMPY_SIDES.get(side) if type(side) is str else None)
        tv = type(v)
        if s is not None and a.ndim == 1:
            dt = a.dtype
            if tv is _ndarray:
                if dt is v.dtype and dt in _NATIVE:
                    res = _empty(v.shape, _INT64)
                    if _search_fast(a, v, res, s):
                        return res if v.ndim else res[()]
            elif tv is int or tv is float:
                lim = _PY_EXACT.get(dt)
                if lim is not None and (lim[0] <= v <= lim[1] if tv is int else lim[2]):
                    res = _empty((), _INT64)
                    if _search_fast(a, _asarray(v, dt), res, s):
                        return res[()]
    # Fast path: torch tensors (CUDA or CPU) of one supported dtype, 1-D keys, no sorter, the
    # current stream, out= (if any) a contiguous tensor of the result's shape, dtype and device.
    tt = _arrays._TT  # torch.Tensor, once a tensor was seen
    if (
        type(a) is tt
        and type(v) is tt
        and sorter is None
        and stream is None
        and max_temp_bytes is None
        and (check_sorted is None or check_sorted is False)
        and (sorted_queries is None or sorted_queries is False)
        and (out_int32 is False or out_int32 is True)
        and type(algo) is str
        and algo in _ALGOS
    ):
        s = _NUMPY_SIDES.get(side) if right is None and type(side) is str else None
        if s is None:
            s = _side_code(side, right)
        dt = a.dtype
        dev = v.get_device()  # a CUDA ordinal, -1 on the CPU: one call where .device makes an object
        key_type = _arrays._TORCH_KEY_TYPE.get(dt)
        if (
            dt is v.dtype
            and key_type is not None
            and a.dim() == 1
            and a.is_contiguous()
            and v.is_contiguous()
            and a.get_device() == dev
            and (v.is_cuda if dev >= 0 else v.is_cpu)  # (other devices number themselves too)
        ):
            od = _arrays._INT32_T if out_int32 else _arrays._INT64_T
            if out is None:
                res = _arrays._empty_like(v, dtype=od)  # (v is contiguous: so is the result)
            elif (
                type(out) is tt
                and out.dtype is od
                and out.get_device() == dev
                and out.shape == v.shape
                and out.is_contiguous()
                and not out.requires_grad
            ):
                res = out
            else:
                res = None
            if res is not None:
                # Data pointers, not the tensors: DLPack's import of three tensors was most of the
                # call's host time (docs/perf-notes.md, "The Python path's per-call time").
                _core.search_pointers(a.data_ptr(), a.numel(), v.data_ptr(), v.numel(), res.data_ptr(), not out_int32,
                                      key_type, dev, s, _ALGOS[algo], _arrays._raw_stream(dev) if dev >= 0 else 0,
                                      _ORDER_ANY if sorted_queries is False else _ORDER_DETECT)
                return res
    return _search(
        a, v, _side_code(side, right), sorter, out, algo, check_sorted, out_int32, stream, sorted_queries=sorted_queries,
        max_temp_bytes=_temp_cap(max_temp_bytes),
    )


@_public
def predecessor(
    a: ArrayLike,
    v: ArrayLike,
    *,
    out: Optional[Any] = None,
    algo: Algo = "auto",
    check_sorted: bool = False,
    out_int32: bool = False,
    stream: Any = None,
) -> Any:
    """The index of the largest element of `a` that is less than or equal to each `v`.

    ``predecessor(a, v) == searchsorted(a, v, side='right') - 1``: the largest i with
    ``a[i] <= v``, or -1 when every element of `a` is greater than `v` (or `a` is empty).

    Parameters
    ----------
    a : array_like, shape (K,) or (..., K)
        Sorted keys (NaN last, -0.0 equal to 0.0); N-D: one sorted row per leading index, as in
        :func:`searchsorted`.
    v : array_like
        Queries: any shape (1-D `a`) or (..., M) with `a`'s leading dimensions (N-D `a`).
    out, algo, check_sorted, out_int32, stream
        As in :func:`searchsorted`.

    Returns
    -------
    indices : int or array of ints
        Indices in [-1, K), `v`'s shape, int64 (int32 with `out_int32`); a numpy integer for a
        scalar `v` over numpy keys; torch / cupy arrays on the inputs' device for those inputs.

    Raises
    ------
    {errors_as_searchsorted}

    Notes
    -----
    The same dtype rules, copies and devices as :func:`searchsorted` (CPU and CUDA).

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.predecessor(np.array([10, 20, 30]), [5, 10, 25, 99])
    array([-1,  0,  1,  2])
    """
    return _search(a, v, _PRED_I, None, out, algo, check_sorted, out_int32, stream)


@_public
def bucketize(
    input: ArrayLike,
    boundaries: ArrayLike,
    *,
    out_int32: bool = False,
    right: bool = False,
    out: Optional[Any] = None,
    algo: Algo = "auto",
    check_sorted: bool = False,
    stream: Any = None,
) -> Any:
    """The indices of the buckets to which each value in `input` belongs (torch.bucketize).

    ================  =============================================
    `right`           returned index `i` satisfies
    ================  =============================================
    False             ``boundaries[i-1] < x <= boundaries[i]``
    True              ``boundaries[i-1] <= x < boundaries[i]``
    ================  =============================================

    Parameters
    ----------
    input : array_like
        Values: a scalar or an array of any shape.
    boundaries : array_like, shape (K,)
        1-D, sorted (NaN last, -0.0 equal to 0.0).
    out_int32 : bool, optional
        int32 indices instead of int64.
    right : bool, optional
        False (default): ``searchsorted(boundaries, input, side='left')``; True: side='right'.
    out, algo, check_sorted, stream
        As in :func:`searchsorted`.

    Returns
    -------
    indices : int or array of ints
        `input`'s shape, in [0, K]; a numpy integer for a scalar `input` over numpy
        boundaries; torch / cupy arrays on the inputs' device for those inputs.

    Raises
    ------
    ValueError
        `boundaries` not 1-D, unsorted boundaries with `check_sorted`, devices that differ.
    TypeError, MemoryError, RuntimeError
        As in :func:`searchsorted`.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> b = np.array([1, 3, 5, 7, 9])
    >>> gsearch.bucketize(np.array([[3, 6, 9], [3, 6, 9]]), b)
    array([[1, 3, 4],
           [1, 3, 4]])
    >>> gsearch.bucketize(np.array([[3, 6, 9], [3, 6, 9]]), b, right=True)
    array([[2, 3, 5],
           [2, 3, 5]])
    """
    if not isinstance(right, (bool, _np.bool_)):
        raise TypeError(f"gsearch: right must be a bool, not {type(right).__name__}")
    side = _RIGHT_I if right else _LEFT_I
    return _search(boundaries, input, side, None, out, algo, check_sorted, out_int32, stream, batched=False)


@_public
def equal_range(
    a: ArrayLike,
    v: ArrayLike,
    *,
    sorter: Optional[ArrayLike] = None,
    check_sorted: Optional[bool] = None,
    sorted_queries: Optional[bool] = None,
    out_int32: bool = False,
    algo: Algo = "auto",
    stream: Any = None,
) -> tuple:
    """The range of the keys equal to each query: ``(searchsorted(a, v, 'left'),
    searchsorted(a, v, 'right'))``.

    ``a[lower[j]:upper[j]]`` are the keys equal to ``v[j]`` (NaN equal to NaN, -0.0 to 0.0) and
    ``upper - lower`` their count.

    Parameters
    ----------
    a, v, sorter, check_sorted, sorted_queries, out_int32, algo, stream
        As in :func:`searchsorted` (1-D or N-D `a`); the checks run once (by default: of
        `v`, with ``sorted_queries=True``), and so does the gather of a `sorter` (the bounds are
        positions in sorter's order).

    Returns
    -------
    (lower, upper) : tuple of arrays (or numpy integers for a scalar `v`)
        `v`'s shape, int64 (int32 with `out_int32`).

    Raises
    ------
    {errors_as_searchsorted}

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.equal_range(np.array([1, 2, 2, 2, 5]), np.array([2, 3, 5]))
    (array([1, 4, 4]), array([4, 4, 5]))
    """
    return _search(
        a, v, _LEFT_I, sorter, None, algo, check_sorted, out_int32, stream, sorted_queries=sorted_queries, equal=True
    )

