"""gsearch.distributed: search, find, isin, sort, merge, join and as-of joins over data spread
across processes, through the caller's communicator (gsearch/dist.hpp in C++). gsearch moves no
bytes itself: torch.distributed (NCCL for CUDA tensors, gloo or MPI for CPU tensors) or mpi4py
does.

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

import pickle as _pickle
from typing import Any, Optional

import numpy as _np

from . import _asof, _core
from ._arrays import (
    _BOOL,
    _ELEMENT_NAMES,
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
    _cupy,
    _exact_value,
    _find_data,
    _new_empty,
    _one,
    _pair,
    _resolve,
    _shape,
    _torch,
    _where,
)
from ._common import (
    _FIND_MODES,
    _FIND_OPS,
    _IN_OP,
    _ISIN_METHODS,
    _JOIN_KINDS,
    _LEFT_ONLY_JOINS,
    _NUMPY_SIDES,
    _PRED_I,
)
from ._dist_comm import MpiComm, TorchComm, _agree, _agreed, _bind, _public, _together

__all__ = [
    "MpiComm",
    "TorchComm",
    "asof_indices",
    "count",
    "find",
    "isin",
    "join",
    "merge",
    "predecessor",
    "searchsorted",
    "sort",
]

# find's modes: the library's first, any and count, and 'all' (find_all); 'random' is not
# distributed.
_DIST_FIND_MODES = {"first": _FIND_MODES["first"], "any": _FIND_MODES["any"], "count": _FIND_MODES["count"], "all": -1}


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
    return _search(
        "searchsorted", a, v, lambda: _choice("distributed.searchsorted", "side", side, _NUMPY_SIDES), comm, sharded
    )


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
    return _search("predecessor", a, v, _PRED_I, comm, sharded)


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


# --- as-of join -----------------------------------------------------------------------------------


def _gather_objects(c: Any, mine: Any) -> list:
    """Every rank's `mine` (any picklable value), in rank order: two allgathers, the pickles'
    lengths, then the pickles padded to the longest. Collective: every rank calls it at the same
    point, after an agreement."""
    data = _np.frombuffer(_pickle.dumps(mine, protocol=_pickle.HIGHEST_PROTOCOL), dtype=_np.uint8)
    size = int(c.size)
    lengths = _np.empty(size, dtype=_np.int64)
    c.allgather(_np.array([data.size], dtype=_np.int64).view(_np.uint8), lengths.view(_np.uint8))
    width = max(int(lengths.max()), 1)
    padded = _np.zeros(width, dtype=_np.uint8)
    padded[: data.size] = data
    everyone = _np.empty(width * size, dtype=_np.uint8)
    c.allgather(padded, everyone)
    return [_pickle.loads(everyone[r * width : r * width + int(lengths[r])].tobytes()) for r in range(size)]


def _xp_of(fw: str) -> Any:
    return _torch() if fw == "torch" else _cupy() if fw == "cupy" else _np


def _canonical(fw: str, x: Any) -> Any:
    """A `by` column as the values that tell its groups apart, as gsearch.asof_indices compares
    them: datetimes as int64, bool as uint8, 16-bit floats as float32."""
    if fw == "torch":
        torch = _torch()
        if x.dtype == torch.bool:
            return x.to(torch.uint8)
        if x.dtype in (torch.bfloat16, torch.float16):
            return x.float()
        return x
    kind = x.dtype.kind
    if kind in "mM":
        return (_np.ascontiguousarray(x) if fw == "numpy" else x).view(_np.int64)
    if kind == "b":
        return x.view(_np.uint8) if fw == "numpy" else x.astype(_np.uint8)
    if x.dtype == _np.float16:
        return x.astype(_np.float32)
    return x


def _floating(fw: str, x: Any) -> bool:
    return bool(x.dtype.is_floating_point) if fw == "torch" else x.dtype.kind == "f"


def _integral(fw: str, x: Any) -> bool:
    if fw == "torch":
        return not x.dtype.is_floating_point and not x.dtype.is_complex
    return x.dtype.kind in "iu"


def _objects(fw: str, x: Any) -> bool:
    """An object column (numpy): told apart by pandas' hash equality where pandas imports (as
    gsearch.asof_indices), else by a sort."""
    if fw != "numpy" or x.dtype.kind != "O":
        return False
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True


def _to_host(fw: str, x: Any) -> _np.ndarray:
    if fw == "torch":
        return x.cpu().numpy()
    if fw == "cupy":
        return x.get()
    return _np.asarray(x)


def _full(fw: str, x: Any, n: int, value: int) -> Any:
    """n int64 values `value` beside x (its framework and device)."""
    if fw == "torch":
        torch = _torch()
        return torch.full((n,), value, dtype=torch.int64, device=x.device)
    return _xp_of(fw).full(n, value, dtype=_np.int64)


def _distinct(fw: str, x: Any) -> _np.ndarray:
    """The distinct values of a canonical column, on the host: sorted (NaN once, last), or for an
    object column pandas' uniques (nulls kept)."""
    if _objects(fw, x):
        import pandas as pd

        return _np.asarray(pd.unique(x), dtype=object)
    if fw == "numpy":
        return _np.unique(x)
    u = _torch().unique(x) if fw == "torch" else _cupy().unique(x)
    return _np.unique(_to_host(fw, u))  # NaN once (a CUDA unique keeps NaNs apart)


