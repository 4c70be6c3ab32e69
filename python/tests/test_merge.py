"""The merge family: gsearch.merge / sort / argsort against numpy's stable sort, the multiset
set_* against a plain-Python std::set_* reference, intersect1d / union1d / setdiff1d / setxor1d
against numpy itself (NaN and -0.0 included), join against a nested-loop join, and
searchsorted(sorted_queries=...) / equal_range against np.searchsorted; numpy's sorts of float16
in float32 (references.py). The GPU tests at the end (torch / cupy CUDA arrays) skip unless a GPU
and gsearch's CUDA backend are there."""

import math

import numpy as np
import pytest

import gsearch
from gsearch import _core
from conftest import ALL_DTYPES, NATIVE_DTYPES
from references import (
    ref_argsort,
    ref_intersect1d,
    ref_isin,
    ref_lexsort,
    ref_setdiff1d,
    ref_setxor1d,
    ref_sort,
    ref_union1d,
    ref_unique,
)

from gpu_support import cupy, needs_cupy, needs_torch, spy_on, torch  # noqa: F401

SIZES = [0, 1, 2, 33, 1000, 5000]
MULTISET_OPS = {
    "intersection": gsearch.set_intersection,
    "union": gsearch.set_union,
    "difference": gsearch.set_difference,
    "symmetric-difference": gsearch.set_symmetric_difference,
}
NUMPY_SETS = [
    (gsearch.intersect1d, ref_intersect1d, True),
    (gsearch.union1d, ref_union1d, False),
    (gsearch.setdiff1d, ref_setdiff1d, True),
    (gsearch.setxor1d, ref_setxor1d, True),
]
HOWS = ["inner", "left", "right", "full", "semi", "anti"]


# --- data and references ------------------------------------------------------------------------


def pool_of(dtype):
    """A small pool of values of dtype (heavy duplicates): extremes, and for floats NaN, inf,
    -inf, -0.0 and 0.0."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = int(info.min), int(info.max)
        return np.array(sorted({lo, lo + 1, 0, 1, 2, 7, 100, hi - 1, hi}), dtype=dt)
    return np.array([-np.inf, -1e4, -1.5, -0.0, 0.0, 0.25, 1.0, 3.0, 1e4, np.inf, np.nan], dtype=dt)


def data(rng, dtype, n, pool=None):
    """n values drawn from a pool (duplicates), unsorted."""
    return rng.choice(pool_of(dtype) if pool is None else pool, size=n)


def stable(x):
    return ref_sort(x, kind="stable")


def same(got, want):
    """Equal values (NaN == NaN), equal dtypes, and for floats equal sign bits (which of -0.0 /
    0.0 came through)."""
    assert type(got) is np.ndarray, type(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def less(x, y):
    """gsearch's order: NaN after everything, -0.0 == 0.0."""
    xn, yn = x != x, y != y
    if xn or yn:
        return yn and not xn
    return x < y


def ref_multiset(op, a, b):
    """std::set_* in gsearch's order, as a two-pointer loop over Python lists."""
    a, b = list(a), list(b)
    i = j = 0
    out = []
    while i < len(a) and j < len(b):
        if less(a[i], b[j]):
            if op != "intersection":
                out.append(a[i])
            i += 1
        elif less(b[j], a[i]):
            if op in ("union", "symmetric-difference"):
                out.append(b[j])
            j += 1
        else:
            if op in ("intersection", "union"):
                out.append(a[i])
            i += 1
            j += 1
    if op != "intersection":
        out += a[i:]
    if op in ("union", "symmetric-difference"):
        out += b[j:]
    return out


def ref_join(how, left, right):
    """A nested-loop join, rows in the documented order: key, left index, right index."""
    eq = lambda x, y: not less(x, y) and not less(y, x)  # noqa: E731
    rows = []
    l_hit, r_hit = [False] * len(left), [False] * len(right)
    for i, x in enumerate(left):
        for j, y in enumerate(right):
            if eq(x, y):
                l_hit[i] = r_hit[j] = True
                if how not in ("semi", "anti"):
                    rows.append((x, i, j))
    for i, x in enumerate(left):
        if (how == "semi" and l_hit[i]) or (how in ("anti", "left", "full") and not l_hit[i]):
            rows.append((x, i, -1))
    for j, y in enumerate(right):
        if how in ("right", "full") and not r_hit[j]:
            rows.append((y, -1, j))
    import functools

    def cmp(r, s):
        if less(r[0], s[0]):
            return -1
        if less(s[0], r[0]):
            return 1
        return -1 if (r[1], r[2]) < (s[1], s[2]) else (1 if (r[1], r[2]) > (s[1], s[2]) else 0)

    rows.sort(key=functools.cmp_to_key(cmp))
    li = np.array([r[1] for r in rows], dtype=np.int64)
    ri = None if how in ("semi", "anti") else np.array([r[2] for r in rows], dtype=np.int64)
    return li, ri


