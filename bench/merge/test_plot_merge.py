"""bench/merge/plot_merge.py on the synthetic sample (sample_merge_results.json: merge_bench's schema,
made-up times) and on variants of it: unverified rows, missing peers and parts, a wrong schema.
No GPU.

    python3 -m pytest bench/merge/test_plot_merge.py
"""
import copy
import pathlib
import re
import sys

import pytest

pytest.importorskip("matplotlib")

HERE = pathlib.Path(__file__).resolve().parent
BENCH = HERE.parent
PLOT = HERE / "plot_merge.py"
SAMPLE = HERE / "sample_merge_results.json"
import plot_merge  # noqa: E402
from plot_test_helpers import PlotScript, cells, pngs, table_line  # noqa: E402

FIGURES = set(plot_merge.FIGURES)


_plot = PlotScript(PLOT, SAMPLE, "m.json")
run_plot, sample, write = _plot.run, _plot.sample, _plot.write


def test_sample_is_marked_synthetic():
    doc = sample()
    assert doc["schema"] == plot_merge.SCHEMA
    assert doc["synthetic"] is True and "SYNTHETIC" in doc["note"]


def test_sample_rows_have_merge_bench_fields():
    """The sample's rows carry exactly the fields merge_bench.cu's row() writes, and
    bench/README.md documents each of them in its merge_bench section."""
    src = (BENCH / "merge_bench.cu").read_text()
    m = re.search(r"for \(const char\* k : \{(\"part\".*?)\}\)", src, re.S)
    fields = re.findall(r'"(\w+)"', m.group(1))
    assert len(fields) > 20
    for r in sample()["results"]:
        assert list(r) == fields, r
    readme = (BENCH / "README.md").read_text()
    section = readme[readme.index("## merge_bench"):]
    for f in fields:
        assert f"`{f}`" in section, f


def test_all_figures_and_tables(tmp_path):
    r = run_plot(SAMPLE, "--out", tmp_path / "fig")
    assert set(pngs(tmp_path / "fig")) == FIGURES
    out = r.stdout
    assert out.startswith("**SYNTHETIC sample")
    titles = [l for l in out.splitlines() if l.startswith("### ")]
    assert len(titles) == 7 and all("SYNTHETIC" in t for t in titles)
    assert "| int32 + int64 values | 2^26 + 2^26 |" in out
    assert "| intersection | 26,000,000 |" in out
    assert "| gsearch, queries_sorted |" in out
    assert "| all-equal |" in out and "| inner | large |" in out
    assert "**missed**" in out
    # The unverified thrust::sort row (0.01 ms) is left out: thrust's sort column shows 3.99.
    assert cells(table_line(out, "| int32 | 2^27 |"))[6] == "3.99"
    assert "leaving out unverified row sort thrust" in r.stderr


def test_ratios():
    doc = sample()
    rows = plot_merge.usable_rows(doc)
    out = plot_merge.tables(doc, rows)
    g = plot_merge.pick(rows, part="merge", impl="gsearch", dtype="int32", values=None)
    c = plot_merge.pick(rows, part="merge", impl="cub", dtype="int32", values=None)
    line = cells(table_line(out, "| int32 | 2^26 + 2^26 |"))
    assert line[2] == plot_merge.fmt_ms(g["ms"])
    assert float(line[8]) == pytest.approx(c["ms"] / g["ms"], abs=0.0006)
    assert float(line[4]) == pytest.approx(g["pct_roofline"], abs=0.06)
    s = plot_merge.pick(rows, part="set_ops", impl="gsearch", op="union")
    line = cells(table_line(out, "| union |"))
    assert float(line[3]) == pytest.approx(s["ms"] / g["ms"], abs=0.0006)
    line = cells(table_line(out, "| gsearch, plain search |"))
    assert float(line[-1]) == pytest.approx(9.5 / 0.45, abs=0.006)
    line = cells(table_line(out, "| all-equal |"))
    assert line[3].endswith("(1.14x)")


def test_missing_peers(tmp_path):
    doc = sample()
    doc["results"] = [r for r in doc["results"] if r["impl"] in ("gsearch", "roofline")]
    doc["versions"]["cub"] = None
    r = run_plot(write(tmp_path, doc), "--out", tmp_path / "fig")
    assert set(pngs(tmp_path / "fig")) == FIGURES
    line = cells(table_line(r.stdout, "| int32 | 2^26 + 2^26 |"))
    assert line[5] == "-" and line[6] == "-" and line[8] == "-"
    assert "CUB / thrust -" in r.stdout.splitlines()[0]


def test_parts_missing(tmp_path):
    """A --parts merge,set_ops run: only those tables and figures."""
    doc = sample()
    doc["results"] = [r for r in doc["results"] if r["part"] in ("merge", "set_ops")]
    doc["targets"] = []
    r = run_plot(write(tmp_path, doc), "--out", tmp_path / "fig")
    assert set(pngs(tmp_path / "fig")) == {"merge_merge.png", "merge_set_ops.png"}
    assert "sorted search" not in r.stdout and "multiset set operations" in r.stdout


def test_skipped_listed(tmp_path):
    doc = sample()
    doc["skipped"] = [{"what": "join inner, large", "reason": "needs 46 GB"}]
    r = run_plot(write(tmp_path, doc), "--no-figures")
    assert "Skipped: join inner, large (needs 46 GB)" in r.stdout


def test_bad_input(tmp_path):
    doc = sample()
    doc["schema"] = "gsearch-bench-find/1"
    r = run_plot(write(tmp_path, doc), "--no-figures", ok=False)
    assert r.returncode != 0 and "schema" in r.stderr
    r = run_plot(SAMPLE, ok=False)  # neither --out nor --no-figures
    assert r.returncode != 0 and "--out" in r.stderr
