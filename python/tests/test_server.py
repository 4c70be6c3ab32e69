"""gsearch.Server (the search server's CPU form, issue 22): every answer against
numpy.searchsorted, from many Python threads at once, across key replacement, and its errors.
Bounded: fixed request counts, and each test closes its server."""

import threading

import numpy as np
import pytest

import gsearch

DTYPES = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]


def keys_of(rng, dtype, n, hi=1000):
    return np.sort(rng.integers(0, hi, n).astype(dtype))


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
    with gsearch.Server(np.arange(10, dtype=np.int32)) as s:
        with pytest.raises(TypeError):
            s.search(np.array([1.5]))


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

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)] + [threading.Thread(target=replacer)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        st = s.stats()
    assert not errors and not mixed
    assert st["requests"] == 8 * 80 and st["batches"] >= 1
    assert sum(st["latency_us_log2"]) == st["requests"]


def test_errors():
    keys = np.arange(100, dtype=np.float32)
    with pytest.raises(ValueError, match="not sorted"):
        gsearch.Server(keys[::-1].copy())
    with pytest.raises(ValueError, match="1-D"):
        gsearch.Server(keys.reshape(10, 10))
    with pytest.raises(ValueError, match="CPU so far"):
        gsearch.Server(keys, device="cuda")
    with pytest.raises(TypeError, match="unsupported dtype"):
        gsearch.Server(np.array(["a", "b"]))
    s = gsearch.Server(keys, ring_slots=2)
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
