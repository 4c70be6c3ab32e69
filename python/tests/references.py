"""numpy's sort family for the tests' references, with 16-bit floats sorted as float32.

numpy 2.4 sorts float16 with x86-simd-sort, whose emulated 16-bit path (CPUs with AVX-512
VBMI2 but no AVX-512 FP16) misplaces a few elements: -inf after -413.5, -0.0 before -0.0009, for
several seeds in 40 at n = 70,001, on every seed in some layouts. np.sort, np.partition and
np.unique are wrong there, and so is all that numpy builds on them (quantile, median, the set
functions, isin); kind="stable" is right. float16 -> float32 is exact and keeps the order (-0.0
== 0.0, NaN last), so each function here is numpy's own on the widened data, its values cast
back to the dtype numpy gives (asked of numpy on empty data for the set functions); the
quantile family runs numpy's own code, float16 arithmetic included, on the float16 data with
only its partition done through float32. Every other dtype goes to numpy untouched. ref_argsort
is stable: ties (-0.0 and 0.0 among them) in input order. docs/semantics.md (Order) says the
same.
"""

import numpy as np


def is_half(dtype):
    """A 16-bit float dtype (float16, either byte order)."""
    dt = np.dtype(dtype)
    return dt.kind == "f" and dt.itemsize == 2


def widen(x):
    """x as an array; a 16-bit float one as float32 (exact, the same order)."""
    x = np.asarray(x)
    return x.astype(np.float32) if is_half(x.dtype) else x


# --- sort, argsort, lexsort, unique ---------------------------------------------------------------


def ref_sort(a, axis=-1, kind=None):
    """np.sort(a, axis, kind)."""
    a = np.asarray(a)
    if not is_half(a.dtype):
        return np.sort(a, axis=axis, kind=kind)
    return np.sort(widen(a), axis=axis, kind=kind).astype(a.dtype)


def ref_argsort(a, axis=-1):
    """np.argsort(a, axis, kind="stable")."""
    return np.argsort(widen(a), axis=axis, kind="stable")


def ref_lexsort(keys, axis=-1):
    """np.lexsort(keys, axis): the last key the primary one."""
    return np.lexsort(tuple(widen(k) for k in keys), axis=axis)


def ref_unique(ar, **kw):
    """np.unique(ar, **kw): the values (first of the tuple with return_index & co.) in ar's dtype."""
    ar = np.asarray(ar)
    if not is_half(ar.dtype):
        return np.unique(ar, **kw)
    got = np.unique(widen(ar), **kw)
    if isinstance(got, tuple):
        return (got[0].astype(ar.dtype),) + tuple(got[1:])
    return got.astype(ar.dtype)


# --- the set functions and isin -------------------------------------------------------------------


def _sort_kind_for_uint64(kw, *arrays):
    """kw with kind="sort" where numpy would pick its table kind for uint64 data: numpy 2.0.0's
    table kind (.ci/run's numpy floor) raises OverflowError when the smallest test element is past
    int64's max (np.subtract(..., ar2_min, dtype=np.intp)). The kind changes no answer."""
    if "kind" in kw or not any(np.asarray(a).dtype == np.uint64 for a in arrays):
        return kw
    return {**kw, "kind": "sort"}


def ref_isin(element, test_elements, **kw):
    """np.isin(element, test_elements, **kw): equality, which the widening keeps (it gives the
    pair numpy's promoted dtype or float32, both exact for 16-bit floats)."""
    kw = _sort_kind_for_uint64(kw, element, test_elements)
    return np.isin(widen(element), widen(test_elements), **kw)


def _set_function(fn):
    def ref(ar1, ar2, *args, **kw):
        if not (is_half(np.asarray(ar1).dtype) or is_half(np.asarray(ar2).dtype)):
            return fn(ar1, ar2, *args, **kw)
        model = fn(np.asarray(ar1).ravel()[:0], np.asarray(ar2).ravel()[:0], *args, **kw)
        got = fn(widen(ar1), widen(ar2), *args, **kw)
        if isinstance(got, tuple):  # intersect1d(return_indices=True)
            return (got[0].astype(model[0].dtype),) + tuple(got[1:])
        return got.astype(model.dtype)

    ref.__name__ = f"ref_{fn.__name__}"
    ref.__doc__ = f"np.{fn.__name__}, its result in numpy's dtype."
    return ref


ref_intersect1d = _set_function(np.intersect1d)
ref_union1d = _set_function(np.union1d)


def _setdiff1d(ar1, ar2, assume_unique=False):
    """np.setdiff1d as numpy defines it (numpy 2's own code: ar1's unique values, or ar1 as it is
    with assume_unique, less those in isin(.., ar2)), with isin's sort kind for uint64 (above)."""
    ar1 = np.asarray(ar1).ravel() if assume_unique else np.unique(ar1)
    ar2 = np.asarray(ar2) if assume_unique else np.unique(ar2)
    kw = _sort_kind_for_uint64({"assume_unique": True, "invert": True}, ar1, ar2)
    return ar1[np.isin(ar1, ar2, **kw)]


_setdiff1d.__name__ = "setdiff1d"
ref_setdiff1d = _set_function(_setdiff1d)
ref_setxor1d = _set_function(np.setxor1d)


# --- quantile, percentile, median -----------------------------------------------------------------


class _SortedPartition(np.ndarray):
    """16-bit float data whose partition() sorts it through float32 (a sorted array is a
    partition of it for every kth): numpy's quantile and median call arr.partition() on their
    copy and do the rest, float16 arithmetic included, themselves."""

    calls = 0

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        type(self).calls += 1
        base = self.view(np.ndarray)
        base[...] = np.sort(base.astype(np.float32), axis=axis).astype(base.dtype)


def _statistic(fn, skips_nan=False):
    def ref(a, *args, **kw):
        a = np.asarray(a)
        if not is_half(a.dtype) or a.size == 0:  # (empty: nothing to sort, numpy's own answer)
            return fn(a, *args, **kw)
        calls = _SortedPartition.calls
        got = fn(a.view(_SortedPartition), *args, **kw)
        if not (skips_nan and np.isnan(a).all()):  # (all NaN: the nan* forms partition nothing)
            assert _SortedPartition.calls > calls, f"np.{fn.__name__} sorted without partition()"
        if isinstance(got, np.ndarray):  # numpy's result for a plain array: 0-d is a scalar
            got = got.view(np.ndarray)
            return got[()] if got.ndim == 0 else got
        return got

    ref.__name__ = f"ref_{fn.__name__}"
    ref.__doc__ = f"np.{fn.__name__}: numpy's own code and arithmetic, 16-bit floats partitioned in float32."
    return ref


ref_quantile = _statistic(np.quantile)
ref_percentile = _statistic(np.percentile)
ref_median = _statistic(np.median)
ref_nanquantile = _statistic(np.nanquantile, skips_nan=True)
ref_nanpercentile = _statistic(np.nanpercentile, skips_nan=True)
ref_nanmedian = _statistic(np.nanmedian, skips_nan=True)
