"""bench/selection: plot_selection.py on its synthetic sample (tables, figures, the Python peers'
rows beside, unverified rows left out, a wrong schema refused) and selection_inputs.py against
bench/common/inputs.py's splitmix64 and the C++ formulas written out on uint64. No GPU.

    python3 -m pytest bench/selection
"""
import json
import pathlib
import re

import numpy as np
import pytest

from ..common import inputs
from ..common.plot_test_helpers import PlotScript, cells, table_line
from . import selection_inputs as si

HERE = pathlib.Path(__file__).resolve().parent
SCRIPT = PlotScript(HERE / "plot_selection.py", HERE / "sample_selection_results.json", "selection.json")
SCHEMA = "gsearch-bench-selection/1"
FIGURES = ["selection_dist.png", "selection_partition.png", "selection_rows.png", "selection_size.png", "selection_topk.png"]


def test_sample_is_synthetic():
    SCRIPT.check_synthetic(SCHEMA)


def test_sample_rows_have_the_bench_fields():
    """The sample's rows carry exactly the fields selection_bench.cu's row() writes, each one
    documented in the program's header."""
    src = (HERE / "selection_bench.cu").read_text()
    m = re.search(r'for \(const char\* k : \{(.*?)\}\)\s*r\[k\] = nullptr;', src, re.S)
    fields = re.findall(r'"(\w+)"', m.group(1))
    assert len(fields) > 20
    for r in SCRIPT.sample()["results"]:
        assert list(r) == fields, r
    header = src[:src.index("#include")]
    for f in fields:
        assert re.search(rf"\b{f}\b", header), f


def test_tables_and_figures(tmp_path):
    pytest.importorskip("matplotlib")
    out, _, titles = SCRIPT.check_figures(tmp_path, FIGURES, 6)
    line = table_line(out, "| float32 | 2^26 | uniform |")
    c = cells(line)
    assert c[3] == "0.200" and c[6] == "1.40" and c[-1] == "7.00"  # gsearch, CUB k=1024, their ratio
    assert "**missed**" in out and "| met |" in out


def test_python_rows_beside(tmp_path):
    pytest.importorskip("matplotlib")
    py = {"schema": "gsearch-bench-selection-python/1", "results": [
        {"part": "select", "impl": "torch", "call": "topk(k).values.min()", "dtype": "float32", "dist": "uniform",
         "n": 1 << 26, "k": 1024, "ranks": 1, "ms": 1.38, "verified": True},
        {"part": "select", "impl": "torch", "call": "kthvalue(r + 1)", "dtype": "float32", "dist": "uniform",
         "n": 1 << 26, "k": 1 << 25, "ranks": 1, "ms": 402.0, "verified": True},
        {"part": "topk", "impl": "torch", "call": "topk(k)", "dtype": "float32", "dist": "uniform", "n": 1 << 26,
         "k": 64, "ranks": None, "ms": 1.4, "verified": True}],
        "refusals": [{"part": "quantile", "impl": "torch", "call": "quantile(0.5)", "dtype": "float32",
                      "n": 1 << 30, "error": "RuntimeError: quantile() input tensor is too large"}]}
    p = tmp_path / "py.json"
    p.write_text(json.dumps(py))
    r = SCRIPT.run(SCRIPT.sample_path, "--python", p, "--out", tmp_path / "fig")
    c = cells(table_line(r.stdout, "| float32 | 2^26 | uniform |"))
    assert c[9] == "1.38" and c[10] == "402"
    c = cells(table_line(r.stdout, "| float32 | uniform | 2^26 | 64 |"))
    assert c[8] == "1.40" and c[10] == "9.33"  # torch.topk, torch / gsearch
    assert "input tensor is too large" in r.stdout


def test_unverified_rows_left_out(tmp_path):
    doc = SCRIPT.sample()
    for r in doc["results"]:
        if r["impl"] == "cub" and r["part"] == "select":
            r["verified"] = False
    r = SCRIPT.run(SCRIPT.write(tmp_path, doc), "--no-figures")
    assert "leaving out unverified row select cub" in r.stderr
    assert cells(table_line(r.stdout, "| float32 | 2^26 | uniform |"))[6] == "-"


def test_bad_input(tmp_path):
    SCRIPT.check_bad_input(tmp_path, "gsearch-bench-find/1")


# ---- selection_inputs.py ------------------------------------------------------------------


def test_words_are_splitmix64():
    for seed in (1, 12345, 2**64 - 1):
        for start, count in ((0, 1000), (123456, 77)):
            got = si.words(np, seed, start, count).view(np.uint64)
            assert np.array_equal(got, inputs.splitmix64(seed, start, count))


def test_formulas_on_uint64():
    """The int64 forms equal the C++ formulas computed on uint64 words."""
    n, seed = 5000, 7
    w = inputs.splitmix64(seed, 0, n)
    top = (w >> np.uint64(40)).astype(np.int64)
    assert np.array_equal(si.values(np, "uniform", "float32", n, seed), top.astype(np.float32) * np.float32(2**-24))
    assert np.array_equal(si.values(np, "uniform", "int32", n, seed), top.astype(np.int32))
    b = (w >> np.uint64(32)).astype(np.uint32)
    assert np.array_equal(si.values(np, "bits", "int32", n, seed), b.view(np.int32))
    f = si.values(np, "bits", "float32", n, seed)
    assert np.isfinite(f).all()
    keep = ((b >> 23) & 0xFF) != 0xFF
    assert np.array_equal(f.view(np.uint32)[keep], b[keep])
    low = (w >> np.uint64(48)).astype(np.uint32)
    assert np.array_equal(si.values(np, "adversarial", "float32", n, seed).view(np.uint32), low | 0x3F800000)
    assert np.array_equal(si.values(np, "adversarial", "int32", n, seed), (low | 0x40000000).astype(np.int32))
    assert np.array_equal(si.values(np, "sorted", "int32", n, seed), np.arange(n) - n // 2)
    s = si.values(np, "sorted", "float32", n, seed)
    assert (np.diff(s) >= 0).all() and s[0] == 0
    assert (si.values(np, "constant", "float32", n, seed) == 0.5).all()
    z = si.values(np, "normal", "float32", n, seed)
    assert abs(float(z.mean())) < 0.1 and abs(float(z.std()) - 1) < 0.1


def test_multiset_hash_is_order_free():
    x = si.values(np, "bits", "float32", 4097, 3)
    h = si.multiset_hash(np, x)
    assert h == si.multiset_hash(np, x[::-1].copy())
    assert h != si.multiset_hash(np, x[1:])
    y = np.array([0.0, 1.0], np.float32)
    assert si.multiset_hash(np, y) == si.multiset_hash(np, np.array([-0.0, 1.0], np.float32))
    # The formula itself on a few elements: mix64(v) is splitmix64's output 0 for the seed v - golden.
    small = x[:5]
    golden = 0x9E3779B97F4A7C15
    want = sum(int(inputs.splitmix64((int(b) + 1 - golden) % 2**64, 0, 1)[0]) for b in small.view(np.uint32))
    assert si.multiset_hash(np, small) == want % 2**64