def ref_join_np(how, left, right):
    """ref_join with numpy (vectorized, for the large GPU inputs): numpy's searchsorted finds
    each left key's equal range in right (numpy's order is gsearch's: NaN last and equal to NaN,
    -0.0 == 0.0), lexsort orders the rows by key, left index, right index."""
    left, right = np.asarray(left), np.asarray(right)
    lo, hi = np.searchsorted(right, left, "left"), np.searchsorted(right, left, "right")
    cnt = hi - lo
    if how in ("semi", "anti"):
        return np.flatnonzero(cnt > 0 if how == "semi" else cnt == 0).astype(np.int64), None
    li = np.repeat(np.arange(len(left)), cnt)
    ri = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt) + np.repeat(lo, cnt)
    keys = [left[li]]
    lis, ris = [li], [ri]
    if how in ("left", "full"):
        i = np.flatnonzero(cnt == 0)
        lis.append(i), ris.append(np.full(i.size, -1)), keys.append(left[i])
    if how in ("right", "full"):
        rc = np.searchsorted(left, right, "right") - np.searchsorted(left, right, "left")
        j = np.flatnonzero(rc == 0)
        lis.append(np.full(j.size, -1)), ris.append(j), keys.append(right[j])
    li, ri, key = np.concatenate(lis), np.concatenate(ris), np.concatenate(keys)
    order = ref_lexsort((ri, li, key))
    return li[order].astype(np.int64), ri[order].astype(np.int64)


def ref_multiset_np(op, a, b):
    """ref_multiset as an array of a's dtype."""
    return np.array(ref_multiset(op, a.tolist(), b.tolist()), dtype=a.dtype)


# --- merge, sort, argsort -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("na,nb", [(0, 0), (0, 5), (7, 0), (1, 1), (33, 1000), (5000, 4097)])
def test_merge_is_numpys_stable_sort_of_the_concatenation(rng, dtype, na, nb):
    a, b = stable(data(rng, dtype, na)), stable(data(rng, dtype, nb))
    got = gsearch.merge(a, b)
    same(got, stable(np.concatenate([a, b])))  # ties: a's first, so the sign bits agree too
    av = np.arange(na, dtype=np.int64)
    bv = np.arange(nb, dtype=np.int64) + 10**9
    keys, values = gsearch.merge(a, b, av, bv)
    order = ref_argsort(np.concatenate([a, b]))
    same(keys, stable(np.concatenate([a, b])))
    same(values, np.concatenate([av, bv])[order])


@pytest.mark.parametrize("vdtype", ["int64", "uint64", "float64", "int32", "uint32", "int8", "bool"])
def test_merge_values_of_other_dtypes(rng, vdtype):
    a, b = stable(data(rng, "float32", 300)), stable(data(rng, "float32", 200))
    vd = np.dtype(vdtype)
    if vd.kind == "f":
        av = rng.standard_normal(300)
        av[::7] = np.nan
        av[::11] = -0.0
        bv = rng.standard_normal(200)
    elif vd.kind == "b":
        av, bv = rng.integers(0, 2, 300).astype(bool), rng.integers(0, 2, 200).astype(bool)
    else:
        info = np.iinfo(vd)
        av = rng.integers(int(info.min), int(info.max), 300, dtype=vd, endpoint=True)
        bv = rng.integers(int(info.min), int(info.max), 200, dtype=vd, endpoint=True)
    keys, values = gsearch.merge(a, b, av.astype(vd), bv.astype(vd))
    want = np.concatenate([av, bv]).astype(vd)[ref_argsort(np.concatenate([a, b]))]
    assert values.dtype == vd
    assert values.tobytes() == want.tobytes()  # bit for bit (NaN payloads, -0.0)


def test_merge_promotes_key_dtypes_exactly():
    got = gsearch.merge(np.array([1, 3], dtype=np.int8), np.array([2, 255], dtype=np.uint8))
    same(got, np.array([1, 2, 3, 255], dtype=np.int16))
    same(gsearch.merge(np.array([1, 5], np.int32), np.array([2.5])), np.array([1.0, 2.5, 5.0]))
    with pytest.raises(TypeError, match="int64"):
        gsearch.merge(np.array([1, 2], dtype=np.int64), np.array([1.5]))
    with pytest.raises(TypeError):
        gsearch.merge(np.array([1], dtype=np.uint64), np.array([-1], dtype=np.int32))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_sort_and_argsort_are_numpys_stable_ones(rng, dtype, n):
    x = data(rng, dtype, n)
    same(gsearch.sort(x), stable(x))
    same(gsearch.argsort(x), ref_argsort(x))
    values = rng.integers(-(2**62), 2**62, n)
    keys, carried = gsearch.sort(x, values)
    same(keys, stable(x))
    same(carried, values[ref_argsort(x)])
    if n:
        assert gsearch.sort(x) is not x


