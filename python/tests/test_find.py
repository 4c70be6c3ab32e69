"""gsearch.find / count / isin (unsorted search) against numpy: np.flatnonzero(a op v),
np.count_nonzero, np.isin. The GPU tests at the end (torch / cupy CUDA arrays) skip unless a GPU
and gsearch's CUDA backend are there, as in test_gpu.py."""

import numpy as np
import pytest

import gsearch
from gsearch import _core
from conftest import ALL_DTYPES, NATIVE_DTYPES
from references import ref_isin

SIZES = [0, 1, 33, 4097, 100_000]
OPS = ["==", "!=", "<", "<=", ">", ">=", "in"]
ALIASES = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
MODES = ["first", "any", "random", "count", "all"]
FLOATS = ["float16", "float32", "float64"]


# --- references ---------------------------------------------------------------------------------


def ref_mask(a, op, v, hi=None):
    """numpy's elementwise comparison, the value taken in a's dtype (it is exactly one)."""
    v = np.asarray(v, dtype=a.dtype)
    if op == "==":
        return a == v
    if op == "!=":
        return a != v
    if op == "<":
        return a < v
    if op == "<=":
        return a <= v
    if op == ">":
        return a > v
    if op == ">=":
        return a >= v
    assert op == "in"
    return (a >= v) & (a < np.asarray(hi, dtype=a.dtype))


_M64 = 2**64 - 1


def _mix64(z):
    """SplitMix64's output function (core::mix64)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def random_below(seed, n):
    """The documented draw of mode='random' (core::random_below, docs/semantics.md): a uniform
    integer in [0, n) from `seed`, Lemire's multiply-and-reject on the SplitMix64 stream."""
    threshold = (2**64 - n) % n
    state = seed
    while True:
        state = (state + 0x9E3779B97F4A7C15) & _M64
        x = _mix64(state)
        if (x * n) & _M64 >= threshold:
            return (x * n) >> 64


def ref_find(a, op, v, mode, hi=None, seed=0):
    """find's answer from numpy alone: np.flatnonzero of numpy's comparison, and for 'random'
    the r-th match, r = random_below(seed, count)."""
    idx = np.flatnonzero(ref_mask(a, op, v, hi))
    if mode == "all":
        return idx
    if mode == "count":
        return int(idx.size)
    if not idx.size:
        return -1
    return int(idx[0] if mode == "first" else idx[random_below(seed, idx.size)])


def check_all_modes(a, op, v, hi=None, seeds=(0, 1, 12345)):
    """Every mode of find (and count) against numpy, for one value."""
    kw = {"hi": hi} if op == "in" else {}
    idx = np.flatnonzero(ref_mask(a, op, v, hi))
    first = gsearch.find(a, v, "first", op, **kw)
    assert type(first) is int
    assert first == (int(idx[0]) if idx.size else -1), (op, v, hi)
    anyi = gsearch.find(a, v, "any", op, **kw)
    assert type(anyi) is int
    assert (anyi in idx) if idx.size else anyi == -1
    for seed in seeds:
        r = gsearch.find(a, v, "random", op, seed=seed, **kw)
        assert type(r) is int
        assert (r in idx) if idx.size else r == -1
        assert r == ref_find(a, op, v, "random", hi, seed)  # the documented draw
        assert gsearch.find(a, v, "random", op, seed=seed, **kw) == r  # reproducible
    c = gsearch.find(a, v, "count", op, **kw)
    assert type(c) is int and c == idx.size == np.count_nonzero(ref_mask(a, op, v, hi))
    assert gsearch.count(a, v, op, **kw) == c
    got = gsearch.find(a, v, "all", op, **kw)
    assert type(got) is np.ndarray and got.dtype == np.int64 and got.ndim == 1
    np.testing.assert_array_equal(got, idx)


def data_of(rng, dtype, n):
    """n elements of dtype drawn from a small pool (duplicates, extremes, and for floats NaN,
    inf, -inf, -0.0, 0.0), and the pool."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        pool = np.array([False, True])
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = int(info.min), int(info.max)
        pool = np.array(sorted(x for x in {lo, lo + 1, 0, 1, 2, 7, 100, hi - 1, hi} if lo <= x <= hi), dtype=dt)
    else:
        pool = np.array([-np.inf, -1e4, -1.5, -0.0, 0.0, 0.25, 1.0, 3.0, 1e4, np.inf, np.nan], dtype=dt)
    return rng.choice(pool, size=n), pool


def values_of(dt, pool):
    """Test values: the pool's values, and absent ones, as Python scalars of the dtype."""
    vals = [x.item() for x in pool]
    if dt.kind in "iu":
        info = np.iinfo(dt)
        extra = [int(info.min) + 3, int(info.max) - 3, 50]
        vals += [x for x in extra if x not in vals]
    elif dt.kind == "f":
        vals += [2.0, -2.0]
    return vals


