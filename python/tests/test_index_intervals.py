"""gsearch.IndexIntervals against numpy: select is np.sort(a)[k] and leaves numpy's partition
contract around k, range is the slice of np.sort(a) between the bounds' searchsorted positions,
sort is np.sort (float16 sorted as float32: references.py); every dtype, NaN / inf / -0.0, empty
/ one element / sizes around the GPU's one-block limit (11,264) and larger; the reuse (a repeated
query takes no improve step), the statistics and the invariants (check()) after improves; bounds
of other types than the data; numpy's exception types. The GPU tests at the end (torch / cupy
CUDA arrays) skip unless a GPU and gsearch's CUDA backend are there (gpu_support.py)."""

import doctest
import math
import threading

import numpy as np
import pytest

import gsearch
from gsearch import _core
from conftest import ALL_DTYPES, NATIVE_DTYPES, random_values
from references import ref_sort
from gpu_support import cupy, needs_cupy, needs_torch, spy_on, torch  # noqa: F401

ONE_BLOCK = 11_264  # the GPU's one-block improve limit (10,240 cells and more)
SIZES = [1, 2, 3, 31, 1000, ONE_BLOCK - 1, ONE_BLOCK, ONE_BLOCK + 1, 70_001]


def same_keys(got, want):
    """Equal in the key order (NaN where NaN, -0.0 == 0.0), of the same dtype."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype.newbyteorder("="), (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


def data_of(rng, dtype, n, kind="random"):
    if kind == "few":
        return random_values(rng, dtype, n, pool=[0, 1, 3])
    x = random_values(rng, dtype, n)
    if kind == "sorted":
        return ref_sort(x)
    if kind == "constant":
        return np.full(n, x[0], dtype=x.dtype)
    return x


def assert_partitioned(ii, s, k):
    """numpy's partition contract at k on ii.data: data[k] is s[k], the elements before are
    the k smallest, those after the rest (s = np.sort(a))."""
    d = ii.data
    same_keys(d[k : k + 1], s[k : k + 1])
    same_keys(ref_sort(d[:k]), s[:k])
    same_keys(ref_sort(d[k + 1 :]), s[k + 1 :])


def assert_statistics(ii):
    """The statistics agree with the pieces, and the invariants hold."""
    assert ii.check() == ""
    pieces = ii.intervals_list()
    n = len(ii)
    if n == 0:
        assert pieces == [] and ii.unplaced == 0
        return
    assert pieces[0].lo == 0 and pieces[-1].hi == n
    assert all(p.hi == q.lo for p, q in zip(pieces, pieces[1:]))
    assert all(p.lo < p.hi for p in pieces)
    assert ii.unplaced == sum(p.hi - p.lo for p in pieces if not p.settled)
    merged = sum(1 for i, p in enumerate(pieces) if not (p.settled and i and pieces[i - 1].settled))
    assert ii.intervals == merged


# --- select ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_select_is_np_sort_and_partitions(rng, dtype, n):
    a = data_of(rng, dtype, n)
    s = ref_sort(a)
    ii = gsearch.IndexIntervals(a)
    assert len(ii) == ii.size == n and ii.dtype == a.dtype
    assert ii.intervals == 1 and ii.unplaced == (n if n > 1 else 0) and ii.improves == 0
    ks = sorted({0, n - 1, n // 2, int(rng.integers(0, n)), -1, -n})
    unplaced = ii.unplaced
    for k in ks:
        v = ii.select(k)
        assert type(v) is type(s[k]) and v.dtype == a.dtype
        k %= n
        same_keys(np.array([v]), s[k : k + 1])
        assert_partitioned(ii, s, k)
        assert ii.unplaced <= unplaced  # the order only gets refined
        unplaced = ii.unplaced
    assert_statistics(ii)
    np.testing.assert_array_equal(ref_sort(ii.data), s)  # a permutation of the data


@pytest.mark.parametrize("kind", ["few", "sorted", "constant"])
@pytest.mark.parametrize("dtype", ["int32", "uint64", "float32", "float64"])
def test_select_duplicates_sorted_constant(rng, dtype, kind):
    a = data_of(rng, dtype, 5000, kind)
    s = np.sort(a)
    ii = gsearch.IndexIntervals(a)
    for k in (0, 1, 2500, 4999):
        same_keys(np.array([ii.select(k)]), s[k : k + 1])
        assert_partitioned(ii, s, k)
    assert_statistics(ii)
    if kind == "constant":
        assert ii.improves == 1 and ii.unplaced == 0 and ii.intervals == 1


def test_repeated_queries_reuse_what_was_learnt(rng):
    a = rng.standard_normal(100_000)
    s = np.sort(a)
    ii = gsearch.IndexIntervals(a)
    assert ii.select(50_000) == s[50_000]
    steps, unplaced = ii.improves, ii.unplaced
    assert steps >= 1 and unplaced < len(a)
    for _ in range(3):  # the same rank: its piece is settled, nothing to improve
        assert ii.select(50_000) == s[50_000]
        assert ii.improves == steps and ii.unplaced == unplaced
    ii.select(50_001)  # a neighbour: starts from the pieces the first select left
    assert ii.improves - steps < steps + 5
    steps = ii.improves
    got = np.sort(ii.range(-0.5, 0.5))
    np.testing.assert_array_equal(got, s[np.searchsorted(s, -0.5) : np.searchsorted(s, 0.5)])
    steps = ii.improves
    for _ in range(3):  # the same range: both bounds are known boundaries now
        np.testing.assert_array_equal(np.sort(ii.range(-0.5, 0.5)), got)
        assert ii.improves == steps
    assert_statistics(ii)


def test_improve_narrows_the_piece_until_settled(rng):
    a = rng.integers(-1000, 1000, 20_000).astype(np.int32)
    s = np.sort(a)
    ii = gsearch.IndexIntervals(a)
    p = 12_345
    before = ii.interval(p)
    assert before == (0, len(a), False) and ii.improves == 0  # interval() refines nothing
    steps = 0
    while True:
        piece = ii.improve(p)
        steps += 1
        assert piece.lo <= p < piece.hi and piece == ii.interval(p)
        if not piece.settled:  # (a settled piece is reported merged with its settled neighbours)
            assert piece.hi - piece.lo < before.hi - before.lo
        assert_statistics(ii)
        before = piece
        if piece.settled:
            break
    assert ii.improves == steps
    assert ii.data[p] == s[p]
    assert ii.improve(p) == piece and ii.improves == steps  # settled: nothing to do
    assert ii.improve(-1).hi == len(a)  # negative positions count from the end
    # improving every piece settles everything: the data is sorted
    while ii.unplaced:
        ii.improve(next(q.lo for q in ii.intervals_list() if not q.settled))
    np.testing.assert_array_equal(ii.data, s)
    assert ii.intervals == 1 and ii.check() == ""


# --- range -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", [1, 7, 1000, ONE_BLOCK, 70_001])
def test_range_is_the_slice_of_np_sort(rng, dtype, n):
    a = data_of(rng, dtype, n)
    s = ref_sort(a)
    ii = gsearch.IndexIntervals(a)
    bounds = list(rng.choice(a, 8)) + [s[0], s[-1]]
    for _ in range(6):
        lo, hi = rng.choice(len(bounds), 2)
        lo, hi = bounds[lo], bounds[hi]
        got = ii.range(lo, hi)
        assert isinstance(got, np.ndarray) and got.dtype == a.dtype and got.ndim == 1
        b, e = np.searchsorted(s, lo), np.searchsorted(s, hi)
        same_keys(ref_sort(got), s[b:e] if b < e else s[:0])
        if got.size:
            got[...] = 0  # a copy: writing it leaves the structure alone
        assert ii.check() == ""
    same_keys(ref_sort(ii.range(s[0], s[-1])), s[: np.searchsorted(s, s[-1])])
    assert_statistics(ii)
    same_keys(ii.sort(), s)


def key(v):
    """np.sort's order of a Python number: NaN after everything, exact comparisons."""
    return (1, 0) if isinstance(v, float) and math.isnan(v) else (0, v)


