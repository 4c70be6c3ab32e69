"""bench/index/plot_index.py on the committed H100 run (bench/results/h100/index.json and the Python
run beside it): the table's rows and ratios, the figure, unverified rows left out, a wrong
schema refused. No GPU.

    python3 -m pytest bench/index/test_plot_index.py
"""
import json
import os
import pathlib

import pytest

from ..common.plot_test_helpers import run_script

pytest.importorskip("matplotlib")

HERE = pathlib.Path(__file__).resolve().parent
BENCH = HERE.parent
PLOT = HERE / "plot_index.py"
RESULTS = BENCH / "results" / "h100"
MAIN, PY = RESULTS / "index.json", RESULTS / "python" / "index_python.json"


def run(args, tmp_path):
    return run_script(PLOT, *args, "--out", tmp_path, env={**os.environ, "MPLBACKEND": "Agg"})


def table_rows(out):
    return [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| int")]


def test_table_and_figure(tmp_path):
    r = run([MAIN, "--python", PY, "--table"], tmp_path)
    assert r.returncode == 0, r.stderr
    rows = table_rows(r.stdout)
    doc = json.loads(MAIN.read_text())
    ks = {(x["key_type"], x["k"]) for x in doc["results"] if x["part"] == "search"}
    assert len(rows) == len(ks)
    for cells in rows:
        cells = [c.strip() for c in cells]
        # keys, K, 7 gsearch columns, then thrust, CUB, CUB pipeline, torch, the ratio
        # one-shot against one-shot: auto (column 4), not the prebuilt index (column 2)
        auto, ratio = float(cells[4]), float(cells[12])
        peers = [float(c) for c in cells[8:12] if c != "-"]
        assert ratio == pytest.approx(auto / max(peers), abs=0.02)  # the cells are rounded
    assert (tmp_path / "index_gqps.png").stat().st_size > 10000


def test_unverified_rows_are_left_out(tmp_path):
    doc = json.loads(MAIN.read_text())
    for x in doc["results"]:
        if x["impl"] == "thrust":
            x["verified"] = False
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = run([bad, "--table"], tmp_path)
    assert r.returncode == 0
    assert "leaving out unverified row thrust" in r.stderr
    for cells in table_rows(r.stdout):
        assert cells[8].strip() == "-"  # the thrust column


def test_wrong_schema(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "gsearch-bench-merge/1", "results": []}))
    r = run([other], tmp_path)
    assert r.returncode != 0 and "expected 'gsearch-bench-index/1'" in r.stderr
