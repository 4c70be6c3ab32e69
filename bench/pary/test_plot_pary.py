"""bench/pary/plot_pary.py on the committed H100 run (bench/results/h100/pary.json): the table's rows
against the JSON's medians, the figure, unverified rows left out, a wrong schema refused. No GPU.

    python3 -m pytest bench/pary/test_plot_pary.py
"""
import json
import os
import pathlib

import pytest

from ..common.plot_test_helpers import run_script

pytest.importorskip("matplotlib")

HERE = pathlib.Path(__file__).resolve().parent
BENCH = HERE.parent
PLOT = HERE / "plot_pary.py"
MAIN = BENCH / "results" / "h100" / "pary.json"


def run(args, tmp_path):
    return run_script(PLOT, *args, "--out", tmp_path, env={**os.environ, "MPLBACKEND": "Agg"})


def table_rows(out):
    return [[c.strip() for c in line.split("|")[1:-1]] for line in out.splitlines() if line.startswith("| int")]


def test_table_and_figure(tmp_path):
    r = run([MAIN, "--table", "--cache", "warm"], tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(MAIN.read_text())
    kernel = {(x["method"], x["k"]): x["median_us"] for x in doc["results"]
              if x["timing"] == "kernel" and x["cache"] == "warm"}
    ks = sorted({k for _, k in kernel})
    rows = table_rows(r.stdout)
    assert len(rows) == 2 * len(ks)  # the in-kernel table, then the end-to-end one
    first = rows[0]  # K = smallest, in-kernel: the binary search's column first, "warm / cold"
    assert float(first[2].split("/")[0]) == pytest.approx(kernel[("binary", ks[0])], abs=0.01)
    assert float(rows[len(ks) - 1][3].split("/")[0]) == pytest.approx(kernel[("pary-warp", ks[-1])], abs=0.01)
    assert (tmp_path / "pary_latency_int32.png").stat().st_size > 10000


def test_unverified_rows_are_left_out(tmp_path):
    doc = json.loads(MAIN.read_text())
    for x in doc["results"]:
        if x["method"] == "binary":
            x["verified"] = False
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = run([bad, "--table", "--cache", "warm"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "binary" in r.stderr  # the warning names the rows left out
    assert "binary search, 1 thread" not in r.stdout  # its column is gone
    assert "P-ary, 1 warp" in r.stdout


def test_wrong_schema(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "gsearch-bench-index/1", "results": []}))
    r = run([other], tmp_path)
    assert r.returncode != 0
