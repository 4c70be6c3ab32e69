"""numpy's axis, keepdims and out of quantile, percentile, median and their nan forms (issue
45): every result against numpy's own call (type, shape, dtype, values), the rows of an axis
in one library call, and numpy's errors."""

import warnings

import numpy as np
import pytest

import gsearch
from gsearch import _core
from conftest import random_values
from references import (
    ref_median,
    ref_nanmedian,
    ref_nanpercentile,
    ref_nanquantile,
    ref_percentile,
    ref_quantile,
)

METHODS = list(_core.QUANTILE_METHODS)
PAIRS = [
    (gsearch.quantile, ref_quantile, False),
    (gsearch.nanquantile, ref_nanquantile, False),
    (gsearch.percentile, ref_percentile, True),
    (gsearch.nanpercentile, ref_nanpercentile, True),
]
SHAPES_AXES = [
    ((7,), [None, 0, -1, (0,)]),
    ((5, 9), [None, 0, 1, -1, (0, 1), (1, 0)]),
    ((3, 4, 6), [None, 0, 1, 2, (0, 2), (1, 2), (0, 1, 2), ()]),
    ((2, 1, 3, 5), [1, 3, (0, 2), (1, 3)]),
]


def quiet(f, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args, **kw)


def same_result(got, want):
    """numpy's result exactly: type (scalar or array), shape, dtype, values (NaN where NaN)."""
    assert type(got) is type(want), (type(got), type(want))
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
    np.testing.assert_array_equal(g, w)


