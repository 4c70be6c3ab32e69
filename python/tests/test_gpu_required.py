"""GSEARCH_REQUIRE_GPU=1: the GPU tests (marked needs_torch / needs_cupy) fail instead of
skipping where their GPU stack is missing; cupy stays optional (gpu_support.py). Checked by
running a tiny marked test file with this directory's conftest.py and gpu_support.py in a
pytest subprocess, with and without the variable: on this machine, whatever it has."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import gsearch
import gpu_support

HERE = Path(__file__).resolve().parent

MARKED = '''
from gpu_support import needs_cupy, needs_torch


@needs_torch
def test_torch():
    pass


@needs_cupy
def test_cupy():
    pass


@needs_torch
class TestClass:
    def test_method(self):
        pass


def test_plain():
    pass
'''


def run_marked(tmp_path, require):
    for name in ("conftest.py", "gpu_support.py"):
        (tmp_path / name).write_text((HERE / name).read_text())
    (tmp_path / "test_marked.py").write_text(MARKED)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # this directory is the rootdir
    env = dict(os.environ)
    env.pop("GSEARCH_REQUIRE_GPU", None)
    if require is not None:
        env["GSEARCH_REQUIRE_GPU"] = require
    # The same gsearch as this process's.
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(gsearch.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([pkg_parent] + [p for p in [env.get("PYTHONPATH")] if p])
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "test_marked.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    counts = {w: int(n) for n, w in re.findall(r"(\d+) (passed|failed|skipped|errors?)", summary)}
    return r, counts


def expected(require):
    """Each marked test's outcome here, from what this machine has."""
    torch_ok = gpu_support.HAVE_TORCH_CUDA and not gpu_support.NO_GSEARCH_CUDA
    if torch_ok:
        t = "PASSED"
    else:
        t = "FAILED" if require else "SKIPPED"
    if gpu_support.NO_GSEARCH_CUDA:
        c = "FAILED" if require else "SKIPPED"
    else:
        c = "PASSED" if gpu_support.HAVE_CUPY else "SKIPPED"
    return t, c


@pytest.mark.parametrize("require", [None, "0", "1"])
def test_require_gpu_turns_skips_into_failures(tmp_path, require):
    r, counts = run_marked(tmp_path, require)
    t, c = expected(require == "1")
    out = r.stdout + r.stderr
    assert "PASSED test_marked.py::test_plain" in r.stdout, out
    want = {"passed": 1}
    for outcome in (t, c, t):  # test_torch, test_cupy, TestClass::test_method
        want[outcome.lower()] = want.get(outcome.lower(), 0) + 1
    assert counts == want, (counts, want, out)
    assert r.returncode == (1 if "failed" in want else 0), out
    if t == "FAILED":
        assert "FAILED test_marked.py::test_torch" in r.stdout and "FAILED test_marked.py::TestClass::test_method" in r.stdout
        # the message names what is missing
        assert "GSEARCH_REQUIRE_GPU=1 but this test needs torch with CUDA" in r.stdout
        for problem in (gpu_support._TORCH_PROBLEM, gpu_support._GSEARCH_PROBLEM):
            assert problem is None or problem in r.stdout, (problem, out)
    if c == "FAILED":
        assert "FAILED test_marked.py::test_cupy" in r.stdout
        assert gpu_support._GSEARCH_PROBLEM in r.stdout
    if require == "1" and c == "SKIPPED":
        assert "cupy stays optional" in r.stdout


def test_verdicts_name_what_is_missing(monkeypatch):
    monkeypatch.setattr(gpu_support, "_TORCH_PROBLEM", "torch.cuda.is_available() is False")
    monkeypatch.setattr(gpu_support, "_GSEARCH_PROBLEM", "gsearch.cuda_available() is False: the package was built without CUDA")
    monkeypatch.setattr(gpu_support, "_CUPY_PROBLEM", None)
    monkeypatch.delenv("GSEARCH_REQUIRE_GPU", raising=False)
    assert gpu_support.gpu_verdict("needs_torch")[0] == "skip"
    monkeypatch.setenv("GSEARCH_REQUIRE_GPU", "1")
    action, why = gpu_support.gpu_verdict("needs_torch")
    assert action == "fail" and "torch.cuda.is_available() is False" in why and "built without CUDA" in why
    action, why = gpu_support.gpu_verdict("needs_cupy")
    assert action == "fail" and "built without CUDA" in why
    monkeypatch.setattr(gpu_support, "_GSEARCH_PROBLEM", None)
    monkeypatch.setattr(gpu_support, "_TORCH_PROBLEM", None)
    monkeypatch.setattr(gpu_support, "_CUPY_PROBLEM", "cupy does not import")
    assert gpu_support.gpu_verdict("needs_torch") == ("run", None)
    action, why = gpu_support.gpu_verdict("needs_cupy")
    assert action == "skip" and "optional" in why  # cupy stays optional
    monkeypatch.setenv("GSEARCH_REQUIRE_GPU", "0")
    assert not gpu_support.gpu_required()