def _union(parts: list, objects: bool) -> _np.ndarray:
    """The ranks' distinct values of one column as one array, the same on every rank: sorted
    unique, or for objects their concatenation in rank order (pandas' factorization numbers it)."""
    parts = [p for p in parts if p.size]
    if objects:
        return _np.concatenate(parts) if parts else _np.empty(0, dtype=object)
    return _np.unique(_np.concatenate(parts)) if parts else _np.empty(0, dtype=_np.int64)


def _codes_in(fw: str, x: Any, union: _np.ndarray) -> tuple:
    """(codes, k): each value of the canonical column x numbered by its place among the values of
    `union` (the same array on every rank), NaN (or null) one code, and k - 1 for a value not
    among them: a group with no right row, which matches nothing."""
    n = int(x.shape[0])
    if _objects(fw, x):
        import pandas as pd

        codes, uniques = pd.factorize(union, use_na_sentinel=True)
        null = len(uniques)
        k = null + (1 if (codes < 0).any() else 0) + 1
        found = _np.asarray(pd.Index(uniques).get_indexer(x), dtype=_np.int64)
        found[found < 0] = k - 1
        if k - 1 != null:
            found[_np.asarray(pd.isna(x), dtype=bool)] = null
        return found, k
    floating = _floating(fw, x)
    has_nan = bool(floating and union.size and _np.isnan(union).any())
    values = union[~_np.isnan(union)] if has_nan else union
    k = int(values.size) + has_nan + 1
    absent = k - 1
    xp = _xp_of(fw)
    nan = xp.isnan(x) if floating else None
    if values.size == 0:
        codes = _full(fw, x, n, absent)
    elif fw == "torch":
        u = xp.from_numpy(_np.ascontiguousarray(values)).to(device=x.device, dtype=x.dtype)
        v = xp.where(nan, xp.zeros_like(x), x) if floating else x
        i = xp.searchsorted(u, v.contiguous())
        hit = u[xp.clamp(i, max=int(values.size) - 1)] == v
        if floating:
            hit &= ~nan
        codes = xp.where(hit, i, xp.full_like(i, absent))
    else:
        u = values if fw == "numpy" else xp.asarray(values)
        v = xp.where(nan, 0, x).astype(x.dtype, copy=False) if floating else x
        i = xp.searchsorted(u, v).astype(_np.int64, copy=False)
        hit = u[xp.minimum(i, int(values.size) - 1)] == v
        if floating:
            hit &= ~nan
        codes = xp.where(hit, i, absent).astype(_np.int64, copy=False)
    if has_nan:
        codes[nan] = int(values.size)
    return codes, k


def _offset_codes(fw: str, x: Any, lo: int) -> Any:
    """x - lo as int64 (integers of a small range; no copy where lo is 0 and x int64). Computed
    in int64, modulo 2**64: exact, since the difference is small."""
    x64 = x.to(_torch().int64) if fw == "torch" else x.astype(_np.int64, copy=False)
    if lo == 0:
        return x64
    return x64 - (lo - 2**64 if lo >= 2**63 else lo)