def expected_range(a, lo, hi):
    return sorted((x for x in a.tolist() if key(lo) <= key(x) < key(hi)), key=key)


@pytest.mark.parametrize(
    "dtype,bounds",
    [
        ("int64", [(-2.5, 3.5), (2.0, 2.0), (2.2, 2.7), (-math.inf, math.inf), (0, math.nan), (math.nan, 1),
                   (-(2**70), 2**70), (2**63 - 1, 2**64), (2**63, 2**64), (-(2**64), -(2**63) + 1)]),
        ("uint64", [(-1, 3), (-1.5, 2**64), (2**64 - 1, 2**65), (2**63, 2**64), (0.5, 1e30), (-math.inf, -1)]),
        ("int32", [(-(2**31) - 7, 0), (2**31 - 1, 2**40), (3.000001, 2**31 + 0.5)]),
        ("uint8", [(-3, 300), (254.5, 256), (True, 3)]),
        ("bool", [(0, 1), (1, 2), (False, True), (-1, 0.5)]),
        ("float32", [(0.1, 0.30000001), (-1e300, 1e300), (1, 2**200), (-0.0, 0.0), (0.0, 1e-46), (-math.inf, math.nan),
                     (math.inf, math.nan), (math.nan, math.nan), (16777217, 16777219)]),
        ("float64", [(2**53 + 1, 2**53 + 3), (-(10**400), 10**400), (-0.0, 5e-324), (1, math.inf), (-math.inf, -math.inf)]),
    ],
)
def test_range_bounds_are_compared_exactly(dtype, bounds):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        a = np.array([True, False, True, True, False])
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        pool = [info.min, info.min + 1, 0, 1, 2, 3, 4, info.max - 1, info.max, 254 if dt.itemsize == 1 else 2**31 - 1]
        a = np.array([v for v in pool if info.min <= v <= info.max] * 3, dtype=dt)
    else:
        a = np.array([-np.inf, -1e30, -0.0, 0.0, 1e-45, 0.1, 0.2, 0.3, 1.0, 2.0, 16777216.0, 16777218.0, 2**53, 2**53 + 2,
                      1e30, np.inf, np.nan, np.nan], dtype=dt)
    a = np.random.default_rng(3).permutation(a)
    for lo, hi in bounds:
        ii = gsearch.IndexIntervals(a)
        got = ii.range(lo, hi)
        assert got.dtype == a.dtype
        want = expected_range(a, lo, hi)
        assert sorted(got.tolist(), key=key) == want, (lo, hi)
        assert ii.check() == ""