def test_sort_of_random_data_and_full_ranges(rng):
    for dtype in NATIVE_DTYPES:
        dt = np.dtype(dtype)
        if dt.kind == "f":
            x = rng.standard_normal(100_000).astype(dt)
            x[::97] = np.nan
            x[::89] = -0.0
        else:
            info = np.iinfo(dt)
            x = rng.integers(int(info.min), int(info.max), 100_000, dtype=dt, endpoint=True)
        same(gsearch.sort(x), stable(x))
        same(gsearch.argsort(x), ref_argsort(x))


def test_sort_does_not_modify_its_input(rng):
    x = data(rng, "float64", 1000)
    before = x.copy()
    gsearch.sort(x)
    gsearch.argsort(x)
    assert x.tobytes() == before.tobytes()


# --- multiset set operations --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", list(MULTISET_OPS))
@pytest.mark.parametrize("na,nb", [(0, 0), (0, 9), (9, 0), (1, 1), (40, 700), (3000, 2001)])
def test_multiset_ops_are_std_set(rng, dtype, op, na, nb):
    a, b = stable(data(rng, dtype, na)), stable(data(rng, dtype, nb))
    got = MULTISET_OPS[op](a, b)
    want = np.array(ref_multiset(op, a.tolist(), b.tolist()), dtype=a.dtype)
    same(got, want)


def test_multiset_counts():
    # 2 three times in a, twice in b; 1 only in a; 4 only in b.
    a, b = np.array([1, 2, 2, 2, 3]), np.array([2, 2, 3, 3, 4])
    same(gsearch.set_intersection(a, b), np.array([2, 2, 3]))
    same(gsearch.set_union(a, b), np.array([1, 2, 2, 2, 3, 3, 4]))
    same(gsearch.set_difference(a, b), np.array([1, 2]))
    same(gsearch.set_symmetric_difference(a, b), np.array([1, 2, 3, 4]))
    # Intersection and union take a's copies: -0.0 in a, 0.0 in b.
    x, y = np.array([-0.0, 1.0]), np.array([0.0, 0.0])
    same(gsearch.set_intersection(x, y), np.array([-0.0]))
    same(gsearch.set_union(x, y), np.array([-0.0, 0.0, 1.0]))
    same(gsearch.set_intersection(y, x), np.array([0.0]))
    # NaN equals NaN here (gsearch's order), unlike numpy's intersect1d.
    n = np.array([1.0, np.nan, np.nan])
    same(gsearch.set_intersection(n, np.array([np.nan])), np.array([np.nan]))
    same(gsearch.set_difference(n, np.array([np.nan])), np.array([1.0, np.nan]))


# --- numpy's set functions ----------------------------------------------------------------------


def numpy_cases(rng, dtype):
    pool = pool_of(dtype)
    yield data(rng, dtype, 50, pool), data(rng, dtype, 30, pool)
    yield data(rng, dtype, 2000, pool), data(rng, dtype, 1, pool)
    yield data(rng, dtype, 0, pool), data(rng, dtype, 5, pool)
    yield data(rng, dtype, 0, pool), data(rng, dtype, 0, pool)
    yield ref_unique(data(rng, dtype, 20, pool)), ref_unique(data(rng, dtype, 20, pool))
    if np.dtype(dtype).kind == "f":
        nan, inf = np.nan, np.inf
        for x, y in [
            ([1.0, nan, 2.0, nan], [nan, 2.0, 3.0]),
            ([nan], [nan]),
            ([nan, nan], [1.0]),
            ([1.0], [nan]),
            ([-0.0, 0.0, 1.0], [0.0]),
            ([0.0], [-0.0, -0.0]),
            ([-inf, inf, nan], [inf, nan, -inf]),
        ]:
            yield np.array(x, dtype=dtype), np.array(y, dtype=dtype)
    else:
        big = rng.integers(0, 10**6, 5000).astype(dtype)
        yield big, big[::3].copy()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_numpy_set_functions_exactly(rng, dtype):
    for a, b in numpy_cases(rng, dtype):
        for ours, theirs, has_assume_unique in NUMPY_SETS:
            got, want = ours(a, b), theirs(a, b)
            assert type(got) is np.ndarray and got.dtype == want.dtype, (ours.__name__, got.dtype, want.dtype)
            np.testing.assert_array_equal(got, want, err_msg=f"{ours.__name__}({a!r}, {b!r})")
            if not has_assume_unique:
                continue
            for x, y in [(ref_unique(a), ref_unique(b)), (a, b)]:  # unique; with duplicates
                x = x.copy()
                rng.shuffle(x)
                got = ours(x, y, assume_unique=True)
                if ours is gsearch.setdiff1d and len(ref_unique(x)) < len(x):
                    # numpy's answer here depends on its isin algorithm (table or sort); the
                    # documented meaning, which gsearch gives, is x[~isin(x, y)] in x's order.
                    want = x[~ref_isin(x, y)]
                else:
                    want = theirs(x, y, assume_unique=True)
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want, err_msg=f"{ours.__name__}({x!r}, {y!r}, assume_unique=True)")


