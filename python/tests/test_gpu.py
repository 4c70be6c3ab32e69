"""gsearch on CUDA arrays: torch tensors and cupy arrays, searched in place on the GPU.

Skipped unless torch sees a GPU and gsearch was built with CUDA (the cupy tests: unless cupy
imports and sees a device)."""

import numpy as np
import pytest

import gsearch
from gsearch import _core

from gpu_support import HAVE_CUPY, HAVE_TORCH_CUDA, NO_GSEARCH_CUDA, cupy, needs_cupy, needs_torch, torch  # noqa: F401

TORCH_DTYPES = ["int32", "int64", "float32", "float64", "uint8", "int16", "float16", "bfloat16"]
ALGOS = ["auto", "pbs", "pbs-cf", "pbs-cl", "binary", "index", "partitioned", "pary"]


def rand_sorted(n, dtype, device="cuda", gen_seed=0):
    g = torch.Generator(device="cpu").manual_seed(gen_seed)
    x = (torch.randn(n, generator=g) * 1000).to(getattr(torch, dtype))
    return torch.sort(x).values.to(device)


def rand_values(shape, dtype, device="cuda", gen_seed=1):
    g = torch.Generator(device="cpu").manual_seed(gen_seed)
    return (torch.randn(shape, generator=g) * 1100).to(getattr(torch, dtype)).to(device)


