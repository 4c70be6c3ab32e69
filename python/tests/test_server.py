"""gsearch.Server (the search server, issue 22): every answer against numpy.searchsorted, from
many Python threads at once, across key replacement, and its errors (a fork child's use too); on the CPU, and on the GPU
(device="cuda": numpy, torch and cupy queries; skipped without a GPU, as gpu_support.py says).
Bounded: fixed request counts, and each test closes its server (a running CUDA server would make
a whole-device wait of a later test wait forever). Listen as a service: test_server_listen.py."""

import gc
import multiprocessing
import threading

import numpy as np
import pytest

import gsearch

from gpu_support import cupy, needs_cupy, needs_torch, torch

DTYPES = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]


def keys_of(rng, dtype, n, hi=1000):
    return np.sort(rng.integers(0, hi, n).astype(dtype))


def run_together(worker, replacer, workers=8):
    """worker(0) ... worker(workers - 1) and replacer() on threads of their own, started together."""
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(workers)] + [threading.Thread(target=replacer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


@pytest.mark.parametrize("dtype", DTYPES)
def test_search_equals_searchsorted(dtype):
    rng = np.random.default_rng(1)
    keys = keys_of(rng, dtype, 3000)
    with gsearch.Server(keys) as s:
        assert s.size == 3000 and s.dtype == keys.dtype
        for side in ("left", "right"):
            q = rng.integers(0, 1100, (7, 11)).astype(dtype)
            got = s.search(q, side)
            assert got.dtype == np.int64 and got.shape == q.shape
            np.testing.assert_array_equal(got, np.searchsorted(keys, q, side))
        q = rng.integers(0, 1100, 500).astype(dtype)
        np.testing.assert_array_equal(s.search(q, "pred"), np.searchsorted(keys, q, "right") - 1)
        np.testing.assert_array_equal(s.search(np.empty(0, dtype)), np.empty(0, np.int64))


def test_nan_and_safe_casts():
    keys = np.array([-np.inf, -1.0, 0.0, 2.5, np.inf, np.nan])
    with gsearch.Server(keys) as s:
        q = np.array([np.nan, -0.0, 3.0, -np.inf])
        for side in ("left", "right"):
            np.testing.assert_array_equal(s.search(q, side), np.searchsorted(keys, q, side))
        np.testing.assert_array_equal(s.search(np.array([1, 3], np.int32)), np.searchsorted(keys, [1.0, 3.0]))
    with gsearch.Server(np.arange(10, dtype=np.int64)) as s:
        with pytest.raises(TypeError):
            s.search(np.array([1.5]))  # float64 queries of int64 keys: refused, as by gsearch.searchsorted


def test_threads_and_replacement():
    rng = np.random.default_rng(2)
    a, b = keys_of(rng, np.int64, 5000), keys_of(rng, np.int64, 800)
    errors, mixed = [], []
    with gsearch.Server(a, max_delay=0.0005, preferred_batch_queries=256) as s:
        def worker(seed):
            r = np.random.default_rng(seed)
            for _ in range(80):
                q = r.integers(0, 1100, int(r.integers(1, 400)))
                got = s.search(q, "right")
                if not (np.array_equal(got, np.searchsorted(a, q, "right"))
                        or np.array_equal(got, np.searchsorted(b, q, "right"))):
                    mixed.append(seed)

        def replacer():
            try:
                for i in range(10):
                    s.replace_keys(b if i % 2 == 0 else a)
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        run_together(worker, replacer)
        st = s.stats()
    assert not errors and not mixed
    assert st["requests"] == 8 * 80 and st["batches"] >= 1
    assert sum(st["latency_us_log2"]) == st["requests"]
    assert st["host_wait_ns"] > 0 and st["host_submit_ns"] >= 0 and st["host_finish_ns"] >= 0
    assert st["kernel_clock_khz"] == 0 and st["kernel_timed_batches"] == 0  # a CPU server: no kernel
    assert st["kernel_launches"] == 0


def test_errors():
    keys = np.arange(100, dtype=np.float32)
    with pytest.raises(ValueError, match="not sorted"):
        gsearch.Server(keys[::-1].copy())
    with pytest.raises(ValueError, match="1-D"):
        gsearch.Server(keys.reshape(10, 10))
    with pytest.raises(ValueError, match="device must be"):
        gsearch.Server(keys, device="gpu")
    with pytest.raises(ValueError, match="device must be"):
        gsearch.Server(keys, device="cuda:x")
    if not gsearch.built_with_cuda():
        with pytest.raises(ValueError, match="without CUDA"):
            gsearch.Server(keys, device="cuda")
    with pytest.raises(TypeError, match="unsupported dtype"):
        gsearch.Server(np.array(["a", "b"]))
    s = gsearch.Server(keys, ring_slots=2)
    assert not s.on_device and s.device == "cpu" and "device='cpu'" in repr(s)
    with pytest.raises(ValueError, match="side"):
        s.search(keys, "middle")
    with pytest.raises(TypeError):
        s.replace_keys(np.arange(5, dtype=np.int64))
    with pytest.raises(ValueError, match="not sorted"):
        s.replace_keys(keys[::-1].copy())
    np.testing.assert_array_equal(s.search(keys[:5]), np.arange(5))  # still serving
    s.close()
    s.close()  # idempotent
    with pytest.raises(ValueError, match="shut down"):
        s.search(keys[:5])
    with pytest.raises(ValueError):
        gsearch.Server(keys, ring_slots=0)


def test_python_sequences_and_torch_cpu():
    keys = np.arange(0, 100, 2, dtype=np.int64)
    with gsearch.Server(keys) as s:
        np.testing.assert_array_equal(s.search([3, 4, 200]), np.searchsorted(keys, [3, 4, 200]))
        assert s.search([]).shape == (0,)  # an empty sequence takes the keys' dtype
        got = s.search(7, "right")
        assert type(got) is np.int64 and got == 4  # a scalar for a scalar, as searchsorted returns
        np.testing.assert_array_equal(s.search(np.array([3, 4], ">i8")), [2, 2])  # another byte order
        if torch is not None:
            q = torch.tensor([[3, 4], [5, 200]])
            got = s.search(q, "right")
            assert isinstance(got, torch.Tensor) and got.device.type == "cpu" and got.dtype == torch.int64
            np.testing.assert_array_equal(got.numpy(), np.searchsorted(keys, q.numpy(), "right"))


# --- what search takes: gsearch.searchsorted's queries (issue 39, item 7) --------------------------


def _reference(keys, q, side):
    """numpy.searchsorted's answer (pred: right - 1), the reference."""
    r = np.searchsorted(keys, q, "right" if side == "pred" else side)
    return r - 1 if side == "pred" else r


# Python numbers and sequences that numpy.searchsorted answers exactly against keys of each dtype
# (numpy compares Python ints exactly, and promotes int32 / uint32 / float32 keys with float64 or
# int64 queries to a dtype that holds both).
_PY_QUERIES = {
    "i": [0, 7, -3, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**40, -2**40, 2**70, -2**70, True],
    "u": [0, 7, 2**32 - 1, 2**32, 2**40, 2**70, -1, -2**40, True],
    "f": [0, 7, -3, 2**40, 2**70, -2**70, 0.1, 2.5, -0.5, 1e300, -1e300, float("inf"), float("-inf"), float("nan"),
          3.4028234663852886e38, 3.5e38],
}


def _edge_keys(dtype):
    """Sorted keys of dtype with its extremes, repeats, and (floats) values only float64 lies between."""
    d = np.dtype(dtype)
    if d.kind == "f":
        f = np.finfo(d)
        ks = [-np.inf, f.min, -2.5, -0.5, 0.0, np.float32(0.1), 0.1, 2.5, 2.5, 7.0, f.max, np.inf, np.nan]
    else:
        i = np.iinfo(d)
        ks = [i.min, i.min + 1, 0, 0, 7, 7, 8, 1000, i.max - 1, i.max]
    return np.sort(np.array(ks, d))


def _taken(keys, q):
    """Whether Server.search takes queries q of these keys: where gsearch.searchsorted does, and
    integer arrays of float64 keys, which searchsorted refuses (lossy beyond 2**53) and numpy
    casts "safely" (so does the server, as it did before)."""
    try:
        gsearch.searchsorted(keys, q)
        return True
    except TypeError:
        return keys.dtype == np.float64 and np.asarray(q).dtype.kind in "iu"


@pytest.mark.parametrize("dtype", DTYPES)
def test_search_takes_what_searchsorted_takes(dtype):
    """Python ints, floats, bools, lists (nested, empty), numpy scalars and arrays of other
    dtypes: Server.search answers numpy.searchsorted's answer, and refuses (TypeError) what
    gsearch.searchsorted refuses; a scalar query gives a numpy integer, as searchsorted."""
    keys = _edge_keys(dtype)
    d = np.dtype(dtype)
    with gsearch.Server(keys) as s:
        for side in ("left", "right", "pred"):
            for v in _PY_QUERIES["f" if d.kind == "f" else d.kind]:
                if d.kind in "iu" and d.itemsize == 8 and isinstance(v, float):
                    continue  # refused below
                if d == np.int64 and v in (2**70,):
                    continue  # numpy converts it to uint64, then float64: not exact (gsearch.searchsorted is)
                got = s.search(v, side)
                assert type(got) is np.int64, (v, side, type(got))
                assert got == _reference(keys, v, side), (v, side)
                assert got == gsearch.searchsorted(keys, v, "right" if side == "pred" else side) - (side == "pred")
            for q in ([1, 7, 8], [[0, 7], [1000, -1 if d.kind != "u" else 1]], [0.5, 7.0, 7.5], (2.5, 0.1)):
                if not _taken(keys, q):  # e.g. ints (int64) of float32 keys, floats of int64 keys
                    with pytest.raises(TypeError, match="^gsearch.Server.search: "):
                        s.search(q, side)
                    continue
                got = s.search(q, side)
                want = _reference(keys, q, side)
                assert isinstance(got, np.ndarray) and got.dtype == np.int64 and got.shape == np.shape(q)
                np.testing.assert_array_equal(got, want, err_msg=f"{q} {side}")
            empty = s.search([], side)
            assert isinstance(empty, np.ndarray) and empty.shape == (0,) and empty.dtype == np.int64
            assert s.search([[]], side).shape == (1, 0)
            # numpy scalars and arrays of other dtypes (wider ones too: int64 of int32 keys, float64
            # of float32 keys, each query searched exactly).
            others = [np.int8, np.int16, np.uint8, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float16,
                      np.float32, np.float64, np.bool_]
            for od in others:
                q = np.array([-3, 0, 7, 8, 200, 2**31 - 1, 2**31, 2**40], np.float64)
                if np.dtype(od).kind in "biu":
                    info = np.iinfo(od) if np.dtype(od).kind != "b" else np.iinfo(np.uint8)
                    q = np.clip(q, info.min, info.max)
                with np.errstate(over="ignore"):
                    q = q.astype(od)  # (float16: 2**31 and beyond are inf)
                if not _taken(keys, q):
                    with pytest.raises(TypeError, match="^gsearch.Server.search: "):
                        s.search(q, side)
                    continue
                np.testing.assert_array_equal(s.search(q, side), _reference(keys, q, side), err_msg=f"{od} {side}")
                one = s.search(q[2], side)  # a numpy scalar
                assert type(one) is np.int64 and one == _reference(keys, q[2], side)
        # Refused as gsearch.searchsorted refuses them (a promotion that would round).
        if d.kind in "iu" and d.itemsize == 8:
            with pytest.raises(TypeError, match="gsearch.Server.search: .*float"):
                s.search(0.5)
            with pytest.raises(TypeError):
                gsearch.searchsorted(keys, 0.5)
        if d == np.uint64:
            with pytest.raises(TypeError, match="gsearch.Server.search: uint64 keys and int64 queries"):
                s.search([1, 2])
            with pytest.raises(TypeError):
                gsearch.searchsorted(keys, [1, 2])
        with pytest.raises(TypeError, match="unsupported"):
            s.search(np.array(["a"]))


def test_search_wide_queries_exactly():
    """Queries wider than the keys (float64 of float32 keys, int64 and float64 of int32 / uint32
    keys), random and at every boundary the rounding meets, against numpy.searchsorted, which
    compares them in the wider dtype."""
    rng = np.random.default_rng(7)
    f32 = np.sort(np.concatenate([rng.normal(0, 10, 500).astype(np.float32), _edge_keys(np.float32)]))
    with gsearch.Server(f32) as s:
        q = np.concatenate([rng.normal(0, 10, 2000), f32.astype(np.float64),
                            np.nextafter(f32.astype(np.float64), np.inf), np.nextafter(f32.astype(np.float64), -np.inf),
                            [1e300, -1e300, 3.5e38, -3.5e38, np.nan]])  # (an even count)
        for side in ("left", "right", "pred"):
            np.testing.assert_array_equal(s.search(q, side), _reference(f32, q, side))
            np.testing.assert_array_equal(s.search(q.reshape(-1, 2), side), _reference(f32, q.reshape(-1, 2), side))
    for kd in (np.int32, np.uint32):
        info = np.iinfo(kd)
        drawn = rng.integers(info.min, info.max, 500, endpoint=True)
        keys = np.sort(np.concatenate([drawn, _edge_keys(kd)]).astype(kd))
        edges = np.array([info.min - 2, info.min - 1, info.min, info.min + 1, info.max - 1, info.max, info.max + 1,
                          2**40, -2**40, -2**63, 2**63 - 1], np.int64)
        k64 = keys.astype(np.int64)
        qi = np.concatenate([rng.integers(-2**33, 2**33, 2000), k64, k64 + 1, edges])
        qf = np.concatenate([qi.astype(np.float64), qi + 0.5, qi - 0.5, [np.nan, np.inf, -np.inf, 1e300, -1e300]])
        with gsearch.Server(keys) as s:
            for side in ("left", "right", "pred"):
                np.testing.assert_array_equal(s.search(qi, side), _reference(keys, qi, side), err_msg=f"{kd} int64")
                np.testing.assert_array_equal(s.search(qf, side), _reference(keys, qf, side), err_msg=f"{kd} float64")


# --- options checked before they reach the extension (issue 39, item 7) ----------------------------


@pytest.mark.parametrize("option, value, match", [
    ("threads", -1, "threads must be 0 to"),
    ("threads", 1 << 17, "threads must be 0 to"),
    ("max_delay", float("nan"), "max_delay must be a number of seconds from 0"),
    ("max_delay", 1e30, "max_delay must be a number of seconds from 0"),
    ("max_delay", -0.001, "max_delay must be"),
    ("idle_sleep", float("inf"), "idle_sleep must be"),
    ("idle_release", -1e-3, "idle_release must be"),
    ("idle_release", 1e5, "idle_release must be"),
    ("ring_slots", 0, "ring_slots must be 1 to"),
    ("max_batch_requests", 0, "max_batch_requests must be 1 to"),
    ("max_batch_queries", -5, "max_batch_queries must be 1 to"),
    ("preferred_batch_queries", -1, "preferred_batch_queries must be 0 to"),
    ("blocks", -2, "blocks must be 0 to"),
    ("staging_queries", 0, "staging_queries must be 1 to"),
])
def test_server_options_checked(option, value, match):
    with pytest.raises(ValueError, match=f"^gsearch.Server: {match}"):
        gsearch.Server(np.arange(10), **{option: value})


@pytest.mark.parametrize("option, value", [("threads", 1.5), ("ring_slots", "8"), ("max_delay", "0.1"),
                                           ("blocks", None), ("threads", True)])
def test_server_options_typed(option, value):
    with pytest.raises(TypeError, match=f"gsearch.Server: {option} must be"):
        gsearch.Server(np.arange(10), **{option: value})


# --- the CUDA server -----------------------------------------------------------------------------
# Marked needs_torch (the GPU machine's stack; they fail there, not skip, under
# GSEARCH_REQUIRE_GPU=1) except the cupy ones. Small key sets and few requests: seconds in all.
# blocks=4 in most: the server's share of the GPU, leaving the rest to torch's kernels.
# Beside a running server the tests launch only framework kernels launched once before it
# started (the docstring's warning: on the H100 the first all() of a bool tensor, and cupy's
# first arange, waited for the server's kernel): inputs are made with numpy and copied, results
# compared on the host.


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_every_dtype_numpy_and_torch(dtype):
    rng = np.random.default_rng(11)
    keys = keys_of(rng, dtype, 3000)
    tdtype = getattr(torch, np.dtype(dtype).name, None)
    if tdtype is None:
        pytest.skip(f"torch {torch.__version__} has no {np.dtype(dtype).name}")
    qs = [rng.integers(0, 1100, (7, 11)).astype(dtype) for _ in range(2)]
    # Page-locked host memory (pinned before the server starts: this test is about the answers).
    pinned = [torch.from_numpy(q).pin_memory() for q in qs]
    with gsearch.Server(keys, device="cuda", blocks=4) as s:
        assert s.on_device and s.device == f"cuda:{torch.cuda.current_device()}" and s.size == 3000
        assert "device='cuda:" in repr(s)
        for q, pq, side in zip(qs, pinned, ("left", "right")):
            want = np.searchsorted(keys, q, side)
            got = s.search(q, side)  # pageable host memory: through the staging
            assert isinstance(got, np.ndarray) and got.dtype == np.int64 and got.shape == q.shape
            np.testing.assert_array_equal(got, want)
            tq = torch.from_numpy(q).to(device="cuda")  # in place on the device
            tgot = s.search(tq, side)
            assert isinstance(tgot, torch.Tensor) and tgot.device == tq.device and tgot.dtype == torch.int64
            assert tgot.shape == tq.shape
            np.testing.assert_array_equal(tgot.cpu().numpy(), want)
            pgot = s.search(pq, side)  # page-locked host memory: read in place
            assert pgot.device.type == "cpu"
            np.testing.assert_array_equal(pgot.numpy(), want)
        q = rng.integers(0, 1100, 500).astype(dtype)
        np.testing.assert_array_equal(s.search(q, "pred"), np.searchsorted(keys, q, "right") - 1)
        np.testing.assert_array_equal(s.search(np.empty(0, dtype)), np.empty(0, np.int64))
        assert s.search(torch.empty(0, dtype=tdtype, device="cuda")).shape == (0,)
        # Larger than the staging (pieces of staging_queries) and than one block's batch.
        big = rng.integers(0, 1100, 20_000).astype(dtype)
        np.testing.assert_array_equal(s.search(big, "right"), np.searchsorted(keys, big, "right"))
        tbig = torch.from_numpy(big).cuda()
        np.testing.assert_array_equal(s.search(tbig, "right").cpu().numpy(), np.searchsorted(keys, big, "right"))


@needs_torch
def test_cuda_keys_on_device_streams_and_casts():
    rng = np.random.default_rng(12)
    keys = keys_of(rng, np.float32, 5000)
    tkeys = torch.from_numpy(keys).cuda()
    # Made before the server starts: torch.cuda.Stream() beside a running server waited for it
    # on the H100 (torch's stream pool; docs/design.md, "The search server").
    side_stream = torch.cuda.Stream()
    qn = np.linspace(-10, 1100, 300_000, dtype=np.float32)
    qin = np.arange(-5, 1005, dtype=np.int16)
    qbn = np.array([1.5, 300.0, 2000.0], np.float32)  # exact in bfloat16
    qtn = (rng.random((40, 30)) * 1000).astype(np.float32)
    # The conversions search runs beside the server (int16 and bfloat16 to float32, a strided
    # tensor made contiguous), launched once before it starts.
    torch.from_numpy(qin[:3]).cuda().to(torch.float32)
    torch.from_numpy(qbn).to(torch.bfloat16).cuda().to(torch.float32)
    torch.from_numpy(qtn).cuda().t().contiguous()
    torch.cuda.current_stream().synchronize()
    with gsearch.Server(tkeys, device="cuda") as s:  # CUDA keys; blocks=0: half the SMs
        assert s.dtype == np.float32 and s.size == 5000
        # Queries copied in on a side stream, searched inside it: search waits for that stream.
        with torch.cuda.stream(side_stream):
            q = torch.from_numpy(qn).cuda()
            got = s.search(q.reshape(600, 500), "right")
            assert got.shape == (600, 500) and got.dtype == torch.int64 and got.is_cuda
            got = got.cpu().numpy()
        side_stream.synchronize()
        np.testing.assert_array_equal(got, np.searchsorted(keys, qn, "right").reshape(600, 500))
        # Safe casts happen on the device (int16 -> float32, bfloat16 -> float32); unsafe ones refused.
        qi = torch.from_numpy(qin).cuda()
        np.testing.assert_array_equal(s.search(qi).cpu().numpy(), np.searchsorted(keys, qin.astype(np.float32)))
        qb = torch.from_numpy(qbn).to(torch.bfloat16).cuda()
        np.testing.assert_array_equal(s.search(qb).cpu().numpy(), np.searchsorted(keys, qbn))
        with pytest.raises(TypeError):
            s.search(torch.from_numpy(np.arange(5, dtype=np.int64)).cuda())
        # Non-contiguous queries are copied, the shape kept.
        qt = torch.from_numpy(qtn).cuda().t()
        np.testing.assert_array_equal(s.search(qt).cpu().numpy(), np.searchsorted(keys, qtn.T))
        # replace_keys from host or device memory.
        s.replace_keys(keys[:100])
        assert s.size == 100
        np.testing.assert_array_equal(s.search(q).cpu().numpy(), np.searchsorted(keys[:100], qn))
        s.replace_keys(tkeys[1000:])
        assert s.size == 4000
        np.testing.assert_array_equal(s.search(q).cpu().numpy(), np.searchsorted(keys[1000:], qn))
    np.testing.assert_array_equal(tkeys.cpu().numpy(), keys)  # the caller's keys untouched


@needs_torch
def test_cuda_nan_and_numpy_semantics():
    keys = np.array([-np.inf, -1.0, 0.0, 2.5, np.inf, np.nan, np.nan])
    q = np.array([np.nan, -0.0, 3.0, -np.inf, np.inf, 2.5])
    with gsearch.Server(keys, device="cuda", blocks=2) as s:
        for side in ("left", "right"):
            want = np.searchsorted(keys, q, side)
            np.testing.assert_array_equal(s.search(q, side), want)
            np.testing.assert_array_equal(s.search(torch.from_numpy(q).cuda(), side).cpu().numpy(), want)
        np.testing.assert_array_equal(s.search(np.array([1, 3], np.int32)), np.searchsorted(keys, [1.0, 3.0]))
    with gsearch.Server(np.arange(10, dtype=np.int32), device="cuda", blocks=2) as s:
        # float64 host queries of int32 keys: compared exactly (converted on the host, numpy).
        q = np.array([1.5, -1e300, 1e300, np.nan, 9.0])
        for side in ("left", "right", "pred"):
            want = np.searchsorted(np.arange(10), q, "right" if side == "pred" else side) - (side == "pred")
            np.testing.assert_array_equal(s.search(q, side), want)
    with gsearch.Server(np.arange(10, dtype=np.int64), device="cuda", blocks=2) as s:
        with pytest.raises(TypeError):
            s.search(np.array([1.5]))  # refused, as by gsearch.searchsorted


@needs_torch
def test_cuda_threads_and_replacement():
    rng = np.random.default_rng(13)
    a, b = keys_of(rng, np.int64, 5000), keys_of(rng, np.int64, 800)
    tb = torch.from_numpy(b).cuda()
    errors, mixed = [], []
    streams = [torch.cuda.Stream() for _ in range(8)]  # before the server (see the streams test above)
    with gsearch.Server(a, device="cuda", blocks=4, max_delay=0.0002, preferred_batch_queries=256) as s:
        def worker(seed):
            try:
                r = np.random.default_rng(seed)
                for i in range(60):
                    q = r.integers(0, 1100, int(r.integers(1, 400)))
                    if i % 2:  # half on the device, each thread's own stream
                        with torch.cuda.stream(streams[seed]):
                            got = s.search(torch.from_numpy(q).cuda(), "right").cpu().numpy()
                    else:
                        got = s.search(q, "right")
                    if not (np.array_equal(got, np.searchsorted(a, q, "right"))
                            or np.array_equal(got, np.searchsorted(b, q, "right"))):
                        mixed.append(seed)
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        def replacer():
            try:
                for i in range(10):
                    s.replace_keys(tb if i % 2 == 0 else a)  # device and host keys in turn
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        run_together(worker, replacer)
        st = s.stats()
    assert not errors and not mixed
    assert st["requests"] == 8 * 60 and st["batches"] >= 1


_FORKED = None  # test_fork_child_is_refused's server: a global, so that the fork child holds the only reference


def _attempt(call):
    """(the exception's type name, its message), or None when call() returns."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 (reported to the parent, which checks the type)
        return type(e).__name__, str(e)
    return None


def _use_in_fork_child(conn):
    """In a fork child: what each call of the parent's server raised, then whether dropping the
    child's copy (its destructor) returned, sent through conn."""
    global _FORKED
    got = {
        "search": _attempt(lambda: _FORKED.search(np.arange(4, dtype=np.int64))),
        "replace_keys": _attempt(lambda: _FORKED.replace_keys(np.arange(8, dtype=np.int64))),
        "stats": _attempt(lambda: _FORKED.stats()),
        "size": _attempt(lambda: _FORKED.size),
        "close": _attempt(lambda: _FORKED.close()),
    }
    _FORKED = None  # the destructor runs here
    gc.collect()
    got["dropped"] = True
    conn.send(got)
    conn.close()


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_torch)])
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Python 3.12+: fork() of a process with threads
def test_fork_child_is_refused(device, tmp_path):
    """A Server used in a multiprocessing fork child: every call raises RuntimeError naming the
    fork instead of blocking for ever, dropping it returns, and the parent's server (and its
    socket front end, whose stop pipe and socket file the child shares) goes on serving."""
    global _FORKED
    keys = np.arange(0, 2000, 2, dtype=np.int64)
    path = str(tmp_path / "s.sock")
    _FORKED = gsearch.Server(keys, device=device, **({"blocks": 2} if device == "cuda" else {}))
    try:
        _FORKED.search(keys[:3])  # the server has served before the fork
        _FORKED.listen(path)
        ctx = multiprocessing.get_context("fork")
        recv, send = ctx.Pipe(duplex=False)
        child = ctx.Process(target=_use_in_fork_child, args=(send,))
        child.start()
        send.close()
        try:
            assert recv.poll(60), "the fork child hung on the parent's server"
            got = recv.recv()
        finally:
            child.join(30)
            if child.is_alive():
                child.kill()
                child.join()
        assert child.exitcode == 0
        for name in ("search", "replace_keys", "stats", "size", "close"):
            assert got[name] is not None and got[name][0] == "RuntimeError", (name, got[name])
            assert "fork child" in got[name][1] and "spawn" in got[name][1], (name, got[name])
        assert got["dropped"]
        q = np.arange(-3, 2005, dtype=np.int64)
        for side in ("left", "right"):
            np.testing.assert_array_equal(_FORKED.search(q, side), np.searchsorted(keys, q, side))
        with gsearch.Client(path, timeout=20) as c:
            np.testing.assert_array_equal(c.search(q, "right"), np.searchsorted(keys, q, "right"))
        assert _FORKED.size == len(keys)
    finally:
        _FORKED.close()
        _FORKED = None


