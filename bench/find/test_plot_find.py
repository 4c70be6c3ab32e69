"""bench/find/plot_find.py on the synthetic sample (sample_find_results.json: find_bench's schema,
made-up times) and on variants of it: unverified rows, missing peers, a wrong schema. No GPU.

    python3 -m pytest bench/find/test_plot_find.py
"""
import copy
import pathlib
import re

import pytest

pytest.importorskip("matplotlib")

from ..common.plot_test_helpers import PlotScript, cells, table_line  # noqa: E402
from . import plot_find  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
BENCH = HERE.parent
PLOT = HERE / "plot_find.py"
SAMPLE = HERE / "sample_find_results.json"

FIGURES = {"find_strategies.png", "find_modes_gbps.png", "find_positions.png",
           "find_all_fraction.png", "find_isin.png"}


_plot = PlotScript(PLOT, SAMPLE, "f.json")
run_plot, sample, write = _plot.run, _plot.sample, _plot.write


def test_sample_is_marked_synthetic():
    _plot.check_synthetic(plot_find.SCHEMA)


def test_sample_rows_have_find_bench_fields():
    """The sample's rows carry exactly the fields find_bench.cu's row() writes, and
    bench/README.md documents each of them."""
    _plot.check_row_fields(HERE / "find_bench.cu", r"for \(const char\* k : \{(.*?)\}\)",
                           BENCH / "README.md", "## find_bench")


def test_all_figures_and_tables(tmp_path):
    # Every table says the data are synthetic; two strategy tables (500,000 and 2^28).
    out, _, titles = _plot.check_figures(tmp_path, FIGURES, 6)
    assert sum("seeds/001" in t for t in titles) == 2
    assert "| k | strided | coalesced | unrolled |" in out
    # Default ks: the ones measured among 1, 2, 4, ..., 64.
    strat = out[out.index("500,000 int32"):out.index("2^28 int32, one match")]
    ks = [cells(l)[0] for l in strat.splitlines() if re.match(r"\| \d+ \|", l)]
    assert ks == ["1", "2", "4", "8", "12", "16", "24", "32", "48", "64"]
    best = cells(table_line(strat, "| best k (ms) |"))
    assert best[1].startswith("1 (") and best[3].startswith("12 (")
    assert "| find_first | match at N/2 |" in out
    assert "| find_all | " not in out  # find_all has its own table
    assert "| isin" not in out and "| 2^20 |" in out
    assert "| find_all, 1e-5 matching" in out


def test_ratios_and_percentages():
    doc = sample()
    rows = plot_find.usable_rows(doc)
    out = plot_find.tables(doc, rows)
    g = plot_find.pick(rows, part="modes", impl="gsearch", op="find_first", position="N/2")
    c = plot_find.pick(rows, part="modes", impl="cub", op="find_first", position="N/2")
    line = cells(table_line(out, "| find_first | match at N/2 |"))
    assert line[2] == plot_find.fmt_ms(g["ms"])
    assert line[5] == plot_find.fmt_ms(c["ms"])
    assert float(line[7]) == pytest.approx(g["ms"] / c["ms"], abs=0.006)
    assert float(line[4]) == pytest.approx(100 * g["gbps"] / doc["roofline"]["gbps"], abs=0.06)
    # A match at 0: too few bytes for a rate.
    assert cells(table_line(out, "| find_first | match at 0 |"))[3] == "-"
    # find_all: time over the full scan (find_first, no match).
    scan = plot_find.pick(rows, part="modes", impl="gsearch", op="find_first", position="none")
    fa = plot_find.pick(rows, part="modes", impl="gsearch", op="find_all", match_fraction=1e-05)
    line = cells(table_line(out, "| 1e-05 |"))
    assert float(line[4]) == pytest.approx(fa["ms"] / scan["ms"], abs=0.006)
    assert line[1] == f"{fa['matches']:,}"
    # isin: thrust over the best gsearch method.
    line = cells(table_line(out, "| 2^10 |"))
    assert float(line[-1]) == pytest.approx(9.0 / 0.45, abs=0.06)


def test_roofline_from_rows_when_block_missing():
    doc = sample()
    del doc["roofline"]
    rows = plot_find.usable_rows(doc)
    best = max(r["gbps"] for r in rows if r["impl"] == "roofline")
    assert plot_find.roofline_gbps(doc, rows) == best


def test_unverified_rows_left_out(tmp_path):
    doc = sample()
    for r in doc["results"]:
        if r["part"] == "modes" and r["impl"] == "gsearch" and r["op"] == "find_first" and r["position"] == "N/2":
            r["verified"] = False
    r = run_plot(write(tmp_path, doc), "--no-figures")
    assert "leaving out unverified row gsearch find_first" in r.stderr
    assert "| find_first | match at N/2 |" not in r.stdout
    assert "| find_any | match at N/2 |" in r.stdout


def test_missing_peers(tmp_path):
    out = _plot.run_subset(tmp_path, lambda r: r["impl"] not in ("cub", "thrust"), FIGURES,
                           lambda doc: doc["versions"].update(cub=None))
    line = cells(table_line(out, "| find_first | match at N/2 |"))
    assert line[5] == "-" and line[6] == "-" and line[7] == "-"
    assert "CUB -;" in out.splitlines()[0]


def test_parts_missing(tmp_path):
    """A --parts strategies run: only the strategies table and figure."""
    out = _plot.run_subset(tmp_path, lambda r: r["part"] in ("strategies", "roofline"), {"find_strategies.png"},
                           lambda doc: doc.update(targets=[]))
    assert "find / count" not in out and "seeds/001" in out


def test_all_ks(tmp_path):
    doc = sample()
    extra = copy.deepcopy(next(r for r in doc["results"] if r["strategy"] == "unrolled" and r["per_thread"] == 12))
    extra["per_thread"] = 13
    doc["results"].append(extra)
    p = write(tmp_path, doc)
    assert "| 13 |" not in run_plot(p, "--no-figures").stdout
    assert "| 13 |" in run_plot(p, "--no-figures", "--all-ks").stdout


def test_bad_input(tmp_path):
    _plot.check_bad_input(tmp_path, "gsearch-bench-search/1")
