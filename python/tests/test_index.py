"""gsearch.Index (the static index, an S+ tree built once and searched many times) and
searchsorted(algo='index'), against numpy.searchsorted; the GPU tests skip without a GPU."""

import numpy as np
import pytest

import gsearch
from gsearch import _core

from conftest import NATIVE_DTYPES, WIDENED_DTYPES, random_values, sorted_keys
from gpu_support import HAVE_CUPY, HAVE_TORCH_CUDA, NO_GSEARCH_CUDA, cupy, needs_cupy, needs_torch, torch  # noqa: F401

SIZES = [0, 1, 2, 15, 16, 17, 100, 272, 273, 5000, 100_000]
SIDES = ["left", "right"]


def queries_for(rng, keys, dtype, n=3000):
    """Random values of dtype, the keys themselves, their neighbours and the dtype's extremes."""
    dt = np.dtype(dtype)
    parts = [random_values(rng, dt, n)]
    if keys.size:
        parts.append(rng.choice(keys, size=min(n, 2 * keys.size)))
    if dt.kind in "iu":
        info = np.iinfo(dt)
        parts.append(np.array([info.min, info.max, 0, 1], dtype=dt))
        if keys.size:  # the neighbours of keys, wrapping harmlessly at the ends
            with np.errstate(over="ignore"):
                parts += [keys[:200] + dt.type(1), keys[:200] - dt.type(1)]
    else:
        fi = np.finfo(dt)
        parts.append(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, fi.max, -fi.max, fi.tiny], dtype=dt))
        if keys.size:
            with np.errstate(over="ignore", invalid="ignore"):
                parts += [np.nextafter(keys[:200], dt.type(np.inf)), np.nextafter(keys[:200], dt.type(-np.inf))]
    return np.concatenate(parts).astype(dt)


def near(keys, dt):
    """Values of dtype dt at and next to the (finite) keys that dt holds."""
    info = np.iinfo(dt) if dt.kind in "iu" else None
    vals = []
    for x in keys[:: max(1, keys.size // 400)].tolist():
        for y in (x - 1, x, x + 1):
            if y != y or y in (float("inf"), float("-inf")):
                continue
            if info is None or info.min <= y <= info.max:
                vals.append(y if info is None else int(y))
    return np.array(vals, dtype=dt)


def check_all_sides(index, keys, v):
    for side in SIDES:
        want = np.searchsorted(keys, v, side=side)
        got = index.searchsorted(v, side=side)
        assert got.dtype == np.int64 and got.shape == np.shape(v)
        np.testing.assert_array_equal(got, want, err_msg=f"side={side}")
    np.testing.assert_array_equal(index.lower_bound(v), np.searchsorted(keys, v, side="left"))
    np.testing.assert_array_equal(index.upper_bound(v), np.searchsorted(keys, v, side="right"))
    np.testing.assert_array_equal(index.predecessor(v), np.searchsorted(keys, v, side="right") - 1)


# --- correctness against numpy ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
@pytest.mark.parametrize("k", SIZES)
def test_against_numpy(rng, dtype, k):
    keys = sorted_keys(rng, dtype, k)
    index = gsearch.Index(keys, check_sorted=True)
    assert index.size == len(index) == k
    assert index.dtype == np.dtype(dtype)
    v = queries_for(rng, keys, dtype)
    check_all_sides(index, keys, v)
    # int32 output
    for side in SIDES:
        got = index.searchsorted(v, side=side, out_int32=True)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, np.searchsorted(keys, v, side=side))
    got = index.predecessor(v, out_int32=True)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.searchsorted(keys, v, side="right") - 1)


@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
@pytest.mark.parametrize("k", [17, 273, 5000, 100_000])
def test_duplicates(rng, dtype, k):
    keys = sorted_keys(rng, dtype, k, duplicates=True)
    index = gsearch.Index(keys)
    check_all_sides(index, keys, queries_for(rng, keys, dtype))


@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
@pytest.mark.parametrize("k", [1, 16, 17, 273, 5000])
def test_all_equal(rng, dtype, k):
    keys = np.full(k, 7, dtype=dtype)
    index = gsearch.Index(keys, check_sorted=True)
    v = np.array([6, 7, 8, 0], dtype=dtype)
    check_all_sides(index, keys, v)
    assert index.searchsorted(7).item() == 0 and index.searchsorted(7, "right").item() == k


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("k", [5, 17, 273, 5000])
def test_float_specials(rng, dtype, k):
    specials = np.array([-np.inf, -1.5, -0.0, 0.0, 0.0, -0.0, 2.5, np.inf, np.nan, np.nan], dtype=dtype)
    keys = np.sort(np.concatenate([specials, random_values(rng, dtype, k)]))
    index = gsearch.Index(keys, check_sorted=True)
    v = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, -1.5, 2.5, 1e-30, -1e-30], dtype=dtype)
    check_all_sides(index, keys, v)
    # -0.0 and 0.0 are one key value; NaN sorts after +inf
    assert index.searchsorted(-0.0) == index.searchsorted(0.0)
    assert index.searchsorted(np.nan, side="right") == keys.size
    assert index.searchsorted(np.nan) == np.count_nonzero(~np.isnan(keys))


