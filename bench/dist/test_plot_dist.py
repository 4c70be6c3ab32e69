"""bench/dist/plot_dist.py on made-up files in dist_bench's schema ("gsearch-bench-dist-1") and
dist_torch_peer.py's ("gsearch-bench-dist-torch-1"), written by the test and marked synthetic:
the PNG, the table's efficiencies, unverified and failed rows left out, wrong schemas refused.
No GPU, no torch (dist_torch_peer.py is compiled, never imported).

    python3 -m pytest bench/dist/test_plot_dist.py
"""
import json
import pathlib
import py_compile
import re

import pytest

pytest.importorskip("matplotlib")

from ..common.plot_test_helpers import PlotScript, cells  # noqa: E402
from . import plot_dist  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
PLOT = HERE / "plot_dist.py"
PEER = HERE / "dist_torch_peer.py"

_plot = PlotScript(PLOT, None, "d.json")
run = _plot.run
GPUS = [1, 2, 4, 8]
# Made-up G items/s at 1 GPU and the efficiency at each count: throughput = rate * g * eff.
RATES = {"search_replicated": (3.8, 1.0), "search_sharded": (3.8, 0.6), "isin_replicated": (7.8, 0.95),
         "sort": (20.0, 0.45)}


def rate(op, g, impl_factor=1.0):
    base, eff = RATES[op]
    return base * 1e9 * g * (1.0 if g == 1 else eff) * impl_factor


def row(op, g, ips, **extra):
    items = 2**27 * g
    return {"op": op, "gpus": g, "ms": items / ips * 1e3, "ms_min": 0.9 * items / ips * 1e3,
            "ms_max": 1.1 * items / ips * 1e3, "items": items, "items_per_s": ips, "verified": True, **extra}


def cpp_doc():
    """dist_bench's shape: the all-to-all rows first at each count > 1, % of its roofline on the
    exchanging ops, an overhead pair at 1 GPU and an error row."""
    results = []
    for g in GPUS:
        if g > 1:
            results.append({"op": "alltoall", "gpus": g, "ms": 3.0, "bytes_per_gpu": 2**30,
                            "algbw_gbps": 350.0 - 10 * g, "busbw_gbps": (350.0 - 10 * g) * (g - 1) / g})
        for op in RATES:
            extra = {"pct_alltoall_roofline": 40.0 + g} if g > 1 and op in ("search_sharded", "sort") else {}
            results.append(row(op, g, rate(op, g), **extra))
    results += [row("search_single", 1, 4e9), row("search_dist_1", 1, 3.9e9),
                {"op": "join", "gpus": 8, "error": "made-up failure"}]
    return {"schema": plot_dist.SCHEMA, "synthetic": True, "note": "SYNTHETIC: made-up times, not a measurement",
            "command": "dist_bench --ops all (made up)", "source": {"commit": "0" * 40, "dirty": False},
            "device": {"name": "made-up GPU"}, "gpus": 8, "scaling": "weak", "results": results}


def torch_doc():
    results = []
    for g in GPUS[:3]:
        for op in RATES:
            for impl, f in (("gsearch", 0.95), ("torch", 0.5)):
                results.append({**row(op, g, rate(op, g, f)), "impl": impl, "call": f"{impl} (made up)", "runs": 10})
    return {"schema": plot_dist.TORCH_SCHEMA, "synthetic": True, "note": "SYNTHETIC: made-up times",
            "command": "dist_torch_peer.py (made up)", "source": {"commit": "0" * 40, "dirty": False},
            "device": {"name": "made-up GPU", "count": 4}, "gpus": 4, "scaling": "weak",
            "versions": {"gsearch": "0.0", "torch": "0.0"}, "results": results, "skipped": [], "failures": []}