@needs_torch
def test_cuda_errors():
    keys = np.arange(100, dtype=np.float32)
    with pytest.raises(ValueError, match="not sorted"):
        gsearch.Server(keys[::-1].copy(), device="cuda", blocks=2)
    with pytest.raises(ValueError, match="not sorted"):
        gsearch.Server(torch.from_numpy(keys[::-1].copy()).cuda(), device="cuda", blocks=2)
    with pytest.raises(ValueError, match="device must be"):
        gsearch.Server(keys, device="cuda0")
    with pytest.raises(ValueError, match="1-D"):
        gsearch.Server(torch.zeros(3, 3, device="cuda"), device="cuda")
    with pytest.raises(TypeError, match="unsupported dtype"):
        gsearch.Server(torch.zeros(3, dtype=torch.bfloat16, device="cuda"), device="cuda")
    with pytest.raises(ValueError, match="host arrays"):  # a CPU server takes no CUDA arrays
        gsearch.Server(torch.from_numpy(keys).cuda())
    with gsearch.Server(keys) as cpu:
        with pytest.raises(ValueError, match="host arrays"):
            cpu.search(torch.arange(3.0, device="cuda"))
    q = torch.arange(5.0, device="cuda")
    out4, out5 = torch.empty(4, dtype=torch.int64, device="cuda"), torch.empty(5, dtype=torch.int64, device="cuda")
    unsorted = torch.from_numpy(keys[::-1].copy()).cuda()
    other = None
    if torch.cuda.device_count() > 1:
        other = torch.arange(3.0, device=f"cuda:{1 - torch.cuda.current_device()}")
    s = gsearch.Server(keys, device="cuda", blocks=2)
    try:
        with pytest.raises(ValueError, match="side"):
            s.search(keys, "middle")
        with pytest.raises(TypeError):
            s.replace_keys(np.arange(5, dtype=np.int64))
        with pytest.raises(ValueError, match="not sorted"):
            s.replace_keys(unsorted)
        with pytest.raises(ValueError, match="not sorted"):
            s.replace_keys(keys[::-1].copy())
        # The extension's own checks (the Python layer converts before it gets there).
        with pytest.raises(ValueError, match="out"):
            s._core.search(q, 0, out4)
        with pytest.raises(TypeError):
            s._core.search(np.arange(5.0), 0, out5)
        if other is not None:
            with pytest.raises(ValueError, match="the server on cuda"):
                s.search(other)
        np.testing.assert_array_equal(s.search(keys[:5]), np.arange(5))  # still serving
    finally:
        s.close()
    s.close()  # idempotent
    with pytest.raises(ValueError, match="shut down"):
        s.search(keys[:5])
    with pytest.raises(ValueError, match="shut down"):
        s.search(q)
    torch.cuda.synchronize()  # no server runs: a whole-device wait returns
    with pytest.raises(ValueError):
        gsearch.Server(keys, device="cuda", ring_slots=0)


