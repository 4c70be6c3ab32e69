"""bench/functional_arrays/plot_fa.py on made-up rows in fa_bench's schema (written by the test,
marked synthetic): the table's numbers, the seed's ratio, files merged, unverified rows left out,
a wrong schema refused, the figure. No GPU.

    python3 -m pytest bench/functional_arrays/test_plot_fa.py
"""
import json
import os
import pathlib

import pytest

from ..common.plot_test_helpers import run_script

pytest.importorskip("matplotlib")

HERE = pathlib.Path(__file__).resolve().parent
PLOT = HERE / "plot_fa.py"


def run(*args):
    return run_script(PLOT, *args, env={**os.environ, "MPLBACKEND": "Agg"})


def row(impl, cells, mean, p50, p99, verified=True):
    return {"mix": "paper", "cells": cells, "impl": impl, "ops": 1000, "ms": mean, "ms_stdev": 0.01, "ms_range": 0.02,
            "runs": 3, "us_per_op": {"mean": mean, "p50": p50, "p99": p99, "max": p99 * 2}, "verified": verified}


def write(path, schema, rows):
    path.write_text(json.dumps({"schema": schema, "synthetic": True, "command": "fa_bench (made up)",
                                "source": {"commit": "0" * 40}, "device": {"name": "made-up GPU"}, "results": rows}))
    return path


def test_table_merges_files_and_leaves_out_unverified(tmp_path):
    a = write(tmp_path / "a.json", "gsearch-bench-fa/1",
              [row("gpu", 16, 5.0, 5.0, 5.1), row("gpu", 8192, 3.01, 3.01, 3.1), row("treap", 16, 0.1, 0.1, 0.2, False)])
    b = write(tmp_path / "b.json", "gsearch-bench-fa/1",
              [row("gpu-sync", 8192, 11.0, 10.0, 15.0), row("machine", 8192, 27.0, 15.0, 100.0)])
    r = run(a, b, "--table", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "leaving out unverified row paper N=16 treap" in r.stderr
    lines = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:-1]]
             for line in r.stdout.splitlines() if line.startswith("| ") and not line.startswith("| N")}
    assert lines["2^13"][1].startswith("**3.01**")
    assert lines["2^13"][2] == "10.00 (p99 15.0)"
    assert lines["2^13"][3] == "27.00"
    assert lines["2^13"][-1] == "100"  # 301 / 3.01
    assert lines["16"][-1] == "20"  # 101 / 5.0
    assert "treap" not in r.stdout.splitlines()[3]  # the header: no treap column (its only row unverified)
    assert (tmp_path / "fa_per_op.png").stat().st_size > 10000


def test_wrong_schema_and_no_output_refused(tmp_path):
    bad = write(tmp_path / "bad.json", "gsearch-bench-server/1", [row("gpu", 16, 5.0, 5.0, 5.1)])
    r = run(bad, "--table")
    assert r.returncode != 0 and "schema" in r.stderr
    good = write(tmp_path / "good.json", "gsearch-bench-fa-cpu/1", [row("machine", 16, 0.3, 0.2, 1.0)])
    r = run(good)
    assert r.returncode != 0 and "--out" in r.stderr