@needs_torch
class TestTorch:
    @pytest.mark.parametrize("dtype", TORCH_DTYPES)
    @pytest.mark.parametrize("side", ["left", "right"])
    @pytest.mark.parametrize("k", [0, 1, 33, 1024, 50_000])
    def test_against_torch_and_numpy(self, dtype, side, k):
        a = rand_sorted(k, dtype)
        v = rand_values((3, 333), dtype)
        got = gsearch.searchsorted(a, v, side=side)
        assert isinstance(got, torch.Tensor)
        assert got.device == v.device and got.dtype == torch.int64 and got.shape == v.shape
        assert torch.equal(got, torch.searchsorted(a, v, side=side))
        if dtype != "bfloat16":
            want = np.searchsorted(a.cpu().numpy(), v.cpu().numpy(), side=side)
            np.testing.assert_array_equal(got.cpu().numpy(), want)

    @pytest.mark.parametrize("algo", ALGOS)
    @pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "float32", "float64"])
    def test_every_algorithm_and_native_dtype(self, algo, dtype):
        g = np.random.default_rng(5)
        a_np = np.sort(g.integers(0, 10_000, 4096)).astype(dtype)
        v_np = g.integers(-10, 10_010, 10_000).astype(dtype)
        a, v = torch.from_numpy(a_np).cuda(), torch.from_numpy(v_np).cuda()
        for side in ("left", "right"):
            got = gsearch.searchsorted(a, v, side=side, algo=algo)
            np.testing.assert_array_equal(got.cpu().numpy(), np.searchsorted(a_np, v_np, side=side))
        pred = gsearch.predecessor(a, v, algo=algo)
        np.testing.assert_array_equal(pred.cpu().numpy(), np.searchsorted(a_np, v_np, side="right") - 1)

    @pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
    def test_partitioned_many_buckets(self, dtype):
        # 300,000 keys: 19 buckets of 16K 4-byte keys, 37 of 8K 8-byte keys; duplicates straddle
        # the bucket edges; queries outside the range; NaN queries and keys for floats.
        g = np.random.default_rng(11)
        a_np = np.sort(g.integers(-50_000, 50_000, 300_000)).astype(dtype)
        v_np = g.integers(-60_000, 60_000, 200_003).astype(dtype)
        if dtype.startswith("float"):
            v_np[::1000] = np.nan
            a_np[-5:] = np.nan
        a, v = torch.from_numpy(a_np).cuda(), torch.from_numpy(v_np).cuda()
        for side in ("left", "right"):
            got = gsearch.searchsorted(a, v, side=side, algo="partitioned")
            np.testing.assert_array_equal(got.cpu().numpy(), np.searchsorted(a_np, v_np, side=side))
        got32 = gsearch.searchsorted(a, v, side="right", algo="partitioned", out_int32=True)
        assert got32.dtype == torch.int32
        np.testing.assert_array_equal(got32.cpu().numpy(), np.searchsorted(a_np, v_np, side="right"))

    def test_no_copy_of_the_inputs(self, monkeypatch):
        a = rand_sorted(4096, "float32")
        v = rand_values(10_000, "float32")
        assert _core._data_pointer(a) == a.data_ptr()
        assert _core._data_pointer(v) == v.data_ptr()
        seen = {}
        real = _core.search_pointers  # the torch fast path: the tensors' own data pointers

        def spy(keys, k, queries, n, out, *args):
            seen.update(k=keys, q=queries, o=out, sizes=(k, n))
            return real(keys, k, queries, n, out, *args)

        monkeypatch.setattr(_core, "search_pointers", spy)
        out = torch.empty(10_000, dtype=torch.int64, device="cuda")
        r = gsearch.searchsorted(a, v, out=out)
        assert r is out
        assert seen == {"k": a.data_ptr(), "q": v.data_ptr(), "o": out.data_ptr(), "sizes": (4096, 10_000)}
        assert torch.equal(out, torch.searchsorted(a, v))
        # The general path (a strided view is copied once; the others are passed as they are).
        seen.clear()
        real_search = _core.search

        def spy_search(keys, queries, out, *args):
            seen.update(k=_core._data_pointer(keys), o=_core._data_pointer(out))
            return real_search(keys, queries, out, *args)

        monkeypatch.setattr(_core, "search", spy_search)
        w = rand_values(20_000, "float32")[::2]
        r = gsearch.searchsorted(a, w, out=out)
        assert seen == {"k": a.data_ptr(), "o": out.data_ptr()}
        assert torch.equal(r, torch.searchsorted(a, w))

    def test_stream_ordering_current_stream(self):
        # A search queued on a non-default stream right after a kernel on that stream writes the
        # queries sees the written values.
        n, k = 1 << 20, 1 << 12
        a = torch.arange(k, dtype=torch.int32, device="cuda")
        src = torch.randint(0, k, (n,), dtype=torch.int32, device="cuda")
        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            v = torch.full((n,), -1, dtype=torch.int32, device="cuda")
            torch.cuda._sleep(50_000_000)  # keep the stream busy, so that a race would show
            v.copy_(src)
            r = gsearch.searchsorted(a, v, side="right")
        s.synchronize()
        assert torch.equal(r, src.to(torch.int64) + 1)

    def test_stream_ordering_explicit_stream(self):
        n, k = 1 << 20, 1 << 12
        a = torch.arange(k, dtype=torch.int64, device="cuda")
        src = torch.randint(0, k, (n,), dtype=torch.int64, device="cuda")
        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        for stream in (s, s.cuda_stream):
            with torch.cuda.stream(s):
                v = torch.full((n,), -1, dtype=torch.int64, device="cuda")
                torch.cuda._sleep(50_000_000)
                v.copy_(src)
            out = gsearch.searchsorted(a, v, stream=stream)  # called outside the stream context
            s.synchronize()
            assert torch.equal(out, src)

    def test_out_int32_and_out(self):
        a = rand_sorted(1000, "float32")
        v = rand_values((4, 50), "float32")
        r = gsearch.searchsorted(a, v, out_int32=True)
        assert r.dtype == torch.int32 and r.is_cuda
        assert torch.equal(r, torch.searchsorted(a, v, out_int32=True))
        out = torch.empty((4, 50), dtype=torch.int32, device="cuda")
        assert gsearch.searchsorted(a, v, out=out, out_int32=True) is out
        with pytest.raises(ValueError):
            gsearch.searchsorted(a, v, out=torch.empty((4, 50), dtype=torch.int64))  # CPU out
        with pytest.raises(TypeError):
            gsearch.searchsorted(a, v, out=torch.empty((4, 50), dtype=torch.int32, device="cuda"))

    def test_scalar_and_0d_queries(self):
        a = torch.tensor([1.0, 2.0, 2.0, 3.0], device="cuda")
        for v in (2.0, 2, torch.tensor(2.0, device="cuda"), np.float32(2.0), 2.5, float("nan")):
            for right in (False, True):
                got = gsearch.searchsorted(a, v, right=right)
                assert isinstance(got, torch.Tensor) and got.is_cuda and got.dim() == 0
                want = torch.searchsorted(a, torch.tensor(float(v), device="cuda"), right=right)
                assert got.item() == want.item()

    def test_batched_against_torch(self):
        a = torch.sort(rand_values((8, 3, 700), "float32", gen_seed=3), dim=-1).values
        v = rand_values((8, 3, 129), "float32", gen_seed=4)
        for right in (False, True):
            for out_int32 in (False, True):
                got = gsearch.searchsorted(a, v, right=right, out_int32=out_int32)
                assert torch.equal(got, torch.searchsorted(a, v, right=right, out_int32=out_int32))
        raw = rand_values((5, 100), "float64", gen_seed=5)
        sorter = torch.argsort(raw, dim=-1)
        q = rand_values((5, 20), "float64", gen_seed=6)
        assert torch.equal(gsearch.searchsorted(raw, q, sorter=sorter), torch.searchsorted(raw, q, sorter=sorter))
        with pytest.raises(ValueError, match="sorted"):
            gsearch.searchsorted(raw, q, check_sorted=True)

    @pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64", "float16", "uint8"])
    @pytest.mark.parametrize("k", [0, 1, 33, 5000, 300_000])
    def test_sorter_against_torch(self, dtype, k):
        # 1-D keys: the library's gather on the device (the sorter's range checked there).
        raw = rand_values(k, dtype, gen_seed=7)
        sorter = torch.argsort(raw.float(), stable=True)
        v = rand_values((3, 500), dtype, gen_seed=8)
        for right in (False, True):
            for out_int32 in (False, True):
                got = gsearch.searchsorted(raw, v, right=right, sorter=sorter, out_int32=out_int32, check_sorted=True)
                assert got.is_cuda and got.dtype == (torch.int32 if out_int32 else torch.int64)
                assert torch.equal(got, torch.searchsorted(raw, v, right=right, sorter=sorter, out_int32=out_int32))
            # numpy's answer, float16 computed in float32 (exact, the same order).
            wide = raw.float() if dtype == "float16" else raw
            vw = v.float() if dtype == "float16" else v
            want = np.searchsorted(wide.cpu().numpy(), vw.cpu().numpy(), side="right" if right else "left",
                                   sorter=sorter.cpu().numpy())
            np.testing.assert_array_equal(gsearch.searchsorted(raw, v, right=right, sorter=sorter.int()).cpu().numpy(), want)
        lo, up = gsearch.equal_range(raw, v, sorter=sorter)
        assert torch.equal(lo, torch.searchsorted(raw, v, sorter=sorter))
        assert torch.equal(up, torch.searchsorted(raw, v, right=True, sorter=sorter))

    def test_sorter_no_copy_and_errors(self, monkeypatch):
        raw = rand_values(4096, "float32", gen_seed=9)
        sorter = torch.argsort(raw)
        v = rand_values(1000, "float32", gen_seed=10)
        seen = {}
        real_search = _core.search

        def spy_search(keys, queries, out, *args):
            seen.update(k=_core._data_pointer(keys), s=_core._data_pointer(args[-1]))
            return real_search(keys, queries, out, *args)

        monkeypatch.setattr(_core, "search", spy_search)
        assert torch.equal(gsearch.searchsorted(raw, v, sorter=sorter), torch.searchsorted(raw, v, sorter=sorter))
        assert seen == {"k": raw.data_ptr(), "s": sorter.data_ptr()}  # keys and sorter as they are
        monkeypatch.undo()
        bad = sorter.clone()
        bad[4000] = 4096
        bad[4001] = -1
        with pytest.raises(ValueError, match=r"Sorter index out of range: sorter\[4000\]"):
            gsearch.searchsorted(raw, v, sorter=bad)
        with pytest.raises(ValueError, match="sorter.size must equal a.size"):
            gsearch.searchsorted(raw, v, sorter=sorter[:-1])
        with pytest.raises(ValueError):  # the sorter on another device than the keys
            gsearch.searchsorted(raw, v, sorter=sorter.cpu())
        with pytest.raises(ValueError, match=r"keys\[sorter\] are not sorted"):
            gsearch.searchsorted(raw, v, sorter=torch.arange(4096, device="cuda"), check_sorted=True)

    def test_bucketize_and_predecessor(self):
        b = rand_sorted(300, "float32")
        x = rand_values((7, 9), "float32")
        for right in (False, True):
            assert torch.equal(gsearch.bucketize(x, b, right=right), torch.bucketize(x, b, right=right))
        pred = gsearch.predecessor(b, x)
        assert torch.equal(pred, torch.searchsorted(b, x, right=True) - 1)

    def test_non_contiguous_and_promoted_inputs(self):
        a = rand_sorted(2000, "int32")
        v = rand_values((100, 60), "int64")
        want = torch.searchsorted(a.to(torch.int64), v)
        assert torch.equal(gsearch.searchsorted(a, v), want)  # int32 keys, int64 queries
        assert torch.equal(gsearch.searchsorted(a[::2], v.t()), torch.searchsorted(a[::2].contiguous().to(torch.int64), v.t().contiguous()))
        with pytest.raises(TypeError):
            gsearch.searchsorted(a.to(torch.int64), v.to(torch.float64))

    def test_check_sorted(self):
        a = torch.tensor([3, 1, 2], device="cuda")
        with pytest.raises(ValueError, match="sorted"):
            gsearch.searchsorted(a, a, check_sorted=True)

    def test_mixed_devices_are_value_errors(self):
        a = rand_sorted(100, "float32")
        with pytest.raises(ValueError):
            gsearch.searchsorted(a, np.zeros(3, dtype=np.float32))
        with pytest.raises(ValueError):
            gsearch.searchsorted(a.cpu(), rand_values(3, "float32"))
        with pytest.raises(ValueError):
            gsearch.searchsorted(a, rand_values(3, "float32").cpu())

    @pytest.mark.skipif(not HAVE_TORCH_CUDA or torch.cuda.device_count() < 2, reason="needs two GPUs")
    def test_second_device(self):
        prev = torch.cuda.current_device()
        a = rand_sorted(1000, "float32", device="cuda:1")
        v = rand_values(500, "float32", device="cuda:1")
        r = gsearch.searchsorted(a, v)
        assert r.device == v.device
        assert torch.equal(r, torch.searchsorted(a, v))
        assert torch.cuda.current_device() == prev and _core.cuda_current_device() == prev
        with pytest.raises(ValueError):
            gsearch.searchsorted(a, v.to("cuda:0"))

    def test_cuda_array_interface_object(self):
        if cupy is None:
            pytest.skip("__cuda_array_interface__-only objects go through cupy")

        class Wrapper:
            def __init__(self, t):
                self._t = t
                self.__cuda_array_interface__ = t.__cuda_array_interface__

        a = rand_sorted(100, "float32")
        v = rand_values(20, "float32")
        r = gsearch.searchsorted(Wrapper(a), Wrapper(v))
        assert isinstance(r, cupy.ndarray)
        np.testing.assert_array_equal(cupy.asnumpy(r), torch.searchsorted(a, v).cpu().numpy())