@needs_torch
def test_cuda_listen(tmp_path):
    rng = np.random.default_rng(14)
    keys = keys_of(rng, np.uint32, 2000)
    path = str(tmp_path / "s.sock")
    with gsearch.Server(keys, device="cuda", blocks=2) as s:
        assert s.listen(path) == path
        with gsearch.Client(path, timeout=20) as c:
            q = rng.integers(0, 1100, 5000).astype(np.uint32)
            np.testing.assert_array_equal(c.search(q, "right"), np.searchsorted(keys, q, "right"))


@needs_cupy
@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_cupy(dtype):
    rng = np.random.default_rng(15)
    keys = keys_of(rng, dtype, 3000)
    ckeys = cupy.asarray(keys)
    lo = -5 if np.dtype(dtype).kind != "u" else 0
    # cupy compiles and loads a kernel at its first use, which beside a running server waited
    # for it (the H100): arange and the copy of a reversed array (search's), once before.
    cupy.ascontiguousarray(cupy.arange(lo, lo + 3, dtype=dtype)[::-1])
    cupy.cuda.get_current_stream().synchronize()
    with gsearch.Server(ckeys, device="cuda", blocks=4) as s:
        assert s.device == f"cuda:{ckeys.device.id}"
        for side in ("left", "right"):
            q = rng.integers(0, 1100, (7, 11)).astype(dtype)
            got = s.search(cupy.asarray(q), side)
            assert isinstance(got, cupy.ndarray) and got.dtype == np.int64 and got.shape == q.shape
            np.testing.assert_array_equal(cupy.asnumpy(got), np.searchsorted(keys, q, side))
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:  # made and searched on a side stream
            q = cupy.arange(lo, 1105, dtype=dtype)
            got = s.search(q[::-1], "right")  # negative strides: copied
            want = np.searchsorted(keys, cupy.asnumpy(q[::-1]), "right")
        stream.synchronize()
        np.testing.assert_array_equal(cupy.asnumpy(got), want)
        s.replace_keys(ckeys[:10])
        assert s.size == 10
        np.testing.assert_array_equal(cupy.asnumpy(s.search(cupy.asarray([5], dtype=dtype))),
                                      np.searchsorted(keys[:10], [5]))