def test_numpy_set_functions_nan_rules():
    """numpy's NaN behaviour, spelled out: intersect1d never keeps NaN, union1d keeps one,
    setdiff1d keeps ar1's even when ar2 has NaN, setxor1d keeps each side's (two NaNs)."""
    a, b = np.array([1.0, np.nan, np.nan]), np.array([np.nan, 2.0])
    assert np.isnan(gsearch.intersect1d(a, b)).sum() == 0 == np.isnan(np.intersect1d(a, b)).sum()
    assert np.isnan(gsearch.union1d(a, b)).sum() == 1 == np.isnan(np.union1d(a, b)).sum()
    assert np.isnan(gsearch.setdiff1d(a, b)).sum() == 1 == np.isnan(np.setdiff1d(a, b)).sum()
    assert np.isnan(gsearch.setxor1d(a, b)).sum() == 2 == np.isnan(np.setxor1d(a, b)).sum()
    np.testing.assert_array_equal(gsearch.setxor1d(a, b), np.array([1.0, 2.0, np.nan, np.nan]))


@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_numpy_set_functions_skip_the_sort_of_sorted_inputs(monkeypatch, rng, dtype):
    """A sorted input (NaN last, -0.0 beside 0.0) is not sorted again; an unsorted one is, and
    the results are numpy's either way, never the caller's own array."""
    a = np.sort(rng.integers(-50, 50, 400)).astype(dtype)
    b = np.sort(rng.integers(-50, 50, 300)).astype(dtype)
    if dtype == np.float64:
        a[a == 0] = -0.0
        a = np.concatenate([a, [np.nan, np.nan]])
    sorts = spy_on(monkeypatch, "sort")
    for ours, theirs, _ in NUMPY_SETS:
        got = ours(a, b)
        np.testing.assert_array_equal(got, theirs(a, b), err_msg=ours.__name__)
        assert not np.shares_memory(got, a) and not np.shares_memory(got, b)
    assert sorts == []
    shuffled = a.copy()
    rng.shuffle(shuffled)
    np.testing.assert_array_equal(gsearch.union1d(shuffled, b), np.union1d(shuffled, b))
    assert len(sorts) == 1  # the shuffled side only


def test_numpy_set_functions_shapes_lists_and_dtypes():
    m = np.array([[3, 1], [2, 3]])
    same(gsearch.union1d(m, [5]), np.union1d(m, [5]))
    same(gsearch.intersect1d([1, 3, 4, 3], [3, 1, 2, 1]), np.array([1, 3]))
    same(gsearch.setdiff1d(np.array([3, 1], dtype=np.int32), np.array([], dtype=np.float64)),
         np.setdiff1d(np.array([3, 1], dtype=np.int32), np.array([], dtype=np.float64)))
    same(gsearch.intersect1d(np.array([1, 2], np.int8), np.array([2, 300], np.int16)), np.array([2], np.int16))
    same(gsearch.union1d(np.array([1], np.uint8), np.array([-1], np.int8)), np.array([-1, 1], np.int16))
    same(gsearch.setxor1d(np.float16([1.5, 2]), np.float16([2])), np.float16([1.5]))
    same(gsearch.union1d(np.array([True]), np.array([False, True])), np.array([False, True]))
    same(gsearch.union1d(3, [1, 3]), np.array([1, 3]))
    with pytest.raises(TypeError, match="promotes"):
        gsearch.union1d(np.array([1], dtype=np.int64), np.array([0.5]))


