"""What the GPU tests need: torch and cupy when they import and see a device, the skip markers
and a spy on the extension's calls (shared by test_gpu.py, test_find.py and test_merge.py)."""

import gsearch
import pytest
from gsearch import _core

try:
    import torch

    HAVE_TORCH_CUDA = torch.cuda.is_available()
except Exception:
    torch = None
    HAVE_TORCH_CUDA = False

try:
    import cupy

    HAVE_CUPY = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:
    cupy = None
    HAVE_CUPY = False

NO_GSEARCH_CUDA = not gsearch.cuda_available()
needs_torch = pytest.mark.skipif(
    not HAVE_TORCH_CUDA or NO_GSEARCH_CUDA,
    reason="needs torch with CUDA and gsearch built with CUDA on a machine with a GPU",
)
needs_cupy = pytest.mark.skipif(
    not HAVE_CUPY or NO_GSEARCH_CUDA,
    reason="needs cupy with a device and gsearch built with CUDA on a machine with a GPU",
)


def spy_on(monkeypatch, name):
    """Records the data pointers the extension's `name` receives."""
    seen = []
    real = getattr(_core, name)

    def spy(*args, **kw):
        seen.append([_core._data_pointer(x) for x in args if hasattr(x, "__dlpack__")])
        return real(*args, **kw)

    monkeypatch.setattr(_core, name, spy)
    return seen
