"""gsearch.dask against numpy, on Dask's threaded scheduler and on a local dask.distributed cluster
(2 workers in this process): searchsorted with replicated and sharded keys, isin, find, count and
sort (its partitions balanced also with heavy duplicates)."""

import subprocess
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'dask[array,distributed]')")
import gsearch  # noqa: E402
import gsearch.dask as gdask  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as c:
        with distributed.Client(c, set_as_default=False) as client:
            yield client


@pytest.fixture(params=["threads", "cluster"])
def compute(request):
    """compute(x): x's value on the threaded scheduler or on the local cluster."""
    if request.param == "threads":
        return lambda x: x.compute(scheduler="threads")
    client = request.getfixturevalue("cluster")
    return lambda x: client.compute(x).result()


def floats(rng, n, distinct=40):
    """Float64 with duplicates, NaN, -0.0, 0.0 and the infinities."""
    x = rng.integers(0, distinct, n).astype(np.float64) - distinct / 2
    edges = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf])
    pick = rng.random(n) < 0.15
    x[pick] = edges[rng.integers(0, len(edges), pick.sum())]
    return x


def same_bits(got, want):
    """Equal bit for bit (floats: where -0.0 and NaN are counts)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        got, want = got.view(np.uint64), want.view(np.uint64)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_replicated_keys(compute, side):
    rng = np.random.default_rng(1)
    keys = np.sort(floats(rng, 300))
    queries = floats(rng, 12 * 35).reshape(12, 35)
    got = gdask.searchsorted(keys, da.from_array(queries, chunks=(5, 10)), side)
    assert got.chunks == ((5, 5, 2), (10, 10, 10, 5))
    same_bits(compute(got), np.searchsorted(keys, queries, side))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_sharded_keys(compute, side):
    rng = np.random.default_rng(2)
    keys = np.sort(rng.integers(0, 60, 500)).astype(np.int32)  # runs of equal keys across chunks
    sharded = da.from_array(keys, chunks=((120, 0, 200, 1, 179),))  # an empty chunk, a tiny one
    queries = rng.integers(-5, 66, 333).astype(np.int32)
    got = gdask.searchsorted(sharded, da.from_array(queries, chunks=100), side)
    same_bits(compute(got), np.searchsorted(keys, queries, side))


def test_searchsorted_unsorted_keys_raise(compute):
    """Issue 38: unsorted keys gave an answer. In-memory keys are checked in the call, sharded
    ones when the result is computed (each chunk, and the chunks' order); check_sorted=False
    skips it. The one-process gsearch.searchsorted(check_sorted=True) raises ValueError too."""
    queries = da.from_array(np.array([0, 2, 5, 9]), chunks=2)
    unsorted = np.array([3, 1, 2, 8])
    with pytest.raises(ValueError, match="not sorted"):
        gsearch.searchsorted(unsorted, np.array([2]), check_sorted=True)
    with pytest.raises(ValueError, match="gsearch.dask.searchsorted: the keys are not sorted"):
        gdask.searchsorted(unsorted, queries)
    assert compute(gdask.searchsorted(unsorted, queries, check_sorted=False)).shape == (4,)
    sharded_cases = {
        "key chunk 1 is not sorted": da.from_array(np.array([0, 1, 5, 4, 7, 8]), chunks=2),
        "key chunk 2 begins before key chunk 0 ends": da.from_array(np.array([4, 6, 5, 7, 9]), chunks=((2, 0, 3),)),
        "key chunk 1 begins before key chunk 0 ends": da.from_array(np.array([1.0, np.nan, 2.0, 3.0]), chunks=2),
    }
    for message, keys in sharded_cases.items():
        q = queries.astype(keys.dtype)
        result = gdask.searchsorted(keys, q)  # lazy: no error yet
        with pytest.raises(ValueError, match=message):
            compute(result)
        compute(gdask.searchsorted(keys, q, check_sorted=False))
    # Sorted keys pass, NaN last and -0.0 == 0.0 across chunk ends included.
    keys = np.array([-1.0, 0.0, -0.0, 0.0, 3.0, np.nan, np.nan])
    q = queries.astype(np.float64)
    same_bits(compute(gdask.searchsorted(da.from_array(keys, chunks=((2, 1, 2, 1, 1),)), q)), np.searchsorted(keys, [0.0, 2, 5, 9]))
    same_bits(compute(gdask.searchsorted(keys, q, "right")), np.searchsorted(keys, [0.0, 2, 5, 9], "right"))
    with pytest.raises(TypeError, match="check_sorted must be"):
        gdask.searchsorted(keys, queries, check_sorted=None)


def test_searchsorted_in_the_output_of_sort(compute):
    rng = np.random.default_rng(3)
    data = floats(rng, 700)
    keys = gdask.sort(da.from_array(data, chunks=150))  # sharded, chunk sizes unknown
    queries = floats(rng, 200)
    got = gdask.searchsorted(keys, da.from_array(queries, chunks=64), "right")
    same_bits(compute(got), np.searchsorted(np.sort(data), queries, "right"))


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.uint64])
def test_sort(compute, dtype):
    rng = np.random.default_rng(4)
    n = 2000
    data = floats(rng, n) if dtype == np.float64 else rng.integers(0, 5, n).astype(dtype)  # heavy duplicates
    x = da.from_array(data, chunks=((300, 700, 0, 600, 400),))
    result = gdask.sort(x)
    assert result.numblocks == x.numblocks
    same_bits(compute(result), np.sort(data, kind="stable"))
    sizes = compute(result.map_blocks(lambda b: np.array([len(b)]), chunks=(1,), dtype=np.int64))
    assert sizes.sum() == n and sizes.max() <= 2 * n / len(sizes), sizes  # balanced, duplicates or not


def test_isin(compute):
    rng = np.random.default_rng(5)
    element = floats(rng, 20 * 30).reshape(20, 30)
    tests = floats(rng, 50)
    x = da.from_array(element, chunks=(7, 11))
    for t in (tests, da.from_array(tests, chunks=13)):  # replicated, and gathered from chunks
        for invert in (False, True):
            same_bits(compute(gdask.isin(x, t, invert=invert)), np.isin(element, tests, invert=invert))


def test_find_and_count(compute):
    rng = np.random.default_rng(6)
    data = rng.integers(0, 100, 1000).astype(np.int64)
    x = da.from_array(data, chunks=((250, 0, 500, 250),))
    for value in (data[777], 1000):  # a match (maybe earlier too), none
        matches = np.flatnonzero(data == value)
        assert compute(gdask.find(x, value)) == (matches[0] if len(matches) else -1)
        assert int(compute(gdask.find(x, value, "any"))) in (set(matches.tolist()) or {-1})
        same_bits(compute(gdask.find(x, value, "all")), matches)
    assert compute(gdask.count(x, 50, "<")) == np.count_nonzero(data < 50)
    assert compute(gdask.find(x, 10, "count", "in", hi=20)) == np.count_nonzero((data >= 10) & (data < 20))


def test_errors():
    x = da.zeros((4, 4), chunks=2)
    with pytest.raises(ValueError, match="x must be 1-D"):
        gdask.sort(x)
    with pytest.raises(ValueError, match="side must be"):
        gdask.searchsorted(np.arange(3), x, "middle")
    with pytest.raises(ValueError, match="mode must be"):
        gdask.find(x.ravel(), 1, "random")
    with pytest.raises(ValueError, match=r"gsearch\.dask\.count: a must be 1-D"):  # its own name
        gdask.count(x, 1)
    with pytest.raises(ValueError, match=r"gsearch\.dask\.find: a must be 1-D"):
        gdask.find(x, 1)
    with pytest.raises(ValueError, match=r"gsearch\.dask\.join: right must be 1-D"):
        gdask.join(x.ravel(), x)
    with pytest.raises(ValueError, match="how must be one of"):
        gdask.join(x.ravel(), x.ravel(), "outer")


def reference_join(left, right, how):
    """gsearch.join of the stably sorted tables, mapped to the original rows: the one-process
    answer gsearch.dask.join must give."""
    lo, ro = np.argsort(left, kind="stable"), np.argsort(right, kind="stable")
    li, ri = gsearch.join(left[lo], right[ro], how)
    back = lambda i, o: np.where(i >= 0, o[np.maximum(i, 0)] if len(o) else -1, -1)  # noqa: E731
    return back(li, lo), (None if ri is None else back(ri, ro))


@pytest.mark.parametrize("how", ["inner", "left", "right", "full", "semi", "anti"])
def test_join_equals_the_one_process_join(compute, how):
    rng = np.random.default_rng(7)
    for n, m, lchunks, rchunks, pool in ((400, 300, 60, 45, 50), (50, 0, 7, 5, 10), (200, 180, 200, 17, 3),
                                          (90, 120, ((30, 0, 60),), 40, 1000)):
        left = rng.integers(0, pool, n).astype(np.int64)
        right = rng.integers(0, pool, m).astype(np.int32)
        left[::7] = 5  # a key of many rows on both sides
        if m:
            right[::5] = 5
        li, ri = gdask.join(da.from_array(left, chunks=lchunks), da.from_array(right, chunks=rchunks), how)
        want_l, want_r = reference_join(left, right, how)
        same_bits(compute(li), want_l)
        if want_r is None:
            assert ri is None
        else:
            same_bits(compute(ri), want_r)
    floats = np.array([3.0, np.nan, -0.0, 1.0, 0.0, np.nan, 3.0])  # NaN equals NaN, -0.0 equals 0.0
    other = np.array([np.nan, 0.0, 3.0, 7.0])
    li, ri = gdask.join(da.from_array(floats, chunks=3), da.from_array(other, chunks=2), how)
    want_l, want_r = reference_join(floats, other, how)
    same_bits(compute(li), want_l)
    if want_r is not None:
        same_bits(compute(ri), want_r)


def test_import_gsearch_needs_no_dask():
    code = "import sys, gsearch, gsearch.distributed; assert 'dask' not in sys.modules, 'dask imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