def write(tmp_path, doc, name):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def png_ok(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def table_rows(out):
    return {(c[0], c[1], int(c[2])): c for c in (cells(l) for l in out.splitlines() if re.match(r"\| \w+ \| ", l))
            if c[2].isdigit()}


def test_both_files(tmp_path):
    png = tmp_path / "fig" / "dist.png"
    r = run(write(tmp_path, cpp_doc(), "c.json"), "--torch", write(tmp_path, torch_doc(), "t.json"), "--out", png)
    png_ok(png)
    assert "SYNTHETIC" in r.stdout.splitlines()[0]
    rows = table_rows(r.stdout)
    # Every series, the overhead and all-to-all rows not among the ops.
    assert ("sort", "gsearch (C++)", 8) in rows and ("sort", "torch", 4) in rows
    assert ("sort", "gsearch (Python)", 1) in rows
    assert not any(k[0] in ("alltoall", "search_single", "search_dist_1", "join") for k in rows)
    # Efficiency = rate(g) / (g rate(1)); % of the all-to-all roofline where dist_bench had it.
    assert rows[("sort", "gsearch (C++)", 8)][5] == "0.45"
    assert rows[("search_sharded", "torch", 2)][5] == "0.60"
    assert rows[("sort", "gsearch (C++)", 4)][6] == "44"
    assert rows[("sort", "torch", 4)][6] == "-"
    assert "8 GPUs 270 GB/s per GPU" in r.stdout


def test_cpp_only_and_torch_only(tmp_path):
    png = tmp_path / "c.png"
    r = run(write(tmp_path, cpp_doc(), "c.json"), "--out", png)
    png_ok(png)
    assert "torch" not in r.stdout
    png = tmp_path / "t.png"
    doc = torch_doc()
    doc["rows"] = doc.pop("results")  # "rows" read as "results"
    r = run("--torch", write(tmp_path, doc, "t.json"), "--out", png)
    png_ok(png)
    assert "gsearch (C++)" not in r.stdout and "| sort | torch | 4 |" in r.stdout


def test_efficiency_function():
    pts = {1: {"items_per_s": 10.0}, 2: {"items_per_s": 15.0}, 4: {"items_per_s": 20.0}}
    assert plot_dist.efficiency(pts) == {1: 1.0, 2: 0.75, 4: 0.5}
    assert plot_dist.efficiency({2: {"items_per_s": 15.0}}) == {}  # no 1-GPU row


def test_unverified_rows_left_out(tmp_path):
    doc = torch_doc()
    for r in doc["results"]:
        if r["op"] == "sort" and r["impl"] == "torch" and r["gpus"] == 2:
            r["verified"] = False
    png = tmp_path / "u.png"
    r = run("--torch", write(tmp_path, doc, "t.json"), "--out", png)
    png_ok(png)
    assert "leaving out unverified row torch sort gpus=2" in r.stderr
    assert "| sort | torch | 2 |" not in r.stdout and "| sort | torch | 4 |" in r.stdout


def test_bad_input(tmp_path):
    doc = cpp_doc()
    doc["schema"] = "gsearch-bench-find/1"
    r = run(write(tmp_path, doc, "bad.json"), "--out", tmp_path / "x.png", ok=False)
    assert r.returncode != 0 and "schema" in r.stderr
    # The peer's file where dist_bench's is expected, and the other way round.
    r = run(write(tmp_path, torch_doc(), "t.json"), "--out", tmp_path / "x.png", ok=False)
    assert r.returncode != 0 and "schema" in r.stderr
    r = run("--torch", write(tmp_path, cpp_doc(), "c.json"), "--out", tmp_path / "x.png", ok=False)
    assert r.returncode != 0 and "schema" in r.stderr
    r = run(write(tmp_path, cpp_doc(), "c.json"), ok=False)  # no --out
    assert r.returncode != 0 and "--out" in r.stderr
    r = run("--out", tmp_path / "x.png", ok=False)  # no file at all
    assert r.returncode != 0
    assert not (tmp_path / "x.png").exists()


def test_peer_script_compiles_and_names_the_schema(tmp_path):
    """dist_torch_peer.py needs torch and GPUs: here it is only compiled, and its schema is the
    one plot_dist reads."""
    py_compile.compile(str(PEER), cfile=str(tmp_path / "peer.pyc"), doraise=True)
    assert f'SCHEMA = "{plot_dist.TORCH_SCHEMA}"' in PEER.read_text()