# --- joins ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("nl,nr", [(0, 0), (0, 4), (5, 0), (1, 1), (60, 40), (200, 150)])
def test_join_is_a_nested_loop_join(rng, dtype, how, nl, nr):
    left, right = stable(data(rng, dtype, nl)), stable(data(rng, dtype, nr))
    li, ri = gsearch.join(left, right, how)
    want_l, want_r = ref_join(how, left.tolist(), right.tolist())
    same(li, want_l)
    if want_r is None:
        assert ri is None
    else:
        same(ri, want_r)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_the_numpy_join_reference_is_the_nested_loop_join(rng, dtype):
    for nl, nr in ((0, 0), (0, 4), (5, 0), (1, 1), (60, 40), (200, 150)):
        left, right = stable(data(rng, dtype, nl)), stable(data(rng, dtype, nr))
        for how in HOWS:
            want_l, want_r = ref_join(how, left.tolist(), right.tolist())
            got_l, got_r = ref_join_np(how, left, right)
            same(got_l, want_l)
            assert (got_r is None) == (want_r is None)
            if want_r is not None:
                same(got_r, want_r)


def test_join_examples_and_mixed_dtypes():
    li, ri = gsearch.join(np.array([1, 2, 2, 5], np.int32), np.array([2.0, 2.0, 3.0, 5.0]))
    same(li, np.array([1, 1, 2, 2, 3]))
    same(ri, np.array([0, 1, 0, 1, 3]))
    # -0.0 matches 0.0, NaN matches NaN.
    li, ri = gsearch.join(np.array([-0.0, np.nan]), np.array([0.0, np.nan, np.nan]), how="full")
    same(li, np.array([0, 1, 1]))
    same(ri, np.array([0, 1, 2]))
    assert gsearch.join(np.array([1, 2]), np.array([2]), how="semi")[1] is None


# --- searchsorted with sorted queries, equal_range -----------------------------------------------


@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
@pytest.mark.parametrize("k,m", [(0, 10), (10, 0), (1, 1), (1000, 33), (300, 20_000)])
def test_searchsorted_sorted_queries(rng, dtype, k, m):
    a = stable(data(rng, dtype, k))
    v = stable(data(rng, dtype, m))
    for side in ("left", "right"):
        want = np.searchsorted(a, v, side=side)
        for sq in (True, False, None):
            got = gsearch.searchsorted(a, v, side=side, sorted_queries=sq)
            same(got, want)
        same(gsearch.searchsorted(a, v, side=side, sorted_queries=True, check_sorted=True), want)
        same(gsearch.searchsorted(a, v, side=side, sorted_queries=True, out_int32=True), want.astype(np.int32))
    lo, hi = gsearch.equal_range(a, v)
    same(lo, np.searchsorted(a, v, "left"))
    same(hi, np.searchsorted(a, v, "right"))
    lo, hi = gsearch.equal_range(a, v, sorted_queries=True, check_sorted=True)
    same(lo, np.searchsorted(a, v, "left"))
    same(hi, np.searchsorted(a, v, "right"))


def test_sorted_queries_errors_and_the_2d_form():
    a = np.array([1, 3, 5])
    with pytest.raises(ValueError, match="sorted"):
        gsearch.searchsorted(a, np.array([4, 2]), sorted_queries=True, check_sorted=True)
    r = gsearch.searchsorted(a, np.array([4, 2]), sorted_queries=True, check_sorted=False)  # unchecked: in range
    assert ((0 <= r) & (r <= 3)).all()
    with pytest.raises(ValueError, match="1-D keys"):
        gsearch.searchsorted(np.array([[1, 2], [3, 4]]), np.array([[1], [2]]), sorted_queries=True)
    same(gsearch.searchsorted(np.array([[1, 2], [3, 4]]), np.array([[1], [4]]), sorted_queries=None),
         np.array([[0], [1]]))
    with pytest.raises(TypeError, match="sorted_queries"):
        gsearch.searchsorted(a, np.array([1]), sorted_queries="yes")
    # 2-D sorted queries (flat order) with 1-D keys; a scalar query.
    v = np.array([[0, 1, 3], [4, 5, 9]])
    same(gsearch.searchsorted(a, v, side="right", sorted_queries=True), np.searchsorted(a, v, side="right"))
    assert gsearch.searchsorted(a, 3, sorted_queries=True) == 1
    assert gsearch.equal_range(np.array([1, 2, 2, 3]), 2) == (1, 3)