@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
def test_queries_outside_the_range(dtype):
    keys = np.arange(100, 200, dtype=dtype)
    index = gsearch.Index(keys)
    dt = np.dtype(dtype)
    lo, hi = (np.iinfo(dt).min, np.iinfo(dt).max) if dt.kind in "iu" else (-np.inf, np.inf)
    v = np.array([lo, 0, 99, 200, 1000, hi], dtype=dtype)
    check_all_sides(index, keys, v)
    np.testing.assert_array_equal(index.predecessor(v), [-1, -1, -1, 99, 99, 99])


def test_empty_index():
    for dtype in NATIVE_DTYPES:
        index = gsearch.Index(np.array([], dtype=dtype))
        assert len(index) == 0 and index.size == 0
        v = np.array([0, 1, 2], dtype=dtype)
        np.testing.assert_array_equal(index.searchsorted(v), [0, 0, 0])
        np.testing.assert_array_equal(index.searchsorted(v, "right"), [0, 0, 0])
        np.testing.assert_array_equal(index.predecessor(v), [-1, -1, -1])
        assert index.searchsorted(5) == 0 and index.predecessor(5) == -1


@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 4), (2, 3, 5), (2, 0, 3)])
def test_nd_queries(rng, shape):
    keys = np.sort(rng.integers(-1000, 1000, 5000)).astype(np.int32)
    index = gsearch.Index(keys)
    v = rng.integers(-1100, 1100, shape).astype(np.int32)
    for side in SIDES:
        got = index.searchsorted(v, side=side)
        assert np.shape(got) == shape and (isinstance(got, np.ndarray) or shape == ())
        np.testing.assert_array_equal(got, np.searchsorted(keys, v, side=side))
    assert index.predecessor(v).shape == shape


def test_non_contiguous_and_byte_swapped_inputs(rng):
    keys = np.sort(rng.integers(-1000, 1000, 4000)).astype(np.int64)
    index = gsearch.Index(keys[::2])  # strided keys: copied once
    v = rng.integers(-1100, 1100, (40, 30))
    check_all_sides(index, keys[::2], v[:, ::3])
    swapped = gsearch.Index(keys.astype(">i8"))
    assert swapped.dtype == np.dtype("int64")
    check_all_sides(swapped, keys, v.astype(">i8"))


def test_scalar_queries():
    keys = np.array([1, 3, 3, 5, 9], dtype=np.int32)
    index = gsearch.Index(keys)
    for q in [0, 1, 3, 4, 9, 10, np.int32(3), np.int64(3), np.uint8(3), True]:
        for side in SIDES:
            got = index.searchsorted(q, side=side)
            assert isinstance(got, np.integer) and got.dtype == np.int64
            assert got == np.searchsorted(keys, q, side=side), (q, side)
        assert index.predecessor(q) == np.searchsorted(keys, q, side="right") - 1
    # Python scalars compare exactly: out of the dtype's range, between two keys, NaN last
    assert index.searchsorted(2**40) == 5 and index.searchsorted(-(2**40)) == 0
    assert index.searchsorted(3.5) == 3 and index.searchsorted(3.0) == 1
    assert index.searchsorted(3.0, side="right") == 3
    assert index.searchsorted(float("nan")) == 5 and index.searchsorted(float("-inf")) == 0
    assert index.predecessor(0.5) == -1 and index.predecessor(float("inf")) == 4
    assert index.searchsorted(np.float64(3.5)) == 3
    assert index.searchsorted(np.array(4)) == 3  # a 0-d array: a 0-d result as numpy gives
    f = gsearch.Index(np.array([0.1, 0.5, 1.0], dtype=np.float32))
    assert f.searchsorted(0.1) == np.searchsorted(np.array([0.1, 0.5, 1.0], dtype=np.float32).astype(np.float64), 0.1)
    assert f.searchsorted(2**200) == 3 and f.searchsorted(-(2**200)) == 0


