"""Set operations on sorted arrays: the multiset set_intersection / set_union / set_difference /
set_symmetric_difference (std::set_* semantics) and numpy's unique-element intersect1d /
union1d / setdiff1d / setxor1d (any order: sorted first by the library's stable sort)."""

from __future__ import annotations

from typing import Any, Literal, Optional

import numpy as _np

from . import _core
from ._arrays import (
    _BOOL,
    ArrayLike,
    _StreamScope,
    _cast,
    _contiguous,
    _convert,
    _full0d,
    _new_empty,
    _pair,
    _size,
    _torch,
    _xp,
)
from ._docs import public as _public
from ._merge import _sorted_copy

SetOp = Literal["intersection", "union", "difference", "symmetric-difference"]

_SET_OPS: dict[str, int] = dict(_core.SET_OPS)


def _cat(fw: str, parts: list) -> Any:
    return _torch().cat(parts) if fw == "torch" else _xp(fw).concatenate(parts)


def _isnan(fw: str, x: Any) -> Any:
    return _xp(fw).isnan(x)


def _true1(fw: str, dev: Optional[int]) -> Any:
    """A 1-element True array of framework fw on dev."""
    return _full0d(fw, dev, True, _BOOL).reshape(1)



def _unique_sorted(x: Any, fw: str, dev: Optional[int], d: _np.dtype) -> Any:
    """np.unique of the sorted 1-D array x (NaN last): the first of each run of equal elements
    (-0.0 == 0.0), and one NaN for all of them (numpy's equal_nan=True)."""
    if _size(x) < 2:
        return x
    differ = x[1:] != x[:-1]
    if d.kind == "f":
        nan = _isnan(fw, x)
        differ = differ & ~(nan[1:] & nan[:-1])
    return x[_cat(fw, [_true1(fw, dev), differ])]


def _split_nan(x: Any, fw: str, d: _np.dtype) -> tuple:
    """(the elements of x that are not NaN, those that are) for float dtypes; (x, None) else."""
    if d.kind != "f":
        return x, None
    nan = _isnan(fw, x)
    return x[~nan], x[nan]


def _set_operation(fw, dev, kd, op: str, a, b, check, handle) -> Any:
    """The library's set operation `op` of the sorted contiguous a and b (dtype kd), into a new
    array of its size (allocated once the size is known)."""
    return _core.set_operation(
        a, b, _SET_OPS[op], lambda c: _new_empty(fw, dev, (c,), kd), bool(check), handle,
    )


def _multiset(fn: str, op: str, a: Any, b: Any, check: bool, stream: Any) -> Any:
    A, B, p, kd = _pair(fn, a, b, ("a", "b"))
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, stream) as scope:
        res = _set_operation(fw, dev, kd, op, _convert(A, kd), _convert(B, kd), check, scope.handle)
    return _cast(res, fw, p)


_MULTISET_DOC = """The multiset {what} of two sorted 1-D arrays (``std::{cpp}`` semantics).

    A value m times in `a` and n times in `b` is written {count} times{whose}; the result is
    sorted. NaN equals NaN and -0.0 equals 0.0 here (gsearch's order). For numpy's
    unique-element ``np.{np}``, see :func:`{np}`.

    Parameters
    ----------
    a, b : array_like, 1-D
        Sorted (NaN last). numpy arrays run on the CPU, torch / cupy CUDA arrays on the GPU
        (read in place).
    check : bool, optional
        Check that both are sorted first (default; ValueError naming the unsorted one).
    {stream}. The call waits for the result's size.

    Returns
    -------
    array, 1-D
        numpy's promotion of the two dtypes, `a`'s framework and device.

    Raises
    ------
    ValueError
        Inputs not 1-D, on two devices, or unsorted (with `check`).
    TypeError
        Dtypes whose promotion would round, unsupported dtypes.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.{name}(np.array([1, 2, 2, 2, 3]), np.array([2, 2, 4]))
    {example}
    """


# What the multiset docstring says of each operation: (what, count, whose copies, numpy's function,
# the example's result).
_MULTISET_DOCS = {
    "set_intersection": ("intersection", "min(m, n)", " (a's copies)", "intersect1d", "array([2, 2])"),
    "set_union": ("union", "max(m, n)", " (a's copies first)", "union1d", "array([1, 2, 2, 2, 3, 4])"),
    "set_difference": ("difference a - b", "max(m - n, 0)", "", "setdiff1d", "array([1, 2, 3])"),
    "set_symmetric_difference": ("symmetric difference", "|m - n|", "", "setxor1d", "array([1, 2, 3, 4])"),
}


