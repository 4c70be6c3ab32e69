"""gsearch.searchsorted on numpy inputs (the CPU backend) against numpy.searchsorted."""

import math

import numpy as np
import pytest

import gsearch
from conftest import ALGOS, ALL_DTYPES, NATIVE_DTYPES, random_values, sorted_keys
from references import ref_argsort, widen


def check(a, v, side="left", sorter=None, **kw):
    got = gsearch.searchsorted(a, v, side=side, sorter=sorter, **kw)
    want = np.searchsorted(a, v, side=side, sorter=sorter)
    assert type(got) is type(want), (type(got), type(want))
    np.testing.assert_array_equal(got, want)
    assert np.asarray(got).dtype == np.int64
    return got


# --- every dtype, both sides, sizes -------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("k", [0, 1, 2, 31, 32, 33, 1000, 5000])
def test_random_against_numpy(rng, dtype, side, k):
    a = sorted_keys(rng, dtype, k)
    v = random_values(rng, dtype, 257)
    check(a, v, side)
    check(a, a, side)  # every key as a query


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("side", ["left", "right"])
def test_duplicates_and_equal_keys(rng, dtype, side):
    a = sorted_keys(rng, dtype, 3000, duplicates=True)
    check(a, np.concatenate([a, random_values(rng, dtype, 100)]), side)
    same = np.full(100, a[len(a) // 2])
    check(same, np.concatenate([same[:3], random_values(rng, dtype, 50)]), side)


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "int8", "uint8", "int16", "uint16"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_integer_extremes(dtype, side):
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    a = np.array([lo, lo, lo + 1, 0 if lo < 0 else lo + 2, hi - 1, hi, hi], dtype=dtype)
    a.sort()
    v = np.array([lo, lo + 1, hi - 1, hi, (lo + hi) // 2], dtype=dtype)
    check(a, v, side)
    check(a, v[::-1].copy(), side)  # queries in descending order
    check(a[:0], v, side)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_nan_inf_negative_zero(dtype, side):
    a = np.array([-np.inf, -1.0, -0.0, 0.0, 0.0, 1.0, np.inf, np.nan, np.nan], dtype=dtype)
    v = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30, -1e-30, 1.0, 2.0], dtype=dtype)
    check(a, v, side)
    # -0.0 and 0.0 are equal: the two orders of them are both sorted.
    b = np.array([0.0, -0.0, 0.0, -0.0], dtype=dtype)
    check(b, np.array([0.0, -0.0], dtype=dtype), side, check_sorted=True)
    # All NaN keys.
    check(np.full(5, np.nan, dtype=dtype), v, side)


def test_all_queries_below_and_above(rng):
    a = np.arange(100, 200, dtype=np.int64)
    check(a, np.arange(0, 100, dtype=np.int64))
    check(a, np.arange(200, 300, dtype=np.int64), "right")


# --- shapes: scalars, 0-d, N-D queries, empty ---------------------------------------------------


@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
def test_scalar_and_0d_queries(dtype):
    a = np.array([1, 2, 2, 3, 5], dtype=dtype)
    for v in (np.array(2, dtype=dtype), a.dtype.type(2), 2, 4, 0, 9, True):
        for side in ("left", "right"):
            got = check(a, v, side)
            assert isinstance(got, np.integer)
    if np.dtype(dtype).kind == "f" or np.dtype(dtype).itemsize < 8:
        check(a, 2.5)
        check(a, -0.0)
        check(a, float("nan"))


def test_nd_queries_and_views(rng):
    a = np.sort(rng.integers(-1000, 1000, 300))
    v = rng.integers(-1200, 1200, (4, 5, 6))
    check(a, v)
    check(a, v, "right")
    check(a, v[:, ::2, 1:])  # non-contiguous queries are copied
    check(a[::2], v)  # non-contiguous keys too
    check(a, v.T)
    check(a, np.asfortranarray(v))
    check(a, [[1, 2], [3, 4]])
    check(a.tolist(), v)  # keys from a list


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 2)])
def test_empty_queries(shape):
    a = np.array([1.0, 2.0, 3.0])
    got = check(a, np.zeros(shape))
    assert got.shape == shape


