"""gsearch's quantile family against numpy 2.4 bit for bit and dtype for dtype (issue 38).

numpy's NEP 50 promotion of the data's dtype with q's decides the arithmetic: q's dtype (float64
for a Python float, whose 0-d array is float64) is that of the virtual index, the ranks and gamma;
the interpolation runs in the result dtype (the data's own for a Python float q, the promotion
with q's dtype for anything else: float32 data with [0.1] interpolates in float64), after b - a
in the data's dtype. gsearch computes in the same types, so each result must have numpy's type,
dtype and shape, and its values (np.testing.assert_array_equal: no tolerance; in one dtype that
is bit equality, but for the sign of a zero, which numpy's partition leaves unspecified between
equal -0.0 and 0.0, and NaN payloads).

The reference for float16 data. numpy's quantile and median partition a float16 copy with
np.partition, which numpy 2.4 gets wrong on CPUs with AVX-512 VBMI2 and without AVX-512 FP16
(x86-simd-sort's emulated 16-bit path); numpy's float16 *arithmetic* is right there. numpy on
data.astype(float32) is no reference either: it computes in float32 (or float64) where numpy's
float16 path rounds b - a, gamma and the lerp to float16. So the reference is numpy's own code
on the float16 data, with only the partition replaced (references.py): an ndarray subclass whose partition()
sorts the float32 values (exact: every float16 is a float32; a sorted array is a partition)
and writes them back. numpy's quantile / median flatten (a subclass stays one) and call
arr.partition() on their copy, and do all the rest themselves; the test checks they called it.
"""

import warnings

import numpy as np
import pytest

import gsearch
import references

METHODS = [
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
]
DTYPES = ["float16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool"]

pytestmark = pytest.mark.numpy_reference("2.4.0")  # numpy 2.4's own quantile arithmetic, bit for bit


# numpy's function -> its reference (references.py: numpy's own code, 16-bit floats partitioned
# in float32).
_REFS = {
    np.quantile: references.ref_quantile,
    np.percentile: references.ref_percentile,
    np.median: references.ref_median,
    np.nanquantile: references.ref_nanquantile,
    np.nanpercentile: references.ref_nanpercentile,
    np.nanmedian: references.ref_nanmedian,
}