def test_range_bound_kinds():
    ii = gsearch.IndexIntervals(np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32))
    for lo, hi in [(2, 4), (np.int8(2), np.float64(4.0)), (np.array(2.0), np.array(4)), (np.float32(2), 4.0)]:
        assert sorted(ii.range(lo, hi).tolist()) == [2.0, 3.0]
    for bad in ("1", 1j, None, [1], np.array([1.0, 2.0]), np.complex64(1)):
        with pytest.raises(TypeError):
            ii.range(bad, 4)
        with pytest.raises(TypeError):
            ii.range(0, bad)


def test_float_specials():
    a = np.array([np.nan, 1.0, -0.0, np.inf, 0.0, -np.inf, np.nan, -2.0, 5.0])
    s = np.sort(a)
    ii = gsearch.IndexIntervals(a)
    same_keys(np.array([ii.select(0), ii.select(-1), ii.select(-3)]), s[[0, -1, -3]])
    assert ii.range(-0.0, 0.0).size == 0 and ii.range(0.0, -0.0).size == 0  # -0.0 == 0.0
    assert sorted(ii.range(0.0, 1.0).tolist()) == [0.0, 0.0]  # both zeros
    assert sorted(ii.range(-np.inf, np.inf).tolist()) == [-np.inf, -2.0, 0.0, 0.0, 1.0, 5.0]  # no inf, no NaN
    assert sorted(ii.range(1.0, np.nan).tolist()) == [1.0, 5.0, np.inf]  # NaN sorts last, is never in a range
    assert ii.range(np.nan, np.nan).size == 0 and ii.range(np.inf, -np.inf).size == 0
    assert ii.check() == ""
    same_keys(ii.sort(), s)