def data(rng, dtype, shape, nan=0.0):
    a = random_values(rng, dtype, int(np.prod(shape))).reshape(shape)
    if a.dtype.kind in "iu":
        return (a // 4).astype(dtype)  # no neighbours whose difference wraps around in numpy
    a[np.isnan(a)] = 0.5
    if nan:
        a[rng.random(shape) < nan] = np.nan
    return a


def numpy_scrambles(fn, a, q, axis):
    """numpy 2.4's nanquantile with a q of two dimensions and an axis of several
    (not all) axes: its result's axes come out scrambled (apply_along_axis at axis -1, then q's
    axes moved from [-1, 0]); gsearch's shape is q's then the kept axes, as numpy's quantile."""
    nan_form = fn in (gsearch.nanquantile, gsearch.nanpercentile)
    several = isinstance(axis, tuple) and len(axis) != 1 and len(axis) < a.ndim  # () too
    return nan_form and np.ndim(q) == 2 and several


@pytest.mark.numpy_reference("2.4.0")
@pytest.mark.parametrize("dtype", ["int32", "uint64", "int64", "float32", "float64", "int8", "bool"])
def test_axis_and_keepdims_equal_numpy(rng, dtype):
    for shape, axes in SHAPES_AXES:
        a = data(rng, dtype, shape, nan=0.15)
        for axis in axes:
            for keepdims in (False, True):
                for method in ("linear", "lower", "nearest", "median_unbiased") if dtype != "bool" else ("lower",):
                    for fn, ref, pct in PAIRS:
                        for q in (0.3, [0.0, 0.5, 1.0], np.float32(0.7), [[0.2], [0.9]]):
                            q = np.multiply(q, 100) if pct and not isinstance(q, float) else (q * 100 if pct else q)
                            want = quiet(ref, a, q, axis=axis, keepdims=keepdims, method=method)
                            if numpy_scrambles(fn, a, q, axis):
                                flat = quiet(ref, a, np.ravel(q), axis=axis, keepdims=keepdims, method=method)
                                want = flat.reshape(np.shape(q) + flat.shape[1:])
                            got = quiet(fn, a, q, axis=axis, keepdims=keepdims, method=method)
                            same_result(got, want)
            for fn, ref in ((gsearch.median, ref_median), (gsearch.nanmedian, ref_nanmedian)):
                if dtype == "bool":
                    continue
                for keepdims in (False, True):
                    same_result(quiet(fn, a, axis=axis, keepdims=keepdims), quiet(ref, a, axis=axis, keepdims=keepdims))


@pytest.mark.numpy_reference("2.4.0")
def test_every_method_along_an_axis(rng):
    a = data(rng, "float64", (6, 33), nan=0.1)
    for method in METHODS:
        for axis in (0, 1):
            same_result(quiet(gsearch.quantile, a, [0.1, 0.5], axis=axis, method=method),
                        quiet(np.quantile, a, [0.1, 0.5], axis=axis, method=method))
            same_result(quiet(gsearch.nanquantile, a, 0.25, axis=axis, method=method),
                        quiet(np.nanquantile, a, 0.25, axis=axis, method=method))


def test_the_rows_are_one_library_call(monkeypatch, rng):
    calls = []
    for name in ("quantile", "median", "partition", "select"):
        real = getattr(_core, name)
        monkeypatch.setattr(_core, name, lambda *a, _real=real, _n=name, **k: (calls.append((_n, k.get("rows"))), _real(*a, **k))[1])
    a = rng.normal(size=(1000, 20))
    same_result(gsearch.quantile(a, [0.1, 0.9], axis=1), np.quantile(a, [0.1, 0.9], axis=1))
    same_result(gsearch.median(a, axis=0), np.median(a, axis=0))
    ints = rng.integers(-(2**62), 2**62, size=(300, 11))
    same_result(gsearch.quantile(ints, [0.3, 0.6], axis=1, method="lower"), np.quantile(ints, [0.3, 0.6], axis=1, method="lower"))
    assert calls == [("quantile", 1000), ("median", 20), ("partition", 300)], calls


@pytest.mark.numpy_reference("2.4.0")
def test_numpys_nan_dtype_rules_along_an_axis():
    a = np.array([[np.nan, np.nan], [1, 2]], np.float32)
    for rows in (a, a[::-1].copy()):
        for q in (np.float64(0.5), [0.5], np.array([0.25, 0.75])):
            # nanquantile: numpy's apply_along_axis takes the first row's dtype
            same_result(quiet(gsearch.nanquantile, rows, q, axis=1), quiet(np.nanquantile, rows, q, axis=1))
            same_result(quiet(gsearch.quantile, rows, q, axis=1), quiet(np.quantile, rows, q, axis=1))
        same_result(quiet(gsearch.nanmedian, rows, axis=1), quiet(np.nanmedian, rows, axis=1))
    b = np.array([1, np.nan], np.float32)  # a 0-d result with a NaN: the element itself (float32)
    for axis in (None, 0, (0,)):
        for keepdims in (False, True):
            same_result(gsearch.quantile(b, np.float64(0.5), axis=axis, keepdims=keepdims),
                        np.quantile(b, np.float64(0.5), axis=axis, keepdims=keepdims))


def test_out_is_filled_and_returned(rng):
    a = rng.normal(size=(4, 6))
    for fn, ref, pct in PAIRS:
        q = 50 if pct else 0.5
        for axis, keepdims in ((1, False), (0, True), (None, False), (None, True)):
            want = np.asarray(ref(a, q, axis=axis, keepdims=keepdims))
            for od in (np.float64, np.float32):
                out = np.full(want.shape, -1.0, od)
                ref_out = np.full(want.shape, -1.0, od)
                got = fn(a, q, axis=axis, keepdims=keepdims, out=out)
                r = ref(a, q, axis=axis, keepdims=keepdims, out=ref_out)
                assert got is out and r is ref_out
                # numpy's result rounded into out (numpy interpolates part of the way in a
                # narrower out's dtype: within its rounding)
                np.testing.assert_array_equal(out, want.astype(od))
                np.testing.assert_allclose(out, ref_out, rtol=0, atol=4 * np.finfo(od).eps * np.abs(a).max())
    out, ref_out = np.empty(4, np.int64), np.empty(4, np.int64)  # take: cast 'unsafe', as numpy
    gsearch.quantile(a, 0.5, axis=1, method="lower", out=out)
    np.quantile(a, 0.5, axis=1, method="lower", out=ref_out)
    np.testing.assert_array_equal(out, ref_out)
    with pytest.raises(TypeError, match="same_kind"):  # a ufunc's result: 'same_kind', as numpy
        gsearch.quantile(a, 0.5, axis=1, out=np.empty(4, np.int64))
    with pytest.raises(TypeError):
        np.quantile(a, 0.5, axis=1, out=np.empty(4, np.int64))
    for fn, ref in ((gsearch.median, np.median), (gsearch.nanmedian, np.nanmedian)):
        out, ref_out = np.empty((1, 6), np.int64), np.empty((1, 6), np.int64)
        assert fn(a * 10, axis=0, keepdims=True, out=out) is out
        ref(a * 10, axis=0, keepdims=True, out=ref_out)
        np.testing.assert_array_equal(out, ref_out)
    with pytest.raises(ValueError):
        gsearch.quantile(a, 0.5, axis=1, out=np.empty(5))
    with pytest.raises(TypeError, match="out must be an array"):
        gsearch.median(a, axis=1, out=[0.0] * 4)


def test_empty_along_an_axis_is_numpys():
    for shape, axis in (((0, 3), 1), ((0, 3), 0), ((2, 0), 0), ((2, 0), None)):
        e = np.empty(shape)
        for fn, ref in ((gsearch.quantile, np.quantile), (gsearch.nanquantile, np.nanquantile)):
            try:
                want = quiet(ref, e, 0.5, axis=axis)
            except IndexError:
                with pytest.raises(IndexError):
                    quiet(fn, e, 0.5, axis=axis)
                continue
            same_result(quiet(fn, e, 0.5, axis=axis), want)
        same_result(quiet(gsearch.median, e, axis=axis), quiet(np.median, e, axis=axis))
        same_result(quiet(gsearch.nanmedian, e, axis=axis), quiet(np.nanmedian, e, axis=axis))


def test_axis_errors_are_numpys():
    a = np.arange(6.0).reshape(2, 3)
    for fn in (gsearch.quantile, gsearch.nanpercentile):
        with pytest.raises(np.exceptions.AxisError):
            fn(a, 0.5, axis=2)
        with pytest.raises(np.exceptions.AxisError):
            fn(a, 0.5, axis=(0, -3))
        with pytest.raises(ValueError, match="repeated axis"):
            fn(a, 0.5, axis=(1, -1))
        with pytest.raises(TypeError, match="axis must be an int"):
            fn(a, 0.5, axis=1.0)
        with pytest.raises(TypeError, match="method=..."):
            fn(a, 0.5, "lower")  # gsearch's old third argument: numpy's is axis
        with pytest.raises(NotImplementedError, match="weights"):
            fn(a, 0.5, weights=np.ones(6))
    with pytest.raises(np.exceptions.AxisError):
        gsearch.median(a, axis=-3)
    with pytest.raises(np.exceptions.AxisError):
        np.median(a, axis=-3)
    # overwrite_input is numpy's permission to write the input: gsearch never does
    b = a.copy()
    same_result(gsearch.median(b, axis=0, overwrite_input=True), np.median(a, axis=0))
    np.testing.assert_array_equal(a, b)