def numpy_ref(f, a, *args, **kw):
    """f(a, *args, **kw) by numpy (f: np.quantile, np.nanmedian, ...), float16 data through
    references.py's partition in float32; its result as numpy gives it for a plain array."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return _REFS[f](a, *args, **kw)


def same(got, want, what=""):
    assert type(got) is type(want), (what, type(got), type(want))
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (what, g.dtype, w.dtype, g.shape, w.shape)
    np.testing.assert_array_equal(g, w, err_msg=str(what))


def data_of(rng, dtype, n):
    """n values of dtype with duplicates; integers within a quarter of the range (numpy's b - a
    wraps around beyond: gsearch's difference is exact, the documented exception)."""
    d = np.dtype(dtype)
    if d.kind == "b":
        return rng.random(n) < 0.5
    if d.kind in "iu":
        info = np.iinfo(d)
        lo, hi = (info.min // 4, info.max // 4) if d.itemsize < 8 else (-(2**60), 2**60)
        if d.kind == "u":
            lo = 0
        x = rng.integers(lo, hi, n, dtype=np.int64 if d.kind == "i" else np.uint64, endpoint=True)
        x[rng.random(n) < 0.2] = x[0]
        return x.astype(d)
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)
    x[rng.random(n) < 0.2] = x[0]
    return x.astype(d)


Q101 = np.linspace(0, 1, 101)
# Every form of q numpy types apart: Python scalars (weak), numpy scalars, 0-d and n-d arrays.
Q_FORMS = [
    0.0, 0.1, 0.3, 0.5, 2 / 3, 0.999, 1.0, 0, 1, [0.25, 0.75], [0, 1],
    np.float16(0.3), np.float32(0.1), np.float64(0.7), np.float32(1.0),
    np.array(0.4, np.float16), np.array(0.35, np.float32), np.array(0.9),
    Q101.astype(np.float16), Q101.astype(np.float32), Q101,
    Q101[:100].reshape(10, 10), Q101[:100].reshape(20, 5).astype(np.float32),
    np.array([0, 1]), np.array([False, True]),
]  # fmt: skip
P_FORMS = [
    30.0, 50, 99.9, [10, 90.5], np.float32(12.5), np.float64(37.5), np.float16(70),
    np.linspace(0, 100, 101), np.linspace(0, 100, 101).astype(np.float32),
    np.linspace(0, 100, 101).astype(np.float16), np.array([0, 100]), np.array(25.0),
]  # fmt: skip


def check(fn, ref, a, q, method):
    """gsearch.fn(a, q, method) is numpy's: its value, or its TypeError (boolean data with a
    method that interpolates). numpy's IndexError / ValueError for a float16 / float32 q whose
    rounding passes the last rank: tested in test_rank_past_the_end."""
    try:
        want = numpy_ref(ref, a, q, method=method)
    except TypeError:
        with pytest.raises(TypeError):
            fn(a, q, method=method)
        return
    except (IndexError, ValueError):
        return
    same(fn(a, q, method=method), want, (a.dtype, len(a), q, method))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_quantile_percentile_median_are_numpys(dtype, method):
    rng = np.random.default_rng(METHODS.index(method) * 100 + DTYPES.index(dtype))
    for n in (1, 2, 7, 1000):
        a = data_of(rng, dtype, n)
        for q in Q_FORMS:
            check(gsearch.quantile, np.quantile, a, q, method)
            check(gsearch.nanquantile, np.nanquantile, a, q, method)
        for p in P_FORMS:
            check(gsearch.percentile, np.percentile, a, p, method)
            check(gsearch.nanpercentile, np.nanpercentile, a, p, method)
        if method == "linear":  # the median (np.mean of the middle one or two), once a dtype
            for b in (a, a[:-1]) if n > 1 else (a,):
                same(gsearch.median(b), numpy_ref(np.median, b), (dtype, len(b)))
                same(gsearch.nanmedian(b), numpy_ref(np.nanmedian, b), (dtype, len(b)))
                if b.dtype.kind == "f":
                    b = b.copy()
                    b[rng.random(len(b)) < 0.3] = np.nan
                    same(gsearch.median(b), numpy_ref(np.median, b), (dtype, len(b)))
                    same(gsearch.nanmedian(b), numpy_ref(np.nanmedian, b), (dtype, len(b)))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_special_values_and_nan_forms(dtype, method):
    rng = np.random.default_rng(7)
    a = data_of(rng, dtype, 300)
    specials = np.array([np.inf, -np.inf, -0.0, 0.0, np.nan], dtype)
    a[rng.integers(0, 300, 40)] = specials[rng.integers(0, 5, 40)]
    finite_inf = a[~np.isnan(a)]  # inf - inf: numpy's NaN where a lerp touches an infinity
    for q in (0.3, [0.0, 0.5, 1.0], np.float32(0.999), Q101.astype(np.float16), Q101):
        check(gsearch.quantile, np.quantile, a, q, method)  # NaN data: NaN
        check(gsearch.nanquantile, np.nanquantile, a, q, method)
        check(gsearch.quantile, np.quantile, finite_inf, q, method)
        check(gsearch.nanpercentile, np.nanpercentile, a, np.asarray(q) * 100, method)
    # All-NaN data: NaN of the data's dtype, whatever q's (numpy's nanquantile).
    all_nan = np.full(5, np.nan, dtype)
    for q in (0.5, [0.5], Q101, np.float64(0.5), np.float32(0.25)):
        check(gsearch.nanquantile, np.nanquantile, all_nan, q, method)
        check(gsearch.nanpercentile, np.nanpercentile, all_nan, np.asarray(q) * 100, method)


def test_the_issue_example():
    a = np.array([0.5, 1, 2, 3, 7], np.float32)
    same(gsearch.quantile(a, [0.1]), np.array([0.7]))  # float64, computed in float64
    same(gsearch.quantile(a, 0.1), np.float32(0.7))  # a Python float: float32 arithmetic
    same(gsearch.quantile(a, np.float64(0.1)), np.float64(0.7))  # a numpy scalar is not weak
    same(gsearch.quantile(a, np.float32(0.1)), np.quantile(a, np.float32(0.1)))
    same(gsearch.quantile(a.astype(np.float16), np.float64(0.1)), numpy_ref(np.quantile, a.astype(np.float16), np.float64(0.1)))
    assert np.quantile(a.astype(np.float16), np.float64(0.1)).dtype == np.float64
    # "over 101 q and 7 methods on 10^4 float32 values the differences reach 7.6e-6"
    x = np.random.default_rng(38).standard_normal(10**4).astype(np.float32) * 100
    for method in METHODS:
        same(gsearch.quantile(x, Q101, method=method), np.quantile(x, Q101, method=method), method)
        same(gsearch.percentile(x, Q101 * 100, method=method), np.percentile(x, Q101 * 100, method=method), method)
        for q in Q101[::10]:
            same(gsearch.quantile(x, float(q), method=method), np.quantile(x, float(q), method=method), (method, q))


def test_float16_reference_is_numpys_float16_arithmetic():
    """The reference runs numpy's float16 code (through references.py's partition), not
    float32's: b - a rounds to float16 (1000 - 2^-10 is 1000), which float32 data does not."""
    h = np.array([2.0**-10, 1000.0], np.float16)
    before = references._SortedPartition.calls
    want = numpy_ref(np.quantile, h, [0.3])
    assert references._SortedPartition.calls > before
    assert want[0] == 300.0009765625 != np.quantile(h.astype(np.float32), [0.3])[0]
    same(gsearch.quantile(h, [0.3]), want)
    same(gsearch.quantile(h, 0.3), np.float16(300.0))  # a Python float: float16 arithmetic
    before = references._SortedPartition.calls
    same(gsearch.median(h), numpy_ref(np.median, h))
    assert references._SortedPartition.calls > before


def test_rank_past_the_end():
    """A float16 q's index arithmetic rounds: n = 10000, (n - 1) q = 9999 is 10000 in float16,
    and numpy's take or partition fails (IndexError, ValueError); gsearch takes the last
    element. Below that, numpy's rounded ranks (10000 * 0.3 - 1 in float16 is 3000)."""
    x = np.arange(10000, dtype=np.float32)
    for method in ("lower", "higher", "nearest", "inverted_cdf"):
        with pytest.raises((IndexError, ValueError)):
            np.quantile(x, np.float16(1.0), method=method)
    for method in METHODS:
        same(gsearch.quantile(x, np.float16(1.0), method=method), np.float32(9999.0), method)
        check(gsearch.quantile, np.quantile, x, np.array([0.3, 0.7001], np.float16), method)
    same(gsearch.quantile(x, np.float16(0.3), method="inverted_cdf"), np.quantile(x, np.float16(0.3), method="inverted_cdf"))


def test_float16_q_beyond_its_range():
    """From 65520 elements numpy's float16 index arithmetic overflows (n rounds to inf: NaN or
    IndexError); gsearch refuses, naming the way out. One fewer is numpy's arithmetic."""
    x = np.arange(65520, dtype=np.float32)
    with pytest.raises(ValueError, match="float16 q cannot index 65520 elements"):
        gsearch.quantile(x, np.float16(0.5))
    with pytest.raises(ValueError, match="float16 q cannot index"):
        gsearch.percentile(x, np.array([50], np.float16))
    for method in ("linear", "hazen", "lower", "inverted_cdf"):
        check(gsearch.quantile, np.quantile, x[:-1], np.array([0.1, 0.5, 0.9], np.float16), method)


from gpu_support import needs_torch, torch  # noqa: E402


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64"])
def test_cuda_tensors_are_numpys_too(dtype):
    """The CUDA backend computes in the same types (torch CUDA tensors in and out): numpy's
    values and dtypes, for every method and the forms of q that type the arithmetic apart."""
    rng = np.random.default_rng(3)
    a = data_of(rng, dtype, 10_001)
    t = torch.from_numpy(a).cuda()
    for method in METHODS:
        for q in (0.1, 2 / 3, [0.1], np.float32(0.1), np.float64(0.7), Q101, Q101.astype(np.float32)):
            try:
                want = np.asarray(numpy_ref(np.quantile, a, q, method=method))
            except (TypeError, IndexError, ValueError):
                continue
            got = gsearch.quantile(t, q, method=method)
            assert isinstance(got, torch.Tensor) and got.is_cuda, (dtype, method, q)
            g = got.cpu().numpy()
            assert g.dtype == want.dtype and g.shape == want.shape, (dtype, method, q, g.dtype, want.dtype)
            np.testing.assert_array_equal(g, want, err_msg=f"{dtype} {method} {q!r}")
    same(gsearch.median(t).cpu().numpy()[()], numpy_ref(np.median, a), dtype)