def _multiset_public(fn: Any) -> Any:
    """_public with the multiset docstring of fn's operation."""
    what, count, whose, np_name, example = _MULTISET_DOCS[fn.__name__]
    return _public(
        fn, doc=_MULTISET_DOC, what=what, cpp=fn.__name__, count=count, whose=whose, np=np_name,
        name=fn.__name__, example=example,
    )


@_multiset_public
def set_intersection(a: ArrayLike, b: ArrayLike, *, check: bool = True, stream: Any = None) -> Any:
    return _multiset("set_intersection", "intersection", a, b, check, stream)


@_multiset_public
def set_union(a: ArrayLike, b: ArrayLike, *, check: bool = True, stream: Any = None) -> Any:
    return _multiset("set_union", "union", a, b, check, stream)


@_multiset_public
def set_difference(a: ArrayLike, b: ArrayLike, *, check: bool = True, stream: Any = None) -> Any:
    return _multiset("set_difference", "difference", a, b, check, stream)


@_multiset_public
def set_symmetric_difference(a: ArrayLike, b: ArrayLike, *, check: bool = True, stream: Any = None) -> Any:
    return _multiset("set_symmetric_difference", "symmetric-difference", a, b, check, stream)


def _unique_pair(fw, dev, kd, a, b, handle) -> tuple:
    """np.unique of a and of b (sorted by the library, then the first of each run)."""
    ua = _unique_sorted(_sorted_copy(a, fw, dev, kd, handle), fw, dev, kd)
    ub = _unique_sorted(_sorted_copy(b, fw, dev, kd, handle), fw, dev, kd)
    return ua, ub


def _setop(fw, dev, kd, op: str, a, b, handle) -> Any:
    """The library's set operation of sorted a and b (contiguous copies: masked results are)."""
    return _set_operation(fw, dev, kd, op, _contiguous(fw, a), _contiguous(fw, b), False, handle)




def _merged_sorted(fw, dev, kd, a, b, handle) -> Any:
    """np.sort(np.concatenate([a, b])): both sorted by the library, then merged."""
    sa, sb = _sorted_copy(a, fw, dev, kd, handle), _sorted_copy(b, fw, dev, kd, handle)
    out = _new_empty(fw, dev, (_size(sa) + _size(sb),), kd)
    _core.merge(sa, sb, out, None, None, None, False, handle)
    return out


@_public
def intersect1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False) -> Any:
    """The sorted unique values that are in both arrays: ``np.intersect1d`` exactly.

    Parameters
    ----------
    ar1, ar2 : array_like
        Any shapes (flattened), any order. numpy arrays run on the CPU, torch / cupy CUDA
        arrays on the GPU.
    assume_unique : bool, optional
        numpy's: the inputs hold no duplicates, which skips the unique step. With duplicates
        the result is numpy's for that case too (each adjacent equal pair of the sorted
        concatenation gives one element).

    Returns
    -------
    array, 1-D
        Sorted; numpy's promotion of the two dtypes; `ar1`'s framework and device.

    {set1d_raises}

    Notes
    -----
    As numpy: NaN is never in the intersection (NaN != NaN), -0.0 and 0.0 are one value (which
    of the two zeros represents it may differ from numpy, whose sort is not stable).
    gsearch sorts with its stable sort (:func:`sort`; an input found sorted by one O(n) check
    is not sorted again), removes duplicates by comparing neighbours, and intersects with its
    Balanced Path set operation. Dtypes whose promotion would round
    (int64 with float64, ...) are a TypeError, as everywhere in gsearch.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.intersect1d([1, 3, 4, 3], [3, 1, 2, 1])
    array([1, 3])
    """
    A, B, p, kd = _pair("intersect1d", ar1, ar2, ("ar1", "ar2"), ravel=True)
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, None) as scope:
        a, b = _convert(A, kd), _convert(B, kd)
        if assume_unique:
            aux = _merged_sorted(fw, dev, kd, a, b, scope.handle)
            res = aux[:-1][aux[1:] == aux[:-1]] if _size(aux) > 1 else aux[:0]
        else:
            ua, ub = _unique_pair(fw, dev, kd, a, b, scope.handle)
            res = _setop(fw, dev, kd, "intersection", _split_nan(ua, fw, kd)[0], ub, scope.handle)
    return _cast(res, fw, p)


