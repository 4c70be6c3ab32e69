"""bench/search/py_call_overhead.py --plot on the committed H100 runs: its own JSON (torch and
gsearch per call) and call_overhead's (the C++ rows, back to back and enqueue only); and the
measuring mode's exit status 2 where torch or CUDA is missing.

    python3 -m pytest bench/search/test_py_call_overhead.py
"""
import pathlib

import pytest

from ..common.plot_test_helpers import run_script

pytest.importorskip("matplotlib")

HERE = pathlib.Path(__file__).resolve().parent
SCRIPT = HERE / "py_call_overhead.py"
RESULTS = HERE.parent / "results/h100/issue24"


def run(*args):
    return run_script(SCRIPT, *args)


@pytest.mark.parametrize("name", ["py_call_overhead-c48aaae.json", "call_overhead-e64193c.json"])
def test_plot_of_a_committed_run(tmp_path, name):
    png = tmp_path / "out.png"
    r = run("--plot", RESULTS / name, png)
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_cuda_nothing_is_measured(tmp_path):
    try:
        import torch
        if torch.cuda.is_available():
            pytest.skip("a CUDA device is here: the script would measure")
    except ImportError:
        pass
    out = tmp_path / "o.json"
    r = run("--json", out)
    assert r.returncode == 2, r.stderr
    assert not out.exists()
