"""bench/merge/plot_merge.py on the synthetic sample (sample_merge_results.json: merge_bench's schema,
made-up times) and on variants of it: unverified rows, missing peers and parts, a wrong schema.
No GPU.

    python3 -m pytest bench/merge/test_plot_merge.py
"""
import pathlib

import pytest

pytest.importorskip("matplotlib")

from ..common.plot_test_helpers import PlotScript, cells, table_line  # noqa: E402
from . import plot_merge  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
BENCH = HERE.parent
PLOT = HERE / "plot_merge.py"
SAMPLE = HERE / "sample_merge_results.json"

FIGURES = set(plot_merge.FIGURES)


_plot = PlotScript(PLOT, SAMPLE, "m.json")
run_plot, sample, write = _plot.run, _plot.sample, _plot.write


def test_sample_is_marked_synthetic():
    _plot.check_synthetic(plot_merge.SCHEMA)


def test_sample_rows_have_merge_bench_fields():
    """The sample's rows carry exactly the fields merge_bench.cu's row() writes, and
    bench/README.md documents each of them in its merge_bench section."""
    _plot.check_row_fields(HERE / "merge_bench.cu", r"for \(const char\* k : \{(\"part\".*?)\}\)",
                           BENCH / "README.md", "## merge_bench")


def test_all_figures_and_tables(tmp_path):
    out, err, _ = _plot.check_figures(tmp_path, FIGURES, 7)
    assert "| int32 + int64 values | 2^26 + 2^26 |" in out
    assert "| intersection | 26,000,000 |" in out
    assert "| gsearch, queries_sorted |" in out
    assert "| all-equal |" in out and "| inner | large |" in out
    assert "**missed**" in out
    # The unverified thrust::sort row (0.01 ms) is left out: thrust's sort column shows 3.99.
    assert cells(table_line(out, "| int32 | 2^27 |"))[7] == "3.99"
    assert "leaving out unverified row sort thrust" in err


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
    out = _plot.run_subset(tmp_path, lambda r: r["impl"] in ("gsearch", "roofline"), FIGURES,
                           lambda doc: doc["versions"].update(cub=None))
    line = cells(table_line(out, "| int32 | 2^26 + 2^26 |"))
    assert line[5] == "-" and line[6] == "-" and line[8] == "-"
    assert "CUB / thrust -" in out.splitlines()[0]


def test_parts_missing(tmp_path):
    """A --parts merge,set_ops run: only those tables and figures."""
    out = _plot.run_subset(tmp_path, lambda r: r["part"] in ("merge", "set_ops"),
                           {"merge_merge.png", "merge_set_ops.png"}, lambda doc: doc.update(targets=[]))
    assert "sorted search" not in out and "multiset set operations" in out


def test_skipped_listed(tmp_path):
    doc = sample()
    doc["skipped"] = [{"what": "join inner, large", "reason": "needs 46 GB"}]
    r = run_plot(write(tmp_path, doc), "--no-figures")
    assert "Skipped: join inner, large (needs 46 GB)" in r.stdout


def test_bad_input(tmp_path):
    _plot.check_bad_input(tmp_path, "gsearch-bench-find/1")