def _renumber(fn: str, comm: Any, c: Any, fw: str, lcodes: Any, rcodes: Any) -> tuple:
    """Group codes numbered again by the union of every rank's distinct right codes (left codes
    outside it: one code of no right row): (left, right, k), k about the right rows at most."""
    mine = _agreed(fn, comm, lambda: _distinct(fw, rcodes))
    union = _union(_gather_objects(c, mine), False)

    def numbered() -> tuple:
        cl, k = _codes_in(fw, lcodes, union)
        return cl, _codes_in(fw, rcodes, union)[0], k

    return _agreed(fn, comm, numbered)


def _sharded_codes(fn: str, comm: Any, c: Any, fw: str, lcols: list, rcols: list, everyone: list) -> tuple:
    """(left codes, right codes, groups) of the canonical `by` columns, one code for one value
    tuple on every rank (the library sends each rank's right codes to every rank).

    Each column: integers whose values over all ranks span a small range, by their offset from
    the least (no copy where that is 0 and they are int64, as gsearch.asof_indices does); any
    other against the union of every rank's distinct right values, gathered (a left value
    outside it matches nothing: one code of no right row). The columns combine into one code per
    tuple; where that range would outgrow int64, or in the end the rows, the right's tuples are
    numbered by their union across the ranks."""
    total = sum(s["n"] + s["m"] for s in everyone)
    limit = 4 * total + 1024
    offsets: list = []
    for i in range(len(lcols)):
        spans = [s["ranges"][i] for s in everyone if s["ranges"][i] is not None]
        lo = min((a for a, _ in spans), default=0)
        hi = max((b for _, b in spans), default=0)
        offsets.append((lo, hi - lo + 1) if spans and hi - lo < limit else None)
    need = [i for i, o in enumerate(offsets) if o is None]
    unions: dict = {}
    if need:
        mine = _agreed(fn, comm, lambda: [_distinct(fw, rcols[i]) for i in need])
        gathered = _gather_objects(c, mine)
        for j, i in enumerate(need):
            unions[i] = _union([g[j] for g in gathered], _objects(fw, rcols[i]))

    def column(i: int) -> tuple:
        if offsets[i] is not None:
            lo, k = offsets[i]
            return _offset_codes(fw, lcols[i], lo), _offset_codes(fw, rcols[i], lo), k
        cl, k = _codes_in(fw, lcols[i], unions[i])
        return cl, _codes_in(fw, rcols[i], unions[i])[0], k

    columns = _agreed(fn, comm, lambda: [column(i) for i in range(len(lcols))])
    lcodes, rcodes, k = columns[0]
    for cl, cr, kc in columns[1:]:
        if k * kc >= 2**63:
            lcodes, rcodes, k = _renumber(fn, comm, c, fw, lcodes, rcodes)
        if k * kc >= 2**63:  # the same on every rank: all raise
            raise ValueError(f"gsearch.distributed.{fn}: the by columns' value tuples are too many to number in int64")
        lcodes, rcodes = _agreed(fn, comm, lambda a=lcodes, b=rcodes, kc=kc, cl=cl, cr=cr: (a * kc + cl, b * kc + cr))
        k *= kc
    if k > limit:
        lcodes, rcodes, k = _renumber(fn, comm, c, fw, lcodes, rcodes)
    return lcodes, rcodes, max(int(k), 1)


def _column_name(fw: str, C: _Arr) -> str:
    """A by column's dtype as the ranks compare it (strings and objects by kind: their widths
    differ with the data)."""
    if fw != "torch" and C.dtype.kind in "USO":
        return {"U": "str", "S": "bytes", "O": "object"}[C.dtype.kind]
    return str(_asof._key_dtype_name(C))


_ARGUMENTS = ("direction", "allow_exact_matches", "tolerance", "sort", "sharded", "numbers of by columns",
              "by column dtypes")


def _same_arguments(fn: str, everyone: list) -> None:
    """ValueError on every rank (each has every rank's arguments) unless all passed the same."""
    for r, s in enumerate(everyone):
        for name, a, b in zip(_ARGUMENTS, everyone[0]["args"], s["args"]):
            if a != b:
                raise ValueError(
                    f"gsearch.distributed.{fn}: the ranks pass different {name} (rank 0: {a}, rank {r}: {b}); "
                    "every rank passes the same arguments, only its part of the data differs"
                )