@needs_cupy
class TestCupy:
    @pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "float32", "float64", "int8", "float16"])
    @pytest.mark.parametrize("side", ["left", "right"])
    def test_against_cupy(self, dtype, side):
        g = np.random.default_rng(11)
        a_np = np.sort(g.integers(0, 100, 3000)).astype(dtype)
        v_np = g.integers(-5, 105, (7, 31)).astype(dtype)
        a, v = cupy.asarray(a_np), cupy.asarray(v_np)
        got = gsearch.searchsorted(a, v, side=side)
        assert isinstance(got, cupy.ndarray) and got.device == v.device and got.dtype == cupy.int64
        np.testing.assert_array_equal(cupy.asnumpy(got), cupy.asnumpy(cupy.searchsorted(a, v, side=side)))
        np.testing.assert_array_equal(cupy.asnumpy(got), np.searchsorted(a_np, v_np, side=side))

    def test_no_copy_and_stream(self):
        a = cupy.arange(1 << 12, dtype=cupy.int32)
        assert _core._data_pointer(a) == a.data.ptr
        src = cupy.random.randint(0, 1 << 12, 1 << 20, dtype=cupy.int32)
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            v = cupy.full(1 << 20, -1, dtype=cupy.int32)
            v[...] = src
            r = gsearch.searchsorted(a, v, side="right")
        s.synchronize()
        np.testing.assert_array_equal(cupy.asnumpy(r), cupy.asnumpy(src).astype(np.int64) + 1)

    def test_batched_bucketize_predecessor(self):
        g = np.random.default_rng(12)
        a_np = np.sort(g.random((4, 100)), axis=-1)
        v_np = g.random((4, 10))
        got = gsearch.searchsorted(cupy.asarray(a_np), cupy.asarray(v_np), out_int32=True)
        assert got.dtype == cupy.int32
        want = np.stack([np.searchsorted(a_np[i], v_np[i]) for i in range(4)])
        np.testing.assert_array_equal(cupy.asnumpy(got), want)
        b = cupy.asarray(a_np[0])
        x = cupy.asarray(v_np)
        np.testing.assert_array_equal(cupy.asnumpy(gsearch.bucketize(x, b, right=True)), np.searchsorted(a_np[0], v_np, side="right"))
        np.testing.assert_array_equal(cupy.asnumpy(gsearch.predecessor(b, x)), np.searchsorted(a_np[0], v_np, side="right") - 1)

    @pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
    def test_sorter_against_cupy(self, dtype):
        g = np.random.default_rng(13)
        a_np = g.integers(0, 1000, 20_000).astype(dtype)
        v_np = g.integers(-5, 1005, 777).astype(dtype)
        a, v = cupy.asarray(a_np), cupy.asarray(v_np)
        sorter = cupy.argsort(a)
        for side in ("left", "right"):
            got = gsearch.searchsorted(a, v, side=side, sorter=sorter)
            assert isinstance(got, cupy.ndarray) and got.dtype == cupy.int64
            np.testing.assert_array_equal(cupy.asnumpy(got), cupy.asnumpy(cupy.searchsorted(a, v, side=side, sorter=sorter)))
            np.testing.assert_array_equal(
                cupy.asnumpy(got), np.searchsorted(a_np, v_np, side=side, sorter=cupy.asnumpy(sorter))
            )
        with pytest.raises(ValueError, match="Sorter index out of range"):
            gsearch.searchsorted(a, v, sorter=sorter + 1)

    def test_mixed_devices(self):
        with pytest.raises(ValueError):
            gsearch.searchsorted(cupy.arange(10), np.arange(3))