@pytest.mark.parametrize(
    "kd, vd",
    [
        ("int32", "int64"),
        ("int32", "uint32"),
        ("int32", "float64"),
        ("int32", "float32"),
        ("uint32", "int64"),
        ("uint32", "uint64"),
        ("uint32", "int32"),
        ("uint32", "float64"),
        ("float32", "float64"),
        ("float32", "int32"),
        ("float32", "uint32"),
        ("float64", "int32"),
        ("float64", "float32"),
        ("int64", "int32"),
        ("int64", "uint32"),
        ("uint64", "uint32"),
    ],
)
def test_query_dtype_promotion(rng, kd, vd):
    """Queries of another dtype give numpy's answers in numpy's (exact) promoted dtype, also
    where that is wider than the index's dtype (the queries are rounded / clamped exactly)."""
    kdt, vdt = np.dtype(kd), np.dtype(vd)
    keys = sorted_keys(rng, kd, 3000)
    if kdt.kind in "iu":
        ends = np.array([np.iinfo(kdt).min, np.iinfo(kdt).max], dtype=kdt)
        keys = np.concatenate([ends[:1], keys[1:-1], ends[1:]])
    index = gsearch.Index(keys)
    v = np.concatenate([queries_for(rng, np.array([], dtype=vdt), vd), near(keys, vdt)])
    if vdt.kind == "f" and kdt.kind in "iu":  # fractions and values beyond the keys' range
        extra = np.concatenate([keys[:300].astype(np.float64) + rng.uniform(-1, 1, 300), [2.0**40, -(2.0**40)]])
        with np.errstate(over="ignore", invalid="ignore"):
            v = np.concatenate([v, extra.astype(vdt)])
    if kdt == np.float32 and vdt == np.float64:  # between float32 values, beyond float32's range
        extra = keys[np.isfinite(keys)][:300].astype(np.float64) * (1 + 1e-12)
        v = np.concatenate([v, extra, [1e39, -1e39, 1e-50, -1e-50, 1e300]])
    p = np.result_type(kdt, vdt)
    for side in SIDES:
        want = np.searchsorted(keys.astype(p), v.astype(p), side=side)
        np.testing.assert_array_equal(index.searchsorted(v, side=side), want, err_msg=side)
        out = np.empty(v.shape, np.int32)
        assert index.searchsorted(v, side=side, out=out, out_int32=True) is out
        np.testing.assert_array_equal(out, want)
    want = np.searchsorted(keys.astype(p), v.astype(p), side="right") - 1
    np.testing.assert_array_equal(index.predecessor(v), want)
    # N-D and 0-d queries of a wider dtype keep their shape
    v2 = v[: (v.size // 6) * 6].reshape(2, 3, -1)
    np.testing.assert_array_equal(index.searchsorted(v2), np.searchsorted(keys.astype(p), v2.astype(p)))
    np.testing.assert_array_equal(index.searchsorted(v[:1].reshape(())), np.searchsorted(keys.astype(p), v[0].astype(p)))


def test_python_sequences_as_queries():
    keys = np.array([10, 20, 30], dtype=np.int32)
    index = gsearch.Index(keys)
    np.testing.assert_array_equal(index.searchsorted([5, 20, 25, 2**40]), [0, 1, 2, 3])
    np.testing.assert_array_equal(index.searchsorted([[5.5, 20.0], [20.5, -1e30]], "right"), [[0, 2], [2, 0]])
    assert index.searchsorted([]).shape == (0,)


def test_lossy_query_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="convert"):
        gsearch.Index(np.arange(10, dtype=np.int64)).searchsorted(np.array([1.5]))
    with pytest.raises(TypeError):
        gsearch.Index(np.arange(10, dtype=np.uint64)).searchsorted(np.array([1], dtype=np.int64))
    with pytest.raises(TypeError):
        gsearch.Index(np.arange(10, dtype=np.int64)).searchsorted(1.5)  # as gsearch.searchsorted
    with pytest.raises(TypeError):
        gsearch.Index(np.arange(10, dtype=np.int32)).searchsorted(np.array([1 + 2j]))
    with pytest.raises(TypeError):
        gsearch.Index(np.arange(10, dtype=np.int32)).searchsorted(np.array(["a"]))


@pytest.mark.parametrize("dtype", WIDENED_DTYPES)
def test_narrow_key_dtypes_are_widened(rng, dtype):
    keys = sorted_keys(rng, dtype, 300)
    index = gsearch.Index(keys)
    assert index.dtype == (np.dtype("float32") if dtype == "float16" else np.dtype("int32"))
    v = random_values(rng, dtype, 500)
    check_all_sides(index, keys, v)


def test_right_flag_and_side_errors():
    keys = np.array([1, 2, 2, 3], dtype=np.int64)
    index = gsearch.Index(keys)
    v = np.array([2, 2])
    np.testing.assert_array_equal(index.searchsorted(v, right=True), [3, 3])
    np.testing.assert_array_equal(index.searchsorted(v, "right", right=False), [3, 3])
    with pytest.raises(ValueError):
        index.searchsorted(v, side="left", right=True)
    with pytest.raises(ValueError):
        index.searchsorted(v, side="middle")
    with pytest.raises(TypeError):
        index.searchsorted(v, side=1)
    with pytest.raises(TypeError):
        index.searchsorted(v, out_int32="yes")


# --- out= ----------------------------------------------------------------------------------------


def test_out_argument():
    keys = np.array([1, 3, 5, 7], dtype=np.float64)
    index = gsearch.Index(keys)
    v = np.array([[0.0, 3.0], [6.0, 8.0]])
    out = np.full((2, 2), -7, dtype=np.int64)
    assert index.searchsorted(v, out=out) is out
    np.testing.assert_array_equal(out, [[0, 1], [3, 4]])
    out32 = np.empty((2, 2), dtype=np.int32)
    assert index.upper_bound(v, out=out32, out_int32=True) is out32
    np.testing.assert_array_equal(out32, [[0, 2], [3, 4]])
    assert index.predecessor(v, out=out) is out
    np.testing.assert_array_equal(out, [[-1, 1], [2, 3]])
    s = np.empty((), dtype=np.int64)
    assert index.searchsorted(4.0, out=s) is s and s == 2

    with pytest.raises(ValueError, match="shape"):
        index.searchsorted(v, out=np.empty(4, dtype=np.int64))
    with pytest.raises(TypeError, match="dtype"):
        index.searchsorted(v, out=np.empty((2, 2), dtype=np.int32))  # int32 without out_int32
    with pytest.raises(TypeError, match="dtype"):
        index.searchsorted(v, out=np.empty((2, 2), dtype=np.float64))
    with pytest.raises(ValueError, match="contiguous"):
        index.searchsorted(v, out=np.empty((2, 4), dtype=np.int64)[:, ::2])
    ro = np.empty((2, 2), dtype=np.int64)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        index.searchsorted(v, out=ro)
    with pytest.raises(ValueError):
        index.searchsorted(v, out=[[0, 0], [0, 0]])


# --- construction errors and properties -------------------------------------------------------


def test_unsorted_keys_raise_by_default(monkeypatch):
    # The keys are checked by default (the build reads them anyway): ValueError naming them.
    for keys in (np.array([3, 1, 2], dtype=np.int32), np.array([1.0, np.nan, 2.0]), [2, 1]):
        with pytest.raises(ValueError, match="keys are not sorted.*check_sorted=False"):
            gsearch.Index(keys)
    # check_sorted=False skips the check (the old default): no error, in-range results.
    index = gsearch.Index(np.array([3, 1, 2], dtype=np.int32), check_sorted=False)
    r = index.searchsorted(np.array([0, 2, 5], dtype=np.int32))
    assert ((0 <= r) & (r <= 3)).all()
    # One O(K) check per build, none with check_sorted=False, none per search.
    calls = []
    real = _core.is_sorted
    monkeypatch.setattr(_core, "is_sorted", lambda *args: calls.append(1) or real(*args))
    index = gsearch.Index(np.arange(1000))
    index.searchsorted(np.array([5, 3]))
    assert calls == [1]
    gsearch.Index(np.arange(1000), check_sorted=False)
    assert calls == [1]


def test_construction_errors():
    with pytest.raises(ValueError, match="1-D"):
        gsearch.Index(np.zeros((2, 3), dtype=np.int32))
    with pytest.raises(ValueError, match="1-D"):
        gsearch.Index(np.zeros((), dtype=np.int32))
    with pytest.raises(ValueError, match="scalar"):
        gsearch.Index(5)
    with pytest.raises(TypeError, match="unsupported"):
        gsearch.Index(np.array([1 + 1j, 2 + 0j]))
    with pytest.raises(TypeError, match="unsupported"):
        gsearch.Index(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="unsupported"):
        gsearch.Index(np.array([1, 2], dtype=object))
    with pytest.raises(ValueError, match="sorted"):
        gsearch.Index(np.array([3, 1, 2], dtype=np.int32), check_sorted=True)
    with pytest.raises(ValueError, match="sorted"):
        gsearch.Index(np.array([1.0, np.nan, 2.0]), check_sorted=True)  # NaN sorts last
    with pytest.raises(TypeError):
        gsearch.Index(np.array([1, 2]), check_sorted="yes")
    with pytest.raises(ValueError, match="stream"):
        gsearch.Index(np.array([1, 2]), stream=0)
    index = gsearch.Index(np.array([1, 2]))
    with pytest.raises(ValueError, match="stream"):
        index.searchsorted(np.array([1]), stream=0)
    # unsorted keys with check_sorted=False: no error (in-range, unspecified results)
    r = gsearch.Index(np.array([3, 1, 2], dtype=np.int32), check_sorted=False).searchsorted(np.array([0, 2, 5], dtype=np.int32))
    assert ((0 <= r) & (r <= 3)).all()
    # sorted keys pass the check, -0.0 == 0.0
    gsearch.Index(np.array([-1.0, 0.0, -0.0, 0.0, np.inf, np.nan]), check_sorted=True)


@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
@pytest.mark.parametrize("k", [0, 1, 16, 17, 273, 5000, 100_000])
def test_properties(dtype, k):
    keys = np.arange(k).astype(dtype)
    index = gsearch.Index(keys)
    item = np.dtype(dtype).itemsize
    assert index.size == len(index) == k and isinstance(index.size, int)
    assert index.dtype == np.dtype(dtype)
    assert index.device == "cpu"
    assert index.node_keys == 64 // item  # one cache line per node on the CPU
    b = index.node_keys
    assert index.levels >= 1
    assert index.nbytes % 64 == 0 and index.nbytes >= k * item
    if k >= 5000:  # keys + about 1/B of them, rounded to nodes
        assert index.nbytes <= k * item * (1 + 2 / b) + 64 * index.levels * 2
    r = repr(index)
    assert r.startswith("gsearch.Index(") and f"size={k}" in r and np.dtype(dtype).name in r and "cpu" in r
    assert "gsearch._core.Index" in repr(index._ix)
    assert not index._ix.on_device and index._ix.device == -1


def test_levels_grow_with_the_keys():
    levels = [gsearch.Index(np.arange(k, dtype=np.int32)).levels for k in (1, 16, 17, 17 * 16, 17 * 17 * 16 + 1)]
    assert levels == sorted(levels) and levels[0] == 1 and levels[-1] >= 3


def test_the_index_keeps_its_own_copy(rng):
    keys = np.sort(rng.integers(0, 1000, 5000)).astype(np.int64)
    want = keys.copy()
    index = gsearch.Index(keys)
    keys[:] = 0  # the caller's array changes
    del keys
    v = rng.integers(-10, 1010, 1000)
    np.testing.assert_array_equal(index.searchsorted(v), np.searchsorted(want, v))


def test_large_calls_release_the_gil(rng):
    import threading

    keys = np.sort(rng.integers(0, 10**9, 200_000))
    index = gsearch.Index(keys)
    v = rng.integers(0, 10**9, 300_000)
    want = np.searchsorted(keys, v, side="right")
    results = [None] * 4

    def work(i):
        results[i] = index.upper_bound(v)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, want)