def _left_in_order(fn: str, everyone: list) -> None:
    """pandas' "left keys must be sorted" on every rank where one rank's left keys start below
    the last of the nearest non-empty rank before it (the ranks' parts in rank order are the left
    keys; each part's own order is checked by the library, and NaN keys are its error first)."""
    if any(s["left"][1] for s in everyone):
        return
    before = None
    for r, s in enumerate(everyone):
        any_, _, first, last = s["left"]
        if not any_:
            continue
        if before is not None and first < before[1]:
            raise ValueError(
                f"left keys must be sorted (gsearch.distributed.{fn}: rank {r}'s first left key {first!r} is below "
                f"rank {before[0]}'s last {before[1]!r}; the ranks' left keys in rank order are the left keys)"
            )
        before = (r, last)


@_public
def asof_indices(
    left_on: ArrayLike,
    right_on: ArrayLike,
    *,
    left_by: Any = None,
    right_by: Any = None,
    direction: str = "backward",
    tolerance: Any = None,
    allow_exact_matches: bool = True,
    sort: bool = False,
    comm: Any = None,
    sharded: bool = True,
) -> Any:
    """gsearch.asof_indices (pandas.merge_asof's matches) of this rank's left rows against right
    rows spread across the ranks: global right row numbers.

    Parameters
    ----------
    left_on : array_like, 1-D
        This rank's left keys (the ranks' parts in rank order are the left keys: sorted, as
        pandas requires, unless `sort`).
    right_on : array_like, 1-D
        With `sharded` (the default), this rank's part of the right keys: the parts of all ranks,
        concatenated in rank order, are the right keys (sorted unless `sort`; empty parts are
        fine), and rank r's row i is right row ``offset_r + i``. Without, every rank holds all
        the right keys (replicated: nothing is exchanged).
    left_by, right_by : array_like or sequence of array_like, optional
        Groups, as in gsearch.asof_indices: one row per key of this rank, any dtype. A value is
        the same group on every rank.
    direction, tolerance, allow_exact_matches, sort
        As in gsearch.asof_indices, the same on every rank (ValueError on every rank if not).
    comm : communicator, optional
        See the module's docstring.
    sharded : bool, optional
        Whether `right_on` (and `right_by`) is this rank's part (True) or all of it (False).

    Returns
    -------
    right_index : int64 array, len(left_on)
        For each of this rank's left rows, the global right row matched to it, or -1:
        ``gsearch.asof_indices(all_left, all_right, ...)`` restricted to this rank's rows, with
        `all_left` and `all_right` the concatenations of the ranks' parts. numpy for numpy input,
        else the keys' framework and device.

    Raises
    ------
    ValueError, TypeError, pandas.errors.MergeError
        gsearch.asof_indices' errors, on every rank (the failed rank's own, elsewhere the same
        type naming it), and pandas' "left keys must be sorted" where a rank's left keys start
        below those of the rank before it; the ranks passing different arguments; the
        communicator's errors (see :func:`searchsorted`).

    Notes
    -----
    Sharded, every rank's right keys and group codes go to every rank (an all-to-all of the
    right rows), then each rank joins its left rows: the result of gsearch::dist::asof_join.
    `by` columns are numbered consistently across the ranks: integers of a small range (group
    ids) by their offset from the least value over all ranks, any other by the union of the
    ranks' distinct right values (gathered to every rank; a left value outside it matches
    nothing). Replicated, each rank numbers its own, with no exchange.
    """
    fn = "asof_indices"
    qual = f"distributed.{fn}"

    def prepare() -> tuple:
        d = _asof._check_direction(direction)
        exact = _asof._check_exact(allow_exact_matches)
        if (left_by is None) != (right_by is None):
            raise _asof._merge_error("missing left_by" if left_by is None else "missing right_by")
        L, R = _asof._key_arrays(qual, left_on, right_on)
        n, m = _shape(L)[0], _shape(R)[0]
        lcols = _asof._by_columns(qual, left_by, n, "left_by", "left_on")
        rcols = _asof._by_columns(qual, right_by, m, "right_by", "right_on")
        if len(lcols) != len(rcols):
            raise _asof._merge_error("left_by and right_by must be the same length")
        lcols = [_adopt(lc, rc) for lc, rc in zip(lcols, rcols)]
        rcols = [_adopt(rc, lc) for lc, rc in zip(lcols, rcols)]
        for i, (lc, rc) in enumerate(zip(lcols, rcols)):  # pandas' order: the by columns, then the key
            if lc.dev != L.dev or rc.dev != L.dev:
                raise ValueError(f"gsearch.{qual}: the by columns must be on the keys' device ({_where(L.dev)})")
            if not _asof._same_dtype(lc, rc):
                raise _asof._incompatible_keys(i, _asof._key_dtype_name(lc), _asof._key_dtype_name(rc))
        if not _asof._same_dtype(L, R):
            raise _asof._incompatible_keys(len(lcols), _asof._key_dtype_name(L), _asof._key_dtype_name(R))
        kd = _asof._compute_dtype(qual, L, "left_on")
        tol = _asof._tolerance(tolerance, L.dtype.newbyteorder("="), kd)
        args = (direction, exact, repr(tol), bool(sort), bool(sharded), len(lcols),
                tuple(_column_name(L.fw, C) for C in lcols))
        return d, exact, tol, L, R, lcols, rcols, kd, args, _bind(fn, comm, L.dev)

    d, exact, tol, L, R, lcols, rcols, kd, args, c = _agreed(fn, comm, prepare)
    _agree(c, fn, kd, L.dev)
    fw, dev = L.fw, L.dev
    with _StreamScope(fw, dev, None) as scope:

        def convert() -> tuple:
            keys = _asof._keys(qual, L, R, bool(sort), scope.handle)
            lc = [_canonical(fw, C.x) for C in lcols]
            rc = [_canonical(fw, C.x) for C in rcols]
            lx, n = keys.left, int(keys.left.shape[0])
            has_nan = bool(n and kd.kind == "f" and bool(_xp_of(fw).isnan(lx).any()))
            ends = (n > 0, has_nan, lx[0].item() if n else None, lx[n - 1].item() if n else None)
            ranges = []
            for a, b in zip(lc, rc):
                sides = [x for x in (a, b) if x.shape[0]]
                ranges.append(
                    (min(int(x.min()) for x in sides), max(int(x.max()) for x in sides))
                    if sides and _integral(fw, a) else None
                )
            summary = {"args": args, "n": n, "m": int(keys.right.shape[0]), "left": ends, "ranges": ranges}
            return keys, lc, rc, summary

        keys, lc, rc, summary = _agreed(fn, comm, convert)
        everyone = _gather_objects(c, summary)
        _same_arguments(fn, everyone)
        if not sort:
            _left_in_order(fn, everyone)
        lcodes = rcodes = None
        groups = 0
        if lcols:
            if sharded:
                lcodes, rcodes, groups = _sharded_codes(fn, comm, c, fw, lc, rc, everyone)
            else:
                n = summary["n"]
                lcodes, rcodes, groups = _agreed(
                    fn, comm, lambda: _asof._group_codes(fw, [C.x for C in lcols], [C.x for C in rcols], n)
                )
        with _together(c):
            lx, rx, t, ed = keys.left, keys.right, tol, keys.kd
            if isinstance(t, tuple):  # ("flip", t): beyond the signed dtype's range
                lx, rx, t = _asof._flip(lx, fw, ed), _asof._flip(rx, fw, ed), t[1]
                ed = _np.dtype(f"uint{ed.itemsize * 8}")
            tol_arr = None if t is None else _np.array([t], dtype=ed)
            if lcols:
                lcodes, rcodes = _asof._contiguous_int64(fw, lcodes), _asof._contiguous_int64(fw, rcodes)
            out = _new_empty(fw, dev, (int(lx.shape[0]),), _INT64)
        _core.dist_asof_join(
            c, fw, lx, rx, out, lcodes, rcodes, int(groups), d, exact, tol_arr, True, bool(sort), not sharded,
            scope.handle,
        )
    return out
