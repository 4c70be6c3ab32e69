"""What the GPU tests need: torch and cupy when they import and see a device, the markers
needs_torch / needs_cupy and a spy on the extension's calls (shared by test_gpu.py,
test_find.py, test_merge.py, test_index.py and test_readme.py).

A test marked needs_torch runs where torch sees a CUDA device and gsearch.cuda_available();
needs_cupy where cupy sees a device and gsearch.cuda_available(). Elsewhere they skip, except
under GSEARCH_REQUIRE_GPU=1 (as the C++ tests, tests/test_util.hpp): there a needs_torch test
that lacks torch's CUDA or gsearch's CUDA backend, and a needs_cupy test that lacks gsearch's,
FAILS, with a message naming what is missing, so that a run on the GPU machine cannot pass by
skipping. cupy stays optional: a needs_cupy test without cupy skips even then. conftest.py
applies the markers (pytest_runtest_setup / pytest_runtest_call)."""

import os

import gsearch
import pytest
from gsearch import _core

try:
    import torch

    HAVE_TORCH_CUDA = torch.cuda.is_available()
    _TORCH_PROBLEM = None if HAVE_TORCH_CUDA else "torch.cuda.is_available() is False"
except Exception as e:
    torch = None
    HAVE_TORCH_CUDA = False
    _TORCH_PROBLEM = f"torch does not import ({type(e).__name__}: {e})"

try:
    import cupy

    HAVE_CUPY = cupy.cuda.runtime.getDeviceCount() > 0
    _CUPY_PROBLEM = None if HAVE_CUPY else "cupy sees no CUDA device"
except Exception as e:
    cupy = None
    HAVE_CUPY = False
    _CUPY_PROBLEM = f"cupy does not import or sees no device ({type(e).__name__}: {e})"

NO_GSEARCH_CUDA = not gsearch.cuda_available()
if not NO_GSEARCH_CUDA:
    _GSEARCH_PROBLEM = None
elif not gsearch.built_with_cuda():
    _GSEARCH_PROBLEM = "gsearch.cuda_available() is False: the package was built without CUDA"
else:
    _GSEARCH_PROBLEM = "gsearch.cuda_available() is False: no usable CUDA device (or a driver error)"

needs_torch = pytest.mark.needs_torch  # torch with CUDA and gsearch's CUDA backend on a GPU
needs_cupy = pytest.mark.needs_cupy  # cupy with a device and gsearch's CUDA backend on a GPU
MARKERS = {
    "needs_torch": "needs torch with CUDA and gsearch built with CUDA on a machine with a GPU",
    "needs_cupy": "needs cupy with a device and gsearch built with CUDA on a machine with a GPU",
}


def gpu_required() -> bool:
    """GSEARCH_REQUIRE_GPU is set (not empty, not 0): GPU tests fail instead of skipping."""
    return os.environ.get("GSEARCH_REQUIRE_GPU", "") not in ("", "0")


def gpu_verdict(marker: str) -> tuple:
    """What a test marked `marker` does here: ("run", None), ("skip", why) or ("fail", why)."""
    if marker == "needs_torch":
        problems = [p for p in (_TORCH_PROBLEM, _GSEARCH_PROBLEM) if p]
        if not problems:
            return "run", None
        why = "; ".join(problems)
        if gpu_required():
            return "fail", f"GSEARCH_REQUIRE_GPU=1 but this test needs torch with CUDA and gsearch's CUDA backend: {why}"
        return "skip", f"{MARKERS[marker]}: {why}"
    assert marker == "needs_cupy", marker
    if _GSEARCH_PROBLEM:
        if gpu_required():
            return "fail", f"GSEARCH_REQUIRE_GPU=1 but this test needs gsearch's CUDA backend: {_GSEARCH_PROBLEM}"
        return "skip", f"{MARKERS[marker]}: {_GSEARCH_PROBLEM}"
    if _CUPY_PROBLEM:  # cupy is optional, also under GSEARCH_REQUIRE_GPU
        return "skip", f"{MARKERS[marker]} (cupy stays optional under GSEARCH_REQUIRE_GPU): {_CUPY_PROBLEM}"
    return "run", None


def spy_on(monkeypatch, name):
    """Records the data pointers the extension's `name` receives."""
    seen = []
    real = getattr(_core, name)

    def spy(*args, **kw):
        seen.append([_core._data_pointer(x) for x in args if hasattr(x, "__dlpack__")])
        return real(*args, **kw)

    monkeypatch.setattr(_core, name, spy)
    return seen