@_public
def union1d(ar1: ArrayLike, ar2: ArrayLike) -> Any:
    """The sorted unique values that are in either array: ``np.union1d`` exactly.

    Parameters
    ----------
    {set1d_arrays}

    Returns
    -------
    array, 1-D
        Sorted, unique; one NaN if either has NaNs (numpy's ``np.unique``); -0.0 and 0.0 are
        one value. numpy's promotion of the dtypes; `ar1`'s framework and device.

    {set1d_raises}

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.union1d([-1, 0, 1], [-2, 0, 2])
    array([-2, -1,  0,  1,  2])
    """
    A, B, p, kd = _pair("union1d", ar1, ar2, ("ar1", "ar2"), ravel=True)
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, None) as scope:
        ua, ub = _unique_pair(fw, dev, kd, _convert(A, kd), _convert(B, kd), scope.handle)
        res = _setop(fw, dev, kd, "union", ua, ub, scope.handle)  # NaN == NaN: one NaN, as numpy
    return _cast(res, fw, p)


@_public
def setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False) -> Any:
    """The unique values of `ar1` that are not in `ar2`: ``np.setdiff1d`` exactly.

    Parameters
    ----------
    {set1d_arrays}
    assume_unique : bool, optional
        numpy's: the inputs hold no duplicates. Then, as numpy, `ar1`'s elements not in `ar2`
        are returned in `ar1`'s order (not sorted): ``ar1[~isin(ar1, ar2)]``, which is also
        what gsearch returns when they do hold duplicates (numpy's answer then depends on the
        algorithm its isin picks).

    Returns
    -------
    array, 1-D
        Sorted unique values (without `assume_unique`), of `ar1`'s dtype, framework and device.

    {set1d_raises}

    Notes
    -----
    As numpy: a NaN of `ar1` is kept even when `ar2` has NaN (NaN is never a member), and
    -0.0 and 0.0 are one value.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.setdiff1d(np.array([1, 2, 3, 2, 4, 1]), np.array([3, 4, 5, 6]))
    array([1, 2])
    """
    A, B, p, kd = _pair("setdiff1d", ar1, ar2, ("ar1", "ar2"), ravel=True)
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, None) as scope:
        a, b = _convert(A, kd), _convert(B, kd)
        if assume_unique:
            mask = _new_empty(fw, dev, (_size(a),), _BOOL)
            _core.isin(a, b, mask, True, 0, scope.handle)
            res = a[mask]
        else:
            ua, ub = _unique_pair(fw, dev, kd, a, b, scope.handle)
            num, nan = _split_nan(ua, fw, kd)
            res = _setop(fw, dev, kd, "difference", num, ub, scope.handle)
            if nan is not None:
                res = _cat(fw, [res, nan])  # numpy keeps ar1's NaN
    return _cast(res, fw, A.dtype.newbyteorder("="))


@_public
def setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False) -> Any:
    """The sorted unique values that are in exactly one of the arrays: ``np.setxor1d`` exactly.

    Parameters
    ----------
    {set1d_arrays}
    assume_unique : bool, optional
        numpy's: the inputs hold no duplicates, which skips the unique step (with duplicates
        the result is numpy's for that case too: a value that occurs twice or more in the
        sorted concatenation is dropped).

    Returns
    -------
    array, 1-D
        Sorted; numpy's promotion of the dtypes; `ar1`'s framework and device.

    {set1d_raises}

    Notes
    -----
    As numpy: NaN != NaN, so each array's NaN is kept (two NaNs when both have one); -0.0 and
    0.0 are one value.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.setxor1d(np.array([1, 2, 3, 2, 4]), np.array([2, 3, 5, 7, 5]))
    array([1, 4, 5, 7])
    """
    A, B, p, kd = _pair("setxor1d", ar1, ar2, ("ar1", "ar2"), ravel=True)
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, None) as scope:
        a, b = _convert(A, kd), _convert(B, kd)
        if assume_unique:
            aux = _merged_sorted(fw, dev, kd, a, b, scope.handle)
            if _size(aux) == 0:
                res = aux
            else:
                t = _true1(fw, dev)
                flag = _cat(fw, [t, aux[1:] != aux[:-1], t])
                res = aux[flag[1:] & flag[:-1]]
        else:
            ua, ub = _unique_pair(fw, dev, kd, a, b, scope.handle)
            na_, nan_a = _split_nan(ua, fw, kd)
            nb_, nan_b = _split_nan(ub, fw, kd)
            res = _setop(fw, dev, kd, "symmetric-difference", na_, nb_, scope.handle)
            if nan_a is not None:
                res = _cat(fw, [res, nan_a, nan_b])  # numpy keeps each side's NaN
    return _cast(res, fw, p)