def test_sorted_queries_true_checks_the_queries_by_default(monkeypatch):
    a = np.array([1, 3, 5, 7, 9])
    unsorted = [np.array([9, 9, 1]), np.array([[1, 2], [0, 3]]), np.array([1.0, np.nan, 2.0]), [5, 4]]
    for v in unsorted:
        a = np.array([1.0, 3, 5, 7, 9]) if np.asarray(v).dtype.kind == "f" else np.array([1, 3, 5, 7, 9])
        for call in (
            lambda: gsearch.searchsorted(a, v, sorted_queries=True),
            lambda: gsearch.searchsorted(a, v, side="right", sorted_queries=True, out_int32=True),
            lambda: gsearch.equal_range(a, v, sorted_queries=True),
        ):
            with pytest.raises(ValueError, match="queries are not sorted") as e:
                call()
            assert "check_sorted=False" in str(e.value)
        # check_sorted=False skips it (the old default): unspecified but in-range results.
        r = gsearch.searchsorted(a, v, sorted_queries=True, check_sorted=False)
        assert r.shape == np.shape(v) and ((0 <= r) & (r <= 5)).all()
        lo, hi = gsearch.equal_range(a, v, sorted_queries=True, check_sorted=False)
        assert ((0 <= lo) & (lo <= 5) & (0 <= hi) & (hi <= 5)).all()  # unspecified, in range
        # sorted_queries None / False search any order: numpy's answers, no check.
        for sq in (None, False):
            same(gsearch.searchsorted(a, v, sorted_queries=sq), np.searchsorted(a, v))
    a = np.array([1, 3, 5, 7, 9])
    # check_sorted=True checks the keys too (the library checks both).
    with pytest.raises(ValueError, match="keys are not sorted"):
        gsearch.searchsorted(a[::-1], np.array([1, 2]), sorted_queries=True, check_sorted=True)
    with pytest.raises(ValueError, match="queries"):
        gsearch.searchsorted(a, np.array([2, 1]), sorted_queries=True, check_sorted=True)
    # The keys of searchsorted are not checked by default (numpy's and torch's contract).
    assert gsearch.searchsorted(a[::-1], np.array([1, 2]), sorted_queries=True).shape == (2,)
    # Sorted queries pass, NaN last and -0.0 == 0.0; one O(M) check, none with check_sorted=False.
    calls = []
    real = _core.is_sorted
    monkeypatch.setattr(_core, "is_sorted", lambda *args: calls.append(1) or real(*args))
    f = np.array([-1.0, 0.0, 2.0])
    q = np.array([-2.0, 0.0, -0.0, 0.0, np.inf, np.nan, np.nan])
    same(gsearch.searchsorted(f, q, sorted_queries=True), np.searchsorted(f, q))
    assert calls == [1]
    same(gsearch.searchsorted(f, q, sorted_queries=True, check_sorted=False), np.searchsorted(f, q))
    assert calls == [1]
    with pytest.raises(TypeError, match="check_sorted"):
        gsearch.searchsorted(a, np.array([1]), sorted_queries=True, check_sorted="no")


def test_the_cpu_never_checks_queries_for_sortedness(monkeypatch):
    calls = []
    real = _core.is_sorted
    monkeypatch.setattr(_core, "is_sorted", lambda *args: calls.append(1) or real(*args))
    a = np.arange(1 << 21)
    v = np.arange(1 << 21)
    same(gsearch.searchsorted(a, v), v)  # the numpy fast path
    same(gsearch.searchsorted(a, v, out_int32=True), v.astype(np.int32))  # the general path
    assert calls == []
    gsearch.searchsorted(a, v, sorted_queries=True, check_sorted=True)  # the library checks
    assert calls == []


# --- errors --------------------------------------------------------------------------------------


def test_unsorted_inputs_raise_valueerror_mentioning_sorted():
    s, u = np.array([1, 2, 3]), np.array([3, 1, 2])
    for call in (
        lambda: gsearch.merge(s, u),
        lambda: gsearch.merge(u, s),
        lambda: gsearch.merge(u, s, np.arange(3), np.arange(3)),
        lambda: gsearch.set_intersection(s, u),
        lambda: gsearch.set_union(u, s),
        lambda: gsearch.set_difference(u, s),
        lambda: gsearch.set_symmetric_difference(s, u),
        lambda: gsearch.join(u, s),
        lambda: gsearch.join(s, u, how="anti"),
    ):
        with pytest.raises(ValueError, match="sorted"):
            call()
    # check=False runs them (unspecified but in-bounds results).
    assert gsearch.merge(s, u, check=False).shape == (6,)
    assert gsearch.set_union(u, s, check=False).size <= 6
    li, ri = gsearch.join(u, u, check=False)
    assert ((li >= 0) & (li < 3)).all() and ((ri >= 0) & (ri < 3)).all()
    # The numpy functions sort for themselves.
    same(gsearch.intersect1d(u, s), np.array([1, 2, 3]))


