"""Shared helpers for the gsearch Python tests (CPU tests run everywhere; GPU tests skip, or
fail under GSEARCH_REQUIRE_GPU=1: gpu_support.py)."""

import os

# Every CUDA kernel loaded when a context starts (before torch or gsearch touches CUDA): under
# CUDA's lazy module loading, the first launch of a kernel waits for every running kernel to end,
# and a gsearch.Server(device="cuda")'s kernel runs until it is closed (test_server.py runs torch
# beside one). A value set outside is kept.
os.environ.setdefault("CUDA_MODULE_LOADING", "EAGER")

import numpy as np
import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # the property tests skip (test_properties.py)
    settings = None
if settings is not None:
    settings.register_profile(
        "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    settings.register_profile("thorough", max_examples=2000, deadline=None)
    settings.load_profile(os.environ.get("GSEARCH_HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    from gpu_support import MARKERS

    for name, what in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {what} (skips otherwise; fails under GSEARCH_REQUIRE_GPU=1)")
    config.addinivalue_line(
        "markers",
        "numpy_reference(version): the reference is numpy's own answer as of that version (its quantile "
        "arithmetic, its isin, its errors); skipped with an older numpy (the oldest-numpy CI step)",
    )


def _gpu_verdict(item):
    from gpu_support import gpu_verdict

    for marker in ("needs_torch", "needs_cupy"):
        if item.get_closest_marker(marker) is not None:
            verdict = gpu_verdict(marker)
            if verdict[0] != "run":
                return verdict
    return "run", None


def pytest_runtest_setup(item):
    """GPU tests skip where their GPU stack is missing (gpu_support.py)..."""
    marker = item.get_closest_marker("numpy_reference")
    if marker is not None and np.lib.NumpyVersion(np.__version__) < marker.args[0]:
        pytest.skip(f"the reference is numpy {marker.args[0]}'s own answer (numpy {np.__version__} here)")
    action, why = _gpu_verdict(item)
    if action == "skip":
        pytest.skip(why)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    """...and fail instead, before the test runs, under GSEARCH_REQUIRE_GPU=1."""
    action, why = _gpu_verdict(item)
    if action == "fail":
        pytest.fail(why, pytrace=False)


# Every dtype gsearch accepts: the six native ones and the ones it widens exactly.
NATIVE_DTYPES = ["int32", "uint32", "int64", "uint64", "float32", "float64"]
WIDENED_DTYPES = ["bool", "int8", "int16", "uint8", "uint16", "float16"]
ALL_DTYPES = NATIVE_DTYPES + WIDENED_DTYPES
ALGOS = ["auto", "pbs", "pbs-cf", "pbs-cl", "binary", "index", "partitioned", "pary", "merge"]


@pytest.fixture
def rng(request):
    """A seeded generator; the seed is printed so that a failure can be replayed."""
    seed = int(os.environ.get("GSEARCH_TEST_SEED", np.random.SeedSequence().entropy % 2**32))
    print(f"{request.node.name}: GSEARCH_TEST_SEED={seed}")
    return np.random.default_rng(seed)


def random_values(rng, dtype, n, pool=None):
    """n values of dtype: the full range for integers, a mix with inf / -inf / NaN / -0.0 /
    0.0 for floats; `pool` values only when given (heavy duplicates)."""
    dt = np.dtype(dtype)
    if pool is not None:
        return rng.choice(np.asarray(pool, dtype=dt), size=n)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(int(info.min), int(info.max), n, dtype=dt, endpoint=True)
    x = (rng.standard_normal(n) * 100).astype(dt)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype=dt)
    mask = rng.random(n) < 0.1
    x[mask] = rng.choice(special, size=int(mask.sum()))
    return x


def sorted_keys(rng, dtype, k, duplicates=False):
    from references import ref_sort, ref_unique  # float16 sorted as float32 (references.py)

    pool = None
    if duplicates:
        pool = ref_unique(random_values(rng, dtype, max(1, k // 8 + 1)))
    return ref_sort(random_values(rng, dtype, k, pool))