def test_core_index_checks():
    ix = _core.Index(np.arange(10, dtype=np.int32))
    out = np.empty(3, dtype=np.int64)
    with pytest.raises(TypeError):
        ix.search(np.arange(3, dtype=np.int64), out, 0)  # the index's dtype only
    with pytest.raises(ValueError):
        ix.search(np.arange(4, dtype=np.int32), out, 0)  # size mismatch
    with pytest.raises(ValueError):
        ix.search(np.arange(3, dtype=np.int32), out, 3)  # side
    with pytest.raises(TypeError):
        ix.search(np.arange(3, dtype=np.int32), np.empty(3, dtype=np.float32), 0)
    with pytest.raises(ValueError):
        ix.search(np.arange(6, dtype=np.int32)[::2], out, 0)  # not contiguous
    with pytest.raises(ValueError):
        _core.Index(np.arange(10, dtype=np.int32)[::2])
    with pytest.raises(TypeError):
        _core.Index(np.arange(10, dtype=np.int16))
    ix.search(np.array([0, 5, 100], dtype=np.int32), out, 2)
    assert out.tolist() == [0, 5, 9]


# --- searchsorted(algo='index') ---------------------------------------------------------------


def test_index_is_an_algorithm():
    assert "index" in _core.ALGORITHMS
    assert _core.keys_beyond_shared(False, 4, 10**9) is False  # always False on the CPU