def test_empty_keys():
    check(np.array([], dtype=np.float64), np.array([1.0, np.nan, -np.inf]))
    check(np.array([], dtype=np.int32), np.array([], dtype=np.int32))
    check(np.array([], dtype=np.int32), 5)


def test_big_endian_and_readonly(rng):
    a = np.sort(rng.integers(0, 1000, 100)).astype(">i8")
    v = rng.integers(0, 1000, 50).astype(">i8")
    check(a, v)
    a2 = np.sort(rng.random(100))
    a2.setflags(write=False)
    v2 = rng.random(10)
    v2.setflags(write=False)
    check(a2, v2)


# --- sorter -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("side", ["left", "right"])
def test_sorter(rng, dtype, side):
    a = random_values(rng, dtype, 500)
    sorter = ref_argsort(a)
    v = random_values(rng, dtype, 100)
    check(a, v, side, sorter=sorter)
    check(a, v, side, sorter=sorter.astype(np.int32))
    check(a, v, side, sorter=sorter.tolist())


def test_sorter_errors():
    a = np.array([3, 1, 2])
    with pytest.raises(ValueError, match="sorter.size must equal a.size"):
        gsearch.searchsorted(a, 2, sorter=[0, 1])  # numpy's words
    with pytest.raises(TypeError):
        gsearch.searchsorted(a, 2, sorter=[1.0, 2.0, 0.0])  # numpy: integers only
    with pytest.raises(TypeError):
        gsearch.searchsorted(a, 2, sorter=[[1, 2, 0]])  # numpy: could not parse
    # Out of range: numpy checks only the indices its search touches; gsearch checks all when it
    # gathers the keys (the library, naming the first position; here 4 queries in 3 keys, more
    # than cpu_sorter_in_place searches through the sorter), those its search reads when it
    # searches through the sorter (below), and none when there are no queries (numpy's answer).
    many = [2, 3, 2, 3]
    with pytest.raises(ValueError, match=r"Sorter index out of range: sorter\[2\]"):
        gsearch.searchsorted(a, many, sorter=[1, 2, 3])
    with pytest.raises(ValueError, match=r"Sorter index out of range: sorter\[1\]"):
        gsearch.searchsorted(a, many, sorter=[1, -1, 5])
    with pytest.raises(ValueError, match="Sorter index out of range"):
        gsearch.equal_range(a, many, sorter=[1, 2, 3])
    with pytest.raises(ValueError, match="Sorter index out of range"):
        np.searchsorted(a, [0, 1, 2, 3, 4], sorter=[1, 2, 3])
    with pytest.raises(ValueError, match="Sorter index out of range"):  # 2**63 wraps negative
        gsearch.searchsorted(a, many, sorter=np.array([1, 2, 2**63], dtype=np.uint64))
    empty = np.array([], dtype=a.dtype)
    check(a, empty, sorter=[1, 2, 3])
    check(a, empty, sorter=[1, -2, 0])
    with pytest.raises(ValueError, match="sorter.size must equal a.size"):
        gsearch.searchsorted(a, empty, sorter=[1, 2])
    # check_sorted checks the keys in sorter's order.
    assert gsearch.searchsorted(a, 2, sorter=[1, 2, 0], check_sorted=True) == 1
    with pytest.raises(ValueError, match=r"keys\[sorter\] are not sorted"):
        gsearch.searchsorted(a, 2, sorter=[0, 1, 2], check_sorted=True)
    # max_temp_bytes: the results' copy of the search through the sorter (one int64) and the
    # gathered keys (3 int64) count.
    with pytest.raises(ValueError, match="max_temp_bytes = 7"):
        gsearch.searchsorted(a, 2, sorter=[1, 2, 0], max_temp_bytes=7)
    assert gsearch.searchsorted(a, 2, sorter=[1, 2, 0], max_temp_bytes=8) == 1
    assert gsearch.searchsorted(a, many, sorter=[1, 2, 0], max_temp_bytes=24).tolist() == [1, 2, 1, 2]
    with pytest.raises(ValueError, match="max_temp_bytes = 23"):
        gsearch.searchsorted(a, many, sorter=[1, 2, 0], max_temp_bytes=23)