# --- every dtype, op, mode, size ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n", SIZES)
def test_against_numpy(rng, dtype, op, n):
    dt = np.dtype(dtype)
    a, pool = data_of(rng, dtype, n)
    vals = values_of(dt, pool)
    if n > 4097:
        vals = vals[::3]  # fewer values on the large array (keeps the test quick)
    if op == "in":
        s = sorted({v for v in vals if v == v})
        for lo in s[:: max(1, len(s) // 4)]:
            for hi in (lo, s[len(s) // 2], s[-1]):
                check_all_modes(a, op, lo, hi)
        if dt.kind == "f":
            check_all_modes(a, op, float("nan"), 1.0)
            check_all_modes(a, op, -float("inf"), float("inf"))
    else:
        for v in vals:
            check_all_modes(a, op, v)


@pytest.mark.parametrize("alias", list(ALIASES))
def test_op_names(rng, alias):
    a, _ = data_of(rng, "int32", 5000)
    for mode in ("first", "count"):
        assert gsearch.find(a, 7, mode, alias) == gsearch.find(a, 7, mode, ALIASES[alias])
    np.testing.assert_array_equal(gsearch.find(a, 7, "all", alias), gsearch.find(a, 7, "all", ALIASES[alias]))


@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_inf_negative_zero(dtype):
    a = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, np.nan], dtype=dtype)
    assert gsearch.find(a, 0.0, "all").tolist() == [1, 2]
    assert gsearch.find(a, -0.0, "all").tolist() == [1, 2]
    assert gsearch.find(a, float("nan"), "count") == 0
    assert gsearch.find(a, float("nan"), "first") == -1
    assert gsearch.find(a, float("nan"), "count", "!=") == 7  # NaN != everything
    assert gsearch.find(a, 0.0, "all", "!=").tolist() == [0, 3, 4, 5, 6]  # NaN elements match !=
    assert gsearch.find(a, float("inf"), "all").tolist() == [3]
    assert gsearch.find(a, float("inf"), "count", "<") == 4  # -0.0, 0.0, -inf, 1.0
    assert gsearch.find(a, -float("inf"), "count", ">=") == 5  # NaN compares false
    assert gsearch.find(a, -0.0, "all", "in", hi=1.0).tolist() == [1, 2]
    for op in OPS[:-1]:
        for v in (0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1.0):
            check_all_modes(a, op, v)


@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
def test_match_positions(dtype):
    n = 3 * 4096 + 17
    a = np.zeros(n, dtype=dtype)
    for pos in (0, 1, 4095, 4096, n // 2, n - 1):
        b = a.copy()
        b[pos] = 5
        assert gsearch.find(b, 5) == pos
        assert gsearch.find(b, 5, "any") == pos
        assert gsearch.find(b, 5, "random", seed=9) == pos
        assert gsearch.count(b, 5) == 1
        assert gsearch.find(b, 5, "all").tolist() == [pos]
    assert gsearch.find(a, 5) == -1 and gsearch.find(a, 5, "any") == -1  # none
    assert gsearch.find(a, 0) == 0 and gsearch.count(a, 0) == n  # all
    np.testing.assert_array_equal(gsearch.find(a, 0, "all"), np.arange(n))
    b = a.copy()
    b[[n - 3, 7, 5000]] = 5
    assert gsearch.find(b, 5) == 7  # the lowest of several


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "bool", "float16"])
def test_widened_extremes(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        vals = [False, True]
    elif dt.kind == "f":
        vals = [float(np.finfo(dt).min), float(np.finfo(dt).max), float(np.finfo(dt).tiny), 65504.0]
    else:
        vals = [int(np.iinfo(dt).min), int(np.iinfo(dt).max)]
    a = np.array(vals * 5, dtype=dt)
    for v in vals:
        for op in OPS[:-1]:
            check_all_modes(a, op, v)


def test_inputs_other_than_contiguous_native_arrays():
    a = np.arange(20_000, dtype=np.int64) % 97
    want = np.flatnonzero(a[::3] == 5)
    np.testing.assert_array_equal(gsearch.find(a[::3], 5, "all"), want)  # strided: copied once
    np.testing.assert_array_equal(gsearch.find(a.astype(">i8"), 5, "all"), np.flatnonzero(a == 5))
    assert gsearch.find([3, 1, 2, 1], 1) == 1  # a list
    assert gsearch.find((1.5, 2.5), 2.5) == 1
    assert gsearch.count(np.array([], dtype=np.float32), 1.0) == 0
    empty = gsearch.find(np.array([], dtype=np.uint64), 1, "all")
    assert type(empty) is np.ndarray and empty.shape == (0,) and empty.dtype == np.int64


def test_value_forms():
    a = np.array([1, 5, 7, 5], dtype=np.int32)
    for v in (5, 5.0, True * 5, np.int64(5), np.uint8(5), np.float64(5.0), np.array(5), np.array(5.0, dtype=np.float16)):
        assert gsearch.find(a, v) == 1, v
    assert gsearch.find(np.array([0, 1], dtype=bool), True) == 1
    assert gsearch.find(np.array([0, 1], dtype=np.int32), True) == 1
    f = np.array([0.1, 0.5], dtype=np.float32)
    assert gsearch.find(f, np.float32(0.1)) == 0  # the float32 nearest 0.1, asked for explicitly
    assert gsearch.find(f, np.array(0.1, dtype=np.float32)) == 0
    assert gsearch.find(f, 0.5) == 1  # a float32 value given as a Python float
    assert gsearch.find(np.array([2**24], dtype=np.float32), 2**24) == 0  # an int float32 holds
    u = np.array([2**64 - 1, 0], dtype=np.uint64)
    assert gsearch.find(u, 2**64 - 1) == 0 and gsearch.find(u, 2**64 - 1, op="<", mode="all").tolist() == [1]
    i = np.array([-(2**63), 2**63 - 1], dtype=np.int64)
    assert gsearch.find(i, -(2**63)) == 0 and gsearch.find(i, 2**63 - 1) == 1
    assert gsearch.find(i, np.float64(-(2**63))) == 0  # a float that is exactly an int64
    d = np.array([0.1, np.inf])
    assert gsearch.find(d, 0.1) == 0 and gsearch.find(d, np.inf) == 1


@pytest.mark.parametrize(
    "dtype, value",
    [
        ("int32", 3e9),
        ("int32", 2**31),
        ("int32", -(2**31) - 1),
        ("int8", 200),
        ("int16", -40000),
        ("uint8", -1),
        ("uint32", -1),
        ("uint64", -1),
        ("uint64", 2**64),
        ("int64", 2**63),
        ("int64", np.float64(2**63)),
        ("int32", 1.5),
        ("int64", float("nan")),
        ("int32", float("inf")),
        ("uint16", -float("inf")),
        ("bool", 2),
        ("bool", 0.5),
        ("float32", 1e39),
        ("float32", -1e39),
        ("float32", 0.1),
        ("float32", np.float64(0.1)),
        ("float32", 2**24 + 1),
        ("float64", 2**53 + 1),
        ("float64", 10**400),
        ("float16", 70000.0),
        ("float16", 0.1),
    ],
)
def test_value_not_representable(dtype, value):
    a = np.zeros(4, dtype=dtype)
    with pytest.raises(ValueError, match=f"value .* not representable in {dtype}"):
        gsearch.find(a, value)
    with pytest.raises(ValueError, match=f"value .* not representable in {dtype}"):
        gsearch.find(a.astype(a.dtype.newbyteorder()), value)  # named by its dtype's name
    with pytest.raises(ValueError, match="not representable"):
        gsearch.count(a, value)
    with pytest.raises(ValueError, match="not representable"):
        gsearch.find(a, value, "all")
    if np.dtype(dtype).kind != "b":
        with pytest.raises(ValueError, match=f"hi .* not representable in {dtype}"):
            gsearch.find(a, 0, op="in", hi=value)


def test_bad_arguments():
    a = np.arange(10, dtype=np.int32)
    with pytest.raises(ValueError, match="ravel"):
        gsearch.find(a.reshape(2, 5), 1)
    with pytest.raises(ValueError, match="ravel"):
        gsearch.count(a.reshape(2, 5, 1), 1)
    with pytest.raises(ValueError):
        gsearch.find(np.array(3), 3)  # 0-d
    with pytest.raises(ValueError):
        gsearch.find(3, 3)
    with pytest.raises(ValueError, match="mode"):
        gsearch.find(a, 1, "last")
    with pytest.raises(ValueError, match="op"):
        gsearch.find(a, 1, op="=")
    with pytest.raises(ValueError, match="strategy"):
        gsearch.find(a, 1, strategy="fast")
    with pytest.raises(ValueError, match="needs hi"):
        gsearch.find(a, 1, op="in")
    with pytest.raises(ValueError, match="hi applies"):
        gsearch.find(a, 1, hi=3)
    with pytest.raises(ValueError, match="seed"):
        gsearch.find(a, 1, "random", seed=-1)
    with pytest.raises(ValueError, match="seed"):
        gsearch.find(a, 1, "random", seed=2**64)
    with pytest.raises(TypeError, match="seed"):
        gsearch.find(a, 1, "random", seed=1.5)
    with pytest.raises(ValueError, match="per_thread"):
        gsearch.find(a, 1, strategy="strided", per_thread=-1)
    with pytest.raises(ValueError, match="scalar or a 0-d array"):
        gsearch.find(a, np.array([1]))
    with pytest.raises(ValueError, match="scalar or a 0-d array"):
        gsearch.find(a, [1, 2])
    for v in ("1", None, 1j, np.complex64(1), object()):
        with pytest.raises(TypeError):
            gsearch.find(a, v)
    with pytest.raises(TypeError, match="unsupported"):
        gsearch.find(a.astype(np.complex128), 1)
    with pytest.raises(TypeError, match="unsupported"):
        gsearch.find(np.array(["a", "b"]), "a")
    with pytest.raises(ValueError, match="stream"):
        gsearch.find(a, 1, stream=0)  # stream= on CPU data
    # a study strategy is for first / any / count
    for mode in ("random", "all"):
        with pytest.raises(ValueError, match="study"):
            gsearch.find(a, 1, mode, strategy="unrolled")


@pytest.mark.parametrize("strategy", ["strided", "coalesced", "unrolled", "one-per-thread"])
@pytest.mark.parametrize("dtype", ["int32", "float64", "uint16"])
def test_study_strategies_give_the_same_results(rng, strategy, dtype):
    for n in (0, 1, 33, 4097, 50_000):
        a, pool = data_of(rng, dtype, n)
        for v in [x.item() for x in pool[:4]]:
            for op in ("==", "!=", "<"):
                want_first = gsearch.find(a, v, "first", op)
                want_count = gsearch.find(a, v, "count", op)
                for k in (0, 1, 5, 12, 64):
                    got = gsearch.find(a, v, "first", op, strategy=strategy, per_thread=k)
                    assert got == want_first, (n, v, op, k)
                    assert gsearch.find(a, v, "count", op, strategy=strategy, per_thread=k) == want_count
                    r = gsearch.find(a, v, "any", op, strategy=strategy, per_thread=k)
                    assert (r == -1) == (want_first == -1) and (r == -1 or bool(ref_mask(a[r : r + 1], op, v)[0]))


# --- find_random --------------------------------------------------------------------------------


def test_random_is_uniform_over_the_matches():
    # 60 matches in 3 blocks of 4,096 elements with 30, 10 and 20 matches: a draw uniform over
    # the matches (not the blocks). Fixed seeds: the counts are the same on every run.
    n = 3 * 4096
    a = np.zeros(n, dtype=np.int32)
    pos = np.concatenate([np.arange(0, 30) * 100 + 3, 4096 + np.arange(10) * 400, 8192 + np.arange(20) * 200])
    a[pos] = 1
    draws = np.array([gsearch.find(a, 1, "random", seed=s) for s in range(6000)])
    assert np.isin(draws, pos).all()
    hits = np.array([np.count_nonzero(draws == p) for p in pos])
    assert hits.min() > 0  # every match is reached
    expected = draws.size / pos.size
    chi2 = float(((hits - expected) ** 2 / expected).sum())
    assert chi2 < 110, chi2  # 59 degrees of freedom: the 0.9999 quantile is ~107
    # deterministic per seed, and seeds differ
    assert [gsearch.find(a, 1, "random", seed=s) for s in range(50)] == draws[:50].tolist()
    assert len(set(draws[:50].tolist())) > 20
    # large seeds
    for s in (2**32, 2**63, 2**64 - 1):
        assert gsearch.find(a, 1, "random", seed=s) in pos


def test_random_single_and_no_match():
    a = np.arange(100_000, dtype=np.float32)
    for s in range(20):
        assert gsearch.find(a, 77_777.0, "random", seed=s) == 77_777
        assert gsearch.find(a, -1.0, "random", seed=s) == -1
        assert gsearch.find(a, 99_990.0, "random", op=">=", seed=s) in range(99_990, 100_000)


# --- isin ---------------------------------------------------------------------------------------


def isin_data(rng, dtype, n, m):
    dt = np.dtype(dtype)
    a, pool = data_of(rng, dtype, n)
    t, _ = data_of(rng, dtype, m)
    if dt.kind in "iu" and n:  # also values drawn from the full range
        info = np.iinfo(dt)
        extra = rng.integers(int(info.min), int(info.max), size=n, dtype=dt, endpoint=True)
        a = np.where(rng.random(n) < 0.5, a, extra)
        if m:
            t = np.concatenate([t, extra[: max(1, m // 2)]])[:m]
    return a, t


@pytest.mark.numpy_reference("2.4.0")
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("method", ["auto", "sorted", "hash"])
@pytest.mark.parametrize("invert", [False, True])
def test_isin_against_numpy(rng, dtype, method, invert):
    for n in SIZES:
        for m in (0, 1, 7, 1000):
            a, t = isin_data(rng, dtype, n, m)
            got = gsearch.isin(a, t, invert=invert, method=method)
            want = ref_isin(a, t, invert=invert)
            assert type(got) is np.ndarray and got.dtype == bool and got.shape == a.shape
            np.testing.assert_array_equal(got, want, err_msg=f"n={n} m={m}")


@pytest.mark.parametrize("dtype", FLOATS)
def test_isin_nan_negative_zero(dtype):
    a = np.array([np.nan, -0.0, 0.0, np.inf, 1.0], dtype=dtype)
    for t in ([np.nan], [0.0], [-0.0], [np.nan, -0.0, np.inf], []):
        tt = np.array(t, dtype=dtype)
        for method in ("sorted", "hash"):
            for invert in (False, True):
                np.testing.assert_array_equal(
                    gsearch.isin(a, tt, invert=invert, method=method), ref_isin(a, tt, invert=invert)
                )
    assert gsearch.isin(a, a).tolist() == [False, True, True, True, True]  # NaN is never a member


def test_isin_shapes():
    el = np.arange(12, dtype=np.int64).reshape(3, 4)
    t = np.array([[1, 5], [11, 40]], dtype=np.int64)
    for e, tt in [(el, t), (el, t.T), (el.T, t), (el[:, ::2], t), (el, 5), (el, [5]), (el, np.int64(5))]:
        got = gsearch.isin(e, tt)
        want = np.isin(e, tt)
        assert got.shape == want.shape == np.shape(e)
        np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError):  # a numpy scalar has its dtype: float32 with int64 would round
        gsearch.isin(np.float32(5.0), t)
    for e in (5, np.int64(5), np.int8(5), np.array(5), np.array(5, dtype=np.uint16), 5.0, 5.5, 2**70):
        got = gsearch.isin(e, t)
        want = np.isin(e, t)
        assert type(got) is np.ndarray and got.shape == () and got.dtype == bool, e
        assert bool(got) == bool(want), e
        assert bool(gsearch.isin(e, t, invert=True)) == (not bool(want))
    assert gsearch.isin(3, 3).shape == () and bool(gsearch.isin(3, 3))
    assert gsearch.isin([[1, 2], [3, 4]], [4]).tolist() == [[False, False], [False, True]]
    # empty inputs
    assert gsearch.isin(np.array([], dtype=np.float32), [1.0]).shape == (0,)
    assert gsearch.isin(np.zeros((0, 3), dtype=np.int32), []).shape == (0, 3)
    assert gsearch.isin(np.arange(4), np.array([], dtype=np.int64)).tolist() == [False] * 4
    assert gsearch.isin(np.arange(4), np.array([], dtype=np.int64), invert=True).tolist() == [True] * 4


def test_isin_numpy_compatibility_arguments(rng):
    a, t = isin_data(rng, "int32", 5000, 100)
    want = np.isin(a, t)
    ua, ut = np.unique(a), np.unique(t)
    np.testing.assert_array_equal(gsearch.isin(ua, ut, True), np.isin(ua, ut, True))  # assume_unique
    np.testing.assert_array_equal(gsearch.isin(a, t, assume_unique=True, invert=False), want)  # a hint only
    for kind in (None, "sort", "table"):
        np.testing.assert_array_equal(gsearch.isin(a, t, kind=kind), want)
    with pytest.raises(ValueError, match="kind"):
        gsearch.isin(a, t, kind="hash")
    with pytest.raises(ValueError, match="method"):
        gsearch.isin(a, t, method="table")
    with pytest.raises(ValueError, match="stream"):
        gsearch.isin(a, t, stream=0)


@pytest.mark.parametrize(
    "da, dt",
    [
        ("int32", "int64"),
        ("int64", "int32"),
        ("int8", "float32"),
        ("uint32", "int64"),
        ("float32", "float64"),
        ("int16", "float16"),
        ("bool", "int32"),
        ("uint8", "int8"),
        ("uint16", "uint64"),
        ("int32", "float64"),
        ("float16", "uint8"),
    ],
)
def test_isin_mixed_dtypes_exact(rng, da, dt):
    a = (rng.integers(-50, 50, 3000) % (2 if da == "bool" else 1000)).astype(da)
    if np.dtype(da).kind == "f":
        a[::7] = 0.5
    t = np.concatenate([rng.integers(0, 60, 50), [0, 1]]).astype(dt)
    for invert in (False, True):
        np.testing.assert_array_equal(gsearch.isin(a, t, invert=invert), ref_isin(a, t, invert=invert))
        np.testing.assert_array_equal(gsearch.isin(t, a, invert=invert), ref_isin(t, a, invert=invert))


@pytest.mark.parametrize("da, dt", [("int64", "float64"), ("uint64", "int64"), ("int64", "float32"), ("uint64", "float16"), ("int32", "uint64")])
def test_isin_mixed_dtypes_that_would_round(da, dt):
    a, t = np.zeros(3, dtype=da), np.zeros(2, dtype=dt)
    for x, y in ((a, t), (t, a)):
        with pytest.raises(TypeError) as e:
            gsearch.isin(x, y)
        assert da in str(e.value) and dt in str(e.value)


def test_isin_python_scalars_compare_exactly():
    a = np.array([1, 3, 255, -5], dtype=np.int32)
    assert gsearch.isin(a, 3.5).tolist() == [False] * 4
    assert gsearch.isin(a, 3.0).tolist() == [False, True, False, False]
    assert gsearch.isin(a, 3.5, invert=True).tolist() == [True] * 4
    assert gsearch.isin(np.array([1, 2], dtype=np.int8), 300).tolist() == [False, False]
    u = np.array([3, 2**64 - 1], dtype=np.uint64)
    assert gsearch.isin(u, 3).tolist() == [True, False]  # numpy's int64/uint64 pair, held exactly
    assert gsearch.isin(u, 2**64 - 1).tolist() == [False, True]
    assert gsearch.isin(u, -1).tolist() == [False, False]
    f = np.array([0.1, 0.5], dtype=np.float32)
    assert gsearch.isin(f, 0.5).tolist() == [False, True]
    assert gsearch.isin(f, 0.1).tolist() == np.isin(f, np.array([0.1])).tolist() == [False, False]
    assert bool(gsearch.isin(3, a)) and not bool(gsearch.isin(3.5, a)) and bool(gsearch.isin(3.5, a, invert=True))
    assert bool(gsearch.isin(2**64 - 1, u)) and not bool(gsearch.isin(-1, u))
    assert not bool(gsearch.isin(float("nan"), np.array([np.nan])))


# --- the package --------------------------------------------------------------------------------


def test_exports_and_stub():
    for name in ("find", "count", "isin"):
        assert name in gsearch.__all__ and callable(getattr(gsearch, name))
    from pathlib import Path

    stub = Path(_core.__file__).with_name("_core.pyi").read_text()
    assert "def find(" in stub and "def find_all(" in stub and "def isin(" in stub


@pytest.mark.parametrize("fn", [gsearch.find, gsearch.count, gsearch.isin])
def test_numpy_style_docstrings(fn):
    for section in ("Parameters\n    ----------", "Returns\n    -------", "Raises\n    ------", "Examples\n    --------"):
        assert section in fn.__doc__, (fn.__name__, section)


def test_core_entry_points():
    a = np.array([3, 1, 2, 1], dtype=np.int64)
    ops, modes = _core.FIND_OPS, _core.FIND_MODES
    assert _core.find(a, modes["first"], ops["=="], 1) == 1
    assert _core.find(a, modes["count"], ops["in"], 1, 3) == 3
    got = _core.find_all(a, ops["=="], 1, lambda c: np.empty(c, np.int64))
    assert got.tolist() == [1, 3]
    with pytest.raises(ValueError, match="not representable"):
        _core.find(a.astype(np.int32), modes["first"], ops["=="], 2**40)
    with pytest.raises(ValueError, match="not representable"):
        _core.find(a.astype(np.float32), modes["first"], ops["=="], 0.1)
    with pytest.raises(ValueError, match="1-D"):
        _core.find(a.reshape(2, 2), 0, 0, 1)
    with pytest.raises(ValueError, match="contiguous"):
        _core.find(a[::2], 0, 0, 1)
    with pytest.raises(TypeError):
        _core.find(a.astype(np.int8), 0, 0, 1)
    with pytest.raises(ZeroDivisionError):  # the allocator's own error, unchanged
        _core.find_all(a, 0, 1, lambda c: 1 // 0)
    big = np.zeros(1 << 20, dtype=np.int32)  # a call that releases the GIL: the callback takes it

    def fail(c):
        raise MemoryError(f"no room for {c}")

    with pytest.raises(MemoryError, match=f"no room for {1 << 20}"):
        _core.find_all(big, 0, 0, fail)
    assert _core.find_all(big, 0, 0, lambda c: np.empty(c, np.int64)).size == 1 << 20
    with pytest.raises(TypeError, match="int64"):
        _core.find_all(a, 0, 1, lambda c: np.empty(c, np.int32))
    with pytest.raises(TypeError):
        _core.find_all(a, 0, 1, lambda c: None)
    out = np.empty(4, dtype=bool)
    _core.isin(a, a[:1], out)
    assert out.tolist() == [True, False, False, False]
    with pytest.raises(TypeError):
        _core.isin(a, a.astype(np.int32), out)
    with pytest.raises(TypeError):
        _core.isin(a, a, out.astype(np.int8))
    with pytest.raises(ValueError):
        _core.isin(a, a, out[:2])


# --- GPU: torch and cupy CUDA arrays (skipped without a GPU) ------------------------------------

from gpu_support import HAVE_CUPY, HAVE_TORCH_CUDA, NO_GSEARCH_CUDA, cupy, needs_cupy, needs_torch, spy_on, torch  # noqa: F401

TORCH_DTYPES = ["int32", "int64", "float32", "float64", "uint8", "int16", "float16", "bool"]


@needs_torch
class TestTorch:
    @pytest.mark.parametrize("dtype", TORCH_DTYPES)
    @pytest.mark.parametrize("n", [0, 1, 33, 4097, 100_000])
    def test_gpu_equals_numpy(self, dtype, n):
        g = np.random.default_rng(n)
        a_np, pool = data_of(g, dtype, n)
        a = torch.from_numpy(a_np).cuda()
        for v in [x.item() for x in pool[:: max(1, len(pool) // 4)]]:
            for op in OPS:
                kw = {"hi": v} if op == "in" else {}
                if op == "in":
                    v = pool[0].item()  # [pool[0], v)
                for mode in ("first", "count", "random"):
                    for seed in (7, 8):
                        want = ref_find(a_np, op, v, mode, kw.get("hi"), seed)
                        got = gsearch.find(a, v, mode, op, seed=seed, **kw)
                        assert type(got) is int and got == want, (mode, op, v, seed)
                r = gsearch.find(a, v, "any", op, **kw)
                idx = np.flatnonzero(ref_mask(a_np, op, v, kw.get("hi")))
                assert (r in idx) if idx.size else r == -1
                got = gsearch.find(a, v, "all", op, **kw)
                assert isinstance(got, torch.Tensor) and got.is_cuda and got.device == a.device
                assert got.dtype == torch.int64 and got.dim() == 1
                np.testing.assert_array_equal(got.cpu().numpy(), idx)

    def test_bfloat16(self):
        a = torch.tensor([1.0, 2.5, 1.0, -0.0], dtype=torch.bfloat16, device="cuda")
        assert gsearch.find(a, 1.0, "all").tolist() == [0, 2]
        assert gsearch.find(a, 0.0) == 3
        with pytest.raises(ValueError, match="bfloat16"):
            gsearch.find(a, 1.001)  # a float32, not a bfloat16

    @pytest.mark.parametrize("strategy", ["auto", "strided", "coalesced", "unrolled", "one-per-thread"])
    def test_strategies(self, strategy):
        g = np.random.default_rng(3)
        a_np = g.integers(0, 1000, 500_000).astype(np.int32)
        a = torch.from_numpy(a_np).cuda()
        for v in (0, 999, 1000, 517):
            for k in (0, 1, 8, 12, 64):
                for mode in ("first", "count"):
                    assert gsearch.find(a, v, mode, strategy=strategy, per_thread=k) == ref_find(a_np, "==", v, mode)
                r = gsearch.find(a, v, "any", strategy=strategy, per_thread=k)
                assert r == -1 if v == 1000 else a_np[r] == v

    def test_random_is_the_documented_draw(self):
        a_np = np.zeros(1 << 20, dtype=np.int32)
        a_np[::1000] = 1
        a = torch.from_numpy(a_np).cuda()
        for s in list(range(100)) + [2**63, 2**64 - 1]:
            assert gsearch.find(a, 1, "random", seed=s) == ref_find(a_np, "==", 1, "random", seed=s)

    def test_no_copy_of_contiguous_inputs(self, monkeypatch):
        a = torch.arange(100_000, dtype=torch.float32, device="cuda") % 97
        seen_find = spy_on(monkeypatch, "find")
        seen_all = spy_on(monkeypatch, "find_all")
        seen_isin = spy_on(monkeypatch, "isin")
        assert gsearch.find(a, 5.0) == 5
        assert gsearch.count(a, 5.0) == int((a == 5).sum())
        r = gsearch.find(a, 5.0, "all")
        assert torch.equal(r, torch.nonzero(a == 5).flatten())
        t = torch.tensor([5.0, 7.0], device="cuda")
        m = gsearch.isin(a, t)
        assert torch.equal(m, torch.isin(a, t))
        assert seen_find == [[a.data_ptr()], [a.data_ptr()]]
        assert seen_all == [[a.data_ptr()]]
        assert seen_isin == [[a.data_ptr(), t.data_ptr(), m.data_ptr()]]

    def test_stream_ordering(self):
        n = 1 << 20
        src = torch.randint(0, 100, (n,), dtype=torch.int32, device="cuda")
        want = torch.nonzero(src == 7).flatten()
        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):  # the current stream
            v = torch.full((n,), -1, dtype=torch.int32, device="cuda")
            torch.cuda._sleep(50_000_000)
            v.copy_(src)
            r = gsearch.find(v, 7, "all")
            c = gsearch.count(v, 7)
            m = gsearch.isin(v, torch.tensor([7], dtype=torch.int32, device="cuda"))
        s.synchronize()
        assert torch.equal(r, want) and c == want.numel() and torch.equal(m, src == 7)
        for stream in (s, s.cuda_stream):  # an explicit stream
            with torch.cuda.stream(s):
                v = torch.full((n,), -1, dtype=torch.int32, device="cuda")
                torch.cuda._sleep(50_000_000)
                v.copy_(src)
            assert gsearch.find(v, 7, stream=stream) == int(want[0])
            r = gsearch.find(v, 7, "all", stream=stream)
            s.synchronize()
            assert torch.equal(r, want)

    @pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64", "int16", "uint8"])
    @pytest.mark.parametrize("method", ["auto", "sorted", "hash"])
    def test_isin_against_torch_and_numpy(self, dtype, method):
        g = np.random.default_rng(4)
        for n, m in ((0, 5), (1000, 0), (100_000, 1), (100_000, 1000), (50_000, 100_000)):
            a_np, t_np = isin_data(g, dtype, n, m)
            a, t = torch.from_numpy(a_np).cuda(), torch.from_numpy(t_np).cuda()
            for invert in (False, True):
                got = gsearch.isin(a, t, invert=invert, method=method)
                assert got.dtype == torch.bool and got.device == a.device and got.shape == a.shape
                np.testing.assert_array_equal(got.cpu().numpy(), np.isin(a_np, t_np, invert=invert))
                assert torch.equal(got, torch.isin(a, t, invert=invert))

    def test_isin_shapes_and_devices(self):
        e = torch.arange(12, device="cuda").reshape(3, 4)
        t = torch.tensor([[1, 5], [11, 40]], device="cuda")
        assert torch.equal(gsearch.isin(e, t), torch.isin(e, t))
        r = gsearch.isin(5, t)
        assert r.dim() == 0 and r.is_cuda and bool(r)
        r = gsearch.isin(torch.tensor(4, device="cuda"), t)
        assert r.dim() == 0 and not bool(r)
        assert torch.equal(gsearch.isin(e, 5), e == 5)
        with pytest.raises(ValueError):
            gsearch.isin(e, t.cpu())
        with pytest.raises(ValueError):
            gsearch.isin(e.cpu().numpy(), t)
        with pytest.raises(ValueError):
            gsearch.find(e, 1)  # 2-D


@needs_cupy
class TestCupy:
    @pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "float32", "float64", "int8", "float16"])
    def test_gpu_equals_cpu(self, dtype):
        g = np.random.default_rng(13)
        a_np, pool = data_of(g, dtype, 50_000)
        a = cupy.asarray(a_np)
        for v in [x.item() for x in pool[::2]]:
            for op in ("==", "!=", "<", ">="):
                for mode in ("first", "count", "random"):
                    assert gsearch.find(a, v, mode, op, seed=3) == ref_find(a_np, op, v, mode, seed=3)
                got = gsearch.find(a, v, "all", op)
                assert isinstance(got, cupy.ndarray) and got.dtype == cupy.int64 and got.device == a.device
                np.testing.assert_array_equal(cupy.asnumpy(got), np.flatnonzero(ref_mask(a_np, op, v)))
        t_np = pool[::3]
        got = gsearch.isin(a, cupy.asarray(t_np))
        assert isinstance(got, cupy.ndarray) and got.dtype == cupy.bool_
        np.testing.assert_array_equal(cupy.asnumpy(got), ref_isin(a_np, t_np))

    def test_no_copy(self, monkeypatch):
        a = cupy.arange(1 << 16, dtype=cupy.int32) % 100
        t = cupy.asarray([3, 5], dtype=cupy.int32)
        seen_find = spy_on(monkeypatch, "find")
        seen_isin = spy_on(monkeypatch, "isin")
        assert gsearch.find(a, 5) == 5
        m = gsearch.isin(a, t)
        assert seen_find == [[a.data.ptr]]
        assert seen_isin == [[a.data.ptr, t.data.ptr, m.data.ptr]]


# --- properties (hypothesis; skipped where it is not installed) ---------------------------------

try:
    from hypothesis import given
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError:  # pragma: no cover
    given = None

if given is not None:

    @st.composite
    def data_and_value(draw):
        dtype = np.dtype(draw(st.sampled_from(ALL_DTYPES)))
        elements = None
        if dtype.kind == "f":
            elements = st.floats(width=dtype.itemsize * 8, allow_nan=True, allow_infinity=True)
        if draw(st.booleans()) and dtype.kind in "iuf":  # few distinct values: duplicates, hits
            elements = st.sampled_from(np.array([0, 1, 2, 3, 100], dtype=dtype).tolist())
        a = draw(hnp.arrays(dtype, st.integers(0, 300), elements=elements))
        pick = hnp.from_dtype(dtype) if elements is None else elements
        v = draw(st.sampled_from(a.tolist()) if a.size and draw(st.booleans()) else pick)
        hi = draw(pick)
        return a, v, hi

    @given(data_and_value(), st.sampled_from(OPS), st.integers(0, 2**64 - 1))
    def test_property_find(avh, op, seed):
        a, v, hi = avh
        v = np.asarray(v, dtype=a.dtype).item()
        hi = np.asarray(hi, dtype=a.dtype).item() if op == "in" else None
        check_all_modes(a, op, v, hi, seeds=(seed,))

    @given(data_and_value(), data_and_value(), st.booleans(), st.sampled_from(["auto", "sorted", "hash"]))
    def test_property_isin(x, y, invert, method):
        a, t = x[0], y[0]
        try:
            got = gsearch.isin(a, t, invert=invert, method=method)
        except TypeError as e:  # a pair whose promotion would round
            assert "numpy promotes them" in str(e) and a.dtype.name in str(e) and t.dtype.name in str(e)
            assert a.dtype.itemsize == 8 or t.dtype.itemsize == 8
            return
        np.testing.assert_array_equal(got, ref_isin(a, t, invert=invert))