@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
@pytest.mark.parametrize("k", [0, 1, 17, 273, 5000, 100_000])
def test_searchsorted_algo_index(rng, dtype, k):
    keys = sorted_keys(rng, dtype, k)
    v = queries_for(rng, keys, dtype).reshape(-1)
    for side in SIDES:
        got = gsearch.searchsorted(keys, v, side=side, algo="index")
        np.testing.assert_array_equal(got, np.searchsorted(keys, v, side=side))
        got32 = gsearch.searchsorted(keys, v, side=side, algo="index", out_int32=True)
        assert got32.dtype == np.int32
        np.testing.assert_array_equal(got32, np.searchsorted(keys, v, side=side))
    np.testing.assert_array_equal(
        gsearch.predecessor(keys, v, algo="index"), np.searchsorted(keys, v, side="right") - 1
    )
    assert gsearch.searchsorted(keys, v[:1].reshape(()), algo="index") == np.searchsorted(keys, v[0])


def test_searchsorted_algo_index_options(rng):
    keys = np.sort(rng.integers(0, 1000, 3000)).astype(np.int32)
    v = rng.integers(-5, 1005, (4, 50)).astype(np.int32)
    want = np.searchsorted(keys, v)
    np.testing.assert_array_equal(gsearch.searchsorted(keys, v, algo="index", check_sorted=True), want)
    with pytest.raises(ValueError, match="sorted"):
        gsearch.searchsorted(keys[::-1].copy(), v, algo="index", check_sorted=True)
    # N-D keys (one key list per row) run 'index' as 'auto'
    rows = np.sort(rng.integers(0, 100, (3, 40)), axis=-1)
    q = rng.integers(-5, 105, (3, 25))
    got = gsearch.searchsorted(rows, q, algo="index")
    np.testing.assert_array_equal(got, np.stack([np.searchsorted(rows[i], q[i]) for i in range(3)]))
    np.testing.assert_array_equal(gsearch.bucketize(v, keys, algo="index"), want)
    lo, hi = gsearch.equal_range(keys, v, algo="index")
    np.testing.assert_array_equal(hi, np.searchsorted(keys, v, side="right"))
    with pytest.raises(ValueError, match="algo"):
        gsearch.searchsorted(keys, v, algo="tree")


