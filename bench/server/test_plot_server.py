"""bench/server: plot_server.py on its synthetic sample (tables, figures, the Python peers' rows
beside, unverified rows left out, a wrong schema refused), server_python.py's CPU mode end to end,
and server_bench --device cpu --quick end to end when a build of it is at hand
($GSEARCH_SERVER_BENCH, else build/cpu/bench/server_bench). No GPU.

    python3 -m pytest bench/server
"""
import json
import os
import pathlib
import re
import subprocess

import numpy as np
import pytest

from ..common.plot_test_helpers import PlotScript, cells, table_line
from . import server_python

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCRIPT = PlotScript(HERE / "plot_server.py", HERE / "sample_server_results.json", "server.json")
SCHEMA = "gsearch-bench-server/1"
FIGURES = ["server_latency.png", "server_throughput.png", "server_interference.png"]


def row_fields():
    src = (HERE / "server_bench.cpp").read_text()
    m = re.search(r'for \(const char\* f : \{(.*?)\}\)\s*r\[f\] = nullptr;', src, re.S)
    return re.findall(r'"(\w+)"', m.group(1)), src[:src.index("#include")]


def test_sample_is_synthetic():
    SCRIPT.check_synthetic(SCHEMA)


def test_sample_rows_have_the_bench_fields():
    """The sample's rows carry exactly the fields server_bench.cpp's row() writes, each one
    documented in the program's header."""
    fields, header = row_fields()
    assert len(fields) > 25
    for r in SCRIPT.sample()["results"]:
        assert list(r) == fields, r
    for f in fields:
        assert re.search(rf"\b{f}\b", header), f


def test_tables_and_figures(tmp_path):
    pytest.importorskip("matplotlib")
    out, _, titles = SCRIPT.check_figures(tmp_path, FIGURES, 8)
    c = cells(table_line(out, "| server pinned t1 | pinned | 4.20 |"))
    assert c[4] == "6.30" and c[5] == "10.92"  # K = 2^27: p99, p99.9
    assert "| pingpong (floor) | pinned | 2.90 |" in out
    line = table_line(out, "| device | 16 | 2^15 |")
    assert cells(line)[-1] == "0.95"  # server / one-shot
    assert "| socket | 1 | 19.00 |" in out and cells(table_line(out, "| socket | 1 |"))[-1] == "13.50"
    assert "**missed**" in out and "| met |" in out


def test_python_rows_beside(tmp_path):
    pytest.importorskip("matplotlib")
    py = {"schema": "gsearch-bench-server-python/1", "results": [
        dict(dict.fromkeys(server_python.FIELDS), part="peers", impl="torch", dtype="float32", keys=1 << 27,
             memory="device", threads=1, batch=1, requests=20000, p50_us=15.5, p90_us=16.0, p99_us=21.0,
             p999_us=40.0, max_us=90.0, mean_us=16.0, verified=True),
        dict(dict.fromkeys(server_python.FIELDS), part="peers", impl="torch copy", dtype="float32", keys=1 << 27,
             memory="pinned", threads=1, batch=1, requests=20000, p50_us=30.0, p90_us=31.0, p99_us=35.0,
             p999_us=60.0, max_us=99.0, mean_us=31.0, verified=False)],
        "skipped": [{"impl": "gsearch-server", "dtype": "float32", "keys": 1 << 27, "why": "no CUDA server"}]}
    p = tmp_path / "py.json"
    p.write_text(json.dumps(py))
    r = SCRIPT.run(SCRIPT.sample_path, "--python", p, "--out", tmp_path / "fig")
    assert cells(table_line(r.stdout, "| py torch t1 | device |"))[2] == "15.50"
    assert "py torch copy" not in r.stdout  # unverified
    assert "no CUDA server" in r.stdout