def test_sorter_few_queries_read_in_place(rng):
    # Few queries in many keys: searched through the sorter in place, numpy's way (cpu_sorter_in_place):
    # numpy's answers; an index out of range that no search reads (the last, for queries in the
    # lower half) is not looked at, by either; one every search reads is an error, as numpy's.
    a = rng.integers(0, 1 << 30, size=1 << 16).astype(np.int64)
    sorter = np.argsort(a, kind="stable")
    v = rng.integers(0, 1 << 30, size=50)
    for side in ("left", "right"):
        np.testing.assert_array_equal(gsearch.searchsorted(a, v, side=side, sorter=sorter),
                                      np.searchsorted(a, v, side=side, sorter=sorter))
    low = np.minimum(v, np.sort(a)[len(a) // 4])
    unread = sorter.copy()
    unread[-1] = len(a)
    np.testing.assert_array_equal(gsearch.searchsorted(a, low, sorter=unread), np.searchsorted(a, low, sorter=unread))
    bad = np.full_like(sorter, -1)
    with pytest.raises(ValueError, match="Sorter index out of range"):
        np.searchsorted(a, v, sorter=bad)
    with pytest.raises(ValueError, match="Sorter index out of range"):
        gsearch.searchsorted(a, v, sorter=bad)


def ref_sorter(a, v, side, sorter):
    """numpy.searchsorted with sorter=, 16-bit floats widened to float32 (exact, the same order:
    the project's rule for float16 references, references.py)."""
    return np.searchsorted(widen(a), widen(v), side=side, sorter=sorter)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("k", [0, 1, 33, 3000])
def test_sorter_in_the_library(rng, dtype, k):
    # Shuffled keys (duplicates, NaN for floats) searched through the library's gather, for every
    # integer dtype of the sorter, non-contiguous sorters and every side, int32 output, equal_range.
    a = random_values(rng, dtype, k)
    sorter = ref_argsort(a)
    v = np.concatenate([random_values(rng, dtype, 200), a[: min(k, 50)]])
    for side in ("left", "right"):
        want = ref_sorter(a, v, side, sorter)
        for s in (sorter, sorter.astype(np.int32), sorter.astype(np.uint32), sorter.astype(np.int16)):
            got = gsearch.searchsorted(a, v, side=side, sorter=s, check_sorted=True)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(gsearch.searchsorted(a, v, side=side, sorter=sorter, out_int32=True), want)
    strided = np.empty(2 * k, dtype=np.int64)
    strided[::2] = sorter
    np.testing.assert_array_equal(gsearch.searchsorted(a, v, sorter=strided[::2]), ref_sorter(a, v, "left", sorter))
    lo, up = gsearch.equal_range(a, v, sorter=sorter)
    np.testing.assert_array_equal(lo, ref_sorter(a, v, "left", sorter))
    np.testing.assert_array_equal(up, ref_sorter(a, v, "right", sorter))


@pytest.mark.parametrize("algo", ALGOS)
def test_sorter_every_algorithm(rng, algo):
    a = random_values(rng, "float64", 5000)
    sorter = ref_argsort(a)
    v = random_values(rng, "float64", 3000)
    for side in ("left", "right"):
        np.testing.assert_array_equal(
            gsearch.searchsorted(a, v, side=side, sorter=sorter, algo=algo), np.searchsorted(a, v, side=side, sorter=sorter)
        )


def test_sorter_not_a_permutation_and_scalars():
    # numpy does not check that sorter sorts a, nor that it is a permutation: neither does gsearch.
    a = np.array([7, 1, 4, 4, 9])
    for sorter in ([1, 1, 2, 3, 4], [1, 2, 2, 2, 4], [4, 3, 2, 1, 0]):
        for v in ([0, 1, 4, 5, 9, 10], 4, np.int64(4)):
            for side in ("left", "right"):
                check(a, v, side, sorter=sorter)
    check(np.array([np.nan, 1.0, -0.0, 0.0]), [0.0, np.nan, -1.0], "right", sorter=[2, 3, 1, 0])
    check(np.array([np.nan, 1.0, -0.0, 0.0]), 0.0, "left", sorter=np.array([3, 2, 1, 0], dtype=np.uint8))


# --- dtypes: exact promotions answer like numpy, lossy ones raise ---------------------------------

EXACT_PAIRS = [
    ("int32", "int64"), ("int64", "int32"), ("float32", "float64"), ("float64", "float32"),
    ("int32", "float64"), ("float64", "int32"), ("uint32", "int32"), ("int32", "uint32"),
    ("uint32", "int64"), ("uint32", "float64"), ("int16", "float32"), ("int8", "float16"),
    ("uint8", "int8"), ("bool", "int64"), ("bool", "float32"), ("uint64", "uint8"),
    ("int8", "int64"), ("float16", "float64"), ("uint16", "int16"), ("int64", "bool"),
]
LOSSY_PAIRS = [
    ("int64", "float64"), ("float64", "int64"), ("int64", "float32"), ("uint64", "float64"),
    ("float32", "uint64"), ("uint64", "int64"), ("int64", "uint64"), ("uint64", "int32"),
    ("int8", "uint64"), ("int64", "float16"), ("uint64", "float16"),
]


@pytest.mark.parametrize("ka,kv", EXACT_PAIRS)
@pytest.mark.parametrize("side", ["left", "right"])
def test_exact_promotions_answer_like_numpy(rng, ka, kv, side):
    a = sorted_keys(rng, ka, 400)
    v = random_values(rng, kv, 300)
    if np.dtype(ka).kind in "iu" and np.dtype(kv).kind in "iu":
        v = np.concatenate([v, a.astype(kv, casting="unsafe")]) if np.can_cast(ka, kv) else v
    check(a, v, side)


@pytest.mark.parametrize("ka,kv", LOSSY_PAIRS)
def test_lossy_promotions_raise(ka, kv):
    a = np.zeros(3, dtype=ka)
    v = np.zeros(2, dtype=kv)
    with pytest.raises(TypeError) as e:
        gsearch.searchsorted(a, v)
    assert ka in str(e.value) and kv in str(e.value)
    with pytest.raises(TypeError):
        gsearch.predecessor(a, v)


@pytest.mark.parametrize("v", ["x", 1j, None, np.array([1 + 2j]), np.array(["a"]), np.array([1], dtype=object)])
def test_unsupported_query_types(v):
    with pytest.raises(TypeError):
        gsearch.searchsorted(np.array([1.0, 2.0]), v)


def test_unsupported_key_types():
    for a in (np.array([1 + 1j]), np.array(["a", "b"]), np.array([1, 2], dtype="datetime64[s]")):
        with pytest.raises(TypeError):
            gsearch.searchsorted(a, a)


# --- Python scalars: exact, numpy's answer where numpy's is exact --------------------------------


def exact_reference(keys, q, side):
    """The count of keys < q (left) or <= q (right) with Python's exact number comparisons and
    NaN after everything."""

    def key(x):
        x = x.item() if hasattr(x, "item") else x
        return (1, 0) if isinstance(x, float) and math.isnan(x) else (0, x)

    kq = key(q)
    if side == "left":
        return sum(1 for k in keys if key(k) < kq)
    return sum(1 for k in keys if key(k) <= kq)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_python_scalars_exact(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        a = np.array([False, False, True])
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        a = np.array(sorted({int(info.min), int(info.min) + 1, 0, 1, 2, int(info.max) - 1, int(info.max)}), dtype=dt)
    else:
        with np.errstate(over="ignore"):  # 1e30 is inf in float16
            a = np.array([-np.inf, -3.5, -0.0, 0.1, 1.0, 16777216.0, 1e30, np.inf, np.nan], dtype=dt)
    queries = [0, 1, -1, 2, 3, 2**31, -(2**31) - 1, 2**63, -(2**63) - 1, 2**64, 2**70, -(2**70), True, False]
    queries += [16777217, 2**53 + 1, 10**400]
    if not (dt.kind in "iu" and dt.itemsize == 8):
        queries += [0.5, -0.5, 1.0, 2.5, 0.1, -0.0, float("inf"), float("-inf"), float("nan"), 1e300, -1e300]
    for q in queries:
        for side in ("left", "right"):
            got = gsearch.searchsorted(a, q, side=side)
            assert isinstance(got, np.int64)
            assert got == exact_reference(a.tolist(), q, side), (dtype, q, side)
            want_pred = exact_reference(a.tolist(), q, "right") - 1
        assert gsearch.predecessor(a, q) == want_pred, (dtype, q)


def test_python_scalars_like_numpy():
    # Where numpy's own conversion is exact, the answers are numpy's (numpy 2 searches a Python
    # int out of the keys' range in int64, it does not raise).
    a8 = np.array([1, 2, 3], dtype=np.int8)
    for q in (300, -300, 2, 2**40):
        for side in ("left", "right"):
            assert gsearch.searchsorted(a8, q, side) == np.searchsorted(a8, q, side)
    au = np.array([1, 2, 3], dtype=np.uint64)
    assert gsearch.searchsorted(au, -1) == np.searchsorted(au, -1) == 0
    f32 = np.array([0.1, 0.2, 0.3], dtype=np.float32)
    for q in (0.1, 0.2, 0.30000001, 1e300, -1e300):
        for side in ("left", "right"):
            assert gsearch.searchsorted(f32, q, side) == np.searchsorted(f32, q, side)


def test_python_float_with_64_bit_integer_keys_raises():
    for dt in ("int64", "uint64"):
        with pytest.raises(TypeError, match=dt):
            gsearch.searchsorted(np.array([1, 2], dtype=dt), 1.5)
        with pytest.raises(TypeError):
            gsearch.searchsorted(np.array([1, 2], dtype=dt), [1.5])


def test_python_int_too_large_for_int64_list():
    # A list is taken as numpy takes it: beyond uint64 it is an object array, which gsearch
    # does not search.
    with pytest.raises(TypeError):
        gsearch.searchsorted(np.array([1, 2]), [2**70])


# --- algorithms, check_sorted, options ----------------------------------------------------------


@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
@pytest.mark.parametrize("k", [0, 1, 33, 1024, 4099])
def test_every_algorithm(rng, algo, dtype, k):
    a = sorted_keys(rng, dtype, k, duplicates=k > 100)
    v = np.concatenate([random_values(rng, dtype, 200), a[:50]])
    for side in ("left", "right"):
        check(a, v, side, algo=algo)
    want = np.searchsorted(a, v, side="right") - 1
    np.testing.assert_array_equal(gsearch.predecessor(a, v, algo=algo), want)


@pytest.mark.parametrize("dtype", ["int32", "uint64", "float32", "float64"])
def test_partitioned_many_buckets(rng, dtype):
    # Past 256 KB of keys the CPU's partitioned search has several buckets: 2^17 + 3 int32 keys
    # make 3, 8-byte keys 5; duplicates straddle the bucket edges; NaN queries and keys.
    k = 2**17 + 3
    a = np.sort(rng.integers(0, 40_000, k)).astype(dtype)
    v = rng.integers(-100, 40_100, 50_001).astype(dtype)
    if dtype.startswith("float"):
        v[::997] = np.nan
        a[-3:] = np.nan
    for side in ("left", "right"):
        np.testing.assert_array_equal(gsearch.searchsorted(a, v, side=side, algo="partitioned"),
                                      np.searchsorted(a, v, side=side))
    np.testing.assert_array_equal(gsearch.predecessor(a, v, algo="partitioned"),
                                  np.searchsorted(a, v, side="right") - 1)


def test_check_sorted():
    with pytest.raises(ValueError, match="sorted"):
        gsearch.searchsorted(np.array([1, 3, 2]), [2], check_sorted=True)
    with pytest.raises(ValueError, match="sorted"):
        gsearch.searchsorted(np.array([1.0, np.nan, 2.0]), [2.0], check_sorted=True)
    with pytest.raises(ValueError):
        gsearch.predecessor(np.array([5, 4]), 4, check_sorted=True)
    with pytest.raises(ValueError):
        gsearch.bucketize(4, np.array([5, 4]), check_sorted=True)
    # Sorted keys (NaN last, equal zeros) pass; unsorted ones without the check still give
    # in-range answers.
    check(np.array([-1.0, -0.0, 0.0, np.nan]), [0.0], check_sorted=True)
    r = gsearch.searchsorted(np.array([3, 1, 2]), [0, 1, 2, 3, 4])
    assert ((r >= 0) & (r <= 3)).all()


def test_bad_arguments():
    a = np.array([1, 2, 3])
    with pytest.raises(ValueError):
        gsearch.searchsorted(a, 2, side="middle")
    with pytest.raises(ValueError):
        gsearch.searchsorted(a, 2, side="L")
    with pytest.raises(TypeError):
        gsearch.searchsorted(a, 2, side=None)
    with pytest.raises(ValueError):
        gsearch.searchsorted(a, 2, algo="fast")
    with pytest.raises(ValueError):
        gsearch.searchsorted(np.array(3), 2)  # 0-d keys
    with pytest.raises(ValueError):
        gsearch.searchsorted(5, 2)
    with pytest.raises(ValueError):
        gsearch.searchsorted(a, 2, side="left", right=True)  # torch: opposites
    with pytest.raises(TypeError):
        gsearch.searchsorted(a, 2, right="yes")
    with pytest.raises(ValueError):
        gsearch.searchsorted(a, 2, stream=0)  # streams are for CUDA arrays


def test_right_flag():
    a = np.array([1, 2, 2, 3])
    v = np.array([2, 2])
    np.testing.assert_array_equal(gsearch.searchsorted(a, v, right=True), [3, 3])
    np.testing.assert_array_equal(gsearch.searchsorted(a, v, right=False), [1, 1])
    np.testing.assert_array_equal(gsearch.searchsorted(a, v, side="right", right=True), [3, 3])
    np.testing.assert_array_equal(gsearch.searchsorted(a, v, side="right", right=False), [3, 3])


def test_out_int32_and_out(rng):
    a = np.sort(rng.integers(0, 100, 50)).astype(np.int32)
    v = rng.integers(-10, 110, (3, 4)).astype(np.int32)
    want = np.searchsorted(a, v, side="right")
    got = gsearch.searchsorted(a, v, side="right", out_int32=True)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)
    out = np.empty((3, 4), dtype=np.int64)
    r = gsearch.searchsorted(a, v, side="right", out=out)
    assert r is out
    np.testing.assert_array_equal(out, want)
    out32 = np.empty((3, 4), dtype=np.int32)
    assert gsearch.searchsorted(a, v, out=out32, out_int32=True) is out32
    o0 = np.empty((), dtype=np.int64)
    assert gsearch.searchsorted(a, 50, out=o0) is o0 and o0 == np.searchsorted(a, 50)
    with pytest.raises(ValueError):
        gsearch.searchsorted(a, v, out=np.empty((4, 3), dtype=np.int64))
    with pytest.raises(TypeError):
        gsearch.searchsorted(a, v, out=np.empty((3, 4), dtype=np.int32))  # int32 needs out_int32
    with pytest.raises(TypeError):
        gsearch.searchsorted(a, v, out=np.empty((3, 4), dtype=np.float64))
    with pytest.raises(ValueError):
        gsearch.searchsorted(a, v, out=np.empty((4, 3), dtype=np.int64).T)  # not C-contiguous
    ro = np.empty((3, 4), dtype=np.int64)
    ro.setflags(write=False)
    with pytest.raises(ValueError):
        gsearch.searchsorted(a, v, out=ro)
    with pytest.raises(ValueError):
        gsearch.searchsorted(a, v, out=[0] * 12)


def test_max_temp_bytes_changes_the_algorithm_not_the_results():
    rng = np.random.default_rng(5)
    keys = np.sort(rng.integers(0, 10**9, 1 << 17).astype(np.int64))
    q = rng.integers(0, 10**9, 1 << 16).astype(np.int64)
    want = np.searchsorted(keys, q, side="right")
    for cap in (None, 0, 1 << 10, 1 << 30):
        np.testing.assert_array_equal(gsearch.searchsorted(keys, q, side="right", max_temp_bytes=cap), want)
    # An explicit algorithm that allocates, capped below what it needs: ValueError, out untouched.
    out = np.full(q.shape, -7, np.int64)
    with pytest.raises(ValueError, match="max_temp_bytes|temporary"):
        gsearch.searchsorted(keys, q, algo="index", max_temp_bytes=0, out=out)
    assert (out == -7).all()
    with pytest.raises(ValueError, match="max_temp_bytes"):
        gsearch.searchsorted(keys, q, max_temp_bytes=-1)
    with pytest.raises(TypeError, match="max_temp_bytes"):
        gsearch.searchsorted(keys, q, max_temp_bytes=1.5)
