"""bench/index_intervals/plot_index_intervals.py on its synthetic sample
(sample_index_intervals.json: made-up times in the benchmark's schema): the tables against the
sample's numbers, both figures, unverified rows left out, a wrong schema and a missing output
refused. No GPU.

    python3 -m pytest bench/index_intervals/test_plot_index_intervals.py
"""
import json
import os
import pathlib

import pytest

from ..common.plot_test_helpers import run_script

pytest.importorskip("matplotlib")

HERE = pathlib.Path(__file__).resolve().parent
PLOT = HERE / "plot_index_intervals.py"
SAMPLE = HERE / "sample_index_intervals.json"


def run(*args):
    return run_script(PLOT, *args, env={**os.environ, "MPLBACKEND": "Agg"})


def rows_of(out, first_cell):
    return [[c.strip() for c in line.split("|")[1:-1]] for line in out.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip().startswith(first_cell)]


def test_sample_is_synthetic():
    doc = json.loads(SAMPLE.read_text())
    assert doc["schema"] == "gsearch-bench-index-intervals/1"
    assert doc["synthetic"] is True and "SYNTHETIC" in doc["note"]


def test_tables_and_figures(tmp_path):
    r = run(SAMPLE, "--table", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("**SYNTHETIC sample")
    doc = json.loads(SAMPLE.read_text())
    t1 = {x["cells"]: x for x in doc["results"] if x["part"] == "table1"}
    table1 = rows_of(r.stdout, "1") + rows_of(r.stdout, "2") + rows_of(r.stdout, "4") + rows_of(r.stdout, "8")
    assert len(table1) == len(t1)
    for cells in table1:
        x = t1[int(cells[0].replace(",", ""))]
        assert float(cells[1]) == pytest.approx(x["kernel_us_mean"], abs=1e-3)
        assert float(cells[4]) == pytest.approx(x["e2e_us_mean"], abs=0.01)
        assert float(cells[8]) == pytest.approx(x["seed"]["us"] / x["kernel_us_mean"], abs=0.5)
    curve = rows_of(r.stdout, "range") + rows_of(r.stdout, "rank")
    assert len(curve) == 6
    ii = next(x for x in doc["results"] if x["part"] == "curve" and x["kind"] == "range" and x["way"] == "index_intervals")
    assert float(curve[0][5]) == pytest.approx(ii["total_ms"], rel=0.01)
    assert "from query" in r.stdout
    for name in ("index_intervals_curve.png", "index_intervals_table1.png"):
        assert (tmp_path / name).stat().st_size > 10000


def test_unverified_rows_are_left_out(tmp_path):
    doc = json.loads(SAMPLE.read_text())
    for x in doc["results"]:
        if x["part"] == "curve" and x["way"] == "scan":
            x["verified"] = False
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = run(bad, "--table", "--no-figures")
    assert r.returncode == 0, r.stderr
    assert "leaving out unverified row curve range scan" in r.stderr
    assert "scan every query" not in r.stdout


def test_refuses_wrong_schema_and_no_output(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "gsearch-bench-pary/1", "results": []}))
    r = run(other, "--table")
    assert r.returncode != 0 and "expected 'gsearch-bench-index-intervals/1'" in r.stderr
    assert run(SAMPLE).returncode != 0