# --- sort, the data, the statistics -----------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", [0, 1, 2, 100, ONE_BLOCK, 70_001])
def test_sort_is_np_sort(rng, dtype, n):
    a = data_of(rng, dtype, n)
    s = ref_sort(a)
    ii = gsearch.IndexIntervals(a)
    if n > 2:
        ii.select(n // 3)
        ii.range(a[0], a[1])
    steps = ii.improves
    got = ii.sort()
    assert isinstance(got, np.ndarray) and got.dtype == a.dtype
    same_keys(got, s)
    assert ii.improves == steps  # sort settles every piece by sorting, adding no improve
    assert ii.unplaced == 0 and ii.intervals == (1 if n else 0)
    same_keys(ii.data, s)
    assert_statistics(ii)
    if n:
        k = int(rng.integers(0, n))
        same_keys(np.array([ii.select(k)]), s[k : k + 1])
        ii.range(s[0], s[-1])
        assert ii.improves == steps  # everything is settled: queries learn nothing new
    same_keys(ii.sort(), s)  # a second sort: the same


def test_copies_and_the_input():
    a = np.array([5, 3, 9, 1], dtype=np.int32)
    ii = gsearch.IndexIntervals(a)
    a[:] = 0  # the structure owns a copy
    assert ii.select(0) == 1 and a.tolist() == [0, 0, 0, 0]
    d = ii.data
    d[:] = -1  # a copy: the structure is unchanged
    assert sorted(ii.data.tolist()) == [1, 3, 5, 9]
    out = ii.sort()
    out[0] = 100
    assert ii.sort().tolist() == [1, 3, 5, 9]
    big = np.arange(10, dtype=">i8")[::-2]  # non-contiguous, big-endian: converted, native results
    jj = gsearch.IndexIntervals(big)
    assert jj.sort().tolist() == [1, 3, 5, 7, 9] and jj.sort().dtype == np.dtype("int64")
    assert gsearch.IndexIntervals([3, 1, 2]).sort().tolist() == [1, 2, 3]  # a sequence


def test_the_input_is_read_in_place(monkeypatch):
    a = np.arange(1000, dtype=np.float32)[::-1].copy()
    seen = spy_on(monkeypatch, "IndexIntervals")
    ii = gsearch.IndexIntervals(a)
    assert seen == [[a.ctypes.data]]  # no copy but the structure's own
    assert ii.select(10) == 10.0


def test_empty_and_one_element():
    e = gsearch.IndexIntervals(np.array([], dtype=np.float32))
    assert len(e) == 0 and e.intervals == 0 and e.unplaced == 0 and e.intervals_list() == []
    assert e.sort().dtype == np.float32 and e.sort().size == 0 and e.range(-1, 1).size == 0
    assert e.check() == ""
    for call in (lambda: e.select(0), lambda: e.select(-1), lambda: e.improve(0), lambda: e.interval(0)):
        with pytest.raises(IndexError):
            call()
    one = gsearch.IndexIntervals(np.array([7], dtype=np.uint64))
    assert one.unplaced == 0 and one.intervals == 1  # one element is placed
    assert one.select(0) == 7 and one.select(-1) == 7 and one.improves == 0
    assert one.range(7, 8).tolist() == [7] and one.range(0, 7).size == 0
    assert one.improve(0) == (0, 1, True)


def test_repr_and_properties():
    ii = gsearch.IndexIntervals(np.arange(6, dtype=np.int16)[::-1])
    assert ii.dtype == np.int16 and ii.device == "cpu" and ii.select(2).dtype == np.int16
    assert ii.sort().dtype == np.int16
    assert repr(ii) == "gsearch.IndexIntervals(size=6, dtype=int16, device='cpu', intervals=1, unplaced=0, improves=1)"
    assert isinstance(ii.intervals_list()[0], tuple) and ii.intervals_list()[0]._fields == ("lo", "hi", "settled")


# --- errors ----------------------------------------------------------------------------------


def test_errors_have_numpys_types():
    a = np.array([3, 1, 2])
    ii = gsearch.IndexIntervals(a)
    for k in (3, -4, 2**70):
        with pytest.raises(IndexError, match="out of bounds"):
            ii.select(k)
        with pytest.raises(IndexError):
            ii.improve(k)
    for k in (1.0, "1", None, True, np.array([1])):
        with pytest.raises(TypeError):
            ii.select(k)
    assert ii.select(np.int64(-1)) == 3 and ii.select(np.uint8(0)) == 1
    for bad in (np.array(["a", "b"]), np.array([1 + 2j]), np.array([object()], dtype=object), ["x", "y"]):
        with pytest.raises(TypeError):
            gsearch.IndexIntervals(bad)
    for bad in (5, np.float32(1.5), np.array(5), np.zeros((2, 3)), np.zeros((0, 2))):
        with pytest.raises(ValueError):
            gsearch.IndexIntervals(bad)
    with pytest.raises(ValueError, match="stream"):
        gsearch.IndexIntervals(a, stream=1)
    for dev in ("cuda", "cuda:0", 0, "tpu", -1):
        with pytest.raises(ValueError):
            gsearch.IndexIntervals(a, device=dev)
    assert gsearch.IndexIntervals(a, device="cpu").select(0) == 1
    assert ii.check() == "" and ii.improves == ii.improves  # the failures changed nothing


def test_threads_share_one_structure(rng):
    a = rng.standard_normal(200_000)  # large: the calls release the GIL
    s = np.sort(a)
    ii = gsearch.IndexIntervals(a)
    ks = rng.integers(0, len(a), 64)
    errors = []

    def work(part):
        try:
            for k in part:
                assert ii.select(int(k)) == s[k]
                lo = s[k]
                got = ii.range(lo, lo + 0.01)
                assert got.size == np.searchsorted(s, lo + 0.01) - np.searchsorted(s, lo)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(ks[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert ii.check() == ""
    np.testing.assert_array_equal(ii.sort(), s)


def test_docstring_examples_run():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(gsearch.IndexIntervals, "IndexIntervals", globs={})
    assert sum(len(t.examples) for t in tests) >= 15
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0
    assert gsearch.IndexIntervals.__module__ == "gsearch" and gsearch.IndexIntervals.select.__module__ == "gsearch"
    assert "Examples" in gsearch.IndexIntervals.__doc__ and "{" not in gsearch.IndexIntervals.__doc__


def test_core_layer_checks():
    with pytest.raises(ValueError):
        _core.IndexIntervals(np.arange(6).reshape(2, 3))
    with pytest.raises(ValueError):
        _core.IndexIntervals(np.arange(6)[::2])
    with pytest.raises(TypeError):
        _core.IndexIntervals(np.arange(6, dtype=np.int8))
    c = _core.IndexIntervals(np.arange(5, dtype=np.float64)[::-1].copy())
    with pytest.raises(ValueError):  # the library's invalid_argument
        c.select(5)
    with pytest.raises(ValueError):
        c.view(3)
    v = c.view(0)
    assert not v.flags.writeable and v.dtype == np.float64 and len(v) == 5
    assert c.range(1.0, 3.0) == (1, 3) and sorted(v[1:3].tolist()) == [1.0, 2.0]
    del c
    assert sorted(v.tolist()) == [0.0, 1.0, 2.0, 3.0, 4.0]  # the view keeps the structure alive


# --- GPU (skip without a GPU and gsearch's CUDA backend) --------------------------------------

TORCH_DTYPES = ["int32", "int64", "float32", "float64", "uint8", "int16", "float16", "bool"]


@needs_torch
class TestTorch:
    @pytest.mark.parametrize("dtype", TORCH_DTYPES)
    @pytest.mark.parametrize("n", [1, 1000, ONE_BLOCK, 100_000])
    def test_against_numpy(self, rng, dtype, n):
        a_np = data_of(rng, dtype, n)
        s = ref_sort(a_np)
        a = torch.from_numpy(a_np).cuda()
        ii = gsearch.IndexIntervals(a)
        assert ii._ii.device == a.device.index and ii.device == a.device and ii.dtype == a.dtype
        k = n // 2
        v = ii.select(k)
        assert isinstance(v, torch.Tensor) and v.shape == () and v.device == a.device and v.dtype == a.dtype
        same_keys(v.cpu().numpy().reshape(1), s[k : k + 1])
        lo, hi = a_np[0], a_np[-1]
        got = ii.range(lo, hi)
        assert isinstance(got, torch.Tensor) and got.device == a.device and got.dtype == a.dtype
        b, e = np.searchsorted(s, lo), np.searchsorted(s, hi)
        same_keys(ref_sort(got.cpu().numpy()), s[b:e] if b < e else s[:0])
        assert ii.check() == ""
        srt = ii.sort()
        assert isinstance(srt, torch.Tensor) and srt.device == a.device
        same_keys(srt.cpu().numpy(), s)
        assert ii.unplaced == 0 and ii.check() == ""

    def test_no_copy_of_the_input(self, monkeypatch):
        a = torch.randn(50_000, device="cuda")
        seen = spy_on(monkeypatch, "IndexIntervals")
        ii = gsearch.IndexIntervals(a)
        assert seen == [[a.data_ptr()]]  # the extension read the tensor in place
        assert ii.select(0).item() == a.min().item()
        assert torch.equal(ii.sort(), torch.sort(a).values)

    def test_bfloat16_and_streams(self):
        a = torch.randn(5000, device="cuda").to(torch.bfloat16)
        ii = gsearch.IndexIntervals(a)
        assert ii.sort().dtype == torch.bfloat16 and torch.equal(ii.sort(), torch.sort(a).values)
        s = torch.cuda.Stream()
        b = torch.randn(20_000, device="cuda")
        torch.cuda.synchronize()
        jj = gsearch.IndexIntervals(b, stream=s)
        with torch.cuda.stream(s):
            got = jj.range(-0.5, 0.5)
            want = b[(b >= -0.5) & (b < 0.5)]
        s.synchronize()
        assert torch.equal(torch.sort(got).values, torch.sort(want).values)
        top = jj.select(-1)  # copied out on s
        s.synchronize()
        assert top.item() == b.max().item()

    def test_device_and_errors(self):
        a = torch.arange(10, device="cuda")
        with pytest.raises(ValueError):
            gsearch.IndexIntervals(a, device="cpu")
        assert gsearch.IndexIntervals(a, device="cuda").select(3).item() == 3
        assert gsearch.IndexIntervals(a.cpu(), device=torch.device("cpu")).sort().device.type == "cpu"
        with pytest.raises(IndexError):
            gsearch.IndexIntervals(a).select(10)


@needs_cupy
class TestCupy:
    @pytest.mark.parametrize("dtype", NATIVE_DTYPES)
    def test_against_numpy(self, rng, monkeypatch, dtype):
        a_np = data_of(rng, dtype, 30_000)
        s = np.sort(a_np)
        a = cupy.asarray(a_np)
        seen = spy_on(monkeypatch, "IndexIntervals")
        ii = gsearch.IndexIntervals(a)
        monkeypatch.undo()
        assert seen == [[a.data.ptr]]  # read in place
        v = ii.select(100)
        assert isinstance(v, cupy.ndarray) and v.shape == () and v.dtype == a.dtype
        same_keys(cupy.asnumpy(v).reshape(1), s[100:101])
        got = ii.range(s[10], s[20_000])
        assert isinstance(got, cupy.ndarray)
        same_keys(np.sort(cupy.asnumpy(got)), s[np.searchsorted(s, s[10]) : np.searchsorted(s, s[20_000])])
        same_keys(cupy.asnumpy(ii.sort()), s)
        assert ii.device == cupy.cuda.Device(0) and ii.check() == ""
