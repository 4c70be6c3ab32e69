"""gsearch's selection family against numpy (np.sort, np.partition, np.quantile with every
method, np.median, the nan* forms; float16 through float32: references.py) and torch (topk,
kthvalue, where torch imports): every dtype, NaN / inf / -0.0, duplicates, sorted and constant
data, empty and 0-d inputs, numpy's errors; float16's order is float32's, shown without numpy's
float16 sort. The GPU tests at the end (torch / cupy CUDA arrays) skip unless a GPU and
gsearch's CUDA backend are there, as in test_gpu.py."""

import warnings

import numpy as np
import pytest

import gsearch
from gsearch import _core
from conftest import ALL_DTYPES, NATIVE_DTYPES, random_values
from references import ref_median, ref_nanmedian, ref_quantile, ref_sort

try:
    import torch as _torch_cpu
except Exception:  # torch's own reference (on the CPU) where it imports
    _torch_cpu = None

# numpy's methods, in numpy's order: the library's table (every one is checked against numpy below)
METHODS = list(_core.QUANTILE_METHODS)
DISCRETE = {"inverted_cdf", "closest_observation", "lower", "higher", "nearest"}
SIZES = [1, 2, 3, 31, 33, 1023, 1025, 4097, 70_001]
QS = [0.0, 0.001, 0.1, 0.25, 0.3, 0.5, 0.75, 0.9, 0.999, 1.0]


def test_the_methods_are_numpys_thirteen():
    import typing

    from gsearch._quantiles import QuantileMethod

    assert len(METHODS) == 13 and list(typing.get_args(QuantileMethod)) == METHODS
    for m in METHODS:
        np.quantile(np.arange(3), 0.5, method=m)  # numpy knows each name


def data_of(rng, dtype, n, kind="random"):
    """n values of dtype: random (NaN / inf / -0.0 among floats), few distinct values, sorted,
    reversed or constant."""
    if kind == "few":
        return random_values(rng, dtype, n, pool=[0, 1, 3])
    x = random_values(rng, dtype, n)
    if kind == "sorted":
        return ref_sort(x)
    if kind == "reversed":
        return ref_sort(x)[::-1].copy()
    if kind == "constant":
        return np.full(n, x[0], dtype=x.dtype)
    return x


def same_keys(got, want):
    """Equal in the key order: the same values, NaN where NaN, -0.0 == 0.0 (and the same dtype,
    in native byte order: gsearch returns native arrays)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype.newbyteorder("=") == want.dtype.newbyteorder("="), (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)  # NaN == NaN here, -0.0 == 0.0


def same_result(got, want):
    """numpy's result exactly: type (scalar or array), dtype, values (NaN where NaN)."""
    assert type(got) is type(want), (type(got), type(want))
    assert np.asarray(got).dtype == np.asarray(want).dtype, (np.asarray(got).dtype, np.asarray(want).dtype)
    np.testing.assert_array_equal(got, want)


def check_partitioned(p, a, kth, axis=-1):
    """p is a partition of a at kth along axis: numpy's contract (not numpy's order), in the key
    order (NaN the largest)."""
    s = ref_sort(a, axis=axis)
    same_keys(ref_sort(p, axis=axis), s)
    p, s = np.moveaxis(p, axis, -1), np.moveaxis(s, axis, -1)
    n = p.shape[-1]
    for k in np.atleast_1d(kth):
        k = int(k) % n
        same_keys(p[..., k], s[..., k])
        same_keys(ref_sort(p[..., : k + 1], -1)[..., -1], s[..., k])  # nothing before is larger
        same_keys(ref_sort(p[..., k:], -1)[..., 0], s[..., k])  # nothing after is smaller


