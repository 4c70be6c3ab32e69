"""The README's ```python blocks run as written (each in a fresh namespace, in an empty
directory). A block whose text says "needs a CUDA GPU" runs where torch sees a CUDA device and
gsearch.cuda_available() (marked needs_torch: it skips elsewhere, and fails under
GSEARCH_REQUIRE_GPU=1); every block that touches CUDA must say so. A block that imports pandas
runs where pandas imports."""

import re
from pathlib import Path

import pytest

from gpu_support import needs_torch

README = Path(__file__).resolve().parents[2] / "README.md"
CUDA_MARK = "needs a CUDA GPU"


def python_blocks():
    if not README.exists():
        return []
    return re.findall(r"^```python\n(.*?)^```", README.read_text(), re.S | re.M)


BLOCKS = python_blocks()


def _imports(name):
    try:
        __import__(name)
    except ImportError:
        return False
    return True


# A block that imports pandas (the as-of joins) runs where pandas imports: not in the oldest-numpy
# CI step, whose numpy is older than pandas needs.
NEEDS_PANDAS = pytest.mark.skipif(not _imports("pandas"), reason="pandas does not import")


def params():
    out = []
    for i, block in enumerate(BLOCKS):
        cuda = CUDA_MARK in block
        marks = [needs_torch] if cuda else []
        if re.search(r"^import .*\bpandas\b", block, re.M):
            marks.append(NEEDS_PANDAS)
        out.append(pytest.param(block, id=f"block{i}{'-cuda' if cuda else ''}", marks=marks))
    return out


def test_the_readme_has_cpu_and_cuda_blocks():
    if not README.exists():
        pytest.skip("not run from a source tree")
    assert sum(CUDA_MARK not in b for b in BLOCKS) >= 2  # Quick start, Python
    assert sum(CUDA_MARK in b for b in BLOCKS) >= 1
    for b in BLOCKS:  # a block that needs CUDA says so
        if CUDA_MARK not in b:
            assert not re.search(r"[\"']cuda|\.cuda\(|import torch|import cupy", b), b


@pytest.mark.parametrize("block", params())
def test_readme_block_runs(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a block that writes files writes them here
    exec(compile(block, str(README), "exec"), {"__name__": "__readme__"})
