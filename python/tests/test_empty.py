"""Empty Python sequences ([], (), [[]], range(0)) paired with an array: they have no dtype of
their own (numpy makes them float64 by default), so they take the other operand's, and every
function that pairs two operands answers as numpy does instead of a TypeError (float64 with
int64 / uint64 would be a lossy pair). Results are compared with numpy; where numpy's result
has a dtype (merge, the set functions), gsearch's is the other operand's dtype, numpy's is
float64 (its promotion with the empty list)."""

import numpy as np
import pytest

import gsearch

DTYPES = ["int64", "uint64", "int32", "uint32", "float32", "float64", "int8", "bool"]
EMPTIES = [[], (), range(0)]


def data(dtype):
    return np.array([0, 1, 1, 3, 7], dtype=dtype) if dtype != "bool" else np.array([False, True, True])


def same_values(got, want, dtype):
    """got equals numpy's values, in dtype (numpy's own dtype for them may be float64)."""
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == np.shape(want)
    np.testing.assert_array_equal(got, np.asarray(want).astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("empty", EMPTIES, ids=["list", "tuple", "range"])
def test_search_family(dtype, empty):
    a = data(dtype)
    for side in ("left", "right"):
        got = gsearch.searchsorted(a, empty, side=side)
        want = np.searchsorted(a, empty, side=side)
        assert got.dtype == want.dtype == np.int64 and got.shape == want.shape == (0,)
        np.testing.assert_array_equal(gsearch.searchsorted(empty, a, side=side), np.searchsorted(empty, a, side=side))
        got = gsearch.searchsorted(a, empty, side=side, sorted_queries=True)
        assert got.shape == (0,) and got.dtype == np.int64
    assert gsearch.searchsorted(a, [[]]).shape == np.searchsorted(a, [[]]).shape == (1, 0)
    assert gsearch.predecessor(a, empty).shape == (0,)
    np.testing.assert_array_equal(gsearch.predecessor(empty, a), np.searchsorted(empty, a, side="right") - 1)
    assert gsearch.bucketize(empty, a).shape == (0,)
    lo, hi = gsearch.equal_range(a, empty)
    assert lo.shape == hi.shape == (0,)
    index = gsearch.Index(a)
    for side in ("left", "right"):
        got = index.searchsorted(empty, side=side)
        assert got.dtype == np.int64 and got.shape == np.searchsorted(a, empty).shape
    assert index.predecessor([[]]).shape == (1, 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_isin(dtype):
    a = data(dtype)
    for empty in EMPTIES + [[[]]]:
        for invert in (False, True):
            got = gsearch.isin(a, empty, invert=invert)
            np.testing.assert_array_equal(got, np.isin(a, empty, invert=invert))
            got = gsearch.isin(empty, a, invert=invert)
            want = np.isin(empty, a, invert=invert)
            assert got.dtype == bool and got.shape == want.shape
        scalar = a.dtype.type(1)
        assert bool(gsearch.isin(scalar, empty)) == bool(np.isin(scalar, empty)) is False
    assert gsearch.find([], 1) == -1 and gsearch.count([], 1) == 0  # one operand: numpy's float64


@pytest.mark.parametrize("dtype", DTYPES)
def test_merge_family(dtype):
    a = data(dtype)
    for empty in EMPTIES:
        for x, y in ((a, empty), (empty, a)):
            same_values(gsearch.merge(x, y), np.sort(np.concatenate([x, y]), kind="stable"), dtype)
            for fn, ref in (
                (gsearch.set_intersection, lambda: a[:0]),
                (gsearch.set_union, lambda: a),
                (gsearch.set_difference, lambda: a if x is a else a[:0]),
                (gsearch.set_symmetric_difference, lambda: a),
            ):
                same_values(fn(x, y), ref(), dtype)
            for fn, ref in (
                (gsearch.intersect1d, np.intersect1d),
                (gsearch.union1d, np.union1d),
                (gsearch.setdiff1d, np.setdiff1d),
                (gsearch.setxor1d, np.setxor1d),
            ):
                same_values(fn(x, y), ref(x, y), dtype)
            for how in ("inner", "left", "right", "full", "semi", "anti"):
                li, ri = gsearch.join(x, y, how)
                n = len(a)
                keep_left = x is a and how in ("left", "full", "anti")
                keep_right = y is a and how in ("right", "full")
                want_l = np.arange(n) if keep_left else (np.full(n, -1) if keep_right else np.arange(0))
                np.testing.assert_array_equal(li, want_l)
                if how in ("semi", "anti"):
                    assert ri is None
                else:
                    np.testing.assert_array_equal(ri, np.arange(n) if keep_right else np.full(len(want_l), -1))
        # values: an empty sequence of values takes the other side's values dtype
        vals = np.arange(len(a), dtype=np.int32)
        keys, got = gsearch.merge(a, empty, vals, empty)
        same_values(keys, a, dtype)
        assert got.dtype == np.int32 and got.tolist() == vals.tolist()
        keys, got = gsearch.merge(empty, a, empty, vals)
        assert got.dtype == np.int32 and got.tolist() == vals.tolist()


def test_typed_empty_arrays_keep_their_dtype():
    a = np.array([1, 2], dtype=np.int64)
    f = np.array([], dtype=np.float64)  # a float64 the caller asked for: a lossy pair with int64
    for call in (
        lambda: gsearch.searchsorted(a, f),
        lambda: gsearch.merge(a, f),
        lambda: gsearch.isin(a, f),
        lambda: gsearch.union1d(a, f),
        lambda: gsearch.Index(a).searchsorted(f),
    ):
        with pytest.raises(TypeError, match="promotes"):
            call()
    # Two empty sequences: numpy's float64 for both.
    assert gsearch.merge([], []).dtype == np.float64
    assert gsearch.searchsorted([], []).shape == (0,)
    # An empty sequence with a Python scalar: the scalar has no dtype to give.
    assert bool(gsearch.isin(3, [])) is False