def test_auto_picks_index_for_many_queries_and_stays_right(rng):
    # Large keys and as many queries: 'auto' takes the index on the CPU (the answers are numpy's).
    keys = np.sort(rng.integers(-(2**40), 2**40, 1 << 17))
    v = rng.integers(-(2**41), 2**41, 1 << 17)
    for side in SIDES:
        np.testing.assert_array_equal(gsearch.searchsorted(keys, v, side=side), np.searchsorted(keys, v, side=side))


# --- GPU ------------------------------------------------------------------------------------------

NATIVE_TORCH = ["int32", "int64", "float32", "float64"]


@needs_torch
class TestTorch:
    @pytest.mark.parametrize("dtype", NATIVE_TORCH)
    @pytest.mark.parametrize("k", [0, 1, 17, 273, 5000, 100_000])
    def test_against_torch_and_numpy(self, dtype, k):
        g = np.random.default_rng(k)
        keys_np = np.sort(g.integers(-(10**6), 10**6, k)).astype(dtype)
        v_np = g.integers(-(10**6) - 10, 10**6 + 10, (3, 777)).astype(dtype)
        keys, v = torch.from_numpy(keys_np).cuda(), torch.from_numpy(v_np).cuda()
        index = gsearch.Index(keys, check_sorted=True)
        assert index.device == keys.device and len(index) == k and index.dtype == np.dtype(dtype)
        assert index._ix.on_device and index.node_keys == 16 // np.dtype(dtype).itemsize  # 16-byte GPU nodes
        for side in SIDES:
            got = index.searchsorted(v, side=side)
            assert isinstance(got, torch.Tensor) and got.device == v.device and got.dtype == torch.int64
            assert got.shape == v.shape
            assert torch.equal(got, torch.searchsorted(keys, v, side=side))
            np.testing.assert_array_equal(got.cpu().numpy(), np.searchsorted(keys_np, v_np, side=side))
            got32 = index.searchsorted(v, side=side, out_int32=True)
            assert got32.dtype == torch.int32
            assert torch.equal(got32.long(), got)
        pred = index.predecessor(v)
        np.testing.assert_array_equal(pred.cpu().numpy(), np.searchsorted(keys_np, v_np, side="right") - 1)
        assert torch.equal(index.lower_bound(v), torch.searchsorted(keys, v))
        assert torch.equal(index.upper_bound(v), torch.searchsorted(keys, v, right=True))

    def test_float_specials(self):
        keys_np = np.array([-np.inf, -1.0, -0.0, 0.0, 2.0, np.inf, np.nan], dtype=np.float32)
        index = gsearch.Index(torch.from_numpy(keys_np).cuda())
        v_np = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 1.0, 3.0], dtype=np.float32)
        v = torch.from_numpy(v_np).cuda()
        for side in SIDES:
            np.testing.assert_array_equal(
                index.searchsorted(v, side=side).cpu().numpy(), np.searchsorted(keys_np, v_np, side=side)
            )

    def test_scalar_and_out(self):
        keys = torch.tensor([1, 3, 5, 7], dtype=torch.int32, device="cuda")
        index = gsearch.Index(keys)
        r = index.searchsorted(4)
        assert isinstance(r, torch.Tensor) and r.shape == () and r.is_cuda and r.item() == 2
        assert index.searchsorted(2**40).item() == 4 and index.predecessor(0.5).item() == -1
        v = torch.tensor([[0, 3], [6, 8]], dtype=torch.int32, device="cuda")
        out = torch.empty((2, 2), dtype=torch.int64, device="cuda")
        assert index.searchsorted(v, out=out) is out
        assert out.tolist() == [[0, 1], [3, 4]]
        with pytest.raises(ValueError):
            index.searchsorted(v, out=torch.empty(4, dtype=torch.int64, device="cuda"))
        with pytest.raises(TypeError):
            index.searchsorted(v, out=torch.empty((2, 2), dtype=torch.int32, device="cuda"))
        with pytest.raises(ValueError):
            index.searchsorted(v, out=torch.empty((2, 2), dtype=torch.int64))  # on the CPU

    def test_queries_on_another_device_are_a_value_error(self):
        index = gsearch.Index(torch.arange(100, dtype=torch.int64, device="cuda"))
        with pytest.raises(ValueError, match="cuda:.*the CPU|the CPU.*cuda:"):
            index.searchsorted(torch.arange(5, dtype=torch.int64))  # a CPU tensor
        with pytest.raises(ValueError, match="cuda"):
            index.searchsorted(np.arange(5, dtype=np.int64))
        cpu_index = gsearch.Index(np.arange(100, dtype=np.int64))
        with pytest.raises(ValueError, match="cuda"):
            cpu_index.searchsorted(torch.arange(5, dtype=torch.int64, device="cuda"))

    def test_no_copy_of_the_keys(self, monkeypatch):
        keys = torch.arange(10_000, dtype=torch.float32, device="cuda")
        seen = []
        real = _core.Index

        def spy(k, *args):
            seen.append(_core._data_pointer(k))
            return real(k, *args)

        monkeypatch.setattr(_core, "Index", spy)
        gsearch.Index(keys)
        assert seen == [keys.data_ptr()]

    def test_keys_can_be_freed_and_streams(self):
        keys = torch.sort(torch.randint(0, 10**6, (200_000,), device="cuda")).values
        keys_np = keys.cpu().numpy()
        s = torch.cuda.Stream()
        index = gsearch.Index(keys, stream=s)
        del keys
        torch.cuda.empty_cache()
        torch.empty(200_000, dtype=torch.int64, device="cuda").fill_(-1)  # reuse the memory
        v = torch.randint(-10, 10**6 + 10, (100_000,), device="cuda")
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):  # the index searched on another stream than its build's
            got = index.searchsorted(v)
        got2 = index.searchsorted(v, stream=s)
        s.synchronize()
        got = got.cpu()
        want = np.searchsorted(keys_np, v.cpu().numpy())
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(got2.cpu().numpy(), want)
        assert index.nbytes >= 200_000 * 8

    def test_wider_queries_and_widened_keys(self):
        keys_np = np.sort(np.random.default_rng(3).integers(-1000, 1000, 3000)).astype(np.int32)
        index = gsearch.Index(torch.from_numpy(keys_np).cuda())
        v_np = np.array([-(2**40), -1001, -5, 0, 999, 1000, 2**40], dtype=np.int64)
        got = index.searchsorted(torch.from_numpy(v_np).cuda(), side="right")
        np.testing.assert_array_equal(got.cpu().numpy(), np.searchsorted(keys_np, v_np, side="right"))
        f_np = np.array([-1e12, -5.5, 0.5, 999.5, 1e12, np.nan])
        got = index.searchsorted(torch.from_numpy(f_np).cuda())
        np.testing.assert_array_equal(got.cpu().numpy(), np.searchsorted(keys_np, f_np))
        h = gsearch.Index(torch.tensor([1.0, 2.5, 4.0], dtype=torch.float16, device="cuda"))
        assert h.dtype == np.float32
        assert h.searchsorted(torch.tensor([2.5], dtype=torch.float16, device="cuda"), side="right").item() == 2

    def test_errors(self):
        with pytest.raises(ValueError, match="1-D"):
            gsearch.Index(torch.zeros((2, 2), device="cuda"))
        with pytest.raises(ValueError, match="sorted"):
            gsearch.Index(torch.tensor([3, 1, 2], device="cuda"), check_sorted=True)
        with pytest.raises(ValueError, match="keys are not sorted"):  # checked by default
            gsearch.Index(torch.tensor([3, 1, 2], device="cuda"))
        index = gsearch.Index(torch.tensor([3, 1, 2], device="cuda"), check_sorted=False)
        assert 0 <= index.searchsorted(2).item() <= 3
        with pytest.raises(TypeError):
            gsearch.Index(torch.zeros(3, dtype=torch.complex64, device="cuda"))

    @pytest.mark.parametrize("dtype", NATIVE_TORCH)
    def test_searchsorted_algo_index(self, dtype):
        g = np.random.default_rng(7)
        a_np = np.sort(g.integers(0, 100_000, 300_000)).astype(dtype)
        v_np = g.integers(-10, 100_010, 200_000).astype(dtype)
        a, v = torch.from_numpy(a_np).cuda(), torch.from_numpy(v_np).cuda()
        for side in SIDES:
            got = gsearch.searchsorted(a, v, side=side, algo="index")
            np.testing.assert_array_equal(got.cpu().numpy(), np.searchsorted(a_np, v_np, side=side))
            got = gsearch.searchsorted(a, v, side=side)  # auto: the index here (q >= k / 8)
            np.testing.assert_array_equal(got.cpu().numpy(), np.searchsorted(a_np, v_np, side=side))
        got = gsearch.predecessor(a, v, algo="index", out_int32=True)
        np.testing.assert_array_equal(got.cpu().numpy(), np.searchsorted(a_np, v_np, side="right") - 1)

    @pytest.mark.skipif(not HAVE_TORCH_CUDA or torch.cuda.device_count() < 2, reason="needs two GPUs")
    def test_second_device(self):
        keys = torch.arange(0, 2000, 2, dtype=torch.int64, device="cuda:1")
        index = gsearch.Index(keys)
        assert index.device == torch.device("cuda", 1)
        with torch.cuda.device(0):
            got = index.searchsorted(torch.tensor([3, 4], device="cuda:1"))
            assert torch.cuda.current_device() == 0
        assert got.tolist() == [2, 2]
        with pytest.raises(ValueError, match="cuda:1.*cuda:0"):
            index.searchsorted(torch.tensor([3, 4], device="cuda:0"))
        del index  # freed with its device current


