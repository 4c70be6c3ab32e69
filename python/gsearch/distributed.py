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

from typing import Any, Optional

import numpy as _np

from . import _core
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
    _exact_value,
    _find_data,
    _new_empty,
    _one,
    _pair,
    _resolve,
    _shape,
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
from ._dist_asof import asof_indices
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