# --- select -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("kind", ["random", "few", "sorted", "reversed", "constant"])
def test_select_equals_a_sort(rng, dtype, kind):
    for n in (1, 33, 4097, 70_001):
        a = data_of(rng, dtype, n, kind)
        s = ref_sort(a)
        ranks = np.unique(np.r_[0, n - 1, rng.integers(0, n, 20), n // 2])
        same_keys(gsearch.select(a, ranks), s[ranks])
        same_keys(gsearch.select(a, -ranks - 1), s[-ranks - 1])
        got = gsearch.select(a, int(ranks[-1]))
        assert isinstance(got, np.generic) and got.dtype == a.dtype
        same_keys(got, s[ranks[-1]])


def test_select_shapes_and_inputs():
    a = np.array([[9, -4, 7], [1, 0, 3]])
    same_keys(gsearch.select(a, [[0, 1], [-1, -2]]), np.array([[-4, 0], [9, 7]]))  # a whole, ranks' shape
    same_keys(gsearch.select(a, np.array([], dtype=np.int64)), np.array([], dtype=a.dtype))
    assert gsearch.select([3.0, 1.0, 2.0], 1) == 2.0  # a list
    assert gsearch.select(np.float32(5), 0) == np.float32(5)  # 0-d: one element
    big = np.array([2**64 - 1, 0, 2**64 - 2], dtype=np.uint64)  # beyond 2^53: exact
    assert gsearch.select(big, 1) == np.uint64(2**64 - 2)
    z = gsearch.select(np.array([0.0, -0.0, -0.0]), [0, 1, 2])
    assert (z == 0).all()  # -0.0 == 0.0: either may be chosen


def test_select_errors():
    a = np.arange(5)
    with pytest.raises(IndexError, match="rank 5 is out of bounds for 5 elements"):
        gsearch.select(a, 5)
    with pytest.raises(IndexError):
        gsearch.select(a, [0, -6])
    with pytest.raises(IndexError):
        gsearch.select(np.array([], dtype=np.int32), 0)
    with pytest.raises(TypeError):
        gsearch.select(a, 1.5)
    with pytest.raises(ValueError, match="booleans"):
        gsearch.select(a, [True])
    with pytest.raises(TypeError):
        gsearch.select(np.array(["a", "b"]), 0)
    with pytest.raises(TypeError):
        gsearch.select(np.array([1 + 1j]), 0)


def test_select_empty_and_huge_ranks_are_numpys_indexing():
    a = np.array([3.0, 1.0, 2.0])
    for ranks in ([], (), [[]]):  # numpy: np.sort(a)[[]] is empty, of a's dtype
        same_keys(gsearch.select(a, ranks), np.sort(a)[np.asarray(ranks, dtype=np.intp)])
    with pytest.raises(IndexError):
        np.sort(a)[np.array([], dtype=float)]
    with pytest.raises(TypeError):
        gsearch.select(a, np.array([], dtype=float))  # a float array stays refused
    for ranks, shown in ((2**70, 2**70), ([0, 2**70], 2**70), (-(2**70), -(2**70)), (2**64 - 1, 2**64 - 1),
                         (np.uint64(2**63), 2**63)):
        with pytest.raises(IndexError, match=f"rank {shown} is out of bounds"):
            gsearch.select(a, ranks)
        with pytest.raises((IndexError, OverflowError)):  # numpy's (OverflowError past uint64 in a list)
            np.sort(a)[ranks]
    with pytest.raises(IndexError, match=f"rank {2**64 - 1} is out of bounds"):
        gsearch.select(a, [-1, 2**64 - 1])  # numpy makes the list float64


# --- partition / argpartition -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("kind", ["random", "few", "sorted", "constant"])
def test_partition_contract(rng, dtype, kind):
    for n in (1, 2, 33, 4097, 70_001):
        a = data_of(rng, dtype, n, kind)
        for kth in (0, n - 1, -1, n // 2, [0, n // 3, n - 1], [n // 2, n // 2, -(n // 4) - 1]):
            p = gsearch.partition(a, kth)
            assert p.dtype == a.dtype and p.shape == a.shape
            check_partitioned(p, a, kth)
            i = gsearch.argpartition(a, kth)
            assert i.dtype == np.int64
            same_keys(np.sort(i), np.arange(n))  # a permutation
            check_partitioned(a[i], a, kth)


def test_partition_equals_numpy_where_numpy_is_determined():
    a = np.array([7, 1, 7, 7, 1, 5, 7, 2, 3, 2, 6, 2, 3, 0])
    kth = np.arange(a.size)  # every position: the sorted array
    same_keys(gsearch.partition(a, kth), np.partition(a, kth))
    same_keys(gsearch.partition(a, [3, 8])[[3, 8]], np.partition(a, [3, 8])[[3, 8]])


def test_partition_rows_axes_and_shapes(rng):
    a = rng.integers(0, 50, (4, 5, 37))
    for axis in (-1, 0, 1, 2, -3):
        p = gsearch.partition(a, [2, -1], axis=axis)
        assert p.shape == a.shape and p.flags.c_contiguous
        check_partitioned(p, a, [2, -1], axis)
        i = gsearch.argpartition(a, 3, axis=axis)
        check_partitioned(np.take_along_axis(a, i, axis), a, 3, axis)
    p = gsearch.partition(a, 100, axis=None)  # flattened first
    assert p.shape == (a.size,)
    check_partitioned(p, a.ravel(), 100)
    assert gsearch.partition(np.array(3), 0, axis=None).tolist() == [3]
    same_keys(gsearch.partition(np.array([], dtype=np.float32), 5), np.array([], dtype=np.float32))  # numpy: no check
    assert gsearch.argpartition(np.zeros((3, 0)), 0).shape == (3, 0)
    same_keys(gsearch.partition([3, 1, 2], 1), np.array([1, 2, 3]))  # a list


@pytest.mark.numpy_reference("2.4.0")
def test_partition_errors_are_numpys():
    a = np.array([5, 1, 4, 2, 3])
    for fn in (gsearch.partition, gsearch.argpartition):
        for kth, exc, msg in [
            (10, ValueError, r"kth\(=10\) out of bounds \(5\)"),
            (-6, ValueError, r"kth\(=-1\) out of bounds \(5\)"),
            ([1, 10], ValueError, r"kth\(=10\) out of bounds \(5\)"),
            (1.5, TypeError, "Partition index must be integer"),
            ([], TypeError, "Partition index must be integer"),
            (True, ValueError, "Booleans unacceptable as partition index"),
            ([[1, 2]], ValueError, "object too deep"),
        ]:
            with pytest.raises(exc, match=msg):
                fn(a, kth)
            with pytest.raises(exc):
                np.partition(a, kth)  # the same exception type as numpy's
        with pytest.raises(np.exceptions.AxisError):
            fn(np.array(3), 0)
        with pytest.raises(np.exceptions.AxisError):
            fn(a, 0, axis=1)
        with pytest.raises(TypeError):
            fn(np.array(["b", "a"]), 0)
        # the kth the user gave, also past int64 (numpy reports 2**63 wrapped to -2**63 + 5)
        for kth, shown in ((2**63, 2**63), ([1, 2**63], 2**63), (np.uint64(2**64 - 1), 2**64 - 1), (2**70, 2**70)):
            with pytest.raises(ValueError, match=rf"kth\(={shown}\) out of bounds \(5\)"):
                fn(a, kth)


def test_partition_kind_and_order_are_numpys():
    a = np.array([5, 1, 4, 2, 3])
    for fn, ref in ((gsearch.partition, np.partition), (gsearch.argpartition, np.argpartition)):
        np.testing.assert_array_equal(fn(a, [0, 2, 4], kind="introselect", order=None), ref(a, [0, 2, 4]))
        np.testing.assert_array_equal(fn(a, [0, 2, 4], -1, "introselect", None), ref(a, [0, 2, 4], -1, "introselect", None))
        for kw, exc in ((dict(kind="quicksort"), ValueError), (dict(kind=3), TypeError), (dict(order="x"), ValueError),
                        (dict(order=["x", "y"]), ValueError)):
            with pytest.raises(exc) as ours:
                fn(a, 1, **kw)
            with pytest.raises(exc) as numpys:
                ref(a, 1, **kw)
            assert str(ours.value) == str(numpys.value)


# --- float16: the float32 order, on any CPU -------------------------------------------------------


def float16_data(rng, layout):
    """Random float16 values with NaN / inf / -0.0 (70,001: where numpy's emulated sort errs),
    then every float16 bit pattern in order (NaN payloads, both zeros and infinities,
    subnormals), then neighbours numpy's emulated sort was seen to swap; or all of it shuffled."""
    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    seen = np.array([-np.inf, -413.5, -474.5, -0.0, -0.0009, -0.005062, 0.0, -6e-8, 6e-8, np.inf, np.nan], np.float16)
    a = np.concatenate([random_values(rng, "float16", 70_001), every, seen])
    return rng.permutation(a) if layout == "shuffled" else a


@pytest.mark.parametrize("layout", ["appended", "shuffled"])
def test_float16_order_is_the_float32_order_on_any_cpu(rng, layout):
    """gsearch orders float16 as float32 does (the widening is exact and keeps the order), on
    any CPU: sort and argsort (stable), select, partition, argpartition, topk, IndexIntervals.
    Nothing here sorts float16 with numpy (numpy 2.4's is wrong on CPUs with AVX-512 VBMI2 but
    no FP16: references.py): the reference is float32's stable argsort, checked in order below
    element by element."""
    a = float16_data(rng, layout)
    order = np.argsort(a.astype(np.float32), kind="stable")
    want = a[order]
    w, nan = want.astype(np.float32), np.isnan(want)
    assert not (nan[:-1] & ~nan[1:]).any() and (w[~nan][:-1] <= w[~nan][1:]).all()  # NaN last, ascending

    got = gsearch.sort(a)
    same_keys(got, want)
    assert np.array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])  # stable: the zeros' signs too
    np.testing.assert_array_equal(gsearch.argsort(a), order)

    zeros = np.flatnonzero(w == 0)
    finite = int(np.count_nonzero(~nan))
    kth = [0, 1, int(np.count_nonzero(w < -413.5)), int(zeros[0]), int(zeros[-1]), int(zeros[-1]) + 1,
           a.size // 2, finite - 1, finite, a.size - 1]
    same_keys(gsearch.select(a, kth), want[kth])
    ii = gsearch.IndexIntervals(a)
    same_keys(np.array([ii.select(k) for k in kth]), want[kth])
    same_keys(ii.sort(), want)

    def at_most(x, y):  # x <= y in the key order (NaN the largest), element by element
        x, y = np.asarray(x, np.float32), np.asarray(y, np.float32)
        return (x <= y) | np.isnan(y)

    for p in (gsearch.partition(a, kth), a[gsearch.argpartition(a, kth)]):
        for k in kth:
            same_keys(p[k], want[k])
            assert at_most(p[:k], want[k]).all() and at_most(want[k], p[k + 1 :]).all()
    for largest in (False, True):
        v, i = gsearch.topk(a, 1000, largest=largest)
        same_keys(v, want[::-1][:1000] if largest else want[:1000])
        same_keys(a[i], v)


# --- topk / kthvalue ----------------------------------------------------------------------------


def ref_topk(a, k, largest=True):
    """The k largest (smallest) per row in the key order: np.sort's, NaN the largest."""
    s = ref_sort(a, axis=-1)
    return (s[..., ::-1] if largest else s)[..., :k]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_topk_equals_a_sort(rng, dtype):
    for shape in [(1,), (7,), (4097,), (3, 100), (64, 513), (2, 3, 50)]:
        a = random_values(rng, dtype, int(np.prod(shape))).reshape(shape)
        cols = shape[-1]
        for k in sorted({0, 1, 2, cols // 2, cols - 1, cols} & set(range(cols + 1))):
            for largest in (True, False):
                v, i = gsearch.topk(a, k, largest=largest)
                assert v.shape == shape[:-1] + (k,) and i.dtype == np.int64 and v.dtype == a.dtype
                same_keys(v, ref_topk(a, k, largest))
                same_keys(np.take_along_axis(a, i, -1), v)  # indices point at the values
                vu, iu = gsearch.topk(a, k, largest=largest, sorted=False)
                same_keys(ref_sort(vu, -1), ref_sort(ref_topk(a, k, largest), -1))
                same_keys(np.take_along_axis(a, iu, -1), vu)


def test_topk_named_result_dim_and_nan():
    r = gsearch.topk(np.array([1.0, 5.0, 3.0, np.nan, 4.0]), 2)
    assert r.values.tolist()[1] == 5.0 and np.isnan(r.values[0]) and r.indices.tolist() == [3, 1]
    v, i = r
    assert v is r.values and i is r.indices
    a = np.arange(24).reshape(2, 3, 4)
    v, i = gsearch.topk(a, 2, dim=1)
    assert v.shape == (2, 2, 4)
    same_keys(v, np.flip(np.sort(a, axis=1), 1)[:, :2])
    same_keys(np.take_along_axis(a, i, 1), v)
    v, i = gsearch.topk(np.zeros((0, 5)), 2)
    assert v.shape == (0, 2) and i.shape == (0, 2)


def test_topk_kthvalue_errors():
    a = np.arange(5)
    with pytest.raises(ValueError, match=r"k=6 is out of range .*0 <= k <= 5"):
        gsearch.topk(a, 6)
    with pytest.raises(ValueError):
        gsearch.topk(a, -1)
    with pytest.raises(TypeError):
        gsearch.topk(a, 1.0)
    with pytest.raises(ValueError, match="at least one dimension"):
        gsearch.topk(np.array(3), 1)
    with pytest.raises(np.exceptions.AxisError):
        gsearch.topk(a, 1, dim=1)
    with pytest.raises(ValueError, match=r"1 <= k <= 5"):
        gsearch.kthvalue(a, 0)
    with pytest.raises(ValueError):
        gsearch.kthvalue(a, 6)
    with pytest.raises(TypeError):
        gsearch.kthvalue(a, True)
    with pytest.raises(TypeError):
        gsearch.topk(np.array([1 + 2j]), 1)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_kthvalue_equals_a_sort(rng, dtype):
    for shape in [(1,), (33,), (4097,), (5, 77), (2, 3, 9)]:
        a = random_values(rng, dtype, int(np.prod(shape))).reshape(shape)
        for k in sorted({1, 2, shape[-1] // 2 + 1, shape[-1]} & set(range(1, shape[-1] + 1))):
            v, i = gsearch.kthvalue(a, k)
            same_keys(v, ref_sort(a, -1)[..., k - 1])
            same_keys(np.take_along_axis(a, np.asarray(i)[..., None], -1)[..., 0], np.asarray(v))
    v, i = gsearch.kthvalue(np.array([5, 1, 4, 2]), 2)
    assert isinstance(v, np.generic) and v == 2 and i == 3  # 1-D: numpy scalars


@pytest.mark.skipif(_torch_cpu is None, reason="torch does not import")
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_topk_kthvalue_equal_torch(rng, dtype):
    torch = _torch_cpu
    a = random_values(rng, dtype, 40 * 301).reshape(40, 301)
    t = torch.from_numpy(a)
    for k in (1, 7, 150, 301):
        for largest in (True, False):
            want = torch.topk(t, k, largest=largest)
            v, i = gsearch.topk(a, k, largest=largest)
            same_keys(v, want.values.numpy())
            got_t = gsearch.topk(t, k, largest=largest)  # CPU tensors give CPU tensors
            assert isinstance(got_t.values, torch.Tensor)
            same_keys(got_t.values.numpy(), want.values.numpy())
        want = torch.kthvalue(t, k)
        v, i = gsearch.kthvalue(a, k)
        same_keys(v, want.values.numpy())
        same_keys(a[np.arange(40), i], want.values.numpy())


@pytest.mark.skipif(_torch_cpu is None, reason="torch does not import")
@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
def test_torch_fast_paths_equal_numpy(rng, monkeypatch, dtype):
    # A contiguous tensor of a key dtype goes to the extension as data pointers (_core.*_pointers:
    # _selection._tensor); its results are the numpy path's, in torch's kind, dtype and shape.
    torch = _torch_cpu
    gsearch.select(torch.zeros(3), 0)  # the first tensor registers torch (the general path)
    seen = []
    for name in ("select_pointers", "topk_pointers", "partition_pointers", "quantile_pointers", "median_pointers"):
        real = getattr(_core, name)
        monkeypatch.setattr(_core, name, lambda *a, _real=real, _name=name, **k: seen.append(_name) or _real(*a, **k))

    def same(got, want, call):
        assert seen == [call], seen
        seen.clear()
        assert isinstance(got, torch.Tensor)
        same_keys(got.numpy(), np.asarray(want))

    for n in (1, 33, 70_001):
        a = random_values(rng, dtype, n)
        t = torch.from_numpy(a)
        for r in (0, n // 2, -1):
            same(gsearch.select(t, r), gsearch.select(a, r), "select_pointers")
            p = gsearch.partition(t, r)
            assert seen == ["partition_pointers"]
            seen.clear()
            check_partitioned(p.numpy(), a, r)
            i = gsearch.argpartition(t, r, axis=None)
            assert seen == ["partition_pointers"] and i.dtype == torch.int64
            seen.clear()
            check_partitioned(a[i.numpy()], a, r)
        for k in {1, min(n, 7), n}:
            for largest in (True, False):
                v, i = gsearch.topk(t, k, largest=largest)
                same(v, gsearch.topk(a, k, largest=largest).values, "topk_pointers")
                same_keys(a[i.numpy()], v.numpy())
        same(gsearch.median(t), gsearch.median(a), "median_pointers")
        same(gsearch.nanmedian(t), gsearch.nanmedian(a), "median_pointers")
        for q in (0.3, [0.25, 0.5, 0.75]):
            for method in ("linear", "lower", "midpoint"):
                want = np.asarray(gsearch.quantile(a, q, method=method))
                got = gsearch.quantile(t, q, method=method)
                if method == "lower" and dtype in ("int64", "uint64"):  # the element: the general path
                    assert not seen
                    same_keys(got.numpy(), want)
                else:
                    same(got, want, "quantile_pointers")
    v, i = gsearch.topk(torch.from_numpy(random_values(rng, dtype, 40 * 31).reshape(40, 31)), 5)  # rows
    assert seen == ["topk_pointers"] and v.shape == (40, 5)


# --- quantile, percentile, median ---------------------------------------------------------------


def quiet(f, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args, **kw)


@pytest.mark.numpy_reference("2.4.0")
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "float32", "float64", "int8", "uint16", "float16"])
def test_quantile_every_method_equals_numpy(rng, method, dtype):
    for n in SIZES:
        a = data_of(rng, dtype, n)
        if a.dtype.kind in "iu":
            a = (a // 4).astype(dtype)  # no neighbours whose difference wraps around in numpy
        else:
            a[np.isnan(a)] = 0.5  # NaN makes every quantile NaN: tested below
        # numpy interpolates float16 in float16 (gsearch in float32, rounded once) and, for an
        # array q, float32 neighbours in float64: within a rounding there
        near = a.dtype.kind == "f" and method not in DISCRETE
        eps = np.finfo(a.dtype).eps if near else 0
        tol = dict(rtol=4 * eps, atol=4 * eps * float(np.abs(a[np.isfinite(a)]).max(initial=1)))
        for q in QS:  # a Python float: numpy's arithmetic in the data's type, exactly
            got, want = gsearch.quantile(a, q, method=method), quiet(ref_quantile, a, q, method=method)
            if near and a.dtype.itemsize == 2:
                assert type(got) is type(want) and got.dtype == want.dtype
                np.testing.assert_allclose(got, want, **tol)
            else:
                same_result(got, want)
        got, want = gsearch.quantile(a, QS, method=method), quiet(ref_quantile, a, QS, method=method)
        assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
        if near and a.dtype.itemsize < 8:
            np.testing.assert_allclose(got, want, **tol)
        else:
            same_result(got, want)


@pytest.mark.numpy_reference("2.4.0")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("method", METHODS)
def test_nanquantile_and_nan_data(rng, dtype, method):
    for n in (1, 2, 33, 4097):
        a = data_of(rng, dtype, n)
        a[rng.random(n) < 0.2] = np.nan
        for q in (0.0, 0.3, 0.5, 1.0):
            same_result(gsearch.quantile(a, q, method=method), quiet(np.quantile, a, q, method=method))
            same_result(gsearch.nanquantile(a, q, method=method), quiet(np.nanquantile, a, q, method=method))
            same_result(gsearch.nanpercentile(a, q * 100, method=method), quiet(np.nanpercentile, a, q * 100, method=method))
    all_nan = np.full(5, np.nan, dtype=dtype)
    same_result(quiet(gsearch.nanquantile, all_nan, 0.5, method=method), quiet(np.nanquantile, all_nan, 0.5, method=method))


@pytest.mark.numpy_reference("2.4.0")
def test_quantile_types_of_q_and_results():
    a32 = np.array([3, 1, 2, 10], dtype=np.int32)
    f32 = np.array([1, 2, 3], dtype=np.float32)
    for a in (a32, f32, a32.astype(np.int64), a32.astype(np.uint64), f32.astype(np.float16)):
        for q in (0.5, 1, 0, np.float64(0.3), np.float32(0.3), [0, 1], [0.2, 0.7], np.array([[0.1], [0.9]]), (0.5,), np.array(0.4)):
            for method in ("linear", "lower", "midpoint", "nearest", "inverted_cdf"):
                got, want = gsearch.quantile(a, q, method=method), ref_quantile(a, q, method=method)
                assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype, (a.dtype, q, method)
                np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float), rtol=1e-3)
    same_result(gsearch.percentile(a32, 50), np.percentile(a32, 50))
    same_result(gsearch.percentile(f32, [25, 75]), np.percentile(f32, [25, 75]))
    same_result(gsearch.percentile(f32, 30), np.percentile(f32, 30))
    same_result(gsearch.quantile(np.array([[10, 7, 4], [3, 2, 1]]), 0.5), np.float64(3.5))  # any shape, whole
    same_result(gsearch.quantile(np.float64(2.5), 0.5), np.quantile(np.float64(2.5), 0.5))  # 0-d
    same_result(gsearch.quantile(a32, []), np.quantile(a32, []))
    same_result(gsearch.quantile([1, 2, 3, 4], 0.5), np.float64(2.5))


def test_quantile_result_type_of_int_and_float_q():
    """q = 0 and q = 0.0 are equal (and hash alike) but numpy types their results apart: a cache
    of numpy's rule must not answer one for the other (hypothesis found it, in CI)."""
    a = np.array([0], dtype=np.int32)
    for q in (0, 0.0, 1, 1.0, 0):
        same_result(gsearch.quantile(a, q, method="linear"), np.quantile(a, q, method="linear"))


def test_quantile_int64_discrete_methods_are_exact():
    a = np.array([2**62 + 1, -(2**62) - 1, 2**53 + 1, 5], dtype=np.int64)
    for method in DISCRETE:
        same_result(gsearch.quantile(a, [0, 0.4, 0.6, 1], method=method), np.quantile(a, [0, 0.4, 0.6, 1], method=method))
    u = np.array([2**64 - 1, 2**64 - 3, 7], dtype=np.uint64)
    same_result(gsearch.quantile(u, 1.0, method="lower"), np.quantile(u, 1.0, method="lower"))
    same_result(gsearch.quantile(u, 1), np.quantile(u, 1))  # linear at an integer q: the element


def test_quantile_special_values():
    inf = np.array([1.0, np.inf])  # numpy's lerp towards inf: NaN (and numpy's warning)
    same_result(gsearch.quantile(inf, 0.5), quiet(np.quantile, inf, 0.5))
    same_result(gsearch.quantile(inf, 1.0), quiet(np.quantile, inf, 1.0))  # NaN too: inf - inf
    same_result(gsearch.quantile(inf, 1.0, method="higher"), np.float64(np.inf))
    z = np.array([-np.inf, 0.0, -0.0, 1.0])
    same_result(gsearch.quantile(z, [0.0, 0.4, 1.0]), quiet(np.quantile, z, [0.0, 0.4, 1.0]))
    big = np.array([3e38, 3e38], dtype=np.float32)
    same_result(quiet(gsearch.median, big), quiet(np.median, big))


def test_quantile_errors_are_numpys():
    a = np.array([1.0, 2.0])
    for fn, ref, bad in [
        (gsearch.quantile, np.quantile, 1.5),
        (gsearch.nanquantile, np.nanquantile, -0.1),
        (gsearch.quantile, np.quantile, np.nan),
        (gsearch.quantile, np.quantile, [0.5, 2]),
        (gsearch.percentile, np.percentile, 150),
        (gsearch.nanpercentile, np.nanpercentile, -1),
    ]:
        with pytest.raises(ValueError) as ours:
            fn(a, bad)
        with pytest.raises(ValueError) as theirs:
            ref(a, bad)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="method"):
        gsearch.quantile(a, 0.5, method="foo")
    with pytest.raises(IndexError):
        gsearch.quantile(np.array([]), 0.5)
    with pytest.raises(IndexError):
        np.quantile(np.array([]), 0.5)
    with pytest.raises(TypeError):
        gsearch.quantile(np.array([1 + 1j]), 0.5)
    with pytest.raises(TypeError):
        gsearch.quantile(np.array(["a"]), 0.5)
    with pytest.raises(TypeError):
        gsearch.quantile(np.array([True, False]), 0.5)  # numpy does not interpolate booleans
    same_result(gsearch.quantile(np.array([True, False]), 0.5, method="lower"), np.quantile(np.array([True, False]), 0.5, method="lower"))
    with pytest.raises(TypeError):
        gsearch.quantile(a, "half")
    with pytest.raises(ValueError, match="scalar or 1d"):
        gsearch.quantile(a, np.zeros((1, 1, 1)))
    with pytest.warns(RuntimeWarning):  # numpy's answer for empty data: NaN, with its warning
        same_result(gsearch.nanquantile(np.array([]), 0.5), np.float64(np.nan))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_median_equals_numpy(rng, dtype):
    for n in SIZES:
        for kind in ("random", "few", "sorted", "constant"):
            a = data_of(rng, dtype, n, kind)
            if a.dtype.kind in "iu" and a.dtype.itemsize == 8:
                a = a // 4  # numpy's np.mean of two int64 halves sums them in float64 as we do
            same_result(gsearch.median(a), quiet(ref_median, a))
            same_result(gsearch.nanmedian(a), quiet(ref_nanmedian, a))


def test_median_shapes_nan_and_empty():
    same_result(gsearch.median(np.array([[10, 7, 4], [3, 2, 1]])), np.float64(3.5))
    same_result(gsearch.median(np.array(3)), np.median(np.array(3)))
    same_result(gsearch.median(np.array([1.0, np.nan, 2.0])), np.float64(np.nan))
    same_result(gsearch.nanmedian(np.array([1.0, np.nan, 2.0])), np.float64(1.5))
    with pytest.warns(RuntimeWarning):
        same_result(gsearch.median(np.array([])), quiet(np.median, np.array([])))
    with warnings.catch_warnings():  # all NaN: numpy's NaN, without numpy's RuntimeWarning
        warnings.simplefilter("error")
        same_result(gsearch.nanmedian(np.array([np.nan])), quiet(np.nanmedian, np.array([np.nan])))
    with pytest.raises(TypeError):
        gsearch.median(np.array([1 + 1j]))


def test_big_endian_and_non_contiguous():
    a = np.arange(100, dtype=">i4")[::-3]
    same_keys(gsearch.select(a, [0, -1]), np.sort(a)[[0, -1]].astype("=i4"))
    same_result(gsearch.median(a), np.median(a))
    check_partitioned(gsearch.partition(a, 5), a, 5)


# --- property tests (hypothesis) -----------------------------------------------------------------

try:
    from hypothesis import given
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError:  # pragma: no cover - the property tests skip
    given = None

if given is not None:

    @st.composite
    def arrays_and_q(draw):
        dtype = np.dtype(draw(st.sampled_from(NATIVE_DTYPES)))
        elements = st.floats(width=dtype.itemsize * 8, allow_nan=True) if dtype.kind == "f" else None
        if draw(st.booleans()) and dtype.kind in "iuf":
            elements = st.sampled_from(np.array([0, 1, 2, 100], dtype=dtype).tolist())
        a = draw(hnp.arrays(dtype, st.integers(1, 200), elements=elements))
        return a, draw(st.floats(0, 1)), draw(st.sampled_from(METHODS))

    @pytest.mark.numpy_reference("2.4.0")
    @given(arrays_and_q())
    def test_property_quantile_and_select(aq):
        a, q, method = aq
        if a.dtype.kind in "iu":
            a = a // 4  # as above: numpy's integer difference must not wrap
        same_result(gsearch.quantile(a, q, method=method), quiet(np.quantile, a, q, method=method))
        same_result(gsearch.nanquantile(a, q, method=method), quiet(np.nanquantile, a, q, method=method))
        r = int(q * (a.size - 1))
        same_keys(gsearch.select(a, r), np.sort(a)[r])
        check_partitioned(gsearch.partition(a, r), a, r)


# --- GPU (torch / cupy CUDA arrays) ---------------------------------------------------------------

from gpu_support import cupy, needs_cupy, needs_torch, spy_on, torch  # noqa: E402


@needs_torch
class TestTorchCuda:
    @pytest.mark.parametrize("dtype", NATIVE_DTYPES)
    def test_gpu_equals_numpy(self, rng, dtype):
        a_np = random_values(rng, dtype, 300_001)
        a = torch.from_numpy(a_np).cuda()
        got = gsearch.select(a, [0, 150_000, -1])
        assert isinstance(got, torch.Tensor) and got.is_cuda
        same_keys(got.cpu().numpy(), np.sort(a_np)[[0, 150_000, -1]])
        p = gsearch.partition(a, [7, 200_000])
        assert p.is_cuda
        check_partitioned(p.cpu().numpy(), a_np, [7, 200_000])
        check_partitioned(a_np[gsearch.argpartition(a, 99).cpu().numpy()], a_np, 99)
        for method in METHODS:
            got = gsearch.quantile(a, 0.3, method=method)
            assert got.is_cuda and got.shape == ()
            same_result(got.cpu().numpy()[()], quiet(np.quantile, a_np, 0.3, method=method))
        same_result(gsearch.nanmedian(a).cpu().numpy()[()], quiet(np.nanmedian, a_np))

    @pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "int64"])
    def test_topk_kthvalue_equal_torch(self, rng, dtype):
        a = torch.from_numpy(random_values(rng, dtype, 4096 * 1024).reshape(4096, 1024)).cuda()
        for k in (1, 64, 1024):
            want = torch.topk(a, k)
            v, i = gsearch.topk(a, k)
            assert v.is_cuda and i.dtype == torch.int64
            assert torch.equal(v.cpu(), want.values.cpu()) or np.array_equal(v.cpu().numpy(), want.values.cpu().numpy(), equal_nan=True)
            assert np.array_equal(torch.gather(a, 1, i).cpu().numpy(), v.cpu().numpy(), equal_nan=True)
        want = torch.kthvalue(a, 100)
        v, i = gsearch.kthvalue(a, 100)
        assert np.array_equal(v.cpu().numpy(), want.values.cpu().numpy(), equal_nan=True)

    def test_no_copy(self, monkeypatch):
        a = torch.rand(1 << 20, device="cuda")
        seen = []
        real = _core.select_pointers  # the torch fast path: the tensor's own data pointer

        def spy(data, n, *args):
            seen.append((data, n))
            return real(data, n, *args)

        monkeypatch.setattr(_core, "select_pointers", spy)
        gsearch.select(a, 5)
        assert seen == [(a.data_ptr(), a.numel())]
        seen = spy_on(monkeypatch, "select")  # the general path (a list of ranks): the tensor itself
        gsearch.select(a, [5])
        assert seen[0][0] == a.data_ptr()


@needs_cupy
class TestCupy:
    def test_gpu_equals_numpy(self, rng):
        a_np = random_values(rng, "float64", 200_000)
        a = cupy.asarray(a_np)
        got = gsearch.quantile(a, [0.1, 0.9])
        assert isinstance(got, cupy.ndarray)
        same_result(cupy.asnumpy(got), np.quantile(a_np, [0.1, 0.9]))
        v, i = gsearch.topk(a, 10, largest=False)
        same_keys(cupy.asnumpy(v), np.sort(a_np)[:10])
        same_keys(cupy.asnumpy(gsearch.select(a, [3])), np.sort(a_np)[[3]])
