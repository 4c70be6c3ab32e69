"""bench/search/plot_search.py on the synthetic sample (sample_search_results.json) and on files with impls missing.

    python3 -m pytest bench/search/test_plot_search.py
"""
import copy
import json
import pathlib

import pytest

pytest.importorskip("matplotlib")

from ..common.plot_test_helpers import pngs, run_script  # noqa: E402
from . import plot_search as plot  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
PLOT = HERE / "plot_search.py"
SAMPLE = HERE / "sample_search_results.json"
CONFLICTS = HERE.parent / "results/h100/bank_conflicts.json"


def run_plot(*args):
    r = run_script(PLOT, *args)
    assert r.returncode == 0, r.stderr
    return r.stdout, r.stderr


def test_sample_all_figures(tmp_path):
    args = [SAMPLE, "--out", tmp_path / "fig"]
    if CONFLICTS.exists():
        args += ["--conflicts", CONFLICTS]
    out, err = run_plot(*args)
    expected = {f"{fig}_{kt}.png" for kt in ("int32", "int64")
                for fig in ("throughput", "time_vs_k", "worst_vs_random", "speedup_vs_best_peer")}
    if CONFLICTS.exists():
        expected |= {f"conflicts_{a}_{b}B.png" for a in ("pbs", "pbscf", "pbscl") for b in (4, 8)}
    assert set(pngs(tmp_path / "fig")) == expected
    # One table per key type and query kind, every listed column, cub "-" for int64.
    assert out.count("### ") == 4
    header = ("| K | PBS | PBS-CF | PBS-CL | roofline | thrust | cub | torch | cupy | "
              "best gsearch / best peer |")
    assert out.count(header) == 4
    int64 = out[out.index("### int64 keys, random"):]
    line = next(l for l in int64.splitlines() if l.startswith("| 1024 |"))
    assert line.split("|")[7].strip() == "-"  # cub column


def test_table_values_and_ratio():
    doc = json.loads(SAMPLE.read_text())
    rows = plot.load_rows(doc)
    text = plot.table(doc, rows, "int32", "random")
    line = next(l for l in text.splitlines() if l.startswith("| 4096 |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    sel = [r for r in rows if r["key_type"] == "int32" and r["query_kind"] == "random"
           and r["k"] == 4096]
    g = {(r["impl"], r["algo"]): r["gqps"] for r in sel}
    assert cells[1] == f"{g[('gsearch', 'pbs')]:.1f}" and cells[4] == f"{g[('roofline', None)]:.1f}"
    best_g = max(v for (i, _), v in g.items() if i == "gsearch")
    best_p = max(v for (i, _), v in g.items() if i in plot.PEERS)
    assert cells[-1].startswith(f"{best_g / best_p:.2f}x (PBS-CL / torch)")


def minimal_doc():
    """gsearch rows only: no roofline, no peers, no worst-case queries."""
    doc = json.loads(SAMPLE.read_text())
    doc["results"] = [r for r in doc["results"] if r["impl"] == "gsearch"
                      and r["query_kind"] == "random" and r["key_type"] == "int32"]
    return doc


def test_gsearch_only(tmp_path):
    p = tmp_path / "r.json"
    p.write_text(json.dumps(minimal_doc()))
    out, _ = run_plot(p, "--out", tmp_path / "fig")
    assert pngs(tmp_path / "fig") == ["throughput_int32.png", "time_vs_k_int32.png"]
    line = next(l for l in out.splitlines() if l.startswith("| 32 |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[4:] == ["-", "-", "-", "-", "-", "-"]  # roofline, 4 peers, ratio


def test_peers_only_and_empty(tmp_path):
    doc = json.loads(SAMPLE.read_text())
    doc["results"] = [r for r in doc["results"] if r["impl"] in ("torch", "cupy")]
    p = tmp_path / "r.json"
    p.write_text(json.dumps(doc))
    run_plot(p, "--out", tmp_path / "fig")
    assert pngs(tmp_path / "fig") == ["throughput_int32.png", "throughput_int64.png"]
    doc["results"] = []
    p.write_text(json.dumps(doc))
    out, err = run_plot(p, "--out", tmp_path / "fig2")
    assert "no rows" in err and pngs(tmp_path / "fig2") == []


def test_unverified_rows_left_out_and_out_types(tmp_path):
    doc = minimal_doc()
    bad = copy.deepcopy(doc["results"][0])
    bad.update(algo="pbs", ms=bad["ms"] / 100, verified=False)  # fast but wrong
    wide = copy.deepcopy(doc["results"][0])
    wide.update(out_type="int64", ms=wide["ms"] * 1.5)
    doc["results"] += [bad, wide]
    rows = plot.load_rows(doc)
    assert bad not in rows and len(rows) == len(doc["results"]) - 1
    names = plot.series(rows)
    algo = wide["algo"]
    assert ("gsearch", algo, "int64") in names and ("gsearch", algo, "int32") in names
    # The table uses the fastest output type.
    assert plot.best(rows)[("gsearch", algo)][wide["k"]] == pytest.approx(doc["results"][0]["gqps"])
    p = tmp_path / "r.json"
    p.write_text(json.dumps(doc))
    out, err = run_plot(p, "--out", tmp_path / "fig")
    assert "leaving out unverified row" in err


def test_no_figures_flag(tmp_path):
    out, _ = run_plot(SAMPLE, "--no-figures")
    assert out.startswith("### int32 keys, random queries")


def test_cpu_run(tmp_path):
    """A CPU run of `gsearch bench search`: gsearch-cpu rows (auto resolved as "auto:binary")
    against std::upper_bound; no GPU columns."""
    def row(impl, algo, k, kind, ms):
        q = 1 << 22
        return {"impl": impl, "algo": algo, "key_type": "int64", "k": k, "query_kind": kind,
                "q": q, "out_type": "int32", "ms": ms, "ms_min": ms, "ms_max": ms, "runs": 3,
                "gqps": q / (ms * 1e6), "gbps": 0.0, "bytes": q * 12 + k * 8, "verified": True,
                "peer_version": None, "threads": 16 if impl != "std" else 1}
    doc = {"schema": "gsearch-bench-search/1", "command": "gsearch bench search --device cpu",
           "device": {"backend": "cpu", "threads": 16}, "versions": {"gsearch": "0.1.0"},
           "config": {"queries": 1 << 22, "seed": 1, "key_types": ["int64"],
                      "ks": [1024, 16384], "query_kinds": ["random"], "repeat": 3, "warmup": 1},
           "inputs": [], "skipped": [], "results": []}
    for k in (1024, 16384):
        doc["results"] += [row("gsearch-cpu", "auto:binary", k, "random", 4.0),
                           row("gsearch-cpu", "pbs-cl", k, "random", 8.0),
                           row("std", "upper_bound", k, "random", 40.0)]
    p = tmp_path / "cpu.json"
    p.write_text(json.dumps(doc))
    out, _ = run_plot(p, "--out", tmp_path / "fig")
    assert "| K | gsearch-cpu PBS-CL | gsearch-cpu auto (binary) | std upper_bound | " in out
    assert "(Q = 2^22, CPU, 16 threads)" in out
    assert "| 1024 | 0.524 | 1.05 | 0.105 | 10.00x (auto (binary) / std upper_bound) |" in out
    assert pngs(tmp_path / "fig") == ["speedup_vs_best_peer_int64.png", "throughput_int64.png"]