def test_argument_errors():
    a = np.array([1, 2, 3])
    with pytest.raises(TypeError, match="promotes"):
        gsearch.merge(a, np.array([1.5]))
    with pytest.raises(TypeError, match="promotes"):
        gsearch.set_union(np.array([1], dtype=np.uint64), np.array([1], dtype=np.int64))
    with pytest.raises(TypeError, match="promotes"):
        gsearch.join(a, np.array([1.5]))
    with pytest.raises(TypeError, match="unsupported"):
        gsearch.sort(np.array([1 + 2j]))
    with pytest.raises(ValueError, match="1-D"):
        gsearch.merge(np.array([[1, 2]]), a)
    with pytest.raises(ValueError, match="1-D"):
        gsearch.sort(np.array([[2, 1]]))
    with pytest.raises(ValueError, match="scalar"):
        gsearch.argsort(3)
    with pytest.raises(ValueError, match="both a_values and b_values"):
        gsearch.merge(a, a, np.arange(3))
    with pytest.raises(ValueError, match="one value each"):
        gsearch.merge(a, a, np.arange(2), np.arange(3))
    with pytest.raises(ValueError, match="one value each"):
        gsearch.sort(a, np.arange(4))
    with pytest.raises(TypeError, match="8-byte"):
        gsearch.sort(a, np.arange(3, dtype=np.float32))
    with pytest.raises(TypeError, match="one dtype"):
        gsearch.merge(a, a, np.arange(3), np.arange(3, dtype=np.uint64))
    with pytest.raises(ValueError, match="how"):
        gsearch.join(a, a, how="outer")
    with pytest.raises(ValueError, match="stream"):
        gsearch.merge(a, a, stream=1)


def test_core_argument_checks():
    a = np.array([1, 2, 3], dtype=np.int32)
    with pytest.raises(TypeError, match="int32 but b is float32"):
        _core.merge(a, a.astype(np.float32), np.empty(6, np.int32))
    with pytest.raises(TypeError, match="out must be int32"):
        _core.merge(a, a, np.empty(6, np.int64))
    with pytest.raises(ValueError, match="out has 5 elements"):
        _core.merge(a, a, np.empty(5, np.int32))
    with pytest.raises(ValueError, match="all of a_values, b_values and out_values"):
        _core.merge(a, a, np.empty(6, np.int32), np.arange(3))
    with pytest.raises(TypeError, match="must return the result"):
        _core.set_operation(a, a, 0, lambda c: np.empty(c, np.int64))
    with pytest.raises(TypeError, match="pair"):
        _core.join(a, a, 0, lambda r: np.empty(r, np.int64))
    with pytest.raises(ValueError, match="no right_index"):
        _core.join(a, a, 4, lambda r: (np.empty(r, np.int64), np.empty(r, np.int64)))
    with pytest.raises(ValueError, match="out of range"):
        _core.set_operation(a, a, 4, lambda c: np.empty(c, np.int32))
    assert _core.is_sorted(a) and not _core.is_sorted(a[::-1].copy())
    assert _core.keys_beyond_shared(False, 4, 1 << 30) is False
    assert dict(_core.SET_OPS) == {"intersection": 0, "union": 1, "difference": 2, "symmetric-difference": 3}
    assert list(_core.JOIN_KINDS) == HOWS


@pytest.mark.parametrize(
    "fn",
    [gsearch.merge, gsearch.sort, gsearch.argsort, gsearch.set_intersection, gsearch.set_union,
     gsearch.set_difference, gsearch.set_symmetric_difference, gsearch.intersect1d, gsearch.union1d,
     gsearch.setdiff1d, gsearch.setxor1d, gsearch.join, gsearch.equal_range],
)
def test_documented(fn):
    doc = fn.__doc__
    for section in ("Parameters\n    ----------", "Returns\n    -------", "Raises\n    ------", "Examples\n    --------"):
        assert section in doc, (fn.__name__, section)
    assert fn.__name__ in gsearch.__all__


# --- GPU: torch and cupy CUDA arrays -------------------------------------------------------------