# --- as-of joins (gsearch.asof_indices, merge_asof / join_asof with device="cuda") ---------------

ASOF_DIRECTIONS = ["backward", "forward", "nearest"]


def asof_case(seed, n=3000, m=700, groups=5, span=400):
    """Sorted int64 keys with duplicates, three by columns (int, float with NaN and -0.0, bool)."""
    g = np.random.default_rng(seed)
    lk, rk = np.sort(g.integers(0, span, n)), np.sort(g.integers(0, span, m))
    by_f = np.array([np.nan, -0.0, 0.0, 1.5])
    lby = [g.integers(0, groups, n), by_f[g.integers(0, 4, n)], g.random(n) < 0.5]
    rby = [g.integers(0, groups + 1, m), by_f[g.integers(0, 4, m)], g.random(m) < 0.5]
    return lk, rk, lby, rby


@needs_torch
class TestTorchAsof:
    @pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "float64", "float16", "bfloat16", "uint8"])
    @pytest.mark.parametrize("direction", ASOF_DIRECTIONS)
    def test_equals_the_cpu(self, dtype, direction):
        lk, rk, lby, rby = asof_case(1, span=200)
        for nby in (0, 1, 3):
            for tol, exact in ((None, True), (3, False)):
                kw = dict(direction=direction, tolerance=tol, allow_exact_matches=exact)
                cpu = gsearch.asof_indices(
                    lk.astype(np.float32 if dtype == "bfloat16" else dtype),
                    rk.astype(np.float32 if dtype == "bfloat16" else dtype),
                    left_by=lby[:nby] or None,
                    right_by=rby[:nby] or None,
                    **{**kw, "tolerance": None if tol is None else (float(tol) if dtype.startswith(("float", "bf")) else tol)},
                )
                tl = torch.from_numpy(lk).to(getattr(torch, dtype)).cuda()
                tr = torch.from_numpy(rk).to(getattr(torch, dtype)).cuda()
                got = gsearch.asof_indices(
                    tl,
                    tr,
                    left_by=[torch.from_numpy(c).cuda() for c in lby[:nby]] or None,
                    right_by=[torch.from_numpy(c).cuda() for c in rby[:nby]] or None,
                    **{**kw, "tolerance": None if tol is None else (float(tol) if dtype.startswith(("float", "bf")) else tol)},
                )
                assert isinstance(got, torch.Tensor) and got.device == tl.device and got.dtype == torch.int64
                np.testing.assert_array_equal(got.cpu().numpy(), cpu)

    def test_no_copy_sort_and_limits(self, monkeypatch):
        from gpu_support import spy_on

        lk, rk, lby, rby = asof_case(2)
        tl, tr = torch.from_numpy(lk).cuda(), torch.from_numpy(rk).cuda()
        tlb, trb = torch.from_numpy(lby[0]).cuda(), torch.from_numpy(rby[0]).cuda()
        seen = spy_on(monkeypatch, "asof_join")
        got = gsearch.asof_indices(tl, tr, left_by=tlb, right_by=trb)
        # the keys, and one small-range int64 by column, are the caller's memory
        assert seen[0][:2] == [tl.data_ptr(), tr.data_ptr()]
        assert seen[0][3:5] == [tlb.data_ptr(), trb.data_ptr()]
        np.testing.assert_array_equal(got.cpu().numpy(), gsearch.asof_indices(lk, rk, left_by=lby[0], right_by=rby[0]))
        # sort=True: any order
        perm = np.random.default_rng(3).permutation(len(lk))
        got = gsearch.asof_indices(torch.from_numpy(lk[perm]).cuda(), tr, sort=True, direction="nearest")
        np.testing.assert_array_equal(got.cpu().numpy(), gsearch.asof_indices(lk[perm], rk, sort=True, direction="nearest"))
        # int64 limits, a tolerance beyond int64 (the keys joined as uint64)
        big = np.array([-(2**63), -1, 0, 2**62, 2**63 - 1], dtype=np.int64)
        for tol in (None, 2**62, 2**63 + 5, 2**64):
            want = gsearch.asof_indices(big, big[::2].copy(), direction="nearest", tolerance=tol, allow_exact_matches=False)
            got = gsearch.asof_indices(
                torch.from_numpy(big).cuda(), torch.from_numpy(big[::2].copy()).cuda(), direction="nearest", tolerance=tol, allow_exact_matches=False
            )
            np.testing.assert_array_equal(got.cpu().numpy(), want)

    def test_errors(self):
        t = torch.arange(5, device="cuda")
        with pytest.raises(ValueError, match="^left keys must be sorted$"):
            gsearch.asof_indices(t.flip(0), t)
        with pytest.raises(ValueError, match="^Merge keys contain null values on right side$"):
            gsearch.asof_indices(t.double(), torch.tensor([0.0, float("nan")], device="cuda"))
        with pytest.raises(ValueError, match="device"):
            gsearch.asof_indices(t, t.cpu())

    @pytest.mark.parametrize("direction", ASOF_DIRECTIONS)
    def test_merge_asof_on_the_gpu(self, direction):
        pd = pytest.importorskip("pandas")
        lk, rk, lby, rby = asof_case(4)
        left = pd.DataFrame({"t": lk, "g": lby[0], "f": lby[1], "s": np.where(lby[2], "a", "b"), "x": np.arange(len(lk))})
        right = pd.DataFrame({"t": rk, "g": rby[0], "f": rby[1], "s": np.where(rby[2], "a", "b"), "y": np.arange(len(rk))})
        for by in (None, "g", ["g", "f", "s"]):
            kw = dict(on="t", by=by, direction=direction, tolerance=5)
            pd.testing.assert_frame_equal(gsearch.merge_asof(left, right, device="cuda", **kw), pd.merge_asof(left, right, **kw))

    def test_join_asof_on_the_gpu(self):
        pl = pytest.importorskip("polars")
        lk, rk, lby, rby = asof_case(5)
        left = pl.DataFrame({"t": lk, "g": lby[0], "x": np.arange(len(lk))})
        right = pl.DataFrame({"t": rk, "g": rby[0], "y": np.arange(len(rk))})
        for strategy in ASOF_DIRECTIONS:
            want = left.join_asof(right, on="t", by="g", strategy=strategy)
            assert gsearch.join_asof(left, right, on="t", by="g", strategy=strategy, device="cuda").equals(want)


@needs_cupy
class TestCupyAsof:
    @pytest.mark.parametrize("direction", ASOF_DIRECTIONS)
    def test_equals_the_cpu(self, direction):
        lk, rk, lby, rby = asof_case(6)
        for dtype in ("int64", "float32"):
            for nby in (0, 1, 3):
                cpu = gsearch.asof_indices(
                    lk.astype(dtype), rk.astype(dtype), left_by=lby[:nby] or None, right_by=rby[:nby] or None, direction=direction
                )
                got = gsearch.asof_indices(
                    cupy.asarray(lk.astype(dtype)),
                    cupy.asarray(rk.astype(dtype)),
                    left_by=[cupy.asarray(c) for c in lby[:nby]] or None,
                    right_by=[cupy.asarray(c) for c in rby[:nby]] or None,
                    direction=direction,
                )
                assert isinstance(got, cupy.ndarray) and got.dtype == cupy.int64
                np.testing.assert_array_equal(cupy.asnumpy(got), cpu)

    def test_errors(self):
        with pytest.raises(ValueError, match="^right keys must be sorted$"):
            gsearch.asof_indices(cupy.arange(3), cupy.arange(3)[::-1].copy())