def test_unverified_rows_left_out(tmp_path):
    doc = SCRIPT.sample()
    for r in doc["results"]:
        if r["impl"] == "thrust":
            r["verified"] = False
    r = SCRIPT.run(SCRIPT.write(tmp_path, doc), "--no-figures")
    assert "leaving out unverified row peers thrust" in r.stderr
    assert "| thrust |" not in r.stdout


def test_bad_input(tmp_path):
    SCRIPT.check_bad_input(tmp_path, "gsearch-bench-selection/1")


# ---- server_python.py ---------------------------------------------------------------------


def test_percentiles_nearest_rank():
    """The nearest rank, as server_host.cpp's summarize_ns computes it."""
    p = server_python.percentiles([float(x) * 1000 for x in range(1, 1001)])
    assert (p["p50_us"], p["p90_us"], p["p99_us"], p["p999_us"], p["max_us"]) == (500, 900, 990, 999, 1000)
    assert p["requests"] == 1000 and p["mean_us"] == pytest.approx(500.5)
    assert server_python.percentiles([7000.0])["p999_us"] == 7


def test_python_cpu_mode(tmp_path):
    out = tmp_path / "py.json"
    rc = server_python.main(["--json", str(out), "--device", "cpu", "--log-keys", "12", "--requests", "300",
                             "--warmup-requests", "20", "--threads", "1,2", "--pool", "1000"])
    assert rc == 0
    doc = json.loads(out.read_text())
    assert doc["schema"] == "gsearch-bench-server-python/1" and doc["synthetic"] is False
    impls = {r["impl"] for r in doc["results"]}
    assert "numpy" in impls
    for r in doc["results"]:
        assert list(r) == list(server_python.FIELDS) and r["verified"] is True and r["keys"] == 4096
        assert r["requests"] == 300 * r["threads"] and 0 < r["p50_us"] <= r["p99_us"] <= r["max_us"]
    case = server_python.Case("float32", 4096, 1000, 1)
    assert np.array_equal(case.expected, np.searchsorted(case.keys, case.pool, side="right"))


# ---- server_bench --device cpu ------------------------------------------------------------


def bench_binary():
    p = pathlib.Path(os.environ.get("GSEARCH_SERVER_BENCH", ROOT / "build/cpu/bench/server_bench"))
    return p if p.is_file() and os.access(p, os.X_OK) else None


@pytest.mark.skipif(bench_binary() is None, reason="no server_bench build (GSEARCH_SERVER_BENCH)")
def test_cpu_server_end_to_end(tmp_path):
    out = tmp_path / "server.json"
    r = subprocess.run([str(bench_binary()), "--device", "cpu", "--quick", "--log-keys", "10", "--threads", "1,2",
                        "--requests", "200", "--warmup-requests", "20", "--batches", "1,64",
                        "--throughput-threads", "1,2", "--window-ms", "10", "--batcher", "0:0,20:64",
                        "--pool", "4096", "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    fields, _ = row_fields()
    assert doc["schema"] == SCHEMA and doc["device"]["backend"] == "cpu" and not doc["errors"]
    assert {r["part"] for r in doc["results"]} >= {"latency", "peers", "throughput", "batcher"}
    for row in doc["results"]:  # the socket rows add the front ends' spins (server_socket.cpp)
        extra = ["spin_us", "client_spin_us"] if row["part"] == "socket" and row["impl"] != "in-process" else []
        assert list(row) == fields + extra and row["verified"] is True
    assert any(t["name"].startswith("one query") for t in doc["targets"])
    # The C++ inputs are gsearch gen's, which bench/common/inputs.py rebuilds.
    from ..common import inputs
    keys = inputs.sorted_keys("float32", 1024, 1)
    pool = inputs.random_queries_from_keys(keys, 4096, 2)
    want = {"keys_checksum": str(inputs.checksum(keys)), "pool_checksum": str(inputs.checksum(pool))}
    assert {k: doc["inputs"][0][k] for k in want} == want
    r = SCRIPT.run(out, "--no-figures")
    assert "| server host t1 | host |" in r.stdout