@needs_torch
class TestTorch:
    @pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64", "int16", "float16"])
    def test_gpu_equals_numpy(self, rng, dtype):
        a_np, b_np = stable(data(rng, dtype, 70_000)), stable(data(rng, dtype, 50_001))
        a, b = torch.from_numpy(a_np).cuda(), torch.from_numpy(b_np).cuda()
        got = gsearch.merge(a, b)
        assert isinstance(got, torch.Tensor) and got.is_cuda and got.dtype == a.dtype
        same(got.cpu().numpy(), stable(np.concatenate([a_np, b_np])))
        keys, vals = gsearch.merge(a, b, torch.arange(70_000, device="cuda"),
                                   torch.arange(70_000, 120_001, device="cuda"))
        same(vals.cpu().numpy(), ref_argsort(np.concatenate([a_np, b_np])))
        x_np = data(rng, dtype, 100_000)
        x = torch.from_numpy(x_np).cuda()
        same(gsearch.sort(x).cpu().numpy(), stable(x_np))
        same(gsearch.argsort(x).cpu().numpy(), ref_argsort(x_np))
        for op, fn in MULTISET_OPS.items():
            r = fn(a, b)
            assert isinstance(r, torch.Tensor) and r.is_cuda
            same(r.cpu().numpy(), ref_multiset_np(op, a_np, b_np))
        for ours, theirs, _ in NUMPY_SETS:
            r = ours(x, b)
            assert isinstance(r, torch.Tensor) and r.is_cuda
            want = theirs(x_np, b_np)
            assert r.cpu().numpy().dtype == want.dtype
            np.testing.assert_array_equal(r.cpu().numpy(), want)
        small_l, small_r = stable(data(rng, dtype, 3000)), stable(data(rng, dtype, 2000))
        for how in HOWS:
            li, ri = gsearch.join(torch.from_numpy(small_l).cuda(), torch.from_numpy(small_r).cuda(), how)
            wl, wr = ref_join_np(how, small_l, small_r)
            assert li.is_cuda
            same(li.cpu().numpy(), wl)
            if wr is None:
                assert ri is None
            else:
                same(ri.cpu().numpy(), wr)

    def test_no_copy_of_the_inputs(self, monkeypatch):
        a = torch.sort(torch.randn(100_000, device="cuda")).values
        b = torch.sort(torch.randn(50_000, device="cuda")).values
        seen = spy_on(monkeypatch, "merge")
        gsearch.merge(a, b)
        assert seen[0][:2] == [a.data_ptr(), b.data_ptr()]
        seen = spy_on(monkeypatch, "set_operation")
        gsearch.set_union(a, b)
        assert seen[0][:2] == [a.data_ptr(), b.data_ptr()]
        seen = spy_on(monkeypatch, "join")
        gsearch.join(a, b)
        assert seen[0][:2] == [a.data_ptr(), b.data_ptr()]

    def test_sorted_queries_on_the_gpu(self):
        k = 1 << 22
        a = torch.sort(torch.randint(0, 1 << 30, (k,), device="cuda", dtype=torch.int32)).values
        v = torch.sort(torch.randint(0, 1 << 30, (1 << 21,), device="cuda", dtype=torch.int32)).values
        want = torch.searchsorted(a, v)
        for sq in (True, False, None):
            assert torch.equal(gsearch.searchsorted(a, v, sorted_queries=sq), want)
        lo, hi = gsearch.equal_range(a, v)
        assert torch.equal(lo, want) and torch.equal(hi, torch.searchsorted(a, v, right=True))
        # sorted_queries=True checks the queries (on the GPU too), check_sorted=False skips it
        u = v.flip(0)
        with pytest.raises(ValueError, match="queries are not sorted"):
            gsearch.searchsorted(a, u, sorted_queries=True)
        r = gsearch.searchsorted(a, u, sorted_queries=True, check_sorted=False)
        assert bool(((r >= 0) & (r <= k)).all())
        assert torch.equal(gsearch.searchsorted(a, u, sorted_queries=None), torch.searchsorted(a, u))

    def test_errors(self):
        a = torch.arange(5, device="cuda")
        with pytest.raises(ValueError, match="sorted"):
            gsearch.merge(a, a.flip(0))
        with pytest.raises(ValueError, match="device"):
            gsearch.merge(a, np.arange(5))


@needs_cupy
class TestCupy:
    @pytest.mark.parametrize("dtype", ["int32", "uint64", "float32", "float64"])
    def test_gpu_equals_numpy(self, rng, dtype):
        a_np, b_np = stable(data(rng, dtype, 40_000)), stable(data(rng, dtype, 30_000))
        a, b = cupy.asarray(a_np), cupy.asarray(b_np)
        got = gsearch.merge(a, b)
        assert isinstance(got, cupy.ndarray) and got.device == a.device
        same(cupy.asnumpy(got), stable(np.concatenate([a_np, b_np])))
        same(cupy.asnumpy(gsearch.argsort(a)), ref_argsort(a_np))
        for op, fn in MULTISET_OPS.items():
            same(cupy.asnumpy(fn(a, b)), ref_multiset_np(op, a_np, b_np))
        for ours, theirs, _ in NUMPY_SETS:
            np.testing.assert_array_equal(cupy.asnumpy(ours(a, b)), theirs(a_np, b_np))
        li, ri = gsearch.join(a[:3000], b[:2000], "full")
        wl, wr = ref_join_np("full", a_np[:3000], b_np[:2000])
        same(cupy.asnumpy(li), wl)
        same(cupy.asnumpy(ri), wr)