@needs_cupy
class TestCupy:
    @pytest.mark.parametrize("dtype", NATIVE_DTYPES)
    def test_against_numpy(self, dtype):
        g = np.random.default_rng(11)
        keys_np = np.sort(g.integers(0, 100_000, 50_000)).astype(dtype)
        v_np = g.integers(-10, 100_010, (7, 999)).astype(dtype)
        index = gsearch.Index(cupy.asarray(keys_np))
        assert index.device == cupy.cuda.Device(0) and index.dtype == np.dtype(dtype)
        v = cupy.asarray(v_np)
        for side in SIDES:
            got = index.searchsorted(v, side=side)
            assert isinstance(got, cupy.ndarray) and got.shape == v.shape and got.dtype == np.int64
            np.testing.assert_array_equal(cupy.asnumpy(got), np.searchsorted(keys_np, v_np, side=side))
        np.testing.assert_array_equal(
            cupy.asnumpy(index.predecessor(v, out_int32=True)), np.searchsorted(keys_np, v_np, side="right") - 1
        )

    def test_device_mismatch_and_stream(self):
        index = gsearch.Index(cupy.arange(100, dtype=cupy.int64))
        with pytest.raises(ValueError, match="cuda"):
            index.searchsorted(np.arange(5, dtype=np.int64))
        s = cupy.cuda.Stream(non_blocking=True)
        got = index.searchsorted(cupy.arange(5, dtype=cupy.int64), side="right", stream=s)
        s.synchronize()
        assert cupy.asnumpy(got).tolist() == [1, 2, 3, 4, 5]
        got = gsearch.searchsorted(cupy.arange(100, dtype=cupy.int64), cupy.arange(5, dtype=cupy.int64), algo="index")
        assert cupy.asnumpy(got).tolist() == [0, 1, 2, 3, 4]
