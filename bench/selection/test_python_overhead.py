"""bench/selection/python_overhead.py without a GPU: selection_bench's command line, the rows it
takes from selection_bench's JSON (the cases, the dtype, the input), the summary's overheads and
verdicts, where it looks for the binary, and its exit status 2 (nothing measured, no file) where
torch or CUDA is missing.

    python3 -m pytest bench/selection/test_python_overhead.py
"""
import os
import pathlib

import pytest

from ..common.plot_test_helpers import run_script
from . import python_overhead as po

HERE = pathlib.Path(__file__).resolve().parent
N = 1 << 26


def bench_row(part, dtype, ms, **kw):
    row = {"part": part, "impl": "gsearch", "op": part, "call": part, "dtype": dtype, "dist": "uniform", "n": N,
           "k": None, "ranks": None, "ms": ms, "verified": True}
    row.update(kw)
    return row


def bench_doc():
    rows = [bench_row("partition", "int32", 0.9, call="partition", verified=False)]  # a failed check: not taken
    for dtype in ("float32", "int32"):
        rows += [bench_row("select", dtype, 0.18, call="select", k=1024, ranks=1),
                 bench_row("select", dtype, 0.20, call="select", k=N - N // 2, ranks=1),
                 bench_row("select", dtype, 2.5, call="select", ranks=100),
                 bench_row("topk", dtype, 0.25, call="topk sorted", k=1024),
                 bench_row("topk", dtype, 0.24, call="topk unsorted", k=1024),
                 bench_row("partition", dtype, 0.70, call="partition")]
    rows += [bench_row("quantile", "float32", 0.40, op="median", call="median"),
             bench_row("quantile", "float32", 0.41, op="quantile", call="quantile linear", ranks=1),
             bench_row("select", "float32", 9.0, call="select", k=1024, ranks=1, dist="bits"),  # another input
             bench_row("roofline", "float32", 0.06, impl="roofline", op="read", call="u4-b8")]
    return {"results": rows, "inputs": [{"dtype": "float32", "dist": "uniform", "n": N, "hash": "123"}]}


def test_bench_command_asks_for_the_compared_rows():
    cmd = po.bench_command("/x/selection_bench", "out.json", N, ["float32", "int32"], "uniform", 20, 3, 1, True)
    args = {x: cmd[i + 1] for i, x in enumerate(cmd[:-1]) if x.startswith("--") and not cmd[i + 1].startswith("--")}
    assert cmd[0] == "/x/selection_bench" and args["--json"] == "out.json"
    assert args["--parts"] == "select,topk,partition,quantile" and args["--ks"] == "1024"
    assert args["--sizes"] == args["--n"] == args["--quantile-n"] == str(N)
    assert args["--dtypes"] == "float32,int32" and args["--dists"] == args["--topk-dists"] == "uniform"
    assert args["--repeat"] == "20" and args["--warmup"] == "3" and "--no-peers" in cmd
    assert "--no-flush-l2" not in cmd
    few = po.bench_command("b", "o", N, ["int32"], "bits", 5, 0, 7, False)
    assert few[few.index("--repeat") + 1] == "10" and few[-1] == "--no-flush-l2"  # selection_bench's least repeat


def test_cpp_rows_are_the_cases_of_the_input():
    rows = po.cpp_rows(bench_doc(), N, "uniform")
    got = {(r["case"], r["dtype"]): r["ms"] for r in rows}
    assert got == {("select k=1024", "float32"): 0.18, ("select k=n/2", "float32"): 0.20,
                   ("topk k=1024", "float32"): 0.25, ("partition", "float32"): 0.70, ("median", "float32"): 0.40,
                   ("select k=1024", "int32"): 0.18, ("select k=n/2", "int32"): 0.20, ("topk k=1024", "int32"): 0.25,
                   ("partition", "int32"): 0.70}
    assert all(r["impl"] == "cpp" and r["wall_ms"] is None for r in rows)
    assert po.cpp_rows(bench_doc(), N // 2, "uniform") == []


def test_same_inputs():
    inputs = [{"dtype": "float32", "dist": "uniform", "n": N, "hash": "123"}]
    assert po.same_inputs(bench_doc(), inputs) is True
    assert po.same_inputs(bench_doc(), [{**inputs[0], "hash": "124"}]) is False
    assert po.same_inputs(bench_doc(), [{**inputs[0], "dtype": "int32"}]) is None


def test_summary_against_cpp_where_it_has_the_case_else_core():
    def row(case, impl, ms, wall=None):
        return {"case": case, "dtype": "float32", "n": N, "impl": impl, "ms": ms, "wall_ms": wall}

    rows = [row("median", "python", 0.42, 0.45), row("median", "core", 0.41, 0.44), row("median", "cpp", 0.40),
            row("select k=1024", "python", 0.19, 0.2), row("select k=1024", "core", 0.18, 0.2),
            row("quantile 3q", "python", 0.11, 0.12), row("quantile 3q", "core", 0.10, 0.11)]
    s = po.summarize(rows, 0.05)
    assert [x["case"] for x in s] == ["select k=1024", "quantile 3q", "median"]  # CASES' order
    sel, q, med = s
    assert sel["against"] == "core" and sel["over_core"] == pytest.approx(0.19 / 0.18 - 1) and sel["within"] is False
    assert sel["over_cpp"] is None and sel["cpp_ms"] is None
    assert q["within"] is False and q["over_core_wall"] == pytest.approx(0.12 / 0.11 - 1)
    assert med["against"] == "cpp" and med["over_cpp"] == pytest.approx(0.05) and med["within"] is True
    assert po.summarize([row("median", "core", 0.4)], 0.05) == []  # no python row: nothing to say


def test_find_bench_prefers_carry_bin(tmp_path):
    assert po.find_bench(str(tmp_path)) is None
    built = tmp_path / "build" / "dev" / "bench" / "selection" / "selection_bench"
    built.parent.mkdir(parents=True)
    built.write_text("#!/bin/sh\n")
    assert po.find_bench(str(tmp_path)) is None  # not executable
    built.chmod(0o755)
    assert po.find_bench(str(tmp_path)) == str(built)
    staged = tmp_path / "carry" / "bin" / "selection_bench"
    staged.parent.mkdir(parents=True)
    staged.write_text("#!/bin/sh\n")
    staged.chmod(0o755)
    assert po.find_bench(str(tmp_path)) == str(staged)


def test_without_cuda_nothing_is_measured(tmp_path):
    try:
        import torch
        if torch.cuda.is_available():
            pytest.skip("a CUDA device is here: the script would measure")
    except ImportError:
        pass
    out = tmp_path / "o.json"
    package = str(HERE.parents[1] / "python")  # gsearch from this tree where it is not installed
    r = run_script(HERE / "python_overhead.py", "--out", out, env={**os.environ, "PYTHONPATH": package})
    assert r.returncode == 2, r.stderr
    assert not out.exists()
    r = run_script(HERE / "python_overhead.py", "--out", out, "--dtypes", "float16")
    assert r.returncode == 1 and "--dtypes" in r.stderr
